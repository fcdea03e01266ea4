/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A thread's samples as the Firefox Profiler's samples table holds them:
 * the model's, in time order, with a null-stack sample where a wait ended
 * and the stack chart would otherwise draw it and the next wait as one box
 * (model.h, struct wait_end).
 */
#ifndef BPFPROF_WAIT_BREAKS_H
#define BPFPROF_WAIT_BREAKS_H

#include <stdbool.h>
#include <stddef.h>

#include "../model/model.h"

struct sample_cursor {
	const struct thread *th;
	size_t sample, wait_end; /* the next of each */
	bool after_offcpu;	 /* the last one given was an off-CPU sample */
};

static inline struct sample_cursor sample_cursor_start(const struct thread *th)
{
	return (struct sample_cursor){ .th = th };
}

/*
 * The next sample into *out: false after the last. A wait's end comes as
 * { ts: its switch-in, stack: NO_INDEX, cpu_delta_ns: 0 }.
 */
bool sample_cursor_next(struct sample_cursor *c, struct thread_sample *out);

/* How many samples the cursor gives for `th`. */
size_t sample_cursor_count(const struct thread *th);

#endif
