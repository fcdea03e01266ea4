/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Continuous mode cuts the live model into consecutive snapshots. A cut at
 * `boundary` splits it in two models that share nothing:
 *
 *  - the snapshot: the window [start_ts, boundary) — every sample, marker
 *    and syscall of it, the threads and processes that existed in it (with
 *    no end inside it when they ended later), ready for model_finish, which
 *    closes open waits and slices at the boundary;
 *  - the live model, re-based to start at `boundary`: only the processes and
 *    threads still alive, what was already recorded at or after the boundary
 *    (early records from rings drained ahead), the scheduler replay state
 *    continued from the boundary, and fresh frame and stack tables that hold
 *    only what it still refers to. Nothing of dead processes survives a cut,
 *    so the model's memory follows the live system, not the uptime.
 *
 * Every event lands in exactly one snapshot: intervals that span the
 * boundary (waits, runnable waits, CPU slices) are split at it, and each
 * side counts its part.
 */
#ifndef BPFPROF_MODEL_CUT_H
#define BPFPROF_MODEL_CUT_H

#include <stdbool.h>
#include <stdint.h>

#include "model.h"

/*
 * `boundary` must be after live->start_ts, every ring must have been drained
 * past it, and model_sched_flush(live, boundary - 1) done, so that each
 * thread's replay stands exactly at the boundary. Every thread known to be
 * alive in the window is in the snapshot, idle ones too. 0, or -ENOMEM
 * (then both models are freed and `live` is empty).
 */
int model_cut(struct model *live, struct model *snap, uint64_t boundary);

#endif
