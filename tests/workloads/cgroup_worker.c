/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cgroup_worker: the processes of the --cgroup test, and the hand that
 * moves them between cgroups at a known time.
 *
 *   cgroup_worker burn SECONDS     burns cgroup_burn for SECONDS of wall
 *                                  time; prints its pid first on stdout
 *   cgroup_worker move PID DIR     writes PID into DIR/cgroup.procs and
 *                                  prints "cgroup_worker: moved PID to DIR
 *                                  between T0 and T1" (CLOCK_MONOTONIC ns)
 *   cgroup_worker now              prints CLOCK_MONOTONIC in ns
 *   cgroup_worker tick MS SECONDS FIFO
 *                                  writes a byte to FIFO every MS ms for
 *                                  SECONDS, then closes it; prints its pid
 *                                  first on stdout
 *   cgroup_worker wait FIFO        blocks in read(2) on FIFO until end of
 *                                  file, so each tick wakes it; prints its
 *                                  pid first on stdout
 *
 * The test runs `burn` through symlinks, so that each process has a comm
 * of its own (the kernel names a process after the path it was exec'd by).
 * `move` brackets nothing but the write(2): the kernel has migrated the
 * task when the write returns, so every sample of it taken before T0 was
 * taken in the old cgroup and every one after T1 in the new one, which is
 * what the test compares bpfprof's samples with.
 *
 * tick and wait run on either side of a cgroup boundary: the wakee is not
 * the task running when the kernel reports its wakeup, so the filter must
 * test another task's cgroup there.
 *
 * Build with -O1 -fno-omit-frame-pointer -fno-inline (see workload.h).
 */
#include <fcntl.h>

#include "workload.h"

NOINLINE uint64_t cgroup_burn(uint64_t seed, int iterations)
{
	KEEP_FRAME();
	for (int i = 0; i < iterations; i++)
		seed = xorshift64(seed) + (uint64_t)i * 3;
	return seed;
}

static int print_pid(void)
{
	printf("%d\n", (int)getpid());
	return fflush(stdout) ? 1 : 0;
}

static int burn(const char *arg)
{
	uint64_t seed = 0x243f6a8885a308d3u, end;
	double seconds;

	if (parse_positive(arg, 3600, &seconds)) {
		fprintf(stderr, "cgroup_worker: bad duration '%s'\n", arg);
		return 2;
	}
	if (print_pid())
		return 1;
	end = mono_ns() + (uint64_t)(seconds * 1e9);
	while (mono_ns() < end)
		seed = cgroup_burn(seed, BURN_CHUNK);
	burn_sink = seed;
	return 0;
}

static int move(const char *pid_arg, const char *dir)
{
	char path[4096], pid[32];
	uint64_t t0, t1;
	double v;
	ssize_t n;
	int fd, len;

	if (parse_number(pid_arg, 1, 1 << 30, &v) || v != (int)v) {
		fprintf(stderr, "cgroup_worker: bad pid '%s'\n", pid_arg);
		return 2;
	}
	len = snprintf(pid, sizeof(pid), "%d\n", (int)v);
	if (snprintf(path, sizeof(path), "%s/cgroup.procs", dir) >= (int)sizeof(path)) {
		fprintf(stderr, "cgroup_worker: path too long: %s\n", dir);
		return 2;
	}
	/* Opened before the clock is read: only the migration is bracketed. */
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "cgroup_worker: open %s: %s\n", path, strerror(errno));
		return 1;
	}
	t0 = mono_ns();
	n = write(fd, pid, (size_t)len);
	t1 = mono_ns();
	if (n != len) {
		fprintf(stderr, "cgroup_worker: write %d to %s: %s\n", (int)v, path,
			n < 0 ? strerror(errno) : "short write");
		close(fd);
		return 1;
	}
	close(fd);
	printf("cgroup_worker: moved %d to %s between %llu and %llu\n", (int)v, dir,
	       (unsigned long long)t0, (unsigned long long)t1);
	return 0;
}

static int tick(const char *ms_arg, const char *seconds_arg, const char *fifo)
{
	double ms, seconds;
	uint64_t next, end;
	int fd;

	if (parse_positive(ms_arg, 10000, &ms) || parse_positive(seconds_arg, 3600, &seconds)) {
		fprintf(stderr, "cgroup_worker: bad period '%s' or duration '%s'\n", ms_arg,
			seconds_arg);
		return 2;
	}
	if (print_pid())
		return 1;
	/* Blocks until the waiter opens its end. */
	fd = open(fifo, O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "cgroup_worker: open %s: %s\n", fifo, strerror(errno));
		return 1;
	}
	next = mono_ns();
	end = next + (uint64_t)(seconds * 1e9);
	while (next < end) {
		next += (uint64_t)(ms * 1e6);
		sleep_until(next, "cgroup_worker");
		if (write(fd, "t", 1) != 1) {
			fprintf(stderr, "cgroup_worker: write %s: %s\n", fifo, strerror(errno));
			close(fd);
			return 1;
		}
	}
	close(fd);
	return 0;
}

/* The read the waiter sleeps in, a function of its own for its stacks. */
NOINLINE ssize_t wait_for_tick(int fd, char *c)
{
	KEEP_FRAME();
	return read(fd, c, 1);
}

static int wait_ticks(const char *fifo)
{
	unsigned long ticks = 0;
	ssize_t n;
	char c;
	int fd;

	if (print_pid())
		return 1;
	fd = open(fifo, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "cgroup_worker: open %s: %s\n", fifo, strerror(errno));
		return 1;
	}
	while ((n = wait_for_tick(fd, &c)) != 0) {
		if (n < 0 && errno != EINTR) {
			fprintf(stderr, "cgroup_worker: read %s: %s\n", fifo, strerror(errno));
			close(fd);
			return 1;
		}
		if (n > 0)
			ticks++;
	}
	close(fd);
	fprintf(stderr, "cgroup_worker: %lu ticks\n", ticks);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "burn"))
		return burn(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "move"))
		return move(argv[2], argv[3]);
	if (argc == 5 && !strcmp(argv[1], "tick"))
		return tick(argv[2], argv[3], argv[4]);
	if (argc == 3 && !strcmp(argv[1], "wait"))
		return wait_ticks(argv[2]);
	if (argc == 2 && !strcmp(argv[1], "now")) {
		printf("%llu\n", (unsigned long long)mono_ns());
		return 0;
	}
	fprintf(stderr,
		"usage: %s burn SECONDS | move PID DIR | now | tick MS SECONDS FIFO | wait FIFO\n",
		argv[0]);
	return 2;
}
