/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pingpong: two threads pass a one-byte token back and forth over two pipes
 * for a fixed wall time, and the program prints the round trips completed.
 *
 * Every round trip is two wakeups and (at least) two context switches on
 * each side, so the throughput is bound by the scheduler's switch path: the
 * workload that shows what tracing sched_switch and sched_waking costs.
 *
 * By default the threads are not pinned: where they run (same CPU or two
 * CPUs) is left to the kernel, as it would be for real programs. -c pins
 * ping and pong to the given CPUs (the same one twice: every round trip is
 * two direct switches, the worst case for a tracer; two different ones:
 * every wakeup crosses CPUs), which makes runs far less noisy.
 *
 * Usage: pingpong [-s SECONDS] [-c PING_CPU,PONG_CPU] [-p]
 * -p first prints the process id on a line of its own, as the test workloads
 * do (tests/integration/sched_kept_wakeups.sh runs it under bpfprof), and at
 * the end, on stderr, each thread's context switches by the kernel's count
 * (getrusage RUSAGE_THREAD, taken as the thread's last act):
 *   pingpong: truth ping|pong tid T nvcsw V nivcsw I
 * Then, on stdout, one line:
 *   round_trips=N seconds=S rt_per_s=R cpu_s=C rt_per_cpu_s=P same_cpu_pct=X
 * where cpu_s is the CPU time both threads used (CLOCK_PROCESS_CPUTIME_ID)
 * and same_cpu_pct the share of round trips in which ping found pong's last
 * run on its own CPU. The two placements differ a lot: on one CPU a round
 * trip is two direct switches, across CPUs it is two cross-CPU wakeups with
 * the idle exit they cost; anything else running (a profiler's reader too)
 * shifts the kernel's choice, so the benchmark reports it next to the
 * throughput.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pthread_setname_np, pipe2 */
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* The clock is read once per this many round trips (a vDSO read is ~20 ns
 * against several µs per round trip, but there is no need to do it often). */
#define CLOCK_EVERY 64

static int ping_to_pong[2], pong_to_ping[2];
/* The CPU pong last ran on, stored before it returns the token. */
static atomic_int pong_cpu = -1;
/* -c: where ping and pong run (-1: wherever the kernel puts them). */
static int ping_pin = -1, pong_pin = -1;
/* -p: the ids and, at the end, each thread's switch counts. */
static bool print_ids;
static struct rusage pong_usage;
static pid_t pong_tid;

/* Pins the calling thread to `cpu` unless it is -1; exits on failure. */
static void pin_self(int cpu, const char *who)
{
	cpu_set_t set;
	int err;

	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	err = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	if (err) {
		fprintf(stderr, "pingpong: cannot pin %s to CPU %d: %s\n", who, cpu, strerror(err));
		exit(2);
	}
}

static double clock_s(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int write_byte(int fd)
{
	char c = 't';
	ssize_t n;

	do
		n = write(fd, &c, 1);
	while (n < 0 && errno == EINTR);
	return n == 1 ? 0 : -1;
}

/* 1: got the token, 0: end of file, -1: error. */
static int read_byte(int fd)
{
	char c;
	ssize_t n;

	do
		n = read(fd, &c, 1);
	while (n < 0 && errno == EINTR);
	return n == 1 ? 1 : n == 0 ? 0 : -1;
}

/* Returns the token until ping closes its pipe. */
static void *pong_main(void *arg)
{
	int r;

	(void)arg;
	pthread_setname_np(pthread_self(), "pong");
	pin_self(pong_pin, "pong");
	while ((r = read_byte(ping_to_pong[0])) == 1) {
		atomic_store_explicit(&pong_cpu, sched_getcpu(), memory_order_relaxed);
		if (write_byte(pong_to_ping[1])) {
			perror("pingpong: pong write");
			exit(1);
		}
	}
	if (r < 0) {
		perror("pingpong: pong read");
		exit(1);
	}
	pong_tid = (pid_t)syscall(SYS_gettid);
	getrusage(RUSAGE_THREAD, &pong_usage);
	return NULL;
}

int main(int argc, char **argv)
{
	double seconds = 3, start, now, cpu0, cpu;
	uint64_t trips = 0, same_cpu = 0;
	pthread_t pong;
	int opt, err;

	while ((opt = getopt(argc, argv, "s:c:p")) != -1) {
		char *end;

		switch (opt) {
		case 's':
			seconds = strtod(optarg, &end);
			if (*end || !(seconds > 0 && seconds < 3600)) {
				fprintf(stderr, "pingpong: bad -s '%s'\n", optarg);
				return 2;
			}
			break;
		case 'c':
			if (sscanf(optarg, "%d,%d%c", &ping_pin, &pong_pin, &(char){ 0 }) != 2 ||
			    ping_pin < 0 || pong_pin < 0 || ping_pin >= CPU_SETSIZE ||
			    pong_pin >= CPU_SETSIZE) {
				fprintf(stderr, "pingpong: bad -c '%s' (want PING_CPU,PONG_CPU)\n",
					optarg);
				return 2;
			}
			break;
		case 'p':
			printf("%d\n", (int)getpid());
			fflush(stdout);
			print_ids = true;
			break;
		default:
			fprintf(stderr, "usage: %s [-s SECONDS] [-c PING_CPU,PONG_CPU] [-p]\n",
				argv[0]);
			return 2;
		}
	}
	if (pipe2(ping_to_pong, O_CLOEXEC) || pipe2(pong_to_ping, O_CLOEXEC)) {
		perror("pingpong: pipe2");
		return 1;
	}
	pthread_setname_np(pthread_self(), "ping");
	pin_self(ping_pin, "ping");
	err = pthread_create(&pong, NULL, pong_main, NULL);
	if (err) {
		fprintf(stderr, "pingpong: pthread_create: %s\n", strerror(err));
		return 1;
	}

	cpu0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
	start = clock_s(CLOCK_MONOTONIC);
	now = start;
	while (now - start < seconds) {
		for (int i = 0; i < CLOCK_EVERY; i++) {
			if (write_byte(ping_to_pong[1]) || read_byte(pong_to_ping[0]) != 1) {
				perror("pingpong: ping");
				return 1;
			}
			/* sched_getcpu is a vDSO/rseq read: a few ns. */
			same_cpu += sched_getcpu() ==
				    atomic_load_explicit(&pong_cpu, memory_order_relaxed);
		}
		trips += CLOCK_EVERY;
		now = clock_s(CLOCK_MONOTONIC);
	}
	cpu = clock_s(CLOCK_PROCESS_CPUTIME_ID) - cpu0;

	/* End of file tells pong to stop. */
	close(ping_to_pong[1]);
	pthread_join(pong, NULL);
	if (print_ids) {
		struct rusage ping_usage;

		getrusage(RUSAGE_THREAD, &ping_usage);
		fprintf(stderr, "pingpong: truth pong tid %d nvcsw %ld nivcsw %ld\n", (int)pong_tid,
			pong_usage.ru_nvcsw, pong_usage.ru_nivcsw);
		fprintf(stderr, "pingpong: truth ping tid %d nvcsw %ld nivcsw %ld\n", (int)getpid(),
			ping_usage.ru_nvcsw, ping_usage.ru_nivcsw);
	}
	printf("round_trips=%llu seconds=%.3f rt_per_s=%.0f cpu_s=%.3f rt_per_cpu_s=%.0f "
	       "same_cpu_pct=%.1f\n",
	       (unsigned long long)trips, now - start, (double)trips / (now - start), cpu,
	       cpu > 0 ? (double)trips / cpu : 0.0,
	       trips ? 100.0 * (double)same_cpu / (double)trips : 0.0);
	return 0;
}
