/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Helpers shared by the integration-test workloads. Workloads are built with
 * -O1 -fno-omit-frame-pointer -fno-inline so that the profiler, which unwinds
 * user stacks with frame pointers, sees every burn function with its caller.
 */
#ifndef BPFPROF_WORKLOAD_H
#define BPFPROF_WORKLOAD_H

#include <stdint.h>

#define NOINLINE __attribute__((noinline))

/* Iterations per call of a burn function: some tens of µs, so the loop that
 * checks the clock or the stop flag between calls costs well under 1 %. */
#define BURN_CHUNK 20000

/* Results are stored here so that the compiler cannot delete the work. */
static volatile uint64_t burn_sink;
static void *volatile frame_sink;

/*
 * GCC drops the frame of a leaf function that never touches the stack, even
 * with -fno-omit-frame-pointer; a sample in such a function unwinds straight
 * to its caller's caller. Taking the frame address forces a real frame.
 */
#define KEEP_FRAME() (frame_sink = __builtin_frame_address(0))

/*
 * A macro, not a function: a call would become the sampled leaf under
 * -fno-inline, and an inline function would too, as an inlined frame of its
 * own (bpfprof shows inline frames from DWARF). Either hides the burn
 * function that the tests look for on top.
 */
#define xorshift64(v)                                                                              \
	({                                                                                         \
		uint64_t x_ = (v);                                                                 \
		x_ ^= x_ << 13;                                                                    \
		x_ ^= x_ >> 7;                                                                     \
		x_ ^= x_ << 17;                                                                    \
		x_;                                                                                \
	})

#endif /* BPFPROF_WORKLOAD_H */
