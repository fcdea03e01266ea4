/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The files whose code samples met without an unwind table (issue 38): a
 * stack that stops early in a binary the store had no rows for is cut
 * because of that binary, and the user needs its name and why (its table
 * came late, it has no CFI, it was past the per-file cap, the store was
 * full) to trust or fix the call tree. Counted per file as samples come;
 * bounded: UNWIND_MISSES_MAX files, the rest counted in `others`.
 */
#ifndef BPFPROF_UNWIND_MISSES_H
#define BPFPROF_UNWIND_MISSES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../bpf/bpfprof_abi.h"
#include "../util/hashmap.h"
#include "../util/vec.h"

#define UNWIND_MISSES_MAX    4096
#define UNWIND_MISS_NAME_LEN 64

struct unwind_miss {
	struct unwind_file_key key;
	uint64_t stacks;   /* samples whose walk met this file's code without its rows */
	uint64_t first_ts; /* CLOCK_MONOTONIC ns of the first of them */
	char name[UNWIND_MISS_NAME_LEN]; /* the file's basename as mapped, or "" */
	uint8_t name_tries;		 /* lookups of its name that found none (a process gone) */
};

/* Lookups of a file's name at most: one that keeps failing costs no more. */
#define UNWIND_MISS_NAME_TRIES 4

struct unwind_misses {
	struct hmap index; /* key -> position in files */
	VEC(struct unwind_miss) files;
	uint64_t others; /* samples that met files past UNWIND_MISSES_MAX */
};

/*
 * Whether a note of `key` should bring its name: it is not counted yet,
 * or has none after fewer than UNWIND_MISS_NAME_TRIES lookups.
 */
bool unwind_misses_wants_name(const struct unwind_misses *m, const struct unwind_file_key *key);
/* How many samples met `key`'s code without its rows so far (0: none, or past the bound). */
uint64_t unwind_misses_stacks(const struct unwind_misses *m, const struct unwind_file_key *key);
/*
 * One sample at `ts` met `key`'s code without its rows; `name` (the
 * file's basename; NULL: not looked up, "": looked up, none found) is
 * kept once found. 0 or -ENOMEM.
 */
int unwind_misses_note(struct unwind_misses *m, const struct unwind_file_key *key, uint64_t ts,
		       const char *name);
/*
 * The counted files, most stacks first (ties: the earlier first), into
 * out[0..max); how many. The caller's copy: `m` is unchanged.
 */
size_t unwind_misses_top(const struct unwind_misses *m, struct unwind_miss *out, size_t max);
void unwind_misses_free(struct unwind_misses *m);

#endif
