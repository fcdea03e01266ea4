/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * An iseq's line of an instruction (CRuby 2.6 on): its insns_info entries
 * hold a line each, and a succinct bit vector (succ_index_table) says which
 * entry an instruction's position falls in: a bit per position that starts
 * an entry, the entry's index the bits set up to the position. Both come
 * from the process (hostile): every index is checked against the bytes
 * copied.
 */
#ifndef BPFPROF_LANG_RUBY_LINES_H
#define BPFPROF_LANG_RUBY_LINES_H

#include <stddef.h>
#include <stdint.h>

/* The bytes of the succ_index_table of an iseq of `iseq_size` instructions' words. */
size_t ruby_succ_table_bytes(uint32_t iseq_size);

struct ruby_lines {
	const uint8_t *entries; /* n entries of entry_size bytes */
	uint32_t n;
	uint16_t entry_size, line_off;
	const uint8_t *table; /* the succ_index_table's bytes (n > 1) */
	size_t table_len;
};

/* The line of the instruction at word `pos` of the iseq; 0 when the tables do not say. */
int ruby_line_at(const struct ruby_lines *l, uint32_t pos);

#endif
