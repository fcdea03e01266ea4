// SPDX-License-Identifier: BSD-2-Clause
/*
 * spawner [CHILDREN [CHILD_MS]]: processes coming and going during a
 * recording (issue 4).
 *
 *  - CHILDREN short-lived children, one after another: each renames itself
 *    "spawn-child", burns CHILD_MS of CPU in child_work() and exits;
 *  - a thread that starts as "before-rename", burns in renamer_burn(),
 *    renames itself "after-rename" half-way and burns on;
 *  - a child that execs this binary again as "spawner --exec-image", which
 *    burns in exec_image_work() (the new image's own function).
 *
 * Prints its pid first, then "thread NAME TID" lines, on stdout; on stderr
 * "spawner: truth child PID", "spawner: truth exec PID" lines.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "workload.h"

static double now_s(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Burn CPU in `fn` until `seconds` of this thread's CPU time are used. */
static void burn_cpu(void (*fn)(void), double seconds)
{
	double end = now_s(CLOCK_THREAD_CPUTIME_ID) + seconds;

	while (now_s(CLOCK_THREAD_CPUTIME_ID) < end)
		fn();
}

static NOINLINE void child_work(void)
{
	uint64_t x = burn_sink | 1;

	KEEP_FRAME();
	for (int i = 0; i < BURN_CHUNK; i++)
		x = xorshift64(x);
	burn_sink = x;
}

static NOINLINE void renamer_burn(void)
{
	uint64_t x = burn_sink | 3;

	KEEP_FRAME();
	for (int i = 0; i < BURN_CHUNK; i++)
		x = xorshift64(x);
	burn_sink = x;
}

static NOINLINE void exec_image_work(void)
{
	uint64_t x = burn_sink | 5;

	KEEP_FRAME();
	for (int i = 0; i < BURN_CHUNK; i++)
		x = xorshift64(x);
	burn_sink = x;
}

static void *renamer_main(void *arg)
{
	(void)arg;
	burn_cpu(renamer_burn, 0.3);
	pthread_setname_np(pthread_self(), "after-rename");
	burn_cpu(renamer_burn, 0.3);
	return NULL;
}

static int spawn_children(int children, double child_s)
{
	for (int i = 0; i < children; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("spawner: fork");
			return 1;
		}
		if (pid == 0) {
			prctl(PR_SET_NAME, "spawn-child");
			burn_cpu(child_work, child_s);
			_exit(0);
		}
		fprintf(stderr, "spawner: truth child %d\n", (int)pid);
		if (waitpid(pid, NULL, 0) != pid) {
			perror("spawner: waitpid");
			return 1;
		}
	}
	return 0;
}

static int run_exec_child(const char *self)
{
	pid_t pid = fork();

	if (pid < 0) {
		perror("spawner: fork");
		return 1;
	}
	if (pid == 0) {
		execl(self, self, "--exec-image", (char *)NULL);
		perror("spawner: exec");
		_exit(127);
	}
	fprintf(stderr, "spawner: truth exec %d\n", (int)pid);
	return waitpid(pid, NULL, 0) == pid ? 0 : 1;
}

int main(int argc, char **argv)
{
	int children = 50, ret;
	double child_ms = 20;
	pthread_t renamer;

	if (argc == 2 && !strcmp(argv[1], "--exec-image")) {
		burn_cpu(exec_image_work, 0.3);
		return 0;
	}
	if (argc > 1)
		children = atoi(argv[1]);
	if (argc > 2)
		child_ms = atof(argv[2]);
	if (children < 1 || children > 10000 || child_ms <= 0 || child_ms > 10000) {
		fprintf(stderr, "usage: %s [CHILDREN [CHILD_MS]]\n", argv[0]);
		return 2;
	}
	printf("%d\n", (int)getpid());
	pthread_setname_np(pthread_self(), "spawner");
	fflush(stdout);
	if (pthread_create(&renamer, NULL, renamer_main, NULL)) {
		fprintf(stderr, "spawner: cannot start a thread\n");
		return 1;
	}
	pthread_setname_np(renamer, "before-rename");
	ret = spawn_children(children, child_ms / 1e3);
	{
		/* Its real path: exec'd as /proc/self/exe it would be named "exe". */
		char self[4096];
		ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

		if (n <= 0) {
			perror("spawner: readlink /proc/self/exe");
			return 1;
		}
		self[n] = '\0';
		ret = ret ?: run_exec_child(self);
	}
	pthread_join(renamer, NULL);
	return ret;
}
