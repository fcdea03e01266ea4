/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fusehold: what an unprivileged user needs to make a read of their
 * memory wait for ever (issue 37): it mounts a FUSE file system at DIR
 * with fusermount3 (setuid root, as any user may), served by a child that
 * answers everything but reads, which it holds until it is killed; then it
 * runs COMMAND, which may map DIR/f (one 1 MiB file). With -r the server
 * (COMMAND's child) lets go on SIGUSR1: it prints "fusehold: released at
 * NS" (CLOCK_MONOTONIC), so a test knows when the hold ended, and fails the
 * reads it holds and every later one at once (EIO). Speaks the kernel's
 * protocol on /dev/fuse and fusermount3's (the descriptor passed back over
 * _FUSE_COMMFD) itself: no libfuse. A mount in a user namespace of the
 * user's own would not do: the kernel refuses there the requests of root,
 * whose uid it cannot map, before the server sees them.
 *
 * With -n NAME the file is DIR/NAME (-n '*': any name). With -a (root only: fusermount3
 * lets a user ask for it only where /etc/fuse.conf says user_allow_other)
 * the mount is allow_other: every user's process, root's included, may
 * open the file, and then waits on its reads as a mapping's faults do.
 *
 * Usage: fusehold [-r] [-a] [-n NAME] DIR COMMAND [ARG...]
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_HELD 256

static int release_on_signal;	    /* -r */
static int allow_other;		    /* -a */
static const char *file_name = "f"; /* -n */
static volatile sig_atomic_t release_asked;
static int released;
static uint64_t held[MAX_HELD]; /* the reads held, until the release */
static unsigned n_held;

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
		execlp("fusermount3", "fusermount3", "-o",
		       allow_other ? "nosuid,nodev,allow_other,fsname=fusehold"
				   : "nosuid,nodev,fsname=fusehold",
		       "--", dir, (char *)NULL);
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

static void on_sigusr1(int sig)
{
	(void)sig;
	release_asked = 1;
}

/* -r: the held reads fail, and every later one: the page is the reader's at once again. */
static void release(int fd)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	printf("fusehold: released at %lld\n", (long long)ts.tv_sec * 1000000000 + ts.tv_nsec);
	fflush(stdout);
	released = 1;
	for (unsigned i = 0; i < n_held; i++)
		reply(fd, held[i], EIO, NULL, 0);
	n_held = 0;
}

/* A read: held (for ever, or until the release), or failed once released. */
static void on_read(int fd, uint64_t unique)
{
	if (released) {
		reply(fd, unique, EIO, NULL, 0);
		return;
	}
	if (!release_on_signal)
		return;
	if (n_held < MAX_HELD)
		held[n_held++] = unique;
	else
		reply(fd, unique, EIO, NULL, 0);
}

/*
 * Until a request is there (1), or, with -r, SIGUSR1 came and the reads
 * were let go (0). SIGUSR1 is blocked but while waiting here: none is lost.
 */
static int wait_request(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	sigset_t waiting;

	if (!release_on_signal || released)
		return 1;
	sigemptyset(&waiting);
	if (!release_asked && ppoll(&pfd, 1, NULL, &waiting) > 0)
		return 1;
	if (release_asked)
		release(fd);
	return 0;
}

/* Answers every request but reads, until the connection goes. */
static void serve(int fd)
{
	static char buf[FUSE_MIN_READ_BUFFER + (1 << 20)];

	if (release_on_signal) {
		struct sigaction sa = { .sa_handler = on_sigusr1 }; /* no SA_RESTART */
		sigset_t usr1;

		sigemptyset(&usr1);
		sigaddset(&usr1, SIGUSR1);
		sigprocmask(SIG_BLOCK, &usr1, NULL);
		sigaction(SIGUSR1, &sa, NULL);
	}
	for (;;) {
		struct fuse_in_header *in = (void *)buf;
		void *arg = buf + sizeof(*in);
		ssize_t n;

		if (!wait_request(fd))
			continue;
		n = read(fd, buf, sizeof(buf));
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

			if (in->nodeid != FUSE_ROOT_ID ||
			    (strcmp(file_name, "*") && strcmp(arg, file_name))) {
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
		case FUSE_STATFS: {
			struct fuse_statfs_out o = { .st = { .bsize = 4096, .namelen = 255 } };

			reply(fd, in->unique, 0, &o, sizeof(o));
			break;
		}
		case FUSE_READ: /* held: the reader waits until we are killed, or -r */
			on_read(fd, in->unique);
			break;
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

	for (;;) {
		if (argc > 1 && !strcmp(argv[1], "-r")) {
			release_on_signal = 1;
		} else if (argc > 1 && !strcmp(argv[1], "-a")) {
			allow_other = 1;
		} else if (argc > 2 && !strcmp(argv[1], "-n")) {
			file_name = argv[2];
			argv++;
			argc--;
		} else {
			break;
		}
		argv++;
		argc--;
	}
	if (argc < 3) {
		fprintf(stderr, "usage: fusehold [-r] [-a] [-n NAME] DIR COMMAND [ARG...]\n");
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
