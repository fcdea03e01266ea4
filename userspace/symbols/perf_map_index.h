/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The address index of a perf map (perf_map.c): entries, numbered in file
 * order so that a higher number is newer, turned into a sorted array of
 * disjoint segments, each naming the newest entry that covers it. Internal
 * to perf_map.c.
 */
#ifndef BPFPROF_PERF_MAP_INDEX_H
#define BPFPROF_PERF_MAP_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "../util/vec.h"

/* A stretch of addresses whose newest covering entry is `entry`. */
struct pm_segment {
	uint64_t start, end;
	uint32_t entry;
};

typedef VEC(struct pm_segment) pm_segments_t;

/* An entry (or a segment) to index: [start, end) named by entry number `entry`. */
struct pm_item {
	uint64_t start, end;
	uint32_t entry;
};

/* Sort items by start, then entry: the order pm_index_merge takes them in. */
void pm_items_sort(struct pm_item *items, size_t n);

/*
 * Into `out` (empty): the segments of `old` (sorted, disjoint) with the `k`
 * items of `fresh` (sorted by pm_items_sort, which may overlap each other
 * and `old`) laid over them, the newest entry winning everywhere. The
 * old segments are sorted already, so this is a merge and one sweep, not a
 * sort of everything. 0 or -ENOMEM (`out` then holds garbage to free).
 */
int pm_index_merge(const pm_segments_t *old, const struct pm_item *fresh, size_t k,
		   pm_segments_t *out);

/* The segment of `segs` holding `addr`, or NULL. */
const struct pm_segment *pm_index_find(const pm_segments_t *segs, uint64_t addr);

#endif
