// SPDX-License-Identifier: BSD-2-Clause
/* See ruby_lines.h. iseq.c's succ_index_lookup, over copied bytes. */
#include "ruby_lines.h"

#include <string.h>

/*
 * The table: 6 words of 7-bit ranks for the first 54 positions (9 a
 * word), then blocks of 512 positions: a 4-byte rank (padded to 8), 7
 * 9-bit ranks of its 64-bit words after the first, and the 8 words.
 */
#define IMM_POSITIONS 54
#define IMM_BYTES     48
#define BLOCK_BYTES   80
#define BLOCK_BITS    512

size_t ruby_succ_table_bytes(uint32_t iseq_size)
{
	size_t blocks = iseq_size < IMM_POSITIONS
				? 0
				: ((size_t)iseq_size - IMM_POSITIONS + 511) / BLOCK_BITS;

	return IMM_BYTES + blocks * BLOCK_BYTES;
}

static uint64_t u64_at(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

/* succ_index_lookup: the 1-based entry of position `pos`; 0 when the table is short. */
static uint32_t succ_index(const uint8_t *t, size_t len, uint32_t pos)
{
	const uint8_t *b;
	uint32_t off, word, small;
	uint64_t ranks, bits;
	uint32_t rank;
	size_t at;

	if (len < IMM_BYTES)
		return 0;
	if (pos < IMM_POSITIONS)
		return (uint32_t)(u64_at(t + 8 * (pos / 9)) >> (7 * (pos % 9))) & 0x7f;
	off = pos - IMM_POSITIONS;
	at = IMM_BYTES + (size_t)(off / BLOCK_BITS) * BLOCK_BYTES;
	if (at > len || len - at < BLOCK_BYTES)
		return 0;
	b = t + at;
	off %= BLOCK_BITS;
	word = off / 64;
	memcpy(&rank, b, 4);
	ranks = u64_at(b + 8);
	small = word ? (uint32_t)(ranks >> ((word - 1) * 9)) & 0x1ff : 0;
	bits = u64_at(b + 16 + 8 * word) << (63 - off % 64);
	return rank + small + (uint32_t)__builtin_popcountll(bits);
}

int ruby_line_at(const struct ruby_lines *l, uint32_t pos)
{
	uint32_t idx;
	int line;

	if (!l->n || !l->entries || l->entry_size < 4 || l->line_off > l->entry_size - 4)
		return 0;
	if (l->n == 1)
		idx = 1;
	else if (!l->table || !(idx = succ_index(l->table, l->table_len, pos)) || idx > l->n)
		return 0;
	memcpy(&line, l->entries + (size_t)(idx - 1) * l->entry_size + l->line_off, 4);
	return line > 0 ? line : 0;
}
