// SPDX-License-Identifier: BSD-2-Clause
/*
 * A perf map's address index (perf_map_index.h): a merge of sorted items
 * and one sweep with a heap of the items covering the sweep's position;
 * the levels a jitdump's moves look through between rebuilds.
 */
#include "perf_map_index.h"

#include <errno.h>
#include <stdlib.h>

static int item_cmp(const void *a, const void *b)
{
	const struct pm_item *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->entry < y->entry ? -1 : x->entry > y->entry;
}

/* A max-heap of item indexes by entry number: the newest covering item on top. */
typedef VEC(uint32_t) heap_t;

static void heap_sift_down(heap_t *h, const struct pm_item *items, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		uint32_t t;

		if (l < h->len && items[h->data[l]].entry > items[h->data[m]].entry)
			m = l;
		if (r < h->len && items[h->data[r]].entry > items[h->data[m]].entry)
			m = r;
		if (m == i)
			return;
		t = h->data[i];
		h->data[i] = h->data[m];
		h->data[m] = t;
		i = m;
	}
}

static int heap_push(heap_t *h, const struct pm_item *items, uint32_t x)
{
	size_t i;

	if (vec_push(h, x))
		return -ENOMEM;
	for (i = h->len - 1; i > 0; i = (i - 1) / 2) {
		size_t parent = (i - 1) / 2;
		uint32_t t;

		if (items[h->data[parent]].entry >= items[h->data[i]].entry)
			break;
		t = h->data[i];
		h->data[i] = h->data[parent];
		h->data[parent] = t;
	}
	return 0;
}

static void heap_pop(heap_t *h, const struct pm_item *items)
{
	h->data[0] = h->data[--h->len];
	heap_sift_down(h, items, 0);
}

/* Drop items on top of the heap that end at or before `pos`. */
static void heap_expire(heap_t *h, const struct pm_item *items, uint64_t pos)
{
	while (h->len && items[h->data[0]].end <= pos)
		heap_pop(h, items);
}

static int emit_segment(pm_segments_t *out, uint64_t start, uint64_t end, uint32_t entry)
{
	struct pm_segment s = { start, end, entry };

	if (out->len && vec_last(out).end == start && vec_last(out).entry == entry) {
		vec_last(out).end = end;
		return 0;
	}
	return vec_push(out, s) ? -ENOMEM : 0;
}

/*
 * Sweep items sorted by start into disjoint segments, each owned by the
 * newest item covering it. Ends of items that are not on top change nothing,
 * so the sweep only stops at starts and at the top item's end.
 */
static int sweep(const struct pm_item *items, size_t n, pm_segments_t *out)
{
	heap_t heap = { 0 };
	uint64_t pos = 0, next;
	size_t i = 0;
	int err = 0;

	for (;;) {
		const struct pm_item *top;

		heap_expire(&heap, items, pos);
		if (!heap.len) {
			if (i == n)
				break;
			pos = items[i].start;
		}
		for (; i < n && items[i].start <= pos; i++) {
			err = heap_push(&heap, items, i);
			if (err)
				goto out;
		}
		heap_expire(&heap, items, pos);
		if (!heap.len)
			continue;
		top = &items[heap.data[0]];
		next = top->end;
		if (i < n && items[i].start < next)
			next = items[i].start;
		err = emit_segment(out, pos, next, top->entry);
		if (err)
			goto out;
		pos = next;
	}
out:
	vec_free(&heap);
	return err;
}

void pm_items_sort(struct pm_item *items, size_t n)
{
	qsort(items, n, sizeof(*items), item_cmp);
}

int pm_index_merge(const pm_segments_t *old, const struct pm_item *fresh, size_t k,
		   pm_segments_t *out)
{
	size_t s = old->len, n = 0, a = 0, b = 0;
	struct pm_item *items = malloc((k + s ? k + s : 1) * sizeof(*items));
	int err;

	if (!items)
		return -ENOMEM;
	while (a < s || b < k) {
		const struct pm_segment *seg = a < s ? &old->data[a] : NULL;

		if (seg && (b == k || seg->start <= fresh[b].start)) {
			items[n++] = (struct pm_item){ seg->start, seg->end, seg->entry };
			a++;
		} else {
			items[n++] = fresh[b++];
		}
	}
	err = sweep(items, n, out);
	free(items);
	return err;
}

const struct pm_segment *pm_index_find(const pm_segments_t *segs, uint64_t addr)
{
	size_t lo = 0, hi = segs->len;

	/* The first segment starting after addr; the one before may hold it. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (segs->data[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || addr >= segs->data[lo - 1].end)
		return NULL;
	return &segs->data[lo - 1];
}

/* entries[from, len) laid over `old` into `out`; 0 or -ENOMEM (`out` empty). */
static int index_entries(const struct pm_entry *entries, size_t n, const pm_segments_t *old,
			 size_t from, pm_segments_t *out)
{
	size_t k = n - from;
	struct pm_item *fresh;
	int err;

	fresh = malloc((k ? k : 1) * sizeof(*fresh));
	if (!fresh)
		return -ENOMEM;
	for (size_t i = 0; i < k; i++) {
		const struct pm_entry *e = &entries[from + i];

		fresh[i] = (struct pm_item){ e->start, e->end, (uint32_t)(from + i) };
	}
	pm_items_sort(fresh, k);
	err = pm_index_merge(old, fresh, k, out);
	free(fresh);
	if (err)
		vec_free(out);
	return err;
}

static void drop_levels(struct pm_index *ix)
{
	for (size_t i = 0; i < ix->levels.len; i++)
		vec_free(&ix->levels.data[i].segs);
	ix->levels.len = 0;
	ix->leveled = ix->merged;
}

int pm_index_rebuild(struct pm_index *ix, const struct pm_entry *entries, size_t n)
{
	pm_segments_t out = { 0 };
	int err;

	if (ix->merged == n)
		return 0;
	err = index_entries(entries, n, &ix->segments, ix->merged, &out);
	if (err)
		return err;
	vec_free(&ix->segments);
	ix->segments = out;
	ix->merged = n;
	drop_levels(ix);
	return 0;
}

/* The newer of the last two levels laid over the older, in its place. 0 or -ENOMEM. */
static int merge_last_levels(struct pm_index *ix)
{
	struct pm_level *older = &ix->levels.data[ix->levels.len - 2], *newer = older + 1;
	size_t k = newer->segs.len;
	pm_segments_t out = { 0 };
	struct pm_item *fresh = malloc((k ? k : 1) * sizeof(*fresh));
	int err;

	if (!fresh)
		return -ENOMEM;
	/* A level's segments are sorted and disjoint: in the order a merge takes. */
	for (size_t i = 0; i < k; i++)
		fresh[i] = (struct pm_item){ newer->segs.data[i].start, newer->segs.data[i].end,
					     newer->segs.data[i].entry };
	err = pm_index_merge(&older->segs, fresh, k, &out);
	free(fresh);
	if (err) {
		vec_free(&out);
		return err;
	}
	vec_free(&older->segs);
	vec_free(&newer->segs);
	older->segs = out;
	older->entries += newer->entries;
	ix->levels.len--;
	return 0;
}

/* entries[leveled, len) into a level of their own, merged down while it is as large as the one
 * before. */
static int index_tail(struct pm_index *ix, const struct pm_entry *entries, size_t n)
{
	struct pm_level lv = { 0 };
	pm_segments_t none = { 0 };

	if (ix->leveled < ix->merged)
		ix->leveled = ix->merged;
	lv.entries = n - ix->leveled;
	if (!lv.entries)
		return 0;
	if (index_entries(entries, n, &none, ix->leveled, &lv.segs))
		return -ENOMEM;
	if (vec_push(&ix->levels, lv)) {
		vec_free(&lv.segs);
		return -ENOMEM;
	}
	ix->leveled = n;
	/* Out of memory, levels stay unmerged: more of them to look through, nothing lost. */
	while (ix->levels.len >= 2 &&
	       ix->levels.data[ix->levels.len - 2].entries <= vec_last(&ix->levels).entries &&
	       !merge_last_levels(ix))
		;
	return 0;
}

/* Entries not in any index yet that a move looks through one by one, before indexing them. */
#define TAIL_SCAN 256u

/*
 * The last few entries, newest first, then the levels' (newer than any in
 * `segments`) newest first, then the rebuilt index's.
 */
int pm_index_newest(struct pm_index *ix, const struct pm_entry *entries, size_t n, uint64_t addr,
		    int64_t *entry)
{
	const struct pm_segment *seg;
	size_t from = ix->leveled > ix->merged ? ix->leveled : ix->merged;

	if (n - from >= TAIL_SCAN) {
		if (index_tail(ix, entries, n))
			return -ENOMEM;
		from = n;
	}
	for (size_t i = n; i-- > from;)
		if (entries[i].start <= addr && addr < entries[i].end) {
			*entry = (int64_t)i;
			return 0;
		}
	for (size_t i = ix->levels.len; i-- > 0;) {
		seg = pm_index_find(&ix->levels.data[i].segs, addr);
		if (seg) {
			*entry = seg->entry;
			return 0;
		}
	}
	seg = pm_index_find(&ix->segments, addr);
	*entry = seg ? (int64_t)seg->entry : -1;
	return 0;
}

size_t pm_index_bytes(const struct pm_index *ix)
{
	size_t n = ix->segments.cap * sizeof(*ix->segments.data) +
		   ix->levels.cap * sizeof(*ix->levels.data);

	for (size_t i = 0; i < ix->levels.len; i++)
		n += ix->levels.data[i].segs.cap * sizeof(struct pm_segment);
	return n;
}

void pm_index_free(struct pm_index *ix)
{
	drop_levels(ix);
	vec_free(&ix->levels);
	vec_free(&ix->segments);
}
