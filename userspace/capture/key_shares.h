/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Who holds the entries userspace writes to a BPF hash map of files
 * (unwind_no_table): the map has a fixed number of entries, and one user's
 * thousands of files must not take them all, leaving every other user's
 * files out. A user holds at most a quarter of the map (root's entries are
 * the system's, exempt); past it, or with the map full, a key is not
 * written (what that costs is bounded elsewhere: a file not in the map is
 * copied within the CPU's copy budget).
 */
#ifndef BPFPROF_CAPTURE_KEY_SHARES_H
#define BPFPROF_CAPTURE_KEY_SHARES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../util/hashmap.h"

struct key_shares {
	size_t capacity;   /* the map's entries */
	size_t held;	   /* written, as far as we know */
	struct hmap keys;  /* key -> the uid it is charged to */
	struct hmap users; /* uid -> keys held */
};

/* For a map of `capacity` entries. */
void key_shares_init(struct key_shares *k, size_t capacity);
void key_shares_free(struct key_shares *k);
/*
 * Whether the caller may write `key` for user `uid` (then it is counted as
 * held): false when it is held already, the map is full, the user holds
 * its share, or there is no memory to count it.
 */
bool key_shares_take(struct key_shares *k, struct hmap_key key, uint32_t uid);
/* Whether `key` was held (the caller deletes it from the map): no longer. */
bool key_shares_give(struct key_shares *k, struct hmap_key key);

#endif
