/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * burner: a process with known behaviour for the integration tests.
 *
 *   main thread "bpfprof-burner"  sleeps until the duration ends
 *   thread "burner-truth"         wakes every TRUTH_PERIOD_MS to print the truth
 *   thread "alpha"                alpha_heavy 75 % / alpha_light 25 % of its CPU time
 *   thread "beta"                 beta_spin 100 %
 *   thread "sysc"                 read(2) of 4 KiB from /dev/zero in a tight loop,
 *                                 issued by inline asm inside sysc_loop
 *
 * Usage: burner SECONDS
 * Prints "PID" on the first line, then "thread NAME TID" per worker, once every
 * thread is running under its final name, so a test can attach with -p at once.
 * Then, every TRUTH_PERIOD_MS, the CPU time each worker has used so far, as
 * the kernel counts it, so a test knows what a window of a recording holds
 * however busy the machine was:
 *   burner: truth mono_ns T alpha NS beta NS sysc NS
 *
 * Build with -O1 -fno-omit-frame-pointer -fno-inline: the profiler unwinds user
 * stacks with frame pointers, and every function named above must keep its own
 * frame to be seen.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pthread_setname_np */
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "workload.h"

static atomic_bool stop_flag;

NOINLINE uint64_t alpha_heavy(uint64_t seed, int iterations)
{
	KEEP_FRAME();
	for (int i = 0; i < iterations; i++)
		seed = xorshift64(seed) + (uint64_t)i;
	return seed;
}

NOINLINE uint64_t alpha_light(uint64_t seed, int iterations)
{
	KEEP_FRAME();
	for (int i = 0; i < iterations; i++)
		seed = xorshift64(seed) ^ (uint64_t)i;
	return seed;
}

NOINLINE uint64_t beta_spin(uint64_t seed, int iterations)
{
	KEEP_FRAME();
	for (int i = 0; i < iterations; i++)
		seed = xorshift64(seed) * 3 + 1;
	return seed;
}

/*
 * The syscall is issued here, not through glibc: glibc is built without frame
 * pointers, so a sample taken inside the kernel would unwind from the wrapper
 * straight to our caller's caller and sysc_loop would never be seen.
 */
NOINLINE long sysc_loop(int fd, char *buf, int count)
{
	long total = 0;

	KEEP_FRAME();
	for (int i = 0; i < count; i++) {
		long ret;
#if defined(__x86_64__)
		register long rax __asm__("rax") = SYS_read;
		register long rdi __asm__("rdi") = fd;
		register long rsi __asm__("rsi") = (long)buf;
		register long rdx __asm__("rdx") = 4096;
		__asm__ volatile("syscall"
				 : "+r"(rax)
				 : "r"(rdi), "r"(rsi), "r"(rdx)
				 : "rcx", "r11", "memory");
		ret = rax;
#elif defined(__aarch64__)
		register long x8 __asm__("x8") = SYS_read;
		register long x0 __asm__("x0") = fd;
		register long x1 __asm__("x1") = (long)buf;
		register long x2 __asm__("x2") = 4096;
		__asm__ volatile("svc #0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2) : "memory");
		ret = x0;
#else
#error "burner supports x86_64 and aarch64"
#endif
		if (ret < 0)
			return ret;
		total += ret;
	}
	return total;
}

/*
 * Alternate between the two functions in rounds whose length is random (1-3 ms
 * of CPU time for alpha_light, three times that for alpha_heavy): measured in
 * CPU time, the split is 75/25 whatever the scheduler does, and the random
 * lengths keep the rounds from locking step with a fixed sampling period.
 */
static void *alpha_main(struct worker *w)
{
	uint64_t seed = 0x9e3779b97f4a7c15u;
	unsigned int rnd = 12345;

	while (!atomic_load_explicit(&stop_flag, memory_order_relaxed)) {
		uint64_t unit = 1000000u + (uint64_t)(rand_r(&rnd) % 2000001u);
		uint64_t start = clock_ns(CLOCK_THREAD_CPUTIME_ID);

		while (clock_ns(CLOCK_THREAD_CPUTIME_ID) - start < 3 * unit)
			seed = alpha_heavy(seed, BURN_CHUNK);
		start = clock_ns(CLOCK_THREAD_CPUTIME_ID);
		while (clock_ns(CLOCK_THREAD_CPUTIME_ID) - start < unit)
			seed = alpha_light(seed, BURN_CHUNK);
	}
	burn_sink = seed;
	return NULL;
}

static void *beta_main(struct worker *w)
{
	uint64_t seed = 0x2545f4914f6cdd1du;

	while (!atomic_load_explicit(&stop_flag, memory_order_relaxed))
		seed = beta_spin(seed, BURN_CHUNK);
	burn_sink = seed;
	return NULL;
}

static void *sysc_main(struct worker *w)
{
	static char buf[4096];
	long total = 0;
	int fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		fprintf(stderr, "burner: /dev/zero: %s\n", strerror(errno));
		exit(1);
	}
	while (!atomic_load_explicit(&stop_flag, memory_order_relaxed)) {
		long ret = sysc_loop(fd, buf, 64);

		if (ret < 0) {
			fprintf(stderr, "burner: read /dev/zero: %s\n", strerror((int)-ret));
			exit(1);
		}
		total += ret;
	}
	burn_sink = (uint64_t)total;
	close(fd);
	return NULL;
}

/* Often enough that interpolating between two lines errs by little. */
#define TRUTH_PERIOD_MS 20

static struct worker workers[] = {
	{ .name = "alpha", .fn = alpha_main },
	{ .name = "beta", .fn = beta_main },
	{ .name = "sysc", .fn = sysc_main },
};

#define N_WORKERS (sizeof(workers) / sizeof(workers[0]))

/* One truth line: the time, then each worker's CPU time by its thread CPU clock. */
static void print_truth(const clockid_t *clocks)
{
	printf("burner: truth mono_ns %llu", (unsigned long long)mono_ns());
	for (size_t i = 0; i < N_WORKERS; i++)
		printf(" %s %llu", workers[i].name, (unsigned long long)clock_ns(clocks[i]));
	printf("\n");
	fflush(stdout);
}

/*
 * Prints the truth lines until the burner stops, from a thread of its own:
 * the main thread sleeps through the whole run (the tests check its wait).
 */
static void *truth_main(void *arg)
{
	clockid_t clocks[N_WORKERS];
	uint64_t next = mono_ns();
	int err;

	(void)arg;
	pthread_setname_np(pthread_self(), "burner-truth");

	for (size_t i = 0; i < N_WORKERS; i++) {
		err = pthread_getcpuclockid(workers[i].thread, &clocks[i]);
		if (err) {
			fprintf(stderr, "burner: pthread_getcpuclockid: %s\n", strerror(err));
			exit(1);
		}
	}
	while (!atomic_load_explicit(&stop_flag, memory_order_relaxed)) {
		print_truth(clocks);
		next += TRUTH_PERIOD_MS * 1000000ull;
		sleep_until(next, "burner");
	}
	print_truth(clocks);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t truth_thread;
	uint64_t deadline;
	double seconds;
	int err;

	if (argc != 2) {
		fprintf(stderr, "usage: %s SECONDS\n", argv[0]);
		return 2;
	}
	if (parse_positive(argv[1], 3600, &seconds)) {
		fprintf(stderr, "burner: bad duration '%s'\n", argv[1]);
		return 2;
	}
	if (prctl(PR_SET_NAME, "bpfprof-burner", 0, 0, 0)) {
		perror("burner: prctl(PR_SET_NAME)");
		return 1;
	}

	deadline = mono_ns() + (uint64_t)(seconds * 1e9);
	start_workers(workers, N_WORKERS, "burner");
	err = pthread_create(&truth_thread, NULL, truth_main, NULL);
	if (err) {
		fprintf(stderr, "burner: pthread_create: %s\n", strerror(err));
		return 1;
	}
	sleep_until(deadline, "burner");

	atomic_store(&stop_flag, true);
	pthread_join(truth_thread, NULL);
	join_workers(workers, N_WORKERS);
	return 0;
}
