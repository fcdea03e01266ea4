/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fusehold: what an unprivileged user needs to make a read of their
 * memory wait for ever (issue 37): it mounts a FUSE file system at DIR
 * with fusermount3 (setuid root, as any user may), served by a child that
 * answers everything but reads, which it holds until it is killed; then it
 * runs COMMAND, which may map DIR/f (one 1 MiB file). Speaks the kernel's
 * protocol on /dev/fuse and fusermount3's (the descriptor passed back over
 * _FUSE_COMMFD) itself: no libfuse. A mount in a user namespace of the
 * user's own would not do: the kernel refuses there the requests of root,
 * whose uid it cannot map, before the server sees them.
 *
 * Usage: fusehold DIR COMMAND [ARG...]
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* /dev/fuse open and mounted at `dir` by fusermount3, or -1. */
static int fusermount(const char *dir)
{
	char env[32], byte, control[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &byte, 1 };
	struct msghdr msg = { .msg_iov = &iov,
			      .msg_iovlen = 1,
			      .msg_control = control,
			      .msg_controllen = sizeof(control) };
	struct cmsghdr *cmsg;
	int sv[2], fd = -1, status;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		return -1;
	pid = fork();
	if (pid == 0) {
		close(sv[0]);
		snprintf(env, sizeof(env), "%d", sv[1]);
		setenv("_FUSE_COMMFD", env, 1);
		execlp("fusermount3", "fusermount3", "-o", "nosuid,nodev,fsname=fusehold", "--",
		       dir, (char *)NULL);
		perror("fusehold: fusermount3");
		_exit(1);
	}
	close(sv[1]);
	if (pid > 0 && recvmsg(sv[0], &msg, 0) > 0 && (cmsg = CMSG_FIRSTHDR(&msg)) &&
	    cmsg->cmsg_type == SCM_RIGHTS)
		memcpy(&fd, CMSG_DATA(cmsg), sizeof(fd));
	close(sv[0]);
	if (pid > 0)
		waitpid(pid, &status, 0);
	return fd;
}

static void reply(int fd, uint64_t unique, int error, const void *body, size_t len)
{
	char buf[sizeof(struct fuse_out_header) + 256];
	struct fuse_out_header h = { .len = (uint32_t)(sizeof(h) + len),
				     .error = -error,
				     .unique = unique };

	memcpy(buf, &h, sizeof(h));
	memcpy(buf + sizeof(h), body, len);
	if (write(fd, buf, h.len) < 0 && errno != ENOENT)
		perror("fusehold: reply");
}

static void attr_of(uint64_t node, struct fuse_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->ino = node;
	a->nlink = 1;
	a->uid = getuid();
	a->gid = getgid();
	a->blksize = 4096;
	if (node == FUSE_ROOT_ID) {
		a->mode = S_IFDIR | 0755;
	} else {
		a->mode = S_IFREG | 0644;
		a->size = 1 << 20;
		a->blocks = a->size / 512;
	}
}

/* Answers every request but reads, until the connection goes. */
static void serve(int fd)
{
	static char buf[FUSE_MIN_READ_BUFFER + (1 << 20)];

	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));
		struct fuse_in_header *in = (void *)buf;
		void *arg = buf + sizeof(*in);

		if (n < 0 && (errno == EINTR || errno == ENOENT || errno == EAGAIN))
			continue;
		if (n < (ssize_t)sizeof(*in))
			exit(0);
		switch (in->opcode) {
		case FUSE_INIT: {
			struct fuse_init_in *i = arg;
			struct fuse_init_out o = { .major = FUSE_KERNEL_VERSION,
						   .minor = FUSE_KERNEL_MINOR_VERSION,
						   .max_readahead = i->max_readahead,
						   .max_write = 4096,
						   .max_background = 16,
						   .congestion_threshold = 12 };

			reply(fd, in->unique, 0, &o, sizeof(o));
			break;
		}
		case FUSE_LOOKUP: {
			struct fuse_entry_out o = { .nodeid = 2,
						    .generation = 1,
						    .entry_valid = 3600,
						    .attr_valid = 3600 };

			if (in->nodeid != FUSE_ROOT_ID || strcmp(arg, "f")) {
				reply(fd, in->unique, ENOENT, NULL, 0);
				break;
			}
			attr_of(2, &o.attr);
			reply(fd, in->unique, 0, &o, sizeof(o));
			break;
		}
		case FUSE_GETATTR: {
			struct fuse_attr_out o = { .attr_valid = 3600 };

			attr_of(in->nodeid, &o.attr);
			reply(fd, in->unique, 0, &o, sizeof(o));
			break;
		}
		case FUSE_OPEN:
		case FUSE_OPENDIR: {
			struct fuse_open_out o = { .fh = 1 };

			reply(fd, in->unique, 0, &o, sizeof(o));
			break;
		}
		case FUSE_READ: /* held: the reader waits until we are killed */
		case FUSE_INTERRUPT:
		case FUSE_FORGET:
		case FUSE_BATCH_FORGET:
			break;
		case FUSE_FLUSH:
		case FUSE_RELEASE:
		case FUSE_RELEASEDIR:
			reply(fd, in->unique, 0, NULL, 0);
			break;
		default:
			reply(fd, in->unique, ENOSYS, NULL, 0);
			break;
		}
	}
}

int main(int argc, char **argv)
{
	pid_t server;
	int fd;

	if (argc < 3) {
		fprintf(stderr, "usage: fusehold DIR COMMAND [ARG...]\n");
		return 2;
	}
	fd = fusermount(argv[1]);
	if (fd < 0) {
		fprintf(stderr, "fusehold: fusermount3 did not mount %s\n", argv[1]);
		return 1;
	}
	server = fork();
	if (server < 0) {
		perror("fusehold: fork");
		return 1;
	}
	if (server == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		serve(fd);
		return 0;
	}
	close(fd);
	execvp(argv[2], argv + 2);
	perror(argv[2]);
	return 1;
}
