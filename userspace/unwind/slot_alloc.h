/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Extents of the unwind slots array (a table's pages and rows each take
 * one): first fit over the free runs, kept sorted and merged, and every
 * extent freed held back SLOT_QUARANTINE_NS before it is handed out
 * again, since a BPF walk that read a file's entry just before it was
 * unpublished may still read its slots (a walk lasts microseconds).
 */
#ifndef BPFPROF_UNWIND_SLOT_ALLOC_H
#define BPFPROF_UNWIND_SLOT_ALLOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/vec.h"

#define SLOT_QUARANTINE_NS (200ull * 1000000ull)

struct slot_run {
	uint32_t start, len;
};

struct slot_held {
	uint32_t start, len;
	uint64_t freed_at; /* CLOCK_MONOTONIC ns */
};

struct slot_alloc {
	uint32_t total;
	VEC(struct slot_run) free;  /* sorted by start, no two touching */
	VEC(struct slot_held) held; /* in quarantine, oldest first */
	size_t free_slots, held_slots;
};

/* `total` slots, all free. 0 or -ENOMEM. */
int slot_alloc_init(struct slot_alloc *a, uint32_t total);
void slot_alloc_free(struct slot_alloc *a);
/* The extents freed SLOT_QUARANTINE_NS or more before `now` join the free runs. */
void slot_alloc_release(struct slot_alloc *a, uint64_t now);
/*
 * n slots ending at or below `limit` (the store's capacity), the lowest
 * run that holds them (after slot_alloc_release at `now`): *start. 0 or -ENOSPC.
 */
int slot_alloc_get(struct slot_alloc *a, uint32_t n, uint32_t limit, uint64_t now, uint32_t *start);
/* [start, start + n), never published: free at once. 0 or -ENOMEM (then lost: held by nothing). */
int slot_alloc_unget(struct slot_alloc *a, uint32_t start, uint32_t n);
/* [start, start + n), unpublished at `now`: in quarantine. 0 or -ENOMEM (then lost). */
int slot_alloc_put(struct slot_alloc *a, uint32_t start, uint32_t n, uint64_t now);
/* When the oldest extent in quarantine is free (0: none is). */
uint64_t slot_alloc_next_release(const struct slot_alloc *a);
/*
 * Whether n slots below `limit` would fit in one run once the quarantine
 * is over (the free and held extents merged); false without memory.
 */
bool slot_alloc_fits_later(const struct slot_alloc *a, uint32_t n, uint32_t limit);
/* All free: [0, total) (after the tables were moved down past `used`, the rest). */
void slot_alloc_reset(struct slot_alloc *a, uint32_t used);

#endif
