// SPDX-License-Identifier: BSD-2-Clause
/* See slot_alloc.h. */
#include "slot_alloc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int slot_alloc_init(struct slot_alloc *a, uint32_t total)
{
	memset(a, 0, sizeof(*a));
	a->total = total;
	slot_alloc_reset(a, 0);
	return total && !a->free.len ? -ENOMEM : 0;
}

void slot_alloc_free(struct slot_alloc *a)
{
	vec_free(&a->free);
	vec_free(&a->held);
	memset(a, 0, sizeof(*a));
}

void slot_alloc_reset(struct slot_alloc *a, uint32_t used)
{
	a->free.len = 0;
	a->held.len = 0;
	a->held_slots = 0;
	a->free_slots = 0;
	if (used < a->total && !vec_push(&a->free, ((struct slot_run){ used, a->total - used })))
		a->free_slots = a->total - used;
}

/* The first free run that starts after `start` (the index to insert at). */
static size_t run_after(const struct slot_alloc *a, uint32_t start)
{
	size_t lo = 0, hi = a->free.len;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (a->free.data[mid].start < start)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int slot_alloc_unget(struct slot_alloc *a, uint32_t start, uint32_t n)
{
	size_t i = run_after(a, start);
	struct slot_run *prev = i ? &a->free.data[i - 1] : NULL;
	struct slot_run *next = i < a->free.len ? &a->free.data[i] : NULL;
	bool to_prev = prev && prev->start + prev->len == start;
	bool to_next = next && start + n == next->start;

	if (!n)
		return 0;
	if (to_prev && to_next) {
		prev->len += n + next->len;
		memmove(next, next + 1, (a->free.len - i - 1) * sizeof(*next));
		a->free.len--;
	} else if (to_prev) {
		prev->len += n;
	} else if (to_next) {
		next->start = start;
		next->len += n;
	} else {
		if (vec_reserve(&a->free, 1))
			return -ENOMEM;
		memmove(&a->free.data[i + 1], &a->free.data[i],
			(a->free.len - i) * sizeof(*a->free.data));
		a->free.data[i] = (struct slot_run){ start, n };
		a->free.len++;
	}
	a->free_slots += n;
	return 0;
}

int slot_alloc_put(struct slot_alloc *a, uint32_t start, uint32_t n, uint64_t now)
{
	if (!n)
		return 0;
	if (vec_push(&a->held, ((struct slot_held){ start, n, now })))
		return -ENOMEM;
	a->held_slots += n;
	return 0;
}

void slot_alloc_release(struct slot_alloc *a, uint64_t now)
{
	size_t done = 0;

	for (; done < a->held.len; done++) {
		const struct slot_held *h = &a->held.data[done];

		if (now < h->freed_at || now - h->freed_at < SLOT_QUARANTINE_NS)
			break;
		a->held_slots -= h->len;
		/* No memory to add a run: that extent is lost to this recording. */
		(void)slot_alloc_unget(a, h->start, h->len);
	}
	if (!done)
		return;
	memmove(a->held.data, a->held.data + done, (a->held.len - done) * sizeof(*a->held.data));
	a->held.len -= done;
}

uint64_t slot_alloc_next_release(const struct slot_alloc *a)
{
	return a->held.len ? a->held.data[0].freed_at + SLOT_QUARANTINE_NS : 0;
}

int slot_alloc_get(struct slot_alloc *a, uint32_t n, uint32_t limit, uint64_t now, uint32_t *start)
{
	slot_alloc_release(a, now);
	for (size_t i = 0; i < a->free.len; i++) {
		struct slot_run *r = &a->free.data[i];

		if (r->start >= limit)
			break;
		if (r->len < n || (uint64_t)r->start + n > limit)
			continue;
		*start = r->start;
		r->start += n;
		r->len -= n;
		if (!r->len) {
			memmove(r, r + 1, (a->free.len - i - 1) * sizeof(*r));
			a->free.len--;
		}
		a->free_slots -= n;
		return 0;
	}
	return -ENOSPC;
}

static int by_start(const void *x, const void *y)
{
	const struct slot_run *a = x, *b = y;

	return a->start < b->start ? -1 : a->start > b->start;
}

bool slot_alloc_fits_later(const struct slot_alloc *a, uint32_t n, uint32_t limit)
{
	size_t len = a->free.len + a->held.len;
	struct slot_run *all = malloc((len ? len : 1) * sizeof(*all));
	uint64_t run_start = 0, run_end = 0;
	bool fits = false;

	if (!all)
		return false;
	if (a->free.len)
		memcpy(all, a->free.data, a->free.len * sizeof(*all));
	for (size_t i = 0; i < a->held.len; i++)
		all[a->free.len + i] =
			(struct slot_run){ a->held.data[i].start, a->held.data[i].len };
	qsort(all, len, sizeof(*all), by_start);
	for (size_t i = 0; i < len && !fits; i++) {
		uint64_t end = (uint64_t)all[i].start + all[i].len;

		if (all[i].start != run_end)
			run_start = all[i].start;
		run_end = end < limit ? end : limit;
		fits = run_end > run_start && run_end - run_start >= n;
	}
	free(all);
	return fits || !n;
}
