/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Scheduling markers in the profile: an "Off-CPU" interval per wait at
 * least the threshold long (why, who ended it, and the switch-out stack),
 * a "Runnable" interval per wait for a CPU, a "Wakeup" instant on the
 * waker, and a "Scheduling" summary per thread that counts every switch
 * and wait, short ones included.
 */
#ifndef BPFPROF_SCHED_MARKERS_H
#define BPFPROF_SCHED_MARKERS_H

#include <stdint.h>

#include "../model/model.h"
#include "emitter.h"
#include "json_writer.h"
#include "marker_schema.h"
#include "profile_tables.h"

extern const struct marker_schema offcpu_schema;
extern const struct marker_schema runnable_schema;
extern const struct marker_schema wakeup_schema;
extern const struct marker_schema sched_summary_schema;

/*
 * A thread's scheduling markers must name a known stack and kind, and the
 * tables must hold their names; returns 0 or -EINVAL. Extends *end to the
 * last marker end.
 */
int sched_markers_check(const struct thread *th, const struct profile_tables *t, uint64_t *end);

/* The data object of an Off-CPU, Runnable or Wakeup marker (by mk->kind). */
void sched_marker_data_write(struct json_writer *w, const struct profile_tables *t,
			     const struct sched_marker *mk);
/* The data object of a thread's "Scheduling" summary marker. */
void sched_summary_data_write(struct json_writer *w, const struct thread *th,
			      const struct profile_meta *meta);

#endif
