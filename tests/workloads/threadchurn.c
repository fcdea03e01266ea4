/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * threadchurn: a thread pool that grows and shrinks all the time (issue 37):
 * for SECONDS, start 8 short threads and join them, again and again. Built
 * as distributions build (-O2 -fomit-frame-pointer) against the system's
 * glibc, so most samples are taken around thread creation: the parent in
 * clone3 (in the kernel's copy_process), the child on its first return to
 * user space, in clone3's code after the syscall that no FDE covers, and in
 * start_thread. Its stacks must end at the thread's root (glibc's CFI marks
 * it with an undefined return address), not run on past the stack's end.
 *
 * Usage: threadchurn SECONDS MAX_THREADS
 * Stops after SECONDS or once it started MAX_THREADS threads, whichever
 * comes first (a profile of 30k threads is slow to load, and the samples
 * come with the threads: ~1 on-CPU sample each 10). Prints
 * "threadchurn: truth pid P" once running.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define THREADS 8
/* A few µs of work per thread: creation and exit dominate, as in the report. */
#define WORK	2000

static volatile uint64_t sink;

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

__attribute__((noinline, noclone)) static void *churn_worker(void *arg)
{
	uint64_t v = (uintptr_t)arg;

	for (int i = 0; i < WORK; i++)
		v = v * 31 + (uint64_t)i;
	sink = v;
	return NULL;
}

/* pthread_create's caller, which every parent-side sample in clone3 must show. */
__attribute__((noinline, noclone)) static int churn_spawn(pthread_t *t, int n)
{
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, churn_worker, (void *)(uintptr_t)i))
			return i;
	return n;
}

__attribute__((noinline, noclone)) static int churn_round(void)
{
	pthread_t t[THREADS];
	int n = churn_spawn(t, THREADS);

	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return n;
}

int main(int argc, char **argv)
{
	double end = now() + (argc > 1 ? atof(argv[1]) : 2);
	long max = argc > 2 ? atol(argv[2]) : 5000, started = 0;

	printf("threadchurn: truth pid %d\n", (int)getpid());
	fflush(stdout);
	while (now() < end && started < max)
		started += churn_round();
	printf("threadchurn: started %ld threads\n", started);
	return 0;
}
