/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syscalls: one thread making syscalls in a tight loop for a fixed wall
 * time; prints how many per second. The workload that shows what tracing
 * raw_syscalls costs, since every call passes both tracepoints.
 *
 *   -m getppid  the cheapest syscall there is (~60 ns on the test VM): the
 *               worst case, where the tracer's fixed cost per call shows whole
 *   -m read     read(2) of 4 KiB from /dev/zero: a syscall that does work
 *
 * Usage: syscalls [-s SECONDS] [-m getppid|read] [-c CPU]
 * Prints one line: calls=N seconds=S calls_per_s=R
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_setaffinity */
#endif
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* The clock is read once per this many calls. */
#define CALLS_PER_CHECK 1024

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	static char buf[4096];
	double seconds = 3, start, now;
	const char *mode = "getppid";
	uint64_t calls = 0;
	int opt, cpu = -1, fd = -1;

	while ((opt = getopt(argc, argv, "s:m:c:")) != -1) {
		switch (opt) {
		case 's':
			seconds = strtod(optarg, NULL);
			if (!(seconds > 0 && seconds < 3600)) {
				fprintf(stderr, "syscalls: bad -s '%s'\n", optarg);
				return 2;
			}
			break;
		case 'm':
			mode = optarg;
			if (strcmp(mode, "getppid") && strcmp(mode, "read")) {
				fprintf(stderr, "syscalls: -m wants getppid or read, not '%s'\n",
					mode);
				return 2;
			}
			break;
		case 'c':
			cpu = atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: %s [-s SECONDS] [-m getppid|read] [-c CPU]\n",
				argv[0]);
			return 2;
		}
	}
	if (cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set)) {
			perror("syscalls: sched_setaffinity");
			return 2;
		}
	}
	if (!strcmp(mode, "read") && (fd = open("/dev/zero", O_RDONLY | O_CLOEXEC)) < 0) {
		perror("syscalls: /dev/zero");
		return 1;
	}
	start = now = now_s();
	while (now - start < seconds) {
		for (int i = 0; i < CALLS_PER_CHECK; i++) {
			/* syscall(): glibc must not answer from a cache. */
			if (fd < 0)
				syscall(SYS_getppid);
			else if (read(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf)) {
				perror("syscalls: read");
				return 1;
			}
		}
		calls += CALLS_PER_CHECK;
		now = now_s();
	}
	printf("calls=%llu seconds=%.3f calls_per_s=%.0f\n", (unsigned long long)calls, now - start,
	       (double)calls / (now - start));
	return 0;
}
