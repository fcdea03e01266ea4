/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * forker: a parent that forks one child; for the `bpfprof -- cmd` test, which
 * must see both processes.
 *
 *   parent (comm from exec: "forker")  burns parent_burn
 *   child  (comm "bpfprof-child")      burns child_burn
 *
 * Both burn for SECONDS of wall time (default 1.5), then the child exits and the
 * parent reaps it. With --wait-signal the parent first prints "forker waiting
 * PID" and forks only once it gets SIGUSR1 (the `-p` test forks while
 * bpfprof records). Prints "forker parent PID child PID" once the child exists,
 * so a test can tell which process is which, and at the end the CPU time each
 * got, which on a busy machine is far less than SECONDS:
 *   forker: truth parent_cpu_ms P child_cpu_ms C
 *
 * Build with -O1 -fno-omit-frame-pointer -fno-inline (see burner.c).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "workload.h"

NOINLINE uint64_t parent_burn(uint64_t seed, int iterations)
{
	KEEP_FRAME();
	for (int i = 0; i < iterations; i++)
		seed = xorshift64(seed) + (uint64_t)i;
	return seed;
}

NOINLINE uint64_t child_burn(uint64_t seed, int iterations)
{
	KEEP_FRAME();
	for (int i = 0; i < iterations; i++)
		seed = xorshift64(seed) ^ (uint64_t)i;
	return seed;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void burn_for(uint64_t (*burn)(uint64_t, int), double seconds)
{
	double end = now_s() + seconds;
	uint64_t seed = 0x9e3779b97f4a7c15u;

	while (now_s() < end)
		seed = burn(seed, BURN_CHUNK);
	burn_sink = seed;
}

static double cpu_ms(const struct rusage *ru)
{
	return (double)(ru->ru_utime.tv_sec + ru->ru_stime.tv_sec) * 1e3 +
	       (double)(ru->ru_utime.tv_usec + ru->ru_stime.tv_usec) / 1e3;
}

int main(int argc, char **argv)
{
	struct rusage self_usage, child_usage;
	double seconds = 1.5;
	int status;
	pid_t child;

	bool wait_signal = argc > 1 && !strcmp(argv[argc - 1], "--wait-signal");

	if (wait_signal)
		argc--;
	if (argc > 2) {
		fprintf(stderr, "usage: %s [SECONDS] [--wait-signal]\n", argv[0]);
		return 2;
	}
	if (argc == 2) {
		char *end;

		seconds = strtod(argv[1], &end);
		if (*end || !(seconds > 0 && seconds < 3600)) {
			fprintf(stderr, "forker: bad duration '%s'\n", argv[1]);
			return 2;
		}
	}

	if (wait_signal) {
		sigset_t usr1;
		int sig;

		sigemptyset(&usr1);
		sigaddset(&usr1, SIGUSR1);
		sigprocmask(SIG_BLOCK, &usr1, NULL);
		printf("forker waiting %d\n", (int)getpid());
		fflush(stdout);
		if (sigwait(&usr1, &sig)) {
			fprintf(stderr, "forker: sigwait failed\n");
			return 1;
		}
	}
	/* Flush before fork so the child does not print the parent's buffer too. */
	fflush(stdout);
	child = fork();
	if (child < 0) {
		perror("forker: fork");
		return 1;
	}
	if (child == 0) {
		if (prctl(PR_SET_NAME, "bpfprof-child", 0, 0, 0)) {
			perror("forker: prctl(PR_SET_NAME)");
			_exit(1);
		}
		burn_for(child_burn, seconds);
		_exit(0);
	}

	printf("forker parent %d child %d\n", (int)getpid(), (int)child);
	fflush(stdout);
	burn_for(parent_burn, seconds);

	while (wait4(child, &status, 0, &child_usage) < 0) {
		if (errno != EINTR) {
			perror("forker: waitpid");
			return 1;
		}
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "forker: child failed (status 0x%x)\n", status);
		return 1;
	}
	getrusage(RUSAGE_SELF, &self_usage);
	printf("forker: truth parent_cpu_ms %.3f child_cpu_ms %.3f\n", cpu_ms(&self_usage),
	       cpu_ms(&child_usage));
	return 0;
}
