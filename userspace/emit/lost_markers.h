/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * "Lost events" markers: an interval in which the kernel could not deliver
 * records (a ring buffer or the side-band was full), with how many of each
 * kind were lost, on every thread alive in it: whatever that thread shows
 * there may be missing samples, switches, wakeups or syscalls.
 */
#ifndef BPFPROF_LOST_MARKERS_H
#define BPFPROF_LOST_MARKERS_H

#include "../model/model.h"
#include "json_writer.h"
#include "marker_schema.h"

extern const struct marker_schema lost_schema;

/* The data object of a "Lost events" marker. */
void lost_marker_data_write(struct json_writer *w, const struct lost_interval *li);

#endif
