// SPDX-License-Identifier: BSD-2-Clause
/*
 * Which tables go when one that was refused for room is wanted (see
 * table_store.h: unwind_store_evict_for): by use, the files used least
 * recently first, each user's most recently stamped tables protected from
 * other users up to a quarter of the store, the tables sampled or loaded
 * this very moment never.
 */
#include "table_store.h"
#include "table_store_impl.h"

#include <stdlib.h>
#include <string.h>

/* The order tables go in: the class first, then the keys, lowest first. */
enum victim_class {
	VICTIM_NEVER_SAMPLED_OLD, /* never sampled, loaded UNWIND_STORE_OLD_NS ago: oldest first */
	VICTIM_UNPROTECTED,	  /* least recently used first */
	VICTIM_OWN_PROTECTED, /* protected by the requester's own stamps only, least recent first */
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

/* One user's claim on a table: a stamp (protection), or its load (the fresh pin). */
struct claim {
	uint32_t uid, idx;
	uint64_t at;
};

/* By user, most recent first. */
static int by_uid_recent_first(const void *a, const void *b)
{
	const struct claim *x = a, *y = b;

	if (x->uid != y->uid)
		return x->uid < y->uid ? -1 : 1;
	return x->at > y->at ? -1 : x->at < y->at;
}

/* Whether `at` (0: never) is less than `window` before `now`. */
static bool within(uint64_t at, uint64_t now, uint64_t window)
{
	return at && (at >= now || now - at < window);
}

/*
 * The claims, sorted, each user's most recent up to a quarter of the
 * slots (root's all when `root_all`) marked in mark(claim's user, entry
 * index).
 */
static void each_users_quarter(const struct unwind_store *s, struct claim *c, size_t n,
			       bool root_all, void (*mark)(void *ctx, uint32_t uid, uint32_t idx),
			       void *ctx)
{
	size_t held = 0;

	qsort(c, n, sizeof(*c), by_uid_recent_first);
	for (size_t i = 0; i < n; i++) {
		uint32_t nslots = s->files.data[c[i].idx].nslots;

		if (i && c[i - 1].uid != c[i].uid)
			held = 0;
		if ((c[i].uid || !root_all) && held + nslots > s->max_slots / 4)
			continue;
		held += nslots;
		mark(ctx, c[i].uid, c[i].idx);
	}
}

/* What protect() marks: per entry, bits PROT_*. */
enum {
	PROT_ANY = 1,	 /* protected by some user's stamp */
	PROT_OTHER = 2,	 /* ... by a user other than the requester's */
	PROT_PINNED = 4, /* never evicted now: sampled or loaded just now */
};

struct marks {
	uint8_t *bits;
	uint32_t requester;
};

static void mark_protected(void *ctx, uint32_t uid, uint32_t idx)
{
	struct marks *m = ctx;

	m->bits[idx] |= PROT_ANY | (uid != m->requester ? PROT_OTHER : 0);
}

static void mark_pinned(void *ctx, uint32_t uid, uint32_t idx)
{
	struct marks *m = ctx;

	(void)uid;
	m->bits[idx] |= PROT_PINNED;
}

/*
 * bits[i]: whether LOADED entry i is protected (its users' stamps of the
 * last UNWIND_STORE_PROTECT_NS, each user's most recent up to a quarter of
 * the slots, root's all, and all those of tables root pays for;
 * PROT_OTHER when a user other than `requester` protects it) or pinned
 * (sampled in the last UNWIND_STORE_PIN_NS, or loaded then, each user's
 * most recent loads up to a quarter, root's too). false: no memory.
 */
static bool protect(const struct unwind_store *s, uint32_t requester, uint64_t now, uint8_t *bits)
{
	size_t cap = (s->files.len ? s->files.len : 1) * UNWIND_STORE_STAMPS, n = 0, np = 0;
	struct claim *c = malloc(cap * sizeof(*c)),
		     *p = malloc(cap / UNWIND_STORE_STAMPS * sizeof(*p));
	struct marks m = { .bits = bits, .requester = requester };

	if (!c || !p) {
		free(c);
		free(p);
		return false;
	}
	for (size_t i = 0; i < s->files.len; i++) {
		const struct unwind_store_file *e = &s->files.data[i];

		if (e->status != UNWIND_FILE_LOADED)
			continue;
		if (within(e->sampled_at, now, UNWIND_STORE_PIN_NS))
			bits[i] |= PROT_PINNED;
		else if (within(e->loaded_at, now, UNWIND_STORE_PIN_NS))
			p[np++] = (struct claim){ .uid = e->loaded_by,
						  .idx = (uint32_t)i,
						  .at = e->loaded_at };
		for (size_t k = 0; k < UNWIND_STORE_STAMPS; k++) {
			if (!within(e->stamps[k].at, now, UNWIND_STORE_PROTECT_NS))
				continue;
			/*
			 * Root pays for the system's files larger than a share, and
			 * for those root's processes mapped first: whoever runs one
			 * protects it, beyond its own quarter (cc1 or libLLVM alone
			 * is past any user's), as root's stamps protect all.
			 */
			if (!e->id.uid)
				mark_protected(&m, e->stamps[k].uid, (uint32_t)i);
			else
				c[n++] = (struct claim){ .uid = e->stamps[k].uid,
							 .idx = (uint32_t)i,
							 .at = e->stamps[k].at };
		}
	}
	/*
	 * Fresh tables pinned within their loader's quarter, root's too: no
	 * user keeps the store by loading tables, nor does a start that reads
	 * every process's.
	 */
	each_users_quarter(s, p, np, false, mark_pinned, &m);
	each_users_quarter(s, c, n, true, mark_protected, &m);
	free(c);
	free(p);
	return true;
}

/*
 * The tables that would go, in order, for `n` slots (and an entry of the
 * BPF file map) of a table user `requester` asks for: their count into
 * *count, *out (the caller's to free) their order; false when even all of
 * them would not make the room, or there is no memory. *count 0: the room
 * is there (or in dead slots).
 */
static bool victims(const struct unwind_store *s, uint32_t requester, size_t n, uint64_t now,
		    struct victim **out, size_t *count)
{
	size_t used = s->slots.len, room, nv = 0;
	bool entry = store_entry_free(s);
	uint8_t *bits;
	struct victim *v;

	*out = NULL;
	*count = 0;
	room = used < s->max_slots ? s->max_slots - used : 0;
	if (room >= n && entry)
		return true;
	bits = calloc(s->files.len ? s->files.len : 1, sizeof(*bits));
	v = malloc((s->files.len ? s->files.len : 1) * sizeof(*v));
	if (!bits || !v || !protect(s, requester, now, bits)) {
		free(bits);
		free(v);
		return false;
	}
	for (size_t i = 0; i < s->files.len; i++) {
		const struct unwind_store_file *e = &s->files.data[i];
		bool old = !e->sampled_at && e->loaded_at <= now &&
			   now - e->loaded_at >= UNWIND_STORE_OLD_NS;
		uint64_t used_at = e->sampled_at > e->loaded_at ? e->sampled_at : e->loaded_at;

		if (e->status != UNWIND_FILE_LOADED || e->key.ino == UNWIND_VDSO_INO ||
		    (bits[i] & (PROT_PINNED | PROT_OTHER)))
			continue;
		v[nv++] = (struct victim){
			.idx = (uint32_t)i,
			.cls = old		       ? VICTIM_NEVER_SAMPLED_OLD
			       : !(bits[i] & PROT_ANY) ? VICTIM_UNPROTECTED
						       : VICTIM_OWN_PROTECTED,
			.key = old ? e->loaded_at : used_at,
			.key2 = e->loaded_at,
		};
	}
	free(bits);
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
	ok = victims(s, uid, n, now, &v, &count);
	free(v);
	return ok;
}

bool unwind_store_evict_for(struct unwind_store *s, const struct unwind_store_file *f, uint64_t now)
{
	struct unwind_store_file *e = &s->files.data[f - s->files.data];
	size_t count;
	struct victim *v;

	if (!store_room_by_eviction(s, e, e->id.uid, now) ||
	    !victims(s, e->id.uid, e->want_slots, now, &v, &count))
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
