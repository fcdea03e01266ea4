/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Binary search in an array of structs sorted by a uint64_t field: how many
 * elements have that field <= x (the last such is the one "in force" at x:
 * an unwind row at a PC, a mapping holding an address).
 */
#ifndef BPFPROF_UTIL_BSEARCH_U64_H
#define BPFPROF_UTIL_BSEARCH_U64_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline size_t count_le_u64(const void *base, size_t n, size_t stride, size_t key_offset,
				  uint64_t x)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t key;

		memcpy(&key, (const char *)base + mid * stride + key_offset, sizeof(key));
		if (key <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* count_le_u64 over an array `a` of n structs sorted by their field `f`. */
#define COUNT_LE_BY(a, n, f, x) \
	count_le_u64((a), (n), sizeof(*(a)), offsetof(__typeof__(*(a)), f), (x))

#endif
