/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The samples of a time window, copied out of a model without touching it:
 * what a scrape of `continuous --listen` answers with. A scrape's window
 * begins and ends wherever its request came, across the cuts of the
 * snapshots: its part before a cut is copied from that snapshot, the rest
 * from the live model once the rings are drained past its end. Samples
 * only: a pprof profile has no markers.
 *
 * The copy is a model of its own (threads and processes by pid and tid,
 * frames and stacks interned again), ready for model_finish and the
 * profile tables like any snapshot.
 */
#ifndef BPFPROF_MODEL_WINDOW_H
#define BPFPROF_MODEL_WINDOW_H

#include <stdbool.h>
#include <stdint.h>

#include "model.h"

/* An empty model for the window [from, to) of models recorded like `like`. */
void model_window_init(struct model *dst, const struct model *like, uint64_t from, uint64_t to);

/*
 * Append the samples of `src` in [from, to) to `dst`, with the threads and
 * processes they belong to (names, command lines and cgroups as `src` knows
 * them). `src` must have replayed up to `to` (model_sched_flush).
 * `open_waits` (from a live model): a wait still going on at `to` has no
 * samples yet; its part in the window gets them here, as it will when it
 * ends. A snapshot's waits were closed at its end (model_finish). 0 or
 * -ENOMEM (dst then holds part of it, and is freed as usual).
 */
int model_window_copy(struct model *dst, const struct model *src, uint64_t from, uint64_t to,
		      bool open_waits);

#endif
