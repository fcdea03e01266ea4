/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A Ruby iseq's line table as CRuby 3.1 builds it (iseq.c,
 * succ_index_table_create): for tests of lang/ruby_lines.c and the fuzz
 * target, which check lookups against a plain count.
 */
#ifndef BPFPROF_TESTS_RUBY_IMAGE_H
#define BPFPROF_TESTS_RUBY_IMAGE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lang/ruby_lines.h"

static inline void rb_image_put_bits(uint8_t *word, unsigned shift, unsigned width, uint64_t v)
{
	uint64_t w;

	memcpy(&w, word, 8);
	w &= ~(((1ull << width) - 1) << shift);
	w |= (v & ((1ull << width) - 1)) << shift;
	memcpy(word, &w, 8);
}

/*
 * The succinct index of entries starting at positions pos[0..n) (rising,
 * pos[0] = 0) in an iseq of `max_pos` words, into a malloc'd table of
 * ruby_succ_table_bytes(max_pos) bytes.
 */
static inline uint8_t *rb_image_succ_table(uint32_t max_pos, const uint32_t *pos, uint32_t n)
{
	size_t len = ruby_succ_table_bytes(max_pos);
	uint8_t *t = calloc(1, len);
	uint32_t imm = (max_pos < 54 ? max_pos + 8 : 54) / 9;
	uint32_t blocks = (uint32_t)((len - 48) / 80), r = 0;

	if (!t)
		return NULL;
	for (uint32_t j = 0; j < imm; j++)
		for (uint32_t i = 0; i < 9; i++) {
			if (r < n && pos[r] == j * 9 + i)
				r++;
			rb_image_put_bits(t + 8 * j, 7 * i, 7, r);
		}
	for (uint32_t k = 0; k < blocks; k++) {
		uint8_t *b = t + 48 + 80 * k;
		uint32_t small = 0;

		memcpy(b, &r, 4);
		for (uint32_t j = 0; j < 8; j++) {
			uint64_t bits = 0;

			if (j)
				rb_image_put_bits(b + 8, 9 * (j - 1), 9, small);
			for (uint32_t i = 0; i < 64; i++)
				if (r < n && pos[r] == k * 512 + j * 64 + i + 54) {
					bits |= 1ull << i;
					r++;
				}
			memcpy(b + 16 + 8 * j, &bits, 8);
			small += (uint32_t)__builtin_popcountll(bits);
		}
	}
	return t;
}

#endif
