// SPDX-License-Identifier: BSD-2-Clause
/*
 * Which tables go when one that was refused for room is wanted (see
 * table_store.h: unwind_store_evict_for): by use, the files sampled least
 * recently first, each user's most recently sampled tables protected from
 * other users up to a quarter of the store, the tables sampled this very
 * second never.
 */
#include "table_store.h"
#include "table_store_impl.h"

#include <stdlib.h>
#include <string.h>

/* The order tables go in: the class first, then the keys, lowest first. */
enum victim_class {
	VICTIM_NEVER_SAMPLED_OLD, /* never sampled, loaded UNWIND_STORE_OLD_NS ago: oldest first */
	VICTIM_UNPROTECTED,	  /* least recently sampled first (never sampled: 0) */
	VICTIM_OWN_PROTECTED,	  /* the requester's own protected tables, least recent first */
};

struct victim {
	uint32_t idx;
	uint32_t cls;
	uint64_t key, key2;
};

static int by_victim_order(const void *a, const void *b)
{
	const struct victim *x = a, *y = b;

	if (x->cls != y->cls)
		return x->cls < y->cls ? -1 : 1;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->key2 < y->key2 ? -1 : x->key2 > y->key2;
}

/* Sampled tables of users other than root by (uid, most recently sampled first). */
static const struct unwind_store_file *sort_files;

static int by_uid_recent_first(const void *a, const void *b)
{
	const struct unwind_store_file *x = &sort_files[*(const uint32_t *)a];
	const struct unwind_store_file *y = &sort_files[*(const uint32_t *)b];

	if (x->id.uid != y->id.uid)
		return x->id.uid < y->id.uid ? -1 : 1;
	return x->sampled_at > y->sampled_at ? -1 : x->sampled_at < y->sampled_at;
}

static bool pinned(const struct unwind_store_file *e, uint64_t now)
{
	return e->sampled_at && (e->sampled_at >= now || now - e->sampled_at < UNWIND_STORE_PIN_NS);
}

/*
 * protected[i]: whether entry i is protected from users other than its
 * payer: root's sampled tables all, another user's most recently sampled
 * up to a quarter of the slots. false: no memory (then nothing is).
 */
static bool protect(const struct unwind_store *s, bool *protected)
{
	uint32_t *order = malloc((s->files.len ? s->files.len : 1) * sizeof(*order));
	size_t n = 0, held = 0;

	if (!order)
		return false;
	for (size_t i = 0; i < s->files.len; i++) {
		const struct unwind_store_file *e = &s->files.data[i];

		if (e->status != UNWIND_FILE_LOADED || !e->sampled_at)
			continue;
		if (!e->id.uid)
		protected[i] = true;
		else order[n++] = (uint32_t)i;
	}
	sort_files = s->files.data;
	qsort(order, n, sizeof(*order), by_uid_recent_first);
	for (size_t i = 0; i < n; i++) {
		const struct unwind_store_file *e = &s->files.data[order[i]];

		if (i && s->files.data[order[i - 1]].id.uid != e->id.uid)
			held = 0;
		if (held + e->nslots <= s->max_slots / 4) {
			held += e->nslots;
			protected[order[i]] = true;
		}
	}
	free(order);
	return true;
}

/*
 * The tables that would go, in order, for `n` slots (and an entry of the
 * BPF file map) of user `uid`'s (its payer's) table: their count into
 * *count, *out (the caller's to free) their order; false when even all of
 * them would not make the room, or there is no memory. *count 0: the room
 * is there (or in dead slots).
 */
static bool victims(const struct unwind_store *s, uint32_t uid, size_t n, uint64_t now,
		    struct victim **out, size_t *count)
{
	size_t used = s->slots.len, room, nv = 0;
	bool entry = store_entry_free(s);
	bool *protected;
	struct victim *v;

	*out = NULL;
	*count = 0;
	room = used < s->max_slots ? s->max_slots - used : 0;
	if (room >= n && entry)
		return true;
	protected = calloc(s->files.len ? s->files.len : 1, sizeof(*protected));
	v = malloc((s->files.len ? s->files.len : 1) * sizeof(*v));
	if (!protected || !v || !protect(s, protected)) {
		free(protected);
		free(v);
		return false;
	}
	for (size_t i = 0; i < s->files.len; i++) {
		const struct unwind_store_file *e = &s->files.data[i];
		bool old = e->loaded_at <= now && now - e->loaded_at >= UNWIND_STORE_OLD_NS;

		if (e->status != UNWIND_FILE_LOADED || e->key.ino == UNWIND_VDSO_INO ||
		    pinned(e, now) || (protected[i] && e->id.uid != uid))
			continue;
		v[nv++] = (struct victim){
			.idx = (uint32_t)i,
			.cls = !e->sampled_at && old ? VICTIM_NEVER_SAMPLED_OLD
			       : !protected[i]	     ? VICTIM_UNPROTECTED
						     : VICTIM_OWN_PROTECTED,
			.key = !e->sampled_at && old ? e->loaded_at : e->sampled_at,
			.key2 = e->loaded_at,
		};
	}
	free(protected);
	qsort(v, nv, sizeof(*v), by_victim_order);
	for (size_t i = 0; i < nv && (room < n || !entry); i++) {
		room += s->files.data[v[i].idx].nslots;
		entry = true;
		*count = i + 1;
	}
	if (room < n || !entry) {
		free(v);
		return false;
	}
	*out = v;
	return true;
}

/*
 * Whether FULL entry `e`'s table could be stored by evicting others (or
 * compacting): refused for room, not for its payer's share, its rules, or
 * the file cap.
 */
bool store_room_by_eviction(const struct unwind_store *s, const struct unwind_store_file *e,
			    uint32_t uid, uint64_t now)
{
	struct victim *v;
	size_t n = e->want_slots, count;
	uint32_t payer = store_payer(s, uid, e->id.system, n);
	bool ok;

	if (e->status != UNWIND_FILE_FULL || !n || e->want_rules ||
	    n > (e->id.system ? s->max_slots : unwind_store_file_cap(s)) ||
	    store_past_share(s, payer, n))
		return false;
	ok = victims(s, payer, n, now, &v, &count);
	free(v);
	return ok;
}

bool unwind_store_evict_for(struct unwind_store *s, const struct unwind_store_file *f, uint64_t now)
{
	struct unwind_store_file *e = &s->files.data[f - s->files.data];
	size_t count;
	struct victim *v;

	if (!store_room_by_eviction(s, e, e->id.uid, now) ||
	    !victims(s, store_payer(s, e->id.uid, e->id.system, e->want_slots), e->want_slots, now,
		     &v, &count))
		return false;
	for (size_t i = 0; i < count; i++)
		store_evict(s, &s->files.data[v[i].idx], now);
	free(v);
	/*
	 * Its build is taken again (unwind_store_complete), counted once; or,
	 * when that build is gone, it is handed over when next met (retry).
	 */
	s->stats.files[UNWIND_FILE_FULL]--;
	e->status = UNWIND_FILE_PENDING;
	e->evicted = false;
	e->retry = true;
	return true;
}
