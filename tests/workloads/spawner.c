// SPDX-License-Identifier: BSD-2-Clause
/*
 * spawner [CHILDREN [CHILD_MS]]: processes coming and going during a
 * recording (issue 4).
 *
 *  - CHILDREN short-lived children, one after another: each renames itself
 *    "spawn-child", burns CHILD_MS of CPU in child_work() and exits; it
 *    reads its CPU clock about once per millisecond of work (the read is a
 *    real syscall in some VMs), and tells how much of its CPU went to the
 *    work, next to the CPU its whole life took (fork return, page faults
 *    and exit included), so the checks know what share child_work must
 *    have on this machine;
 *  - a thread that starts as "before-rename", burns in renamer_burn(),
 *    renames itself "after-rename" half-way and burns on;
 *  - a child that execs this binary again as "spawner --exec-image", which
 *    burns in exec_image_work() (the new image's own function).
 *
 * Prints its pid first, then "thread NAME TID" lines, on stdout; on stderr
 * "spawner: truth self PID", "spawner: truth child PID", "spawner: truth exec
 * PID" lines, and per child "spawner: truth child-cpu PID work_us W cpu_us C":
 * W µs of its CPU in its work loop, C µs of CPU in all (from wait4).
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
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
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

static NOINLINE void child_work(uint64_t iterations)
{
	uint64_t x = burn_sink | 1;

	KEEP_FRAME();
	for (uint64_t i = 0; i < iterations; i++)
		x = xorshift64(x);
	burn_sink = x;
}

static uint64_t thread_cpu_ns(void)
{
	return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

/* child_work iterations per millisecond of CPU, measured for 20 ms. */
static uint64_t calibrate_work(void)
{
	uint64_t start = thread_cpu_ns(), iterations = 0, spent;

	do {
		child_work(BURN_CHUNK);
		iterations += BURN_CHUNK;
		spent = thread_cpu_ns() - start;
	} while (spent < 20000000);
	return iterations * 1000000 / spent ?: 1;
}

/*
 * A child's life: `seconds` of CPU in child_work, a clock read per ~1 ms
 * of it. Returns the CPU time from the first read to the last.
 */
static uint64_t child_burn(uint64_t iterations_per_ms, double seconds)
{
	uint64_t start = thread_cpu_ns(), end = start + (uint64_t)(seconds * 1e9), now;

	do {
		child_work(iterations_per_ms);
		now = thread_cpu_ns();
	} while (now < end);
	return now - start;
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
 * is; that pid goes to `*shown`. Returns 0, or 1 when the translation fails.
 */
static int print_truth(const char *what, pid_t pid, int self, long *shown)
{
	const char *host_proc = getenv("SPAWNER_HOST_PROC");
	long host;

	if (!host_proc || !*host_proc) {
		fprintf(stderr, "spawner: truth %s %d\n", what, (int)pid);
		if (shown)
			*shown = pid;
		return 0;
	}
	host = self ? host_pid_of_self(host_proc) : host_pid_of_child(host_proc, pid);
	if (host <= 0) {
		fprintf(stderr, "spawner: cannot tell pid %d's pid in %s\n", (int)pid, host_proc);
		return 1;
	}
	fprintf(stderr, "spawner: truth %s %ld ns %d\n", what, host, (int)pid);
	if (shown)
		*shown = host;
	return 0;
}

static uint64_t timeval_us(struct timeval tv)
{
	return (uint64_t)tv.tv_sec * 1000000 + (uint64_t)tv.tv_usec;
}

static int spawn_children(int children, double child_s)
{
	/* Each child leaves its work time here for the parent to report. */
	uint64_t *work_ns = mmap(NULL, sizeof(uint64_t) * (size_t)children, PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	uint64_t iterations_per_ms = calibrate_work();

	if (work_ns == MAP_FAILED) {
		perror("spawner: mmap");
		return 1;
	}
	for (int i = 0; i < children; i++) {
		struct rusage ru;
		pid_t pid = fork();
		long shown;

		if (pid < 0) {
			perror("spawner: fork");
			return 1;
		}
		if (pid == 0) {
			prctl(PR_SET_NAME, "spawn-child");
			work_ns[i] = child_burn(iterations_per_ms, child_s);
			_exit(0);
		}
		/* Before waitpid: a reaped child has no pid to translate. */
		if (print_truth("child", pid, 0, &shown)) {
			waitpid(pid, NULL, 0);
			return 1;
		}
		if (wait4(pid, NULL, 0, &ru) != pid) {
			perror("spawner: wait4");
			return 1;
		}
		fprintf(stderr, "spawner: truth child-cpu %ld work_us %llu cpu_us %llu\n", shown,
			(unsigned long long)(work_ns[i] / 1000),
			(unsigned long long)(timeval_us(ru.ru_utime) + timeval_us(ru.ru_stime)));
	}
	munmap(work_ns, sizeof(uint64_t) * (size_t)children);
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
	if (print_truth("exec", pid, 0, NULL)) {
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
	if (print_truth("self", getpid(), 1, NULL))
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
