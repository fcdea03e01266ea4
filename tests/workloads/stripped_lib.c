/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libstripped.so, for the debuginfod and MiniDebugInfo tests: shipped
 * stripped (no .symtab), so its internal (static) functions have no name in
 * the library itself; only its exported entry point is in .dynsym. The
 * names come from a separate debug file (a debuginfod server) or from the
 * library's .gnu_debugdata.
 */
#include <stdint.h>
#include <time.h>

uint64_t stripped_run(double seconds);

static volatile uint64_t sink;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Internal: where the samples land, named only by debug info. */
__attribute__((noinline)) static uint64_t stripped_hidden_hot(uint64_t h)
{
	for (int i = 0; i < 100000; i++)
		h = h * 6364136223846793005ull + 1442695040888963407ull;
	return h;
}

uint64_t stripped_run(double seconds)
{
	double end = now_s() + seconds;
	uint64_t h = 1;

	while (now_s() < end)
		h = stripped_hidden_hot(h);
	sink = h;
	return h;
}
