/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syscaller: syscalls with known arguments, results and counts, for the
 * syscall marker tests.
 *
 *   main thread "syscaller"  sleeps until the duration ends
 *   thread "sfeeder"         every PERIOD_MS (absolute deadlines) writes
 *                            FEED_BYTES bytes to a pipe in one write(2)
 *   thread "sreader"         blocks in read(2) on the pipe, asking READ_ASK
 *                            bytes, and gets what one write put there
 *   thread "sspinner"        calls getppid(2) in a tight loop until the
 *                            duration ends, or MAX_GETPPID calls were made
 *   thread "ssleeper"        calls nanosleep(2) for 1 ms (relative), again
 *                            and again until the duration ends
 *
 * Usage: syscaller SECONDS [PERIOD_MS [MAX_GETPPID]]  (defaults: 20 ms, no limit)
 *
 * Prints "PID" on the first line, then "thread NAME TID" per worker, once all
 * run under their final names. At exit, on stderr, the ground truth:
 *
 *   syscaller: truth sreader tid T fd F ask A reads R bytes B
 *   syscaller: truth sfeeder tid T fd F bytes_per_write B writes W period_ms P
 *   syscaller: truth sspinner tid T getppid N loop_wall_ms W slow_1ms S
 *   syscaller: truth ssleeper tid T nanosleeps N under_1ms U
 *   syscaller: truth sreader_reads START+DUR START+DUR ...
 *
 * The last line has each read(2) of the reader (the first MAX_TIMED_READS):
 * when it began (CLOCK_MONOTONIC ns, the clock bpfprof stamps records with)
 * and how long it took by the reader's own clock (ns), so a check can hold
 * each read's marker against that read, on a busy machine too.
 * under_1ms counts the nanosleeps that took less than 1 ms by the sleeper's
 * own clock (none should: the kernel never wakes a sleep early).
 * reads counts every read(2) the reader made, the last one (end of file)
 * included; getppid every getppid(2) the spinner made. Each of these is
 * exactly one syscall: they are issued inline (raw_syscall.h), never
 * through a wrapper that might retry or skip the kernel.
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

/*
 * The reader asks for more than a write gives, so a read marker's "count"
 * (bytes asked) and its "ret" (bytes read) differ, and a test can tell
 * which of the two the profile put where.
 */
#define READ_ASK   4096
#define FEED_BYTES 100

static atomic_bool stop_flag;
static uint64_t period_ns = 20 * 1000000ull;
static uint64_t max_getppid; /* 0: no limit */
static int pipe_fds[2];
/* Each written by its own thread before it returns, read after the joins. */
static uint64_t writes, reads, bytes_read, getppid_calls, spin_wall_ns;
/*
 * getppid calls that took 1 ms or more by the spinner's own clock (vDSO,
 * around the call): a preemption inside one. The kernel's time of a call
 * is within that, so a profile has no more 1 ms syscall markers of it.
 */
static uint64_t slow_getppid_calls;
static uint64_t nanosleeps, short_nanosleeps;

/* One read(2), blocked until the feeder's next write (or EOF). An EINTR
 * would be a second syscall the truth does not count: fail instead. */
NOINLINE long reader_wait(int fd, char *buf, long len)
{
	KEEP_FRAME();
	return raw_syscall4(SYS_read, fd, (long)buf, len, 0);
}

NOINLINE long feeder_post(int fd, const char *buf, long len)
{
	KEEP_FRAME();
	return raw_syscall4(SYS_write, fd, (long)buf, len, 0);
}

NOINLINE long spinner_call(void)
{
	KEEP_FRAME();
	return raw_syscall4(SYS_getppid, 0, 0, 0, 0);
}

static void *feeder_main(struct worker *w)
{
	char buf[FEED_BYTES];
	uint64_t next = mono_ns();

	memset(buf, 'x', sizeof(buf));
	while (!atomic_load_explicit(&stop_flag, memory_order_relaxed)) {
		long ret;

		next += period_ns;
		/* A late period (busy machine) writes at once rather than twice later. */
		if (next > mono_ns())
			sleep_until(next, "sfeeder");
		ret = feeder_post(pipe_fds[1], buf, sizeof(buf));
		if (ret != (long)sizeof(buf)) {
			fprintf(stderr, "syscaller: write: %s\n",
				ret < 0 ? strerror((int)-ret) : "short");
			exit(1);
		}
		writes++;
	}
	/* EOF ends the reader. */
	close(pipe_fds[1]);
	return NULL;
}

#define MAX_TIMED_READS 4096
static uint64_t read_start_ns[MAX_TIMED_READS], read_dur_ns[MAX_TIMED_READS];

static void *reader_main(struct worker *w)
{
	char buf[READ_ASK];

	for (;;) {
		uint64_t t0 = mono_ns();
		long ret = reader_wait(pipe_fds[0], buf, sizeof(buf));

		if (reads < MAX_TIMED_READS) {
			read_start_ns[reads] = t0;
			read_dur_ns[reads] = mono_ns() - t0;
		}
		reads++;
		if (ret == 0)
			break;
		if (ret < 0) {
			fprintf(stderr, "syscaller: read: %s\n", strerror((int)-ret));
			exit(1);
		}
		bytes_read += (uint64_t)ret;
	}
	return NULL;
}

static void *spinner_main(struct worker *w)
{
	uint64_t t0 = mono_ns(), before = t0, after;
	uint64_t n = 0, slow = 0;
	long sink = 0;

	while (!atomic_load_explicit(&stop_flag, memory_order_relaxed) &&
	       (!max_getppid || n < max_getppid)) {
		sink += spinner_call();
		after = mono_ns();
		slow += after - before >= 1000000u;
		before = after;
		n++;
	}
	spin_wall_ns = mono_ns() - t0;
	getppid_calls = n;
	slow_getppid_calls = slow;
	burn_sink = (uint64_t)sink;
	return NULL;
}

NOINLINE long sleeper_nap(const struct timespec *ts)
{
	KEEP_FRAME();
	return raw_syscall4(SYS_nanosleep, (long)ts, 0, 0, 0);
}

static void *sleeper_main(struct worker *w)
{
	const struct timespec one_ms = { 0, 1000000 };

	while (!atomic_load_explicit(&stop_flag, memory_order_relaxed)) {
		uint64_t t0 = mono_ns();
		long ret = sleeper_nap(&one_ms);

		if (ret) {
			fprintf(stderr, "syscaller: nanosleep: %s\n", strerror((int)-ret));
			exit(1);
		}
		nanosleeps++;
		short_nanosleeps += mono_ns() - t0 < 1000000u;
	}
	return NULL;
}

static struct worker workers[] = {
	{ .name = "sreader", .fn = reader_main },
	{ .name = "sfeeder", .fn = feeder_main },
	{ .name = "sspinner", .fn = spinner_main },
	{ .name = "ssleeper", .fn = sleeper_main },
};

#define N_WORKERS (sizeof(workers) / sizeof(workers[0]))

int main(int argc, char **argv)
{
	double seconds, period_ms = 20, max_calls = 0;
	uint64_t deadline;

	if (argc < 2 || argc > 4) {
		fprintf(stderr, "usage: %s SECONDS [PERIOD_MS [MAX_GETPPID]]\n", argv[0]);
		return 2;
	}
	if (parse_number(argv[1], 0.01, 3600, &seconds)) {
		fprintf(stderr, "syscaller: bad duration '%s'\n", argv[1]);
		return 2;
	}
	if (argc >= 3 && parse_number(argv[2], 1, 10000, &period_ms)) {
		fprintf(stderr, "syscaller: bad period '%s' (1 to 10000 ms)\n", argv[2]);
		return 2;
	}
	if (argc == 4 && parse_number(argv[3], 1, 1e12, &max_calls)) {
		fprintf(stderr, "syscaller: bad getppid limit '%s'\n", argv[3]);
		return 2;
	}
	period_ns = (uint64_t)(period_ms * 1e6);
	max_getppid = (uint64_t)max_calls;
	if (pipe2(pipe_fds, O_CLOEXEC)) {
		perror("syscaller: pipe2");
		return 1;
	}
	deadline = mono_ns() + (uint64_t)(seconds * 1e9);

	start_workers(workers, N_WORKERS, "syscaller");

	sleep_until(deadline, "main");
	atomic_store(&stop_flag, true);
	join_workers(workers, N_WORKERS);
	fprintf(stderr, "syscaller: truth sreader tid %d fd %d ask %d reads %llu bytes %llu\n",
		atomic_load(&workers[0].tid), pipe_fds[0], READ_ASK, (unsigned long long)reads,
		(unsigned long long)bytes_read);
	fprintf(stderr,
		"syscaller: truth sfeeder tid %d fd %d bytes_per_write %d writes %llu period_ms "
		"%g\n",
		atomic_load(&workers[1].tid), pipe_fds[1], FEED_BYTES, (unsigned long long)writes,
		period_ms);
	fprintf(stderr,
		"syscaller: truth sspinner tid %d getppid %llu loop_wall_ms %.3f slow_1ms %llu\n",
		atomic_load(&workers[2].tid), (unsigned long long)getppid_calls,
		(double)spin_wall_ns / 1e6, (unsigned long long)slow_getppid_calls);
	fprintf(stderr, "syscaller: truth ssleeper tid %d nanosleeps %llu under_1ms %llu\n",
		atomic_load(&workers[3].tid), (unsigned long long)nanosleeps,
		(unsigned long long)short_nanosleeps);
	fprintf(stderr, "syscaller: truth sreader_reads");
	for (uint64_t i = 0; i < reads && i < MAX_TIMED_READS; i++)
		fprintf(stderr, " %llu+%llu", (unsigned long long)read_start_ns[i],
			(unsigned long long)read_dur_ns[i]);
	fprintf(stderr, "\n");
	return 0;
}
