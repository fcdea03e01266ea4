/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A file's unwind rows (cfi_table) in the compact layout the BPF unwinder
 * reads (bpf/bpfprof_abi.h: unwind_rule, unwind_page, unwind_crow): the
 * rules kept once for every file, the code cut into 64 KiB pages, a row 4
 * bytes (its offset in its page, its rule's index). And the lookup on that
 * layout, the same steps as bpf/unwind.bpf.h's, for the userspace walk.
 */
#ifndef BPFPROF_UNWIND_COMPACT_TABLE_H
#define BPFPROF_UNWIND_COMPACT_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../bpf/bpfprof_abi.h"
#include "cfi_table.h"
#include "util/hashmap.h"

/*
 * Every file's rules, each once: rule 0 is UNWIND_CFA_NONE (a row without
 * usable CFI, whatever its offsets). At most `max` (UNWIND_MAX_RULES: a
 * row's rule is a u16); a file may add at most `file_max` new ones, so
 * that one file (a user's, crafted) cannot take them from every other.
 */
struct compact_rules {
	struct unwind_rule *data; /* the BPF array, mapped, or memory of our own */
	size_t len, max, file_max;
	struct hmap index; /* packed rule -> index */
	bool external;
};

/* New rules one file may add: real files use a few hundred (bench/README.md). */
#define COMPACT_FILE_MAX_RULES 8192

/*
 * Rules written into `buf` (room for max, the caller's) or, when NULL,
 * into memory of our own. 0 or -ENOMEM.
 */
int compact_rules_init(struct compact_rules *r, struct unwind_rule *buf, size_t max);
void compact_rules_free(struct compact_rules *r);

/* One file's table, built: pages and rows of its own memory. */
struct compact_table {
	uint64_t base; /* ELF address of page 0, UNWIND_CODE_PAGE_SIZE aligned */
	uint32_t npages, nrows;
	struct unwind_page *pages;
	struct unwind_crow *rows;
};

/* Slots of unwind_slots the table takes: its pages, then its rows two a slot. */
size_t compact_table_slots(uint32_t npages, uint32_t nrows);
/*
 * The slots the table of `t` would take at most (rows at a page's first
 * byte take none), before it is built (SIZE_MAX: more than can be).
 */
size_t compact_table_slots_of(const struct cfi_table *t);

/*
 * The table of `t` (rows sorted by pc), its rules added to `rules`. 0,
 * -ENOMEM, -E2BIG when it would take more than max_slots slots, -ENOSPC
 * when its rules do not fit (in `rules`, or in a file's file_max: nothing
 * is added then), -EINVAL for rows not in strictly increasing order (what
 * would hold more than a page's 65535 rows). A row at a page's first byte
 * is not stored: it is the page's entry rule, so even a row at every byte
 * fits. out->nrows: the rows stored, at most t->len.
 */
int compact_table_build(const struct cfi_table *t, struct compact_rules *rules, size_t max_slots,
			struct compact_table *out);
void compact_table_free(struct compact_table *t);

/*
 * A table laid out as the store lays it at `slots` (npages pages, then
 * nrows rows two a slot) whose rule indices are into `old` (old_len
 * rules): rewritten to index `r`, the rules it uses added there (within
 * r->file_max new ones). 0, -ENOSPC or -ENOMEM (then `r` is as it was and
 * the table half rewritten: not to be used).
 */
int compact_table_remap(union unwind_slot *slots, uint32_t npages, uint32_t nrows,
			const struct unwind_rule *old, size_t old_len, struct compact_rules *r);

/* A table where the unwinder reads it (the store's slots) and the rules it uses. */
struct compact_view {
	uint64_t base;
	uint32_t npages;
	const struct unwind_page *pages;
	const struct unwind_crow *rows; /* the file's first row first */
	const struct unwind_rule *rules;
};

/* The view of a table laid out as the store lays it: `slots` = its first page's slot. */
struct compact_view compact_view_of(const union unwind_slot *slots, uint64_t base, uint32_t npages,
				    const struct unwind_rule *rules);

/*
 * The rule in force at ELF address `addr` into *rule (its index into
 * *index, 0: no usable CFI) and the addresses [*lo, *hi) it covers there
 * (at most its page); false when no page holds addr (before the file's
 * first row's page, after its last row's).
 */
bool compact_lookup(const struct compact_view *v, uint64_t addr, struct unwind_rule *rule,
		    uint16_t *index, uint64_t *lo, uint64_t *hi);

#endif
