// SPDX-License-Identifier: BSD-2-Clause
/*
 * util/safe_open.c: files opened on behalf of other users. A FIFO or a
 * device is refused without blocking; a path inside a process's root is
 * resolved there, whatever symlinks its owner planted: absolute ones lead
 * to the root's own directories, ".." stops at the root, loops end. Each
 * case runs through openat2 (open_regular_in_root) and through the walk
 * used where openat2 is missing or filtered (open_regular_in_root_walk):
 * both must give the same answer.
 */
#include "util/safe_open.h"
#include "test.h"

#include <errno.h>
#include <sched.h>
#include <sys/mount.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Not under /tmp: the fake root's /tmp is a symlink to a path below base. */
static char base[PATH_MAX];
static char proc_root[PATH_MAX + 32], root[PATH_MAX + 64], outside[PATH_MAX + 32];

#define PID 4242

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* What the opened file holds (its first line), or the error as "-errno". */
static const char *read_result(int fd)
{
	static char buf[128];
	ssize_t n;

	if (fd < 0) {
		snprintf(buf, sizeof(buf), "%d", fd);
		return buf;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

static char errbuf[16][16];
static int nerr;

static const char *err_str(int err)
{
	char *p = errbuf[nerr++ % 16];

	snprintf(p, 16, "%d", err);
	return p;
}

/* `path` in the fake process's root, both ways; each must read `want`. */
static void expect(const char *path, int extra, const char *want)
{
	int rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	char got2[128];

	CHECK(rootfd >= 0);
	snprintf(got2, sizeof(got2), "%s",
		 read_result(open_regular_in_root(proc_root, PID, path, extra)));
	if (strcmp(got2, want))
		fprintf(stderr, "  openat2 %s: got '%s', want '%s'\n", path, got2, want);
	CHECK_EQ_STR(got2, want);
	snprintf(got2, sizeof(got2), "%s",
		 read_result(open_regular_in_root_walk(rootfd, path, extra)));
	if (strcmp(got2, want))
		fprintf(stderr, "  walk %s: got '%s', want '%s'\n", path, got2, want);
	CHECK_EQ_STR(got2, want);
	close(rootfd);
}

static void setup(void)
{
	char p[3 * PATH_MAX];

	/* Any place but /tmp (the build tree may be there too). */
	snprintf(base, sizeof(base), "/var/tmp/test_safe_open.XXXXXX");
	if (!mkdtemp(base)) {
		perror("mkdtemp");
		exit(1);
	}
	snprintf(proc_root, sizeof(proc_root), "%s/proc", base);
	snprintf(p, sizeof(p), "%s/%d", proc_root, PID);
	CHECK_EQ_INT(mkdir(proc_root, 0700), 0);
	CHECK_EQ_INT(mkdir(p, 0700), 0);
	snprintf(root, sizeof(root), "%s/%d/root", proc_root, PID);
	CHECK_EQ_INT(mkdir(root, 0755), 0);
	/* Ours, outside the process's root: what a planted symlink aims at. */
	snprintf(outside, sizeof(outside), "%s/outside", base);
	CHECK_EQ_INT(mkdir(outside, 0700), 0);
	snprintf(p, sizeof(p), "%s/secret.map", outside);
	put(p, "root only\n");

	/* The process's own files. */
	snprintf(p, sizeof(p), "%s/etc", root);
	CHECK_EQ_INT(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/etc/own.map", root);
	put(p, "its own\n");
	/* /tmp: an absolute symlink to a path that is ours outside, and its own inside. */
	snprintf(p, sizeof(p), "%s/tmp", root);
	CHECK_EQ_INT(symlink(outside, p), 0);
	snprintf(p, sizeof(p), "%s%s", root, outside);
	{
		char mk[3 * PATH_MAX + 16];

		snprintf(mk, sizeof(mk), "mkdir -p '%s'", p);
		CHECK_EQ_INT(system(mk), 0);
	}
	snprintf(p, sizeof(p), "%s%s/inside.map", root, outside);
	put(p, "inside its root\n");
	/* Relative links, climbing above the root, a loop, a chain to an absolute one. */
	snprintf(p, sizeof(p), "%s/up", root);
	CHECK_EQ_INT(symlink("../../../../../../..", p), 0);
	snprintf(p, sizeof(p), "%s/rel.map", root);
	CHECK_EQ_INT(symlink("etc/../etc/./own.map", p), 0);
	snprintf(p, sizeof(p), "%s/loop", root);
	CHECK_EQ_INT(symlink("loop", p), 0);
	snprintf(p, sizeof(p), "%s/chain", root);
	CHECK_EQ_INT(symlink("tmp", p), 0);
	snprintf(p, sizeof(p), "%s/abs.map", root);
	CHECK_EQ_INT(symlink("/etc/own.map", p), 0);
	snprintf(p, sizeof(p), "%s/fifo", root);
	CHECK_EQ_INT(mkfifo(p, 0600), 0);
}

static void test_in_root(void)
{
	char p[3 * PATH_MAX];

	expect("/etc/own.map", 0, "its own");
	expect("etc/own.map", 0, "its own");
	expect("//etc///own.map", 0, "its own");
	/* /tmp leads to the root's namesake of our directory, never to ours. */
	snprintf(p, sizeof(p), "/tmp/secret.map");
	expect(p, 0, err_str(-ENOENT));
	expect("/tmp/inside.map", 0, "inside its root");
	expect("/chain/inside.map", 0, "inside its root");
	/* ".." and relative links climb no higher than the root. */
	snprintf(p, sizeof(p), "/../../../..%s/secret.map", outside);
	expect(p, 0, err_str(-ENOENT));
	snprintf(p, sizeof(p), "/up%s/secret.map", outside);
	expect(p, 0, err_str(-ENOENT));
	snprintf(p, sizeof(p), "/up%s/inside.map", outside);
	expect(p, 0, "inside its root");
	expect("/rel.map", 0, "its own");
	expect("/abs.map", 0, "its own");
	/* A symlink as the last component: followed, unless O_NOFOLLOW. */
	expect("/abs.map", O_NOFOLLOW, err_str(-ELOOP));
	expect("/loop", 0, err_str(-ELOOP));
	expect("/loop/x", 0, err_str(-ELOOP));
	/* Not regular files: refused at once, the FIFO without waiting for a writer. */
	alarm(20);
	expect("/fifo", 0, err_str(-EINVAL));
	alarm(0);
	expect("/etc", 0, err_str(-EINVAL));
	expect("/etc/own.map/x", 0, err_str(-ENOTDIR));
	expect("/nothing", 0, err_str(-ENOENT));
}

static void test_open_regular(void)
{
	char p[3 * PATH_MAX];

	snprintf(p, sizeof(p), "%s/fifo", root);
	alarm(20);
	CHECK_EQ_INT(open_regular(p, 0), -EINVAL);
	alarm(0);
	CHECK_EQ_INT(open_regular("/dev/null", 0), -EINVAL);
	CHECK_EQ_INT(open_regular(root, 0), -EINVAL);
	snprintf(p, sizeof(p), "%s/abs.map", root);
	CHECK_EQ_INT(open_regular(p, O_NOFOLLOW), -ELOOP);
	snprintf(p, sizeof(p), "%s/etc/own.map", root);
	CHECK_EQ_STR(read_result(open_regular(p, 0)), "its own");
	/* No such process. */
	CHECK_EQ_INT(open_regular_in_root(proc_root, 999999, "/etc/own.map", 0), -ENOENT);
}

/* One name in a directory, on its mount only: what perf maps are opened with. */
static void test_beneath(void)
{
	int rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC), dir, etc;
	char p[3 * PATH_MAX], q[3 * PATH_MAX];

	CHECK(rootfd >= 0);
	/* The directory is resolved in the root, its links included. */
	dir = open_dir_at_root(rootfd, "/tmp");
	CHECK(dir >= 0);
	CHECK_EQ_STR(read_result(open_regular_beneath(dir, "inside.map", 0)), "inside its root");
	close(dir);
	CHECK_EQ_INT(open_dir_at_root(rootfd, "/etc/own.map"), -ENOTDIR);
	etc = open_dir_at_root(rootfd, "/etc");
	CHECK(etc >= 0);
	CHECK_EQ_STR(read_result(open_regular_beneath(etc, "own.map", 0)), "its own");
	CHECK_EQ_INT(open_regular_beneath(etc, "../etc/own.map", 0), -EINVAL);
	CHECK_EQ_INT(open_regular_beneath(etc, "..", 0), -EINVAL);
	CHECK_EQ_INT(open_regular_beneath(rootfd, "abs.map", 0), -ELOOP);
	alarm(20);
	CHECK_EQ_INT(open_regular_beneath(rootfd, "fifo", 0), -EINVAL);
	alarm(0);
	/*
	 * A file bind-mounted over the name, as any user may in a mount
	 * namespace of their own: refused. (Root only: in a namespace of ours.)
	 */
	if (geteuid() == 0 && !unshare(CLONE_NEWNS) &&
	    !mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL)) {
		snprintf(p, sizeof(p), "%s/secret.map", outside);
		snprintf(q, sizeof(q), "%s/etc/own.map", root);
		CHECK_EQ_INT(mount(p, q, NULL, MS_BIND, NULL), 0);
		/* Opened before, `etc` is on the mount namespace we left, which has no such mount.
		 */
		close(etc);
		snprintf(q, sizeof(q), "%s/etc", root);
		etc = open(q, O_PATH | O_DIRECTORY | O_CLOEXEC);
		CHECK_EQ_INT(open_regular_beneath(etc, "own.map", 0), -EXDEV);
		snprintf(q, sizeof(q), "%s/etc/own.map", root);
		CHECK_EQ_STR(read_result(open_regular(q, 0)), "root only");
		CHECK_EQ_INT(umount(q), 0);
		CHECK_EQ_STR(read_result(open_regular_beneath(etc, "own.map", 0)), "its own");
	} else {
		fprintf(stderr, "not root, or no mount namespace: the bind mount is not tried\n");
	}
	close(etc);
	close(rootfd);
}

/*
 * A device or FIFO is looked at, never opened for reading: opening a device
 * has effects of its own (a watchdog arms). A writer blocked in open() of
 * the FIFO wakes the moment any reader opens it, even one that closes at
 * once: whether it woke says whether the opener opened the FIFO for reading.
 */
enum opener { PLAIN, IN_ROOT, WALK, BENEATH, OPENERS };

static int open_with(enum opener how, const char *name)
{
	char p[3 * PATH_MAX];
	int rootfd, fd;

	switch (how) {
	case PLAIN:
		snprintf(p, sizeof(p), "%s/%s", root, name);
		return open_regular(p, 0);
	case IN_ROOT:
		snprintf(p, sizeof(p), "/%s", name);
		return open_regular_in_root(proc_root, PID, p, 0);
	case WALK:
	case BENEATH:
		rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
		snprintf(p, sizeof(p), "/%s", name);
		fd = how == WALK ? open_regular_in_root_walk(rootfd, p, 0)
				 : open_regular_beneath(rootfd, name, 0);
		close(rootfd);
		return fd;
	default:
		return -EINVAL;
	}
}

static void test_fifo_never_opened(void)
{
	char fifo[3 * PATH_MAX], link[3 * PATH_MAX];

	snprintf(fifo, sizeof(fifo), "%s/fifo", root);
	snprintf(link, sizeof(link), "%s/fifo.debug", root);
	CHECK_EQ_INT(symlink("/fifo", link), 0);
	for (int how = PLAIN; how < OPENERS; how++) {
		for (int via_link = 0; via_link < 2 - (how == PLAIN || how == BENEATH);
		     via_link++) {
			int status, got;
			pid_t writer = fork();

			if (writer == 0) {
				alarm(20);
				_exit(open(fifo, O_WRONLY) >= 0 ? 0 : 1);
			}
			CHECK(writer > 0);
			usleep(200 * 1000); /* the writer is asleep in open() by now */
			alarm(20);
			got = open_with((enum opener)how, via_link ? "fifo.debug" : "fifo");
			alarm(0);
			CHECK_EQ_INT(got, -EINVAL);
			usleep(200 * 1000);
			got = waitpid(writer, &status, WNOHANG);
			if (got == writer)
				fprintf(stderr, "opener %d%s opened the FIFO for reading\n", how,
					via_link ? " (through a symlink)" : "");
			CHECK_EQ_INT(got, 0);
			kill(writer, SIGKILL);
			waitpid(writer, &status, 0);
		}
	}
	unlink(link);
}

int main(void)
{
	char cmd[PATH_MAX + 16];
	int rc;

	setup();
	RUN(test_in_root);
	RUN(test_open_regular);
	RUN(test_beneath);
	RUN(test_fifo_never_opened);
	rc = test_summary();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", base);
	return rc;
}
