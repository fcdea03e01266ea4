/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * debuginfo: a process whose CPU time is spent in code that only DWARF can
 * describe, for the test of source lines, inline frames and separate debug
 * files (tests/integration/debuginfo.sh).
 *
 *   main
 *     debuginfo_outer_loop    static, noinline: a real function with a frame
 *       debuginfo_inlined_mix static, always_inline: no code of its own, only
 *                             a DW_TAG_inlined_subroutine inside the loop
 *
 * Both functions are static, so they are not in .dynsym: in the stripped
 * copy the test runs, nothing but the separate debug file can name them.
 * The test finds the lines it expects from this file: the definitions, the
 * closing braces, and the lines marked "debuginfo: call site" (the inlined
 * call) and "debuginfo: outer call" (main's call of the outer loop).
 *
 * Usage: debuginfo [CPU_SECONDS] (default 2). Prints its pid, burns that
 * much of its own CPU time, so that a busy machine delays the end rather
 * than thinning the samples, then prints "debuginfo: done ROUNDS".
 *
 * Built with -O2 -g -fno-omit-frame-pointer (integration.cmake): -O2 is what
 * really inlines, -g what describes it, frame pointers how bpfprof unwinds.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "workload.h"

#define ALWAYS_INLINE inline __attribute__((always_inline))

/* noclone: a constant-propagated copy would be named "debuginfo_outer_loop.constprop.0". */
#define OUTLINED __attribute__((noinline, noclone))

/*
 * One long dependency chain: every step needs the previous result, so the
 * loop cannot be vectorised or overlapped, and nearly every cycle of the
 * loop is spent in instructions whose line is in this function's body.
 */
static ALWAYS_INLINE uint64_t debuginfo_inlined_mix(uint64_t v, uint64_t k)
{
	v = xorshift64(v + k);
	v *= 0x9e3779b97f4a7c15u;
	v = xorshift64(v ^ (v >> 29));
	v *= 0xbf58476d1ce4e5b9u;
	v = xorshift64(v ^ (v >> 31));
	v *= 0x94d049bb133111ebu;
	return v ^ (v >> 32);
}

static OUTLINED uint64_t debuginfo_outer_loop(uint64_t seed, int iterations)
{
	/* A real frame even if GCC would treat this as a frameless leaf (workload.h). */
	KEEP_FRAME();
	for (int i = 0; i < iterations; i++)
		seed = debuginfo_inlined_mix(seed, (uint64_t)i); /* debuginfo: call site */
	return seed;
}

static double cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	uint64_t seed = 0x2545f4914f6cdd1du;
	unsigned long rounds = 0;
	double seconds = 2, end;

	if (argc > 2) {
		fprintf(stderr, "usage: %s [CPU_SECONDS]\n", argv[0]);
		return 2;
	}
	if (argc == 2) {
		char *stop;

		seconds = strtod(argv[1], &stop);
		if (*stop || !(seconds > 0 && seconds < 3600)) {
			fprintf(stderr, "debuginfo: bad duration '%s'\n", argv[1]);
			return 2;
		}
	}
	printf("%d\n", (int)getpid());
	fflush(stdout);
	end = cpu_seconds() + seconds;
	while (cpu_seconds() < end) {
		seed = debuginfo_outer_loop(seed, BURN_CHUNK); /* debuginfo: outer call */
		rounds++;
	}
	burn_sink = seed;
	printf("debuginfo: done %lu\n", rounds);
	return 0;
}
