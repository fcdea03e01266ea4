/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * shortburn: a process that lives MS milliseconds, burning in two nested
 * functions, built as distributions build (-O2 -fomit-frame-pointer), for
 * the short-lived process test (issue 26): 100 of them in a row under -a,
 * where most of each one's samples come in its first milliseconds, before
 * userspace has read its mappings.
 *
 * Usage: shortburn MS
 */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t sink;

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

__attribute__((noinline)) static void short_inner(int n)
{
	for (int i = 0; i < n; i++)
		sink = sink * 31 + (uint64_t)i;
}

__attribute__((noinline)) static void short_outer(double end)
{
	while (now() < end)
		short_inner(10000);
}

int main(int argc, char **argv)
{
	double ms = argc > 1 ? atof(argv[1]) : 40;

	short_outer(now() + ms / 1000.0);
	return 0;
}
