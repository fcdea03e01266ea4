/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * nofp: code built as distributions build theirs, without frame pointers
 * (-O2 -fomit-frame-pointer), for the CFI unwinding test. Three kinds of
 * stack a real program has:
 *
 *   main -> nofp_recurse x (DEPTH + 1) -> nofp_sort -> qsort (libc, no frame
 *   pointers either) -> ... -> nofp_compare, which burns until SECONDS have
 *   passed;
 *
 *   a signal handler, nofp_on_signal, that burns ~1 ms of every 10 ms of CPU
 *   (SIGPROF): its samples must cross the kernel's signal frame
 *   (__restore_rt) back into whatever it interrupted, up to main;
 *
 *   a thread, nofp_reader, blocked in libc's read() of a pipe under
 *   nofp_recurse x (DEPTH + 1) -> nofp_block (after 200 ms asleep): its
 *   off-CPU samples in the pipe read must show that caller chain above
 *   libc, up to the thread's root.
 *
 * nofp_sort keeps NOFP_CANARY on its stack, under every sample in qsort:
 * a stack copy holds it, and no output may (unwind.sh copy).
 *
 * Prints "nofp: truth pid P depth D reader T" on stdout.
 *
 * Usage: nofp SECONDS DEPTH
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define N_ITEMS 64
/* A value no profile holds unless copied stack bytes leaked into it. */
#define NOFP_CANARY 0x6b1d2c3e4f5a6978ull

static volatile uint64_t sink;
static int block_pipe[2];
static pthread_mutex_t reader_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t reader_ready = PTHREAD_COND_INITIALIZER;
static long reader_tid;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t burn(uint64_t h, int rounds)
{
	for (int i = 0; i < rounds; i++)
		h = h * 6364136223846793005ull + 1442695040888963407ull;
	return h;
}

/* A comparison that costs: most samples land here, under qsort. */
__attribute__((noinline)) static int nofp_compare(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	sink = burn(x ^ y, 2000);
	return x < y ? -1 : x > y;
}

__attribute__((noinline)) static void nofp_sort(uint64_t seed)
{
	volatile uint64_t canary = NOFP_CANARY;
	uint64_t items[N_ITEMS];

	for (int i = 0; i < N_ITEMS; i++)
		items[i] = seed = seed * 2862933555777941757ull + 3037000493ull;
	qsort(items, N_ITEMS, sizeof(items[0]), nofp_compare);
	sink = items[0] + canary;
}

/* Blocks in libc's read() until the pipe closes at exit. */
__attribute__((noinline)) static void nofp_block(void)
{
	char c;

	while (read(block_pipe[0], &c, 1) > 0)
		;
}

/*
 * Every level keeps a frame of its own: the volatile local is read after
 * the call, which keeps GCC from turning the recursion into a loop (it
 * does that to a plain `return f(n - 1) + 1`).
 */
__attribute__((noinline)) static int nofp_recurse(int depth, uint64_t seed, void (*leaf)(uint64_t))
{
	volatile int here = depth;

	if (depth == 0) {
		leaf(seed);
		return 0;
	}
	return nofp_recurse(depth - 1, seed * 31 + (uint64_t)depth, leaf) + here;
}

/* ~1 ms of work in signal context; async-signal-safe (no libc calls). */
__attribute__((noinline)) static void nofp_on_signal(int sig)
{
	sink = burn(sink + (uint64_t)sig, 400000);
}

static void block_leaf(uint64_t seed)
{
	(void)seed;
	nofp_block();
}

static void *nofp_reader(void *arg)
{
	int depth = *(int *)arg;
	sigset_t prof;

	sigemptyset(&prof);
	sigaddset(&prof, SIGPROF);
	pthread_sigmask(SIG_BLOCK, &prof, NULL); /* the handler runs on the main thread */
	pthread_mutex_lock(&reader_lock);
	reader_tid = syscall(SYS_gettid);
	pthread_cond_signal(&reader_ready);
	pthread_mutex_unlock(&reader_lock);
	/*
	 * Block once the profiler has read this process's new mappings: a
	 * stack taken in the first milliseconds after an exec is walked with
	 * frame pointers (README, "Unwinding"), and this thread leaves the CPU
	 * only once, so that one stack would stand for all its off-CPU time.
	 */
	usleep(200000);
	nofp_recurse(depth, 0, block_leaf);
	return NULL;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = nofp_on_signal, .sa_flags = SA_RESTART };
	struct itimerval every_10ms = { { 0, 10000 }, { 0, 10000 } };
	double end;
	int depth, total = 0;
	pthread_t reader;

	if (argc != 3 || (depth = atoi(argv[2])) < 0 || depth > 1000) {
		fprintf(stderr, "usage: %s SECONDS DEPTH (0-1000)\n", argv[0]);
		return 2;
	}
	if (pipe(block_pipe) || pthread_create(&reader, NULL, nofp_reader, &depth)) {
		perror("nofp: pipe/pthread_create");
		return 1;
	}
	pthread_mutex_lock(&reader_lock);
	while (!reader_tid)
		pthread_cond_wait(&reader_ready, &reader_lock);
	pthread_mutex_unlock(&reader_lock);
	printf("nofp: truth pid %d depth %d reader %ld\n", (int)getpid(), depth, reader_tid);
	fflush(stdout);
	if (sigaction(SIGPROF, &sa, NULL) || setitimer(ITIMER_PROF, &every_10ms, NULL)) {
		perror("nofp: SIGPROF timer");
		return 1;
	}
	end = now_s() + atof(argv[1]);
	while (now_s() < end)
		total += nofp_recurse(depth, (uint64_t)total, nofp_sort);
	return total < 0;
}
