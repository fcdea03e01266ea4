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

/* A line of a map, or a code load or move of a jitdump: [start, end) is `name`. */
struct pm_entry {
	uint64_t start, end;
	const char *name;
};

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

/* The index of a run of entries, for the moves that must see them before a rebuild. */
struct pm_level {
	pm_segments_t segs;
	size_t entries;
};

/* The index of a map's entries (an array the map owns; entries are only appended). */
struct pm_index {
	size_t merged;		/* entries[0, merged) are in `segments` */
	pm_segments_t segments; /* sorted by start, disjoint */
	/*
	 * entries[merged, leveled), the ones a jitdump's moves must see before
	 * the next rebuild: in levels, each the index of a run of entries,
	 * older levels first and at least as large as newer ones (a binary
	 * counter), so that a move finds its name in O(log^2 n) and every
	 * entry is merged O(log n) times.
	 */
	VEC(struct pm_level) levels;
	size_t leveled;
};

/* Merge entries[merged, n) into the segments. 0 or -ENOMEM (index unchanged). */
int pm_index_rebuild(struct pm_index *ix, const struct pm_entry *entries, size_t n);

/*
 * The newest of entries[0, n) holding `addr` in *entry, or -1: without a
 * rebuild, which costs the whole index (a jitdump moves code all the
 * time). 0 or -ENOMEM.
 */
int pm_index_newest(struct pm_index *ix, const struct pm_entry *entries, size_t n, uint64_t addr,
		    int64_t *entry);

size_t pm_index_bytes(const struct pm_index *ix);
void pm_index_free(struct pm_index *ix);

#endif
