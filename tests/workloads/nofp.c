/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * nofp: code built as distributions build theirs, without frame pointers
 * (-O2 -fomit-frame-pointer), for the CFI unwinding test:
 *
 *   main -> nofp_recurse x (DEPTH + 1) -> nofp_sort -> qsort (libc, no frame
 *   pointers either) -> ... -> nofp_compare, which burns
 *
 * until SECONDS have passed. Prints "nofp: truth pid P depth D" on stdout.
 *
 * Usage: nofp SECONDS DEPTH
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define N_ITEMS 64

static volatile uint64_t sink;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A comparison that costs: most samples land here, under qsort. */
__attribute__((noinline)) static int nofp_compare(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b, h = x ^ y;

	for (int i = 0; i < 2000; i++)
		h = h * 6364136223846793005ull + 1442695040888963407ull;
	sink = h;
	return x < y ? -1 : x > y;
}

__attribute__((noinline)) static void nofp_sort(uint64_t seed)
{
	uint64_t items[N_ITEMS];

	for (int i = 0; i < N_ITEMS; i++)
		items[i] = seed = seed * 2862933555777941757ull + 3037000493ull;
	qsort(items, N_ITEMS, sizeof(items[0]), nofp_compare);
	sink = items[0];
}

/*
 * Every level keeps a frame of its own: the volatile local is read after
 * the call, which keeps GCC from turning the recursion into a loop (it
 * does that to a plain `return f(n - 1) + 1`).
 */
__attribute__((noinline)) static int nofp_recurse(int depth, uint64_t seed)
{
	volatile int here = depth;

	if (depth == 0) {
		nofp_sort(seed);
		return 0;
	}
	return nofp_recurse(depth - 1, seed * 31 + (uint64_t)depth) + here;
}

int main(int argc, char **argv)
{
	double end;
	int depth, total = 0;

	if (argc != 3 || (depth = atoi(argv[2])) < 0 || depth > 100) {
		fprintf(stderr, "usage: %s SECONDS DEPTH (0-100)\n", argv[0]);
		return 2;
	}
	printf("nofp: truth pid %d depth %d\n", (int)getpid(), depth);
	fflush(stdout);
	end = now_s() + atof(argv[1]);
	while (now_s() < end)
		total += nofp_recurse(depth, (uint64_t)total);
	return total < 0;
}
