// SPDX-License-Identifier: BSD-2-Clause
/* See hotspot_answers.h. */
#include "hotspot_answers.h"

/* Kept by owner's JVMs. */
static uint32_t user_cached(const struct hotspot_answer_shares *s, uint32_t owner)
{
	uint32_t n = 0;

	hmap_get(&s->by_user, (struct hmap_key){ owner, 0 }, &n);
	return n;
}

/* owner's count moved by delta; 0, or -ENOMEM (a first answer not counted: not kept). */
static int user_cached_add(struct hotspot_answer_shares *s, uint32_t owner, int delta)
{
	uint32_t n = user_cached(s, owner) + (uint32_t)delta;

	if (!n) {
		hmap_del(&s->by_user, (struct hmap_key){ owner, 0 });
		return 0;
	}
	return hmap_put(&s->by_user, (struct hmap_key){ owner, 0 }, n);
}

void hotspot_answer_shares_free(struct hotspot_answer_shares *s)
{
	hmap_free(&s->by_user);
}

struct hotspot_answer *hotspot_answers_get(struct hotspot_answers *a, uint64_t key)
{
	uint32_t idx;

	return hmap_get(&a->index, (struct hmap_key){ key, 0 }, &idx) ? &a->slots.data[idx] : NULL;
}

static void drop_at(struct hotspot_answer_shares *s, struct hotspot_answers *a, uint64_t key,
		    uint32_t idx)
{
	if (hmap_del(&a->index, (struct hmap_key){ key, 0 })) {
		s->cached--;
		(void)user_cached_add(s, a->owner, -1);
		(void)vec_push(&a->free, idx);
	}
}

void hotspot_answers_drop(struct hotspot_answer_shares *s, struct hotspot_answers *a, uint64_t key)
{
	uint32_t idx;

	if (hmap_get(&a->index, (struct hmap_key){ key, 0 }, &idx))
		drop_at(s, a, key, idx);
}

/* Room for one more of a's, past a cap: one of its own goes (the clock's choice). */
static bool evict_one(struct hotspot_answer_shares *s, struct hotspot_answers *a)
{
	/* Twice round at most: the first pass clears what it spares. */
	for (size_t step = 0; a->index.len && step < 2 * a->slots.len + 1; step++) {
		uint32_t idx = a->hand++ % (uint32_t)a->slots.len, live;
		struct hotspot_answer *x = &a->slots.data[idx];

		if (!hmap_get(&a->index, (struct hmap_key){ x->key, 0 }, &live) || live != idx)
			continue; /* a free slot */
		if (x->asked) {
			x->asked = false;
			continue;
		}
		drop_at(s, a, x->key, idx);
		return true;
	}
	return false;
}

void hotspot_answers_put(struct hotspot_answer_shares *s, struct hotspot_answers *a,
			 const struct hotspot_answer *ans)
{
	uint32_t idx;

	if (hmap_get(&a->index, (struct hmap_key){ ans->key, 0 }, &idx)) {
		a->slots.data[idx] = *ans;
		return;
	}
	/* Past a cap, one of the JVM's own answers makes room; with none, nothing is kept. */
	if ((a->index.len >= s->max_jvm || user_cached(s, a->owner) >= s->max_user ||
	     s->cached >= s->max_total) &&
	    !evict_one(s, a))
		return;
	if (user_cached_add(s, a->owner, 1))
		return;
	if (a->free.len) {
		idx = a->free.data[--a->free.len];
		a->slots.data[idx] = *ans;
	} else if (vec_push(&a->slots, *ans)) {
		(void)user_cached_add(s, a->owner, -1);
		return;
	} else {
		idx = (uint32_t)(a->slots.len - 1);
	}
	if (hmap_put(&a->index, (struct hmap_key){ ans->key, 0 }, idx)) {
		(void)vec_push(&a->free, idx);
		(void)user_cached_add(s, a->owner, -1);
		return;
	}
	s->cached++;
}

void hotspot_answers_free(struct hotspot_answer_shares *s, struct hotspot_answers *a)
{
	s->cached -= a->index.len;
	(void)user_cached_add(s, a->owner, -(int)a->index.len);
	hmap_free(&a->index);
	vec_free(&a->slots);
	vec_free(&a->free);
}
