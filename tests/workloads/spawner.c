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
 * "spawner: truth self PID", "spawner: truth child PID", "spawner: truth exec
 * PID" lines.
 *
 * In a pid namespace of its own, the pids it sees are not the profiler's.
 * SPAWNER_HOST_PROC=DIR, a procfs mounted from the profiler's pid namespace,
 * makes the truth lines give the pids as that namespace sees them, followed
 * by " ns PID" with the pid seen here.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
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

/*
 * The pid of our child `pid` in the pid namespace of the procfs at
 * `host_proc`: the "Pid:" line of a pidfd's fdinfo is in the namespace of
 * the procfs it is read through. -1 when it cannot be told.
 */
static long host_pid_of_child(const char *host_proc, pid_t pid)
{
	char path[4200], buf[1024];
	long host = -1;
	int pidfd, fd;
	ssize_t n;

	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0) {
		perror("spawner: pidfd_open");
		return -1;
	}
	if (snprintf(path, sizeof(path), "%s/self/fdinfo/%d", host_proc, pidfd) >=
	    (int)sizeof(path))
		fd = -1;
	else
		fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		perror(path);
		close(pidfd);
		return -1;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	if (n > 0) {
		char *line;

		buf[n] = '\0';
		line = strstr(buf, "\nPid:");
		if (line)
			host = strtol(line + 5, NULL, 10);
	}
	close(fd);
	close(pidfd);
	return host > 0 ? host : -1;
}

/* Our own pid in the namespace of the procfs at `host_proc`: its "self". */
static long host_pid_of_self(const char *host_proc)
{
	char path[4200], link[32];
	ssize_t n;

	if (snprintf(path, sizeof(path), "%s/self", host_proc) >= (int)sizeof(path)) {
		fprintf(stderr, "spawner: SPAWNER_HOST_PROC is too long\n");
		return -1;
	}
	n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0) {
		perror(path);
		return -1;
	}
	link[n] = '\0';
	return strtol(link, NULL, 10);
}

/*
 * "spawner: truth WHAT PID" for `pid` (our own when `self`), translated into
 * the profiler's pid namespace when SPAWNER_HOST_PROC says where its procfs
 * is. Returns 0, or 1 when the translation fails.
 */
static int print_truth(const char *what, pid_t pid, int self)
{
	const char *host_proc = getenv("SPAWNER_HOST_PROC");
	long host;

	if (!host_proc || !*host_proc) {
		fprintf(stderr, "spawner: truth %s %d\n", what, (int)pid);
		return 0;
	}
	host = self ? host_pid_of_self(host_proc) : host_pid_of_child(host_proc, pid);
	if (host <= 0) {
		fprintf(stderr, "spawner: cannot tell pid %d's pid in %s\n", (int)pid, host_proc);
		return 1;
	}
	fprintf(stderr, "spawner: truth %s %ld ns %d\n", what, host, (int)pid);
	return 0;
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
		/* Before waitpid: a reaped child has no pid to translate. */
		if (print_truth("child", pid, 0)) {
			waitpid(pid, NULL, 0);
			return 1;
		}
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
	if (print_truth("exec", pid, 0)) {
		waitpid(pid, NULL, 0);
		return 1;
	}
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
	if (print_truth("self", getpid(), 1))
		return 1;
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
