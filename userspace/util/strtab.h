/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * String interning: the profile's one shared string table. Each distinct
 * string is stored once and named by its index, which is what every
 * string-valued column of the processed profile holds.
 */
#ifndef BPFPROF_STRTAB_H
#define BPFPROF_STRTAB_H

#include <stddef.h>
#include <stdint.h>

#include "hashmap.h"
#include "vec.h"

struct strtab {
	VEC(char *) strs;
	struct hmap index; /* (hash, length) -> first index with that key; chains in `next` */
	VEC(uint32_t) next; /* next index with the same (hash, length), or UINT32_MAX */
};

/* Index of `s` (added if new), or -ENOMEM. */
int64_t strtab_intern(struct strtab *t, const char *s);
int64_t strtab_intern_len(struct strtab *t, const char *s, size_t len);
static inline const char *strtab_get(const struct strtab *t, uint32_t i)
{
	return t->strs.data[i];
}
static inline size_t strtab_len(const struct strtab *t)
{
	return t->strs.len;
}
void strtab_free(struct strtab *t);

#endif
