/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * idlers: many threads asleep all along, for the cost of giving -a's
 * sleepers their wait (issue 28): N threads, each in clock_nanosleep from
 * idler_wait until the duration ends, on small stacks.
 *
 * Usage: idlers SECONDS [THREADS]   (default 5000 threads)
 *
 * Prints "PID" on the first line once every thread has started.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "workload.h"

static struct timespec deadline;

/* Sleeps to the deadline: the off-CPU stack shows this function. */
NOINLINE void idler_wait(void)
{
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, NULL))
		;
}

static void *idler(void *arg)
{
	(void)arg;
	idler_wait();
	return NULL;
}

int main(int argc, char **argv)
{
	long seconds = argc > 1 ? atol(argv[1]) : 10, n = argc > 2 ? atol(argv[2]) : 5000;
	pthread_attr_t attr;
	pthread_t *th = calloc((size_t)n, sizeof(*th));

	if (seconds <= 0 || n <= 0 || !th) {
		fprintf(stderr, "usage: idlers SECONDS [THREADS]\n");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += seconds;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (long i = 0; i < n; i++)
		if (pthread_create(&th[i], &attr, idler, NULL)) {
			fprintf(stderr, "idlers: thread %ld: cannot create\n", i);
			return 1;
		}
	printf("%d\n", (int)getpid());
	fflush(stdout);
	idler_wait();
	for (long i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	free(th);
	return 0;
}
