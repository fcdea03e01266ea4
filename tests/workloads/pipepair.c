/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pipepair: a reader woken by a writer at a known period, for the scheduler
 * tests (off-CPU intervals, their reason and their waker).
 *
 *   main thread "pipepair"   sleeps until the duration ends
 *   thread "pwriter"         every PERIOD_MS (absolute deadlines) burns BURN_MS
 *                            of CPU time in writer_burn, then writes one byte
 *                            to a pipe, from writer_post
 *   thread "preader"         blocks in read(2) on the pipe, issued from
 *                            reader_wait, and reads each byte as it comes
 *
 * Usage: pipepair SECONDS [PERIOD_MS [BURN_MS]]   (defaults: 20 ms, no burn)
 *
 * Prints "PID" on the first line, then "thread NAME TID" per worker, once both
 * run under their final names. At exit, on stderr (the first line in the
 * format of sleeper.c, measured with CLOCK_THREAD_CPUTIME_ID):
 *
 *   pipepair: truth pwriter tid T cpu_ms C loop_cpu_ms L loop_wall_ms W periods N overruns O
 *   pipepair: truth writes W reads R period_ms P
 *
 * So preader sleeps about PERIOD_MS at a time, in the "sleeping" state, and
 * each of its waits is ended by pwriter's write.
 *
 * Build with -O1 -fno-omit-frame-pointer -fno-inline (see burner.c).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pthread_setname_np, pipe2 */
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "raw_syscall.h"
#include "workload.h"

static atomic_bool stop_flag;
static uint64_t period_ns = 20 * 1000000ull;
static uint64_t burn_ns;
static int pipe_fds[2];
static uint64_t writes, reads;
/* pwriter's ground truth, written by it before it returns. */
static uint64_t writer_cpu_ns, writer_loop_cpu_ns, writer_loop_wall_ns, writer_overruns;

/* Blocks in read(2) until the writer's next byte (or EOF). The syscall is
 * issued here so that the off-CPU stack shows this function (raw_syscall.h). */
NOINLINE long reader_wait(int fd, char *buf, long len)
{
	long ret;

	KEEP_FRAME();
	do
		ret = raw_syscall4(SYS_read, fd, (long)buf, len, 0);
	while (ret == -EINTR);
	return ret;
}

NOINLINE uint64_t writer_burn(uint64_t seed, int iterations)
{
	KEEP_FRAME();
	for (int i = 0; i < iterations; i++)
		seed = xorshift64(seed) + (uint64_t)i;
	return seed;
}

NOINLINE long writer_post(int fd)
{
	static const char byte = 'x';
	long ret;

	KEEP_FRAME();
	do
		ret = raw_syscall4(SYS_write, fd, (long)&byte, 1, 0);
	while (ret == -EINTR);
	return ret;
}

static void *writer_main(struct worker *w)
{
	uint64_t cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	uint64_t wall0 = mono_ns();
	uint64_t next = wall0;
	uint64_t seed = 0x9e3779b97f4a7c15u;

	while (!atomic_load_explicit(&stop_flag, memory_order_relaxed)) {
		struct timespec deadline;
		uint64_t start;
		long ret;
		int err;

		next += period_ns;
		if (next < mono_ns()) {
			/* The last burn did not fit its period: write now. */
			writer_overruns++;
		} else {
			deadline = ns_to_timespec(next);
			while ((err = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline,
						      NULL)) == EINTR)
				;
			if (err) {
				fprintf(stderr, "pipepair: clock_nanosleep: %s\n", strerror(err));
				exit(1);
			}
		}
		start = clock_ns(CLOCK_THREAD_CPUTIME_ID);
		while (burn_ns && clock_ns(CLOCK_THREAD_CPUTIME_ID) - start < burn_ns)
			seed = writer_burn(seed, BURN_CHUNK / 4);
		ret = writer_post(pipe_fds[1]);
		if (ret != 1) {
			fprintf(stderr, "pipepair: write: %s\n",
				ret < 0 ? strerror((int)-ret) : "short");
			exit(1);
		}
		writes++;
	}
	writer_loop_wall_ns = mono_ns() - wall0;
	writer_cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	writer_loop_cpu_ns = writer_cpu_ns - cpu0;
	burn_sink = seed;
	/* EOF ends the reader. */
	close(pipe_fds[1]);
	return NULL;
}

static void *reader_main(struct worker *w)
{
	char buf[64];

	for (;;) {
		long ret = reader_wait(pipe_fds[0], buf, sizeof(buf));

		if (ret == 0)
			break;
		if (ret < 0) {
			fprintf(stderr, "pipepair: read: %s\n", strerror((int)-ret));
			exit(1);
		}
		reads += (uint64_t)ret;
	}
	return NULL;
}

static struct worker workers[] = {
	{ .name = "pwriter", .fn = writer_main },
	{ .name = "preader", .fn = reader_main },
};

#define N_WORKERS (sizeof(workers) / sizeof(workers[0]))

int main(int argc, char **argv)
{
	double seconds, period_ms = 20, burn_ms = 0;
	uint64_t deadline;

	if (argc < 2 || argc > 4) {
		fprintf(stderr, "usage: %s SECONDS [PERIOD_MS [BURN_MS]]\n", argv[0]);
		return 2;
	}
	if (parse_positive(argv[1], 3600, &seconds)) {
		fprintf(stderr, "pipepair: bad duration '%s'\n", argv[1]);
		return 2;
	}
	if (argc == 3 && parse_positive(argv[2], 10000, &period_ms)) {
		fprintf(stderr, "pipepair: bad period '%s'\n", argv[2]);
		return 2;
	}
	if (argc == 4 && (parse_positive(argv[3], period_ms, &burn_ms))) {
		fprintf(stderr, "pipepair: bad burn '%s' (0 < BURN_MS < PERIOD_MS)\n", argv[3]);
		return 2;
	}
	period_ns = (uint64_t)(period_ms * 1e6);
	burn_ns = (uint64_t)(burn_ms * 1e6);
	if (pipe2(pipe_fds, O_CLOEXEC)) {
		perror("pipepair: pipe2");
		return 1;
	}
	deadline = mono_ns() + (uint64_t)(seconds * 1e9);

	start_workers(workers, N_WORKERS, "pipepair");

	sleep_until(deadline, "pipepair");
	atomic_store(&stop_flag, true);
	join_workers(workers, N_WORKERS);
	fprintf(stderr,
		"pipepair: truth pwriter tid %d cpu_ms %.3f loop_cpu_ms %.3f loop_wall_ms %.3f "
		"periods %llu overruns %llu\n",
		atomic_load(&workers[0].tid), (double)writer_cpu_ns / 1e6,
		(double)writer_loop_cpu_ns / 1e6, (double)writer_loop_wall_ns / 1e6,
		(unsigned long long)writes, (unsigned long long)writer_overruns);
	fprintf(stderr, "pipepair: truth writes %llu reads %llu period_ms %g\n",
		(unsigned long long)writes, (unsigned long long)reads, period_ms);
	return 0;
}
