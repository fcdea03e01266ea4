// SPDX-License-Identifier: BSD-2-Clause
/*
 * jit_open: opens that never end (a FIFO with no writer stands for a FUSE
 * server that never answers: open(2) waits in the kernel either way) cost
 * their caller one deadline, then their owner is refused at once, other
 * owners still open, and the fd a late open returns is closed, not leaked.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "symbols/jit_open.h"
#include "test.h"

struct open_arg {
	char path[PATH_MAX];
};

static int open_path(void *arg)
{
	const struct open_arg *a = arg;
	int fd = open(a->path, O_RDONLY | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

static void test_stuck_open(void)
{
	char dir[] = "/tmp/test_jit_open.XXXXXX";
	struct open_arg fifo, file;
	struct jit_opener *o;
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	int fd, w, before;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(fifo.path, sizeof(fifo.path), "%s/fifo", dir);
	snprintf(file.path, sizeof(file.path), "%s/file", dir);
	CHECK(mkfifo(fifo.path, 0600) == 0);
	fd = open(file.path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	CHECK(fd >= 0);
	close(fd);
	o = jit_opener_new(100);
	CHECK(o != NULL);
	if (!o)
		return;
	before = open_fds();
	/* The open waits for a writer that does not come: the caller leaves at the deadline. */
	CHECK_EQ_INT(jit_opener_run(o, 1000, open_path, &fifo, sizeof(fifo), NULL), -ETIMEDOUT);
	CHECK_EQ_INT(jit_opener_stuck(o), 1);
	/* Its owner holds one stuck open: refused at once, even for a file that would open. */
	CHECK_EQ_INT(jit_opener_run(o, 1000, open_path, &file, sizeof(file), NULL), -EBUSY);
	/* Another owner is not held up. */
	fd = jit_opener_run(o, 1001, open_path, &file, sizeof(file), NULL);
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
	/* The writer comes: the stuck open returns, and its fd is closed by nobody but us. */
	w = open(fifo.path, O_WRONLY | O_CLOEXEC);
	CHECK(w >= 0);
	while (jit_opener_stuck(o))
		nanosleep(&ts, NULL);
	close(w);
	CHECK_EQ_INT(open_fds(), before);
	/* The owner opens again. */
	fd = jit_opener_run(o, 1000, open_path, &file, sizeof(file), NULL);
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
	jit_opener_free(o);
	unlink(fifo.path);
	unlink(file.path);
	rmdir(dir);
}

/* What the open returns, an error included, comes back as it is. */
static void test_errors(void)
{
	struct jit_opener *o = jit_opener_new(1000);
	struct open_arg none = { "/nonexistent/test_jit_open" };

	CHECK(o != NULL);
	if (!o)
		return;
	CHECK_EQ_INT(jit_opener_run(o, 1, open_path, &none, sizeof(none), NULL), -ENOENT);
	jit_opener_free(o);
}

int main(void)
{
	RUN(test_stuck_open);
	RUN(test_errors);
	return test_summary();
}
