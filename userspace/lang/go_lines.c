// SPDX-License-Identifier: BSD-2-Clause
/* See go_lines.h. */
#include "go_lines.h"

#include <stdlib.h>
#include <string.h>

/* Where a value holds: from the range before's end (or the entry) up to `end`. */
struct go_range {
	uint64_t end;
	int32_t value;
};

/* One value table of one function, decoded: its ranges that cover code, sorted. */
struct decoded {
	uint64_t entry, limit;
	uint32_t table;
	bool used;
	uint32_t n;
	struct go_range *ranges;
};

struct go_lines {
	uint64_t steps;	    /* decoded so far */
	size_t ranges_held; /* in all slots */
	struct decoded slots[GO_LINES_SLOTS];
};

struct go_lines *go_lines_new(void)
{
	return calloc(1, sizeof(struct go_lines));
}

void go_lines_new_profile(struct go_lines *l)
{
	if (l)
		l->steps = 0;
}

static void drop(struct go_lines *l, struct decoded *d)
{
	l->ranges_held -= d->n;
	free(d->ranges);
	memset(d, 0, sizeof(*d));
}

void go_lines_free(struct go_lines *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < GO_LINES_SLOTS; i++)
		free(l->slots[i].ranges);
	free(l);
}

size_t go_lines_bytes(const struct go_lines *l)
{
	return l ? sizeof(*l) + l->ranges_held * sizeof(struct go_range) : 0;
}

uint64_t go_lines_steps(const struct go_lines *l)
{
	return l ? l->steps : 0;
}

static size_t slot_of(uint32_t table, uint64_t entry)
{
	uint64_t h = (entry ^ ((uint64_t)table << 32) ^ table) * 0x9e3779b97f4a7c15ull;

	return (size_t)(h >> 32) % GO_LINES_SLOTS;
}

/*
 * Table `table` of the function [entry, limit) into `out`, each step paid
 * from the budget. False when the budget runs out first (nothing kept) or
 * without memory.
 */
static bool decode(struct go_lines *l, const struct go_pclntab *t, uint32_t table, uint64_t entry,
		   uint64_t limit, struct decoded *out)
{
	struct go_pcvalue_iter it;
	struct go_range *r = NULL;
	uint32_t n = 0, cap = 0;
	uint64_t a, b;
	int32_t v;

	*out = (struct decoded){ .entry = entry, .limit = limit, .table = table, .used = true };
	go_pcvalue_begin(&it, t, table, entry, limit);
	while (l->steps < GO_LINES_STEPS && go_pcvalue_next(&it, &a, &b, &v)) {
		l->steps++;
		if (a == b)
			continue; /* covers no code: no address can be in it */
		if (n == cap) {
			uint32_t ncap = cap ? 2 * cap : 8;
			struct go_range *nr = realloc(r, ncap * sizeof(*r));

			if (!nr) {
				free(r);
				return false;
			}
			r = nr;
			cap = ncap;
		}
		r[n++] = (struct go_range){ b, v };
	}
	/* Stopped by the budget, not by the table: what it would have said is unknown. */
	if (l->steps >= GO_LINES_STEPS && go_pcvalue_next(&it, &a, &b, &v)) {
		free(r);
		return false;
	}
	out->n = n;
	out->ranges = r;
	return true;
}

/* The value table `table` of [entry, limit) gives at `pc`, decoded once. */
static bool value_at(struct go_lines *l, const struct go_pclntab *t, uint32_t table, uint64_t entry,
		     uint64_t limit, uint64_t pc, int32_t *value)
{
	struct decoded *d = &l->slots[slot_of(table, entry)], fresh;
	size_t lo = 0, hi;
	bool found;

	if (!(d->used && d->table == table && d->entry == entry && d->limit == limit)) {
		if (!decode(l, t, table, entry, limit, &fresh))
			return false;
		drop(l, d);
		if (l->ranges_held + fresh.n > GO_LINES_MAX_RANGES) {
			for (size_t i = 0; i < GO_LINES_SLOTS; i++)
				drop(l, &l->slots[i]);
		}
		*d = fresh;
		l->ranges_held += fresh.n;
	}
	/* The first range that ends past pc; it holds from the one before's end. */
	hi = d->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (d->ranges[mid].end <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	found = pc >= entry && lo < d->n && pc >= (lo ? d->ranges[lo - 1].end : entry);
	if (found)
		*value = d->ranges[lo].value;
	/* More ranges than all slots may hold: answered, not kept. */
	if (d->n > GO_LINES_MAX_RANGES)
		drop(l, d);
	return found;
}

bool go_lines_at(struct go_lines *l, const struct go_pclntab *t, const struct go_func *f,
		 uint64_t pc, const char **file, int *line)
{
	int32_t fileno, ln;

	if (!value_at(l, t, f->pcfile, f->entry, f->end, pc, &fileno) || fileno < 0 ||
	    !value_at(l, t, f->pcln, f->entry, f->end, pc, &ln) || ln <= 0)
		return false;
	*file = go_pclntab_file(t, f, fileno);
	*line = ln;
	return *file && **file;
}
