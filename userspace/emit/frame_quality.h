/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * How whole the profile's user stacks are: of the on-CPU samples with user
 * frames, how many reach a thread root (the program's entry, a new
 * thread's entry) and, for the others, why their stacks stop early. A call
 * tree built from cut stacks is wrong without looking wrong, so the profile
 * and the end-of-run summary say how much of it to trust.
 */
#ifndef BPFPROF_FRAME_QUALITY_H
#define BPFPROF_FRAME_QUALITY_H

#include <stdint.h>

#include "../../bpf/bpfprof_abi.h"
#include "../lang/code_runtime.h"

struct model;
struct profile_tables;

#define FRAME_QUALITY_REASONS (USTACK_END_STUCK + 1)

struct frame_quality {
	uint64_t user_stacks;  /* on-CPU samples with at least one user frame */
	uint64_t reached_root; /* ... whose outermost frame is a thread root */
	/* The others, by why the unwinder stopped (enum ustack_end). */
	uint64_t stopped[FRAME_QUALITY_REASONS];
	/*
	 * The same two counts by runtime (enum code_runtime): a stack with a
	 * Go binary's frame is Go's, else one with the Python interpreter's is
	 * Python's, else native.
	 */
	uint64_t runtime_stacks[CODE_RUNTIME_COUNT];
	uint64_t runtime_reached_root[CODE_RUNTIME_COUNT];
};

/* Counts over every on-CPU sample of the model, named through the built tables. */
int frame_quality_count(struct frame_quality *q, const struct model *m,
			const struct profile_tables *t);

/* What a reason means, for people: "no CFI for the code (JIT, unknown)". */
const char *frame_quality_reason(enum ustack_end reason);

/* Whether a function is where a thread's stack begins (_start, clone3, ...). */
int frame_quality_is_root(const char *func);

#endif
