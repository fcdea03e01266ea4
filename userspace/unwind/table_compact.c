// SPDX-License-Identifier: BSD-2-Clause
/*
 * The store compacted (see table_store.h: unwind_store_compact): the
 * tables kept moved down over the slots of those evicted or replaced, and
 * the rules built again from what they use.
 */
#include "table_store.h"
#include "table_store_impl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* LOADED entries' indices, by first slot. */
static const struct unwind_store_file *sort_files;

static int by_first_slot(const void *a, const void *b)
{
	uint32_t x = sort_files[*(const uint32_t *)a].info.first_slot;
	uint32_t y = sort_files[*(const uint32_t *)b].info.first_slot;

	return x < y ? -1 : x > y;
}

void store_dead(struct unwind_store *s, const struct unwind_store_file *e, uint64_t now)
{
	/* No memory to hold it: lost to this recording (compacting wins it back). */
	(void)slot_alloc_put(&s->alloc, e->info.first_slot, e->nslots, now);
	s->slots.len -= e->nslots;
	store_uncharge(s, e->id.uid, e->nslots);
}

/* Entry `e`'s table is dropped: FULL, evicted, its size kept (found again, see readmit). */
static void mark_evicted(struct unwind_store *s, struct unwind_store_file *e)
{
	e->status = UNWIND_FILE_FULL;
	e->want_slots = e->nslots;
	e->want_rules = 0;
	e->evicted = true;
	s->stats.evicted++;
}

void store_evict(struct unwind_store *s, struct unwind_store_file *e, uint64_t now)
{
	store_dead(s, e, now);
	mark_evicted(s, e);
}

/*
 * Table `e`, now at `at` (moved down), its rows' rules remapped from `old`
 * (old_len of them) to the rules built again, those it adds charged to
 * its payer. 0, -ENOSPC or -ENOMEM.
 */
static int keep(struct unwind_store *s, struct unwind_store_file *e, size_t at,
		const struct unwind_rule *old, size_t old_len)
{
	size_t before = s->rules.len;
	int err;

	memmove(s->slots.data + at, s->slots.data + e->info.first_slot,
		e->nslots * sizeof(*s->slots.data));
	e->info.first_slot = (uint32_t)at;
	s->rules.file_max = store_rules_room(s, e->id.uid);
	err = compact_table_remap(s->slots.data + at, e->info.npages, e->nrows, old, old_len,
				  &s->rules);
	s->rules.file_max = COMPACT_FILE_MAX_RULES;
	if (err)
		return err;
	/* Cannot fail: both counts are there (store_open_counts). */
	(void)store_charge(s, e->id.uid, e->nslots, true);
	(void)store_charge_rules(s, e->id.uid, s->rules.len - before);
	return 0;
}

int unwind_store_compact(struct unwind_store *s)
{
	struct unwind_rule *old_rules =
		malloc((s->rules.len ? s->rules.len : 1) * sizeof(*old_rules));
	uint32_t *order = malloc((s->files.len ? s->files.len : 1) * sizeof(*order));
	size_t n = 0, old_len = s->rules.len, at = 0;
	int err = 0;

	if (!old_rules || !order) {
		free(old_rules);
		free(order);
		return -ENOMEM;
	}
	for (size_t i = 0; i < s->files.len; i++)
		if (s->files.data[i].status == UNWIND_FILE_LOADED)
			order[n++] = (uint32_t)i;
	/* Lowest first: each moves down (or stays), never over a table not moved yet. */
	sort_files = s->files.data;
	qsort(order, n, sizeof(*order), by_first_slot);
	memcpy(old_rules, s->rules.data, old_len * sizeof(*old_rules));
	/* The rules and every user's counts start again from the tables kept. */
	hmap_free(&s->rules.index);
	s->rules.len = s->rules.max ? 1 : 0;
	hmap_free(&s->owner_rules);
	hmap_free(&s->owner_slots);
	hmap_free(&s->owner_files);
	s->loaded_tables = 0;
	s->user_rules = 0;
	for (size_t i = 0; i < n; i++) {
		struct unwind_store_file *e = &s->files.data[order[i]];

		err = store_open_counts(s, e->id.uid);
		if (!err)
			err = keep(s, e, at, old_rules, old_len);
		if (err) {
			/* No room for its rules (or no memory): evicted, found again when next met.
			 */
			mark_evicted(s, e);
			if (err == -ENOMEM)
				break;
			err = 0;
			continue;
		}
		at += e->nslots;
	}
	/* What no memory left room to move: evicted too (its slots are overwritten). */
	for (size_t i = 0; err && i < n; i++)
		if (s->files.data[order[i]].status == UNWIND_FILE_LOADED &&
		    s->files.data[order[i]].info.first_slot >= at) {
			mark_evicted(s, &s->files.data[order[i]]);
		}
	/* Every slot from `at` on is free: nothing was in quarantine (see table_store.h). */
	slot_alloc_reset(&s->alloc, (uint32_t)at);
	s->slots.len = at;
	free(old_rules);
	free(order);
	return err;
}
