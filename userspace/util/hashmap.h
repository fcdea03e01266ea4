/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Open-addressing hash map from a 128-bit key to a 32-bit value. It is the
 * one index behind every hash-consed table (frames, stacks, funcs, objects):
 * callers pack their tuple into the two words, so lookups never chase
 * pointers or call back into comparison functions.
 */
#ifndef BPFPROF_HASHMAP_H
#define BPFPROF_HASHMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hmap_key {
	uint64_t a, b;
};

struct hmap_slot {
	struct hmap_key key;
	uint32_t value;
	uint32_t used;
};

struct hmap {
	struct hmap_slot *slots;
	size_t cap; /* power of two, or 0 */
	size_t len;
};

uint64_t hash_u64(uint64_t x);
uint64_t hash_bytes(const void *p, size_t n);

/* true and *value set when present. */
bool hmap_get(const struct hmap *m, struct hmap_key key, uint32_t *value);
/* Insert or overwrite; 0 or -ENOMEM (only when it adds a key: an overwrite never allocates). */
int hmap_put(struct hmap *m, struct hmap_key key, uint32_t value);
/* Remove; true when it was present. */
bool hmap_del(struct hmap *m, struct hmap_key key);
void hmap_free(struct hmap *m);

#endif
