/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Helpers shared by the integration-test workloads. Workloads are built with
 * -O1 -fno-omit-frame-pointer -fno-inline so that the profiler, which unwinds
 * user stacks with frame pointers, sees every burn function with its caller.
 */
#ifndef BPFPROF_WORKLOAD_H
#define BPFPROF_WORKLOAD_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pthread_setname_np */
#endif
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

/* Iterations per call of a burn function: some tens of µs, so the loop that
 * checks the clock or the stop flag between calls costs well under 1 %. */
#define BURN_CHUNK 20000

/* Results are stored here so that the compiler cannot delete the work. */
static volatile uint64_t burn_sink;
static void *volatile frame_sink;

/*
 * GCC drops the frame of a leaf function that never touches the stack, even
 * with -fno-omit-frame-pointer; a sample in such a function unwinds straight
 * to its caller's caller. Taking the frame address forces a real frame.
 */
#define KEEP_FRAME() (frame_sink = __builtin_frame_address(0))

/*
 * A macro, not a function: a call would become the sampled leaf under
 * -fno-inline, and an inline function would too, as an inlined frame of its
 * own (bpfprof shows inline frames from DWARF). Either hides the burn
 * function that the tests look for on top.
 */
#define xorshift64(v)              \
	({                         \
		uint64_t x_ = (v); \
		x_ ^= x_ << 13;    \
		x_ ^= x_ >> 7;     \
		x_ ^= x_ << 17;    \
		x_;                \
	})

/* ---- clocks ------------------------------------------------------------ */

static inline uint64_t clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t mono_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

static inline struct timespec ns_to_timespec(uint64_t ns)
{
	return (struct timespec){ .tv_sec = (time_t)(ns / 1000000000ull),
				  .tv_nsec = (long)(ns % 1000000000ull) };
}

/* Sleeps until CLOCK_MONOTONIC reaches `ns`; exits the workload on failure. */
static inline void sleep_until(uint64_t ns, const char *who)
{
	struct timespec deadline = ns_to_timespec(ns);
	int err;

	while ((err = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, NULL)) == EINTR)
		;
	if (err) {
		fprintf(stderr, "%s: clock_nanosleep: %s\n", who, strerror(err));
		exit(1);
	}
}

/* A number in [min, max] from the whole of `s`; 0 or -EINVAL. */
static inline int parse_number(const char *s, double min, double max, double *out)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end || !(v >= min && v <= max))
		return -EINVAL;
	*out = v;
	return 0;
}

/* A number strictly between 0 and max, from the whole of `s`; 0 or -EINVAL. */
static inline int parse_positive(const char *s, double max, double *out)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end || !(v > 0 && v < max))
		return -EINVAL;
	*out = v;
	return 0;
}

/* ---- named worker threads -------------------------------------------------- */

/*
 * A workload thread: it names itself `name` and publishes its tid before it
 * runs fn, so that by the time the workload prints its tids no thread still
 * carries the inherited name. `state`: the workload's own per-thread data.
 */
struct worker {
	const char *name;
	void *(*fn)(struct worker *w);
	void *state;
	pthread_t thread;
	atomic_int tid;
};

static inline void *worker_start(void *arg)
{
	struct worker *w = arg;

	pthread_setname_np(pthread_self(), w->name);
	atomic_store(&w->tid, (int)syscall(SYS_gettid));
	return w->fn(w);
}

/*
 * Starts the workers and prints the truth the tests read first: the pid,
 * then "thread NAME TID" per worker, on stdout. Exits the workload on failure.
 */
static inline void start_workers(struct worker *w, size_t n, const char *prog)
{
	int err;

	for (size_t i = 0; i < n; i++) {
		err = pthread_create(&w[i].thread, NULL, worker_start, &w[i]);
		if (err) {
			fprintf(stderr, "%s: pthread_create: %s\n", prog, strerror(err));
			exit(1);
		}
	}
	for (size_t i = 0; i < n; i++)
		while (!atomic_load(&w[i].tid))
			sched_yield();
	printf("%d\n", (int)getpid());
	for (size_t i = 0; i < n; i++)
		printf("thread %s %d\n", w[i].name, atomic_load(&w[i].tid));
	fflush(stdout);
}

static inline void join_workers(struct worker *w, size_t n)
{
	for (size_t i = 0; i < n; i++)
		pthread_join(w[i].thread, NULL);
}

#endif /* BPFPROF_WORKLOAD_H */
