/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * sleeper: threads with a known on-CPU share, for the scheduler tests.
 *
 *   main thread "sleeper"   sleeps until the duration ends
 *   thread "sleeper90"      per period P: burns 10 % of P of CPU time in
 *                           sleeper_burn, then sleeps in clock_nanosleep,
 *                           issued from sleeper_wait, until the period ends
 *   thread "busy100"        spins in busy_spin the whole time
 *
 * Usage: sleeper SECONDS [PERIOD_MS]      (PERIOD_MS defaults to 10)
 *
 * Prints "PID" on the first line, then "thread NAME TID" per worker, once every
 * worker runs under its final name. At exit it prints the ground truth on
 * stderr, measured by each thread itself with CLOCK_THREAD_CPUTIME_ID:
 *
 *   sleeper: truth NAME tid TID cpu_ms C loop_cpu_ms L loop_wall_ms W periods N overruns O
 *
 * cpu_ms is the thread's CPU time from its creation to the end of its loop,
 * loop_cpu_ms / loop_wall_ms its CPU share while it looped. The test compares
 * the profile with these numbers, not only with the nominal 10 % and 100 %.
 *
 * The burn is measured in CPU time, and the periods are absolute deadlines:
 * when other load delays the burn, the CPU share stays 10 % as long as a burn
 * fits its period (overruns counts those that did not).
 *
 * Build with -O1 -fno-omit-frame-pointer -fno-inline (see burner.c).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pthread_setname_np */
#endif
#include <errno.h>
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

/* A few µs per call: the CPU clock read between calls (a system call) stays
 * a small part of the burn, and the burn overshoots its 10 % by little. */
#define SLEEPER_CHUNK	      (BURN_CHUNK / 4)
#define SLEEPER_SHARE_PERCENT 10

static atomic_bool stop_flag;
static uint64_t period_ns = 10 * 1000000ull;

/* Ground truth per worker (its struct worker's state), written before it returns. */
struct truth {
	uint64_t cpu_ns, loop_cpu_ns, loop_wall_ns;
	uint64_t periods, overruns;
};

NOINLINE uint64_t sleeper_burn(uint64_t seed, int iterations)
{
	KEEP_FRAME();
	for (int i = 0; i < iterations; i++)
		seed = xorshift64(seed) + (uint64_t)i;
	return seed;
}

NOINLINE uint64_t busy_spin(uint64_t seed, int iterations)
{
	KEEP_FRAME();
	for (int i = 0; i < iterations; i++)
		seed = xorshift64(seed) * 5 + 1;
	return seed;
}

/* Sleeps until the absolute CLOCK_MONOTONIC time `deadline`. The syscall is
 * issued here so that the off-CPU stack shows this function (raw_syscall.h). */
NOINLINE int sleeper_wait(const struct timespec *deadline)
{
	long ret;

	KEEP_FRAME();
	do
		ret = raw_syscall4(SYS_clock_nanosleep, CLOCK_MONOTONIC, TIMER_ABSTIME,
				   (long)deadline, 0);
	while (ret == -EINTR);
	return (int)ret;
}

static void *sleeper_main(struct worker *self)
{
	struct truth *w = self->state;
	uint64_t burn_ns = period_ns * SLEEPER_SHARE_PERCENT / 100;
	uint64_t seed = 0x9e3779b97f4a7c15u;
	uint64_t cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	uint64_t wall0 = clock_ns(CLOCK_MONOTONIC);
	uint64_t next = wall0;

	while (!atomic_load_explicit(&stop_flag, memory_order_relaxed)) {
		uint64_t start = clock_ns(CLOCK_THREAD_CPUTIME_ID);
		uint64_t now;
		struct timespec deadline;
		int err;

		while (clock_ns(CLOCK_THREAD_CPUTIME_ID) - start < burn_ns)
			seed = sleeper_burn(seed, SLEEPER_CHUNK);
		w->periods++;
		next += period_ns;
		now = clock_ns(CLOCK_MONOTONIC);
		if (next < now) {
			/* The burn did not fit its period: start afresh. */
			w->overruns++;
			next = now;
			continue;
		}
		deadline = ns_to_timespec(next);
		err = sleeper_wait(&deadline);
		if (err) {
			fprintf(stderr, "sleeper: clock_nanosleep: %s\n", strerror(-err));
			exit(1);
		}
	}
	w->loop_wall_ns = clock_ns(CLOCK_MONOTONIC) - wall0;
	w->cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	w->loop_cpu_ns = w->cpu_ns - cpu0;
	burn_sink = seed;
	return NULL;
}

static void *busy_main(struct worker *self)
{
	struct truth *w = self->state;
	uint64_t seed = 0x2545f4914f6cdd1du;
	uint64_t cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	uint64_t wall0 = clock_ns(CLOCK_MONOTONIC);

	while (!atomic_load_explicit(&stop_flag, memory_order_relaxed))
		seed = busy_spin(seed, BURN_CHUNK);
	w->loop_wall_ns = clock_ns(CLOCK_MONOTONIC) - wall0;
	w->cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	w->loop_cpu_ns = w->cpu_ns - cpu0;
	burn_sink = seed;
	return NULL;
}

static struct truth truths[2];
static struct worker workers[] = {
	{ .name = "sleeper90", .fn = sleeper_main, .state = &truths[0] },
	{ .name = "busy100", .fn = busy_main, .state = &truths[1] },
};

#define N_WORKERS (sizeof(workers) / sizeof(workers[0]))

int main(int argc, char **argv)
{
	double seconds, period_ms = 10;
	uint64_t deadline;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: %s SECONDS [PERIOD_MS]\n", argv[0]);
		return 2;
	}
	if (parse_positive(argv[1], 3600, &seconds)) {
		fprintf(stderr, "sleeper: bad duration '%s'\n", argv[1]);
		return 2;
	}
	if (argc == 3 && parse_positive(argv[2], 10000, &period_ms)) {
		fprintf(stderr, "sleeper: bad period '%s'\n", argv[2]);
		return 2;
	}
	period_ns = (uint64_t)(period_ms * 1e6);
	deadline = mono_ns() + (uint64_t)(seconds * 1e9);

	start_workers(workers, N_WORKERS, "sleeper");

	sleep_until(deadline, "sleeper");
	atomic_store(&stop_flag, true);
	join_workers(workers, N_WORKERS);

	for (size_t i = 0; i < N_WORKERS; i++) {
		const struct truth *w = workers[i].state;

		fprintf(stderr,
			"sleeper: truth %s tid %d cpu_ms %.3f loop_cpu_ms %.3f loop_wall_ms %.3f "
			"periods %llu overruns %llu\n",
			workers[i].name, atomic_load(&workers[i].tid), (double)w->cpu_ns / 1e6,
			(double)w->loop_cpu_ns / 1e6, (double)w->loop_wall_ns / 1e6,
			(unsigned long long)w->periods, (unsigned long long)w->overruns);
	}
	return 0;
}
