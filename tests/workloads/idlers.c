/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * idlers: many threads asleep all along, for the cost of giving -a's
 * sleepers their wait (issue 28): N threads, each in clock_nanosleep from
 * idler_wait until the duration ends, on small stacks.
 *
 * Usage: idlers SECONDS [THREADS [late]]   (default 5000 threads)
 *
 * Prints "PID" on the first line once every thread has started. With
 * `late` (issue 37: threads that fall asleep during a recording), it
 * prints "PID" first, waits for SIGUSR1, then starts the threads and
 * prints "started".
 */
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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
	bool late = argc > 3 && !strcmp(argv[3], "late");
	pthread_attr_t attr;
	pthread_t *th = calloc((size_t)n, sizeof(*th));
	sigset_t go;
	int sig;

	if (seconds <= 0 || n <= 0 || !th) {
		fprintf(stderr, "usage: idlers SECONDS [THREADS [late]]\n");
		return 2;
	}
	if (late) {
		sigemptyset(&go);
		sigaddset(&go, SIGUSR1);
		sigprocmask(SIG_BLOCK, &go, NULL);
		printf("%d\n", (int)getpid());
		fflush(stdout);
		sigwait(&go, &sig);
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
	if (late)
		printf("started\n");
	else
		printf("%d\n", (int)getpid());
	fflush(stdout);
	idler_wait();
	for (long i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	free(th);
	return 0;
}
