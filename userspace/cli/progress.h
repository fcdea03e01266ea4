/* SPDX-License-Identifier: BSD-2-Clause */
/* The one-line progress display on a terminal. */
#ifndef BPFPROF_PROGRESS_H
#define BPFPROF_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

struct progress {
	bool enabled; /* stderr is a terminal */
	uint64_t last_ns;
};

void progress_init(struct progress *p);
/* Redraw at most 4 times a second. */
void progress_update(struct progress *p, uint64_t now_ns, double elapsed_s, double duration_s,
		     uint64_t samples, uint64_t lost);
void progress_clear(struct progress *p);

#endif
