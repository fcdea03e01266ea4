// SPDX-License-Identifier: BSD-2-Clause
/*
 * cfi_table rows into the compact layout (compact_table.h), and its lookup.
 */
#include "compact_table.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define PAGE_MASK ((uint64_t)UNWIND_CODE_PAGE_SIZE - 1)

int compact_rules_init(struct compact_rules *r, struct unwind_rule *buf, size_t max)
{
	memset(r, 0, sizeof(*r));
	if (max > UNWIND_MAX_RULES)
		max = UNWIND_MAX_RULES;
	r->external = buf != NULL;
	r->data = buf ? buf : calloc(max ? max : 1, sizeof(*r->data));
	if (!r->data)
		return -ENOMEM;
	r->max = max;
	r->file_max = COMPACT_FILE_MAX_RULES;
	/* Rule 0: no usable CFI, whatever the row's offsets were. */
	memset(&r->data[0], 0, sizeof(r->data[0]));
	r->len = max ? 1 : 0;
	return 0;
}

void compact_rules_free(struct compact_rules *r)
{
	if (!r->external)
		free(r->data);
	hmap_free(&r->index);
	memset(r, 0, sizeof(*r));
}

size_t compact_table_slots(uint32_t npages, uint32_t nrows)
{
	return (size_t)npages + ((size_t)nrows + 1) / 2;
}

size_t compact_table_slots_of(const struct cfi_table *t)
{
	uint64_t span;

	if (!t->len)
		return 0;
	span = (t->rows[t->len - 1].pc - (t->rows[0].pc & ~PAGE_MASK)) >> UNWIND_CODE_PAGE_SHIFT;
	if (t->len > UINT32_MAX || span >= UINT32_MAX)
		return SIZE_MAX;
	return compact_table_slots((uint32_t)span + 1, (uint32_t)t->len);
}

void compact_table_free(struct compact_table *t)
{
	free(t->pages);
	free(t->rows);
	memset(t, 0, sizeof(*t));
}

static struct unwind_rule rule_of(const struct cfi_row *row)
{
	return (struct unwind_rule){
		.cfa_offset = row->cfa_offset,
		.fp_offset = row->fp_offset,
		.rules = UNWIND_RULES(row->cfa, row->fp, row->plt_threshold),
	};
}

static struct hmap_key rule_key(const struct unwind_rule *r)
{
	return (struct hmap_key){ (uint64_t)(uint32_t)r->cfa_offset |
					  (uint64_t)(uint16_t)r->fp_offset << 32 |
					  (uint64_t)r->rules << 48,
				  0 };
}

/* The index of `rule`, added when new: 0 or -ENOSPC / -ENOMEM. */
static int intern_rule(struct compact_rules *r, struct unwind_rule rule, size_t added_before,
		       uint16_t *index)
{
	struct hmap_key key = rule_key(&rule);
	uint32_t idx;

	if (hmap_get(&r->index, key, &idx)) {
		*index = (uint16_t)idx;
		return 0;
	}
	if (r->len >= r->max || r->len - added_before >= r->file_max)
		return -ENOSPC;
	if (hmap_put(&r->index, key, (uint32_t)r->len))
		return -ENOMEM;
	r->data[r->len] = rule;
	*index = (uint16_t)r->len++;
	return 0;
}

/* The index of `row`'s rule, added when new: 0 or -ENOSPC / -ENOMEM. */
static int intern(struct compact_rules *r, const struct cfi_row *row, size_t added_before,
		  uint16_t *index)
{
	if (row->cfa == UNWIND_CFA_NONE) {
		*index = 0;
		return 0;
	}
	return intern_rule(r, rule_of(row), added_before, index);
}

/* The rules added since `len` go again (a table that was not built). */
static void unintern(struct compact_rules *r, size_t len)
{
	while (r->len > len) {
		r->len--;
		hmap_del(&r->index, rule_key(&r->data[r->len]));
	}
}

int compact_table_build(const struct cfi_table *t, struct compact_rules *rules, size_t max_slots,
			struct compact_table *out)
{
	size_t rules_before = rules->len;
	uint64_t base, span;
	uint16_t in_force = 0; /* the rule at the current page's first byte */
	size_t row = 0;
	int err = 0;

	memset(out, 0, sizeof(*out));
	if (!t->len)
		return 0;
	/* Rows far apart (a hostile file's) must not cost pages there is no room for. */
	if (compact_table_slots_of(t) > max_slots)
		return -E2BIG;
	base = t->rows[0].pc & ~PAGE_MASK;
	span = (t->rows[t->len - 1].pc - base) >> UNWIND_CODE_PAGE_SHIFT;
	out->base = base;
	out->npages = (uint32_t)span + 1;
	out->pages = calloc(out->npages, sizeof(*out->pages));
	out->rows = malloc(t->len * sizeof(*out->rows));
	if (!out->pages || !out->rows) {
		err = -ENOMEM;
		goto fail;
	}
	for (uint32_t p = 0; p < out->npages; p++) {
		uint64_t end = base + (((uint64_t)p + 1) << UNWIND_CODE_PAGE_SHIFT);
		struct unwind_page *pg = &out->pages[p];

		pg->first_row = out->nrows;
		pg->entry_rule = in_force;
		for (; row < t->len && (end == 0 || t->rows[row].pc < end); row++) {
			uint16_t pc_lo = (uint16_t)(t->rows[row].pc & PAGE_MASK), index;

			/* Sorted, one row a PC (cfi_row_push): a page then needs 65535 rows at
			 * most. */
			if (row && t->rows[row].pc <= t->rows[row - 1].pc) {
				err = -EINVAL;
				goto fail;
			}
			err = intern(rules, &t->rows[row], rules_before, &index);
			if (err)
				goto fail;
			in_force = index;
			/*
			 * A row at the page's first byte is its entry rule: a row at
			 * every byte (a crafted FDE, or push/pop pairs by the
			 * thousand) still fits a page's u16 count.
			 */
			if (!pc_lo) {
				pg->entry_rule = index;
				continue;
			}
			out->rows[out->nrows++] =
				(struct unwind_crow){ .pc_lo = pc_lo, .rule = index };
		}
		pg->nrows = (uint16_t)(out->nrows - pg->first_row);
	}
	return 0;
fail:
	unintern(rules, rules_before);
	compact_table_free(out);
	return err;
}

struct compact_view compact_view_of(const union unwind_slot *slots, uint64_t base, uint32_t npages,
				    const struct unwind_rule *rules)
{
	return (struct compact_view){
		.base = base,
		.npages = npages,
		.pages = &slots->page,
		/* A slot is two rows, in order: the rows are one array from the first. */
		.rows = slots[npages].row,
		.rules = rules,
	};
}

bool compact_lookup(const struct compact_view *v, uint64_t addr, struct unwind_rule *rule,
		    uint16_t *index, uint64_t *lo, uint64_t *hi)
{
	const struct unwind_page *pg;
	uint32_t l, h, lo_pc = 0, hi_pc = UNWIND_CODE_PAGE_SIZE;
	uint64_t off, page_start;
	uint16_t key;

	/* Below base the offset wraps past every page: one test for both ends. */
	off = addr - v->base;
	if ((off >> UNWIND_CODE_PAGE_SHIFT) >= v->npages)
		return false;
	pg = &v->pages[off >> UNWIND_CODE_PAGE_SHIFT];
	page_start = addr & ~PAGE_MASK;
	key = (uint16_t)(off & PAGE_MASK);
	/*
	 * The page's last row with pc_lo <= key, or its entry rule before its
	 * first row. As bpf/unwind.bpf.h searches: the last row the search
	 * steps past is the answer, the last it stops at the next row.
	 */
	*index = pg->entry_rule;
	l = pg->first_row;
	h = pg->first_row + pg->nrows;
	while (l < h) {
		uint32_t mid = l + (h - l) / 2;

		if (v->rows[mid].pc_lo <= key) {
			l = mid + 1;
			lo_pc = v->rows[mid].pc_lo;
			*index = v->rows[mid].rule;
		} else {
			h = mid;
			hi_pc = v->rows[mid].pc_lo;
		}
	}
	*lo = page_start + lo_pc;
	*hi = page_start + hi_pc;
	*rule = v->rules[*index];
	return true;
}

/* Rule *index of `old` (old_len of them) as it is in `r`, added when new. */
static int remap_one(struct compact_rules *r, const struct unwind_rule *old, size_t old_len,
		     size_t added_before, uint16_t *index)
{
	/* 0 (no usable CFI) stays; one past the old rules never was: 0 too. */
	if (!*index || *index >= old_len) {
		*index = 0;
		return 0;
	}
	return intern_rule(r, old[*index], added_before, index);
}

int compact_table_remap(union unwind_slot *slots, uint32_t npages, uint32_t nrows,
			const struct unwind_rule *old, size_t old_len, struct compact_rules *r)
{
	struct unwind_crow *rows = slots[npages].row;
	size_t before = r->len;
	int err = 0;

	for (uint32_t i = 0; i < npages && !err; i++)
		err = remap_one(r, old, old_len, before, &slots[i].page.entry_rule);
	for (uint32_t i = 0; i < nrows && !err; i++)
		err = remap_one(r, old, old_len, before, &rows[i].rule);
	if (err)
		unintern(r, before);
	return err;
}
