// SPDX-License-Identifier: BSD-2-Clause
/*
 * cpu_work: the CPU-bound workload of the overhead benchmark.
 *
 * Runs N threads for a fixed wall time, each doing the same deterministic
 * compute kernel, and prints how many operations they completed. The
 * benchmark compares throughput, not run time: a fixed-time run does not
 * depend on how long the process takes to start or to exit, and a profiler
 * that steals CPU shows up directly as fewer operations.
 *
 * The kernel hashes and mixes a small per-thread array through a few levels
 * of non-inlined calls, so sampled stacks are several frames deep (the
 * benchmark builds this with frame pointers, which both profilers walk).
 *
 * Besides the throughput over wall time it reports the throughput per CPU
 * second its threads actually got (CLOCK_THREAD_CPUTIME_ID): on a machine
 * shared with other work, that one does not fall just because another
 * process took the CPU, while a sampling interrupt (and the BPF program in
 * it) is charged to the thread it interrupts unless the kernel accounts IRQ
 * time separately (CONFIG_IRQ_TIME_ACCOUNTING).
 *
 * Usage: cpu_work [-t THREADS] [-s SECONDS]
 * Output (one line on stdout):
 *   ops=N threads=T seconds=S ops_per_s=R cpu_s=U ops_per_cpu_s=P checksum=C
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Small enough to stay in L1: the benchmark measures CPU, not memory. */
#define WORK_WORDS    64
/* Operations between two looks at the stop flag. */
#define OPS_PER_BATCH 256
#define MAX_THREADS   1024

struct worker {
	pthread_t thread;
	unsigned int index;
	uint64_t ops;
	uint64_t checksum;
	double cpu_s; /* CPU time this thread got while measured */
	uint64_t words[WORK_WORDS];
	/* Keep each worker's counters on its own cache lines. */
	char pad[64];
};

static atomic_int go;
static atomic_int stop;

/* A murmur3-style finalizer: a few multiplies and shifts, fully deterministic. */
static __attribute__((noinline)) uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

/* FNV-1a over the bytes of one word, for a second, byte-wise kind of work. */
static __attribute__((noinline)) uint64_t fnv1a_word(uint64_t h, uint64_t w)
{
	for (int i = 0; i < 8; i++) {
		h ^= (w >> (i * 8)) & 0xff;
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* One operation: hash one word of the array and write back an update. */
static __attribute__((noinline)) uint64_t work_op(uint64_t *words, uint64_t i, uint64_t h)
{
	uint64_t *w = &words[i % WORK_WORDS];

	h = fnv1a_word(h, *w);
	*w = mix64(*w + h) + i * 0x9e3779b97f4a7c15ULL;
	/* Some plain arithmetic, including a division, between the hashes. */
	return h + (*w % 1000003) * 31;
}

static __attribute__((noinline)) uint64_t work_batch(struct worker *wk, uint64_t h)
{
	for (unsigned int i = 0; i < OPS_PER_BATCH; i++)
		h = work_op(wk->words, wk->ops + i, h);
	wk->ops += OPS_PER_BATCH;
	return h;
}

static double thread_cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *worker_main(void *arg)
{
	struct worker *wk = arg;
	uint64_t h = 0xcbf29ce484222325ULL ^ wk->index;
	double cpu_start;

	for (int i = 0; i < WORK_WORDS; i++)
		wk->words[i] = mix64(((uint64_t)wk->index << 32) | (uint64_t)i);
	/* Start together, so every thread runs for the whole measured window. */
	while (!atomic_load_explicit(&go, memory_order_acquire))
		;
	cpu_start = thread_cpu_s();
	while (!atomic_load_explicit(&stop, memory_order_relaxed))
		h = work_batch(wk, h);
	wk->cpu_s = thread_cpu_s() - cpu_start;
	wk->checksum = h;
	return NULL;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: cpu_work [-t THREADS] [-s SECONDS]\n"
		   "  -t THREADS  worker threads (default: online CPUs)\n"
		   "  -s SECONDS  wall time to run (default 3)\n");
}

int main(int argc, char **argv)
{
	long threads = sysconf(_SC_NPROCESSORS_ONLN);
	double seconds = 3.0, start, elapsed, cpu_s = 0;
	struct timespec sleep_for;
	struct worker *workers;
	uint64_t ops = 0, checksum = 0;
	char *end;
	int opt, err;

	while ((opt = getopt(argc, argv, "t:s:h")) != -1) {
		switch (opt) {
		case 't':
			errno = 0;
			threads = strtol(optarg, &end, 10);
			if (errno || *end || threads < 1 || threads > MAX_THREADS) {
				fprintf(stderr, "cpu_work: -t wants 1..%d threads\n", MAX_THREADS);
				return 2;
			}
			break;
		case 's':
			errno = 0;
			seconds = strtod(optarg, &end);
			if (errno || *end || !(seconds > 0 && seconds <= 3600)) {
				fprintf(stderr, "cpu_work: -s wants a number of seconds > 0\n");
				return 2;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (threads < 1)
		threads = 1;

	workers = calloc((size_t)threads, sizeof(*workers));
	if (!workers) {
		fprintf(stderr, "cpu_work: out of memory\n");
		return 1;
	}
	for (long i = 0; i < threads; i++) {
		workers[i].index = (unsigned int)i;
		err = pthread_create(&workers[i].thread, NULL, worker_main, &workers[i]);
		if (err) {
			fprintf(stderr, "cpu_work: cannot create thread %ld (%s)\n", i,
				strerror(err));
			/* Let the threads already started finish, then fail. */
			atomic_store(&stop, 1);
			atomic_store_explicit(&go, 1, memory_order_release);
			for (long j = 0; j < i; j++)
				pthread_join(workers[j].thread, NULL);
			free(workers);
			return 1;
		}
	}

	sleep_for.tv_sec = (time_t)seconds;
	sleep_for.tv_nsec = (long)((seconds - (double)sleep_for.tv_sec) * 1e9);
	start = now_s();
	atomic_store_explicit(&go, 1, memory_order_release);
	while (nanosleep(&sleep_for, &sleep_for) == -1 && errno == EINTR)
		;
	atomic_store_explicit(&stop, 1, memory_order_relaxed);
	/*
	 * The window is measured, not assumed: on a loaded machine the sleep
	 * can overrun, and the rate must be over the time actually given.
	 */
	elapsed = now_s() - start;

	for (long i = 0; i < threads; i++) {
		pthread_join(workers[i].thread, NULL);
		ops += workers[i].ops;
		cpu_s += workers[i].cpu_s;
		checksum ^= workers[i].checksum;
	}
	/* The checksum keeps the compiler from discarding the work. */
	printf("ops=%" PRIu64
	       " threads=%ld seconds=%.6f ops_per_s=%.0f cpu_s=%.6f ops_per_cpu_s=%.0f "
	       "checksum=%016" PRIx64 "\n",
	       ops, threads, elapsed, (double)ops / elapsed, cpu_s,
	       cpu_s > 0 ? (double)ops / cpu_s : 0.0, checksum);
	free(workers);
	return 0;
}
