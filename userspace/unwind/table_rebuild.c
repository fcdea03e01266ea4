// SPDX-License-Identifier: BSD-2-Clause
/*
 * The store built again (see table_store.h: unwind_store_reset): the
 * tables of the files kept copied back, sampled files first, and whether
 * a rebuild would make room for a sampled file that was refused.
 */
#include "table_store.h"
#include "table_store_impl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../util/clock.h"

/*
 * The rules start again from NONE, those of before kept aside for the
 * files kept to add theirs (adopt), and so do the rules each user added.
 * No memory: they stay as they are, counted as they were.
 */
static void restart_rules(struct unwind_store *s)
{
	s->old_rules = malloc(s->rules.len * sizeof(*s->old_rules));
	if (!s->old_rules)
		return;
	memcpy(s->old_rules, s->rules.data, s->rules.len * sizeof(*s->old_rules));
	s->old_rules_len = s->rules.len;
	hmap_free(&s->rules.index);
	s->rules.len = s->rules.max ? 1 : 0;
	hmap_free(&s->owner_rules);
	s->user_rules = 0;
}

int unwind_store_reset(struct unwind_store *s)
{
	unwind_store_rebuilt(s);
	s->old_slots = malloc((s->slots.len ? s->slots.len : 1) * sizeof(*s->old_slots));
	if (s->old_slots) {
		memcpy(s->old_slots, s->slots.data, s->slots.len * sizeof(*s->old_slots));
		/* Both VEC(struct unwind_store_file): the same layout. */
		memcpy(&s->old_files, &s->files, sizeof(s->files));
		s->old_index = s->index;
		memset(&s->files, 0, sizeof(s->files));
	} else {
		hmap_free(&s->index);
	}
	s->slots.len = 0;
	s->dead_slots = 0;
	s->reserved_slots = 0;
	s->sampled_refused = false;
	hmap_free(&s->owner_slots);
	s->files.len = 0;
	memset(&s->index, 0, sizeof(s->index));
	s->vdso_size = 0;
	if (s->old_slots)
		restart_rules(s);
	return s->old_slots ? 0 : -ENOMEM;
}

void unwind_store_rebuilt(struct unwind_store *s)
{
	/* Room held for sampled files no process mapped again: theirs when they come. */
	for (size_t i = 0; i < s->files.len; i++)
		if (s->files.data[i].retry)
			store_release(s, &s->files.data[i]);
	free(s->old_slots);
	s->old_slots = NULL;
	free(s->old_rules);
	s->old_rules = NULL;
	s->old_rules_len = 0;
	vec_free(&s->old_files);
	hmap_free(&s->old_index);
}

/*
 * During a rebuild: old entry `old`'s run copied after the slots stored
 * (room reserved), its rows remapped to the rules built again (see
 * old_rules), the rules it adds charged to f's payer. 0, -ENOSPC (no rule
 * room: f->want_rules set) or -ENOMEM.
 */
static int copy_rows(struct unwind_store *s, struct unwind_store_file *f,
		     const struct unwind_store_file *old)
{
	union unwind_slot *at = s->slots.data + s->slots.len;
	size_t before = s->rules.len, room;
	int err;

	memcpy(at, s->old_slots + old->info.first_slot, old->nslots * sizeof(*at));
	if (!s->old_rules)
		return 0; /* the rules kept as they were */
	room = store_rules_room(s, f->id.uid);
	s->rules.file_max = room;
	err = compact_table_remap(at, old->info.npages, old->nrows, s->old_rules, s->old_rules_len,
				  &s->rules);
	s->rules.file_max = COMPACT_FILE_MAX_RULES;
	if (err == -ENOSPC) {
		s->stats.rules_full++;
		f->want_rules = (uint32_t)room + 1;
	}
	return err ? err : store_charge_rules(s, f->id.uid, s->rules.len - before);
}

/*
 * During a rebuild: `f` (new, PENDING) takes the table it had before, when
 * it was built and is still that file. Whether it did.
 */
bool store_adopt(struct unwind_store *s, struct unwind_store_file *f)
{
	const struct unwind_store_file *old;
	uint32_t idx;
	int err;

	if (!s->old_slots || !hmap_get(&s->old_index, store_file_key(f->key.dev, f->key.ino), &idx))
		return false;
	old = &s->old_files.data[idx];
	/* Its changes keep counting across rebuilds. */
	f->changes = old->changes;
	f->changes_at = old->changes_at;
	if (!store_same_id(&old->id, &f->id))
		return false;
	/* Still that file: when it was last sampled (what a rebuild keeps first). */
	f->sampled_at = old->sampled_at;
	f->published_at = old->published_at;
	/*
	 * FULL was for lack of room: built again where its rows (known) fit
	 * now, and its rules when refused for them, the room held for it
	 * meanwhile, or FULL still without a build (a rebuild does not build
	 * again every file it has no room for).
	 */
	if (old->status == UNWIND_FILE_FULL && old->want_slots) {
		if (store_admit(s, f->id.uid, f->id.system, old->want_slots) !=
			    UNWIND_FILE_LOADED ||
		    !store_rules_fit(s, old,
				     store_payer(s, f->id.uid, f->id.system, old->want_slots))) {
			f->status = UNWIND_FILE_FULL;
			f->want_slots = old->want_slots;
			f->want_rules = old->want_rules;
			return true;
		}
		f->id.uid = store_payer(s, f->id.uid, f->id.system, old->want_slots);
		if (!store_charge(s, f->id.uid, old->want_slots)) {
			f->reserved = old->want_slots;
			s->reserved_slots += f->reserved;
		}
		return false;
	}
	/* PENDING: a build that is dropped, built again. */
	if (old->status == UNWIND_FILE_PENDING || old->status == UNWIND_FILE_FULL)
		return false;
	f->status = old->status;
	f->churning = old->churning;
	if (old->status != UNWIND_FILE_LOADED)
		return true;
	/*
	 * No room now (its owner's share, or the files kept before it): FULL,
	 * its size known, not built again for nothing; a user with room who
	 * maps it takes it.
	 */
	if (store_admit(s, f->id.uid, f->id.system, old->nslots) != UNWIND_FILE_LOADED) {
		f->status = UNWIND_FILE_FULL;
		f->want_slots = old->nslots;
		return true;
	}
	f->id.uid = store_payer(s, f->id.uid, f->id.system, old->nslots);
	err = vec_reserve(&s->slots, old->nslots) ? -ENOMEM : copy_rows(s, f, old);
	if (err == -ENOSPC) {
		/* Its payer's rule room went to the files kept before it. */
		f->status = UNWIND_FILE_FULL;
		f->want_slots = old->nslots;
		return true;
	}
	if (err || store_charge(s, f->id.uid, old->nslots)) {
		f->status = UNWIND_FILE_PENDING; /* built again */
		return false;
	}
	f->info = old->info;
	f->info.first_slot = (uint32_t)s->slots.len;
	f->nslots = old->nslots;
	f->nrows = old->nrows;
	s->slots.len += old->nslots;
	return true;
}

/* Not sampled in the `recent` ns before `now` (one stamped after `now` is recent). */
static bool stale(const struct unwind_store_file *e, uint64_t now, uint64_t recent)
{
	return !e->sampled_at || (now > e->sampled_at && now - e->sampled_at > recent);
}

/* Owners remembered, at most: past it the memory is dropped (a rebuild each, once more). */
#define EVICT_ASKED_OWNERS 4096

/* Whether `uid` called for an eviction rebuild less than `every` ns before `now`. */
static bool asked_lately(const struct unwind_store *s, uint32_t uid, uint64_t now, uint64_t every)
{
	uint32_t at;

	if (!uid || !hmap_get(&s->evict_asked, (struct hmap_key){ uid, 0 }, &at))
		return false;
	return now / 1000000000ull - at < (every + 999999999ull) / 1000000000ull;
}

bool unwind_store_should_evict(struct unwind_store *s, uint64_t now, uint64_t recent,
			       uint64_t owner_every)
{
	struct hmap stale_of_owner = { 0 }; /* uid -> slots a rebuild would evict */
	uint32_t asker = 0;
	bool helps = false;
	size_t room;

	if (!s->sampled_refused || s->slots.len + s->reserved_slots > s->max_slots)
		return false;
	room = s->max_slots - s->slots.len - s->reserved_slots + s->dead_slots;
	/* Looked at once per call: the next sample in a refused file calls again. */
	s->sampled_refused = false;
	for (size_t i = 0; i < s->files.len; i++) {
		const struct unwind_store_file *e = &s->files.data[i];
		struct hmap_key k = { e->id.uid, 0 };
		uint32_t n = 0;

		if (e->status != UNWIND_FILE_LOADED || !stale(e, now, recent))
			continue;
		room += e->nslots;
		hmap_get(&stale_of_owner, k, &n);
		if (hmap_put(&stale_of_owner, k, n + e->nslots))
			goto out; /* no memory: no rebuild */
	}
	/* A file sampled lately, refused, would fit, in the store and in its user's share. */
	for (size_t i = 0; i < s->files.len && !helps; i++) {
		const struct unwind_store_file *e = &s->files.data[i];
		uint32_t evicted = 0;

		if (e->status != UNWIND_FILE_FULL || !e->want_slots || e->want_rules ||
		    stale(e, now, recent) || e->want_slots > room ||
		    asked_lately(s, e->id.uid, now, owner_every))
			continue;
		hmap_get(&stale_of_owner, (struct hmap_key){ e->id.uid, 0 }, &evicted);
		helps = !s->owner_shares ||
			!store_payer(s, e->id.uid, e->id.system, e->want_slots) ||
			store_slots_of_owner(s, e->id.uid) - evicted + e->want_slots <=
				s->max_slots / 4;
		asker = e->id.uid;
	}
	if (helps && asker) {
		if (s->evict_asked.len >= EVICT_ASKED_OWNERS) {
			hmap_free(&s->evict_asked);
		}
		/* No memory: not remembered, the rebuild happens all the same. */
		(void)hmap_put(&s->evict_asked, (struct hmap_key){ asker, 0 },
			       (uint32_t)(now / 1000000000ull));
	}
out:
	hmap_free(&stale_of_owner);
	return helps;
}

/* Most recently sampled first. */
static int by_sampled_desc(const void *a, const void *b)
{
	const struct unwind_store_file *x = a, *y = b;

	return x->sampled_at < y->sampled_at ? 1 : x->sampled_at > y->sampled_at ? -1 : 0;
}

/*
 * Old entry `old`, sampled, into the store rebuilt: its rows copied back,
 * or room held for the build of one that was refused. Whether it was kept.
 */
static bool keep_one(struct unwind_store *s, const struct unwind_store_file *old)
{
	struct unwind_store_file f = { .key = old->key,
				       .id = old->id,
				       .status = UNWIND_FILE_PENDING };
	bool adopted;

	if (vec_reserve(&s->files, 1))
		return false;
	adopted = store_adopt(s, &f);
	if (!adopted && f.reserved)
		f.retry = true; /* handed over when a process maps it (entry_for), its room held */
	else if (!adopted || f.status != UNWIND_FILE_LOADED)
		return false;
	s->files.data[s->files.len++] = f; /* room reserved above */
	if (hmap_put(&s->index, store_file_key(f.key.dev, f.key.ino),
		     (uint32_t)(s->files.len - 1))) {
		store_release(s, &vec_last(&s->files));
		if (f.status == UNWIND_FILE_LOADED)
			s->dead_slots += f.nslots; /* copied, found by nothing */
		s->files.len--;
		return false;
	}
	return true;
}

void unwind_store_keep_sampled(struct unwind_store *s, size_t max_files)
{
	unwind_store_keep_recent(s, max_files, clock_ns(CLOCK_MONOTONIC), UNWIND_STORE_RECENT_NS);
}

void unwind_store_keep_recent(struct unwind_store *s, size_t max_files, uint64_t now,
			      uint64_t recent)
{
	struct unwind_store_file *sampled;
	size_t n = 0;

	if (!s->old_slots || !s->old_files.len)
		return;
	sampled = malloc(s->old_files.len * sizeof(*sampled));
	if (!sampled)
		return; /* then they come back as any file does, if mapped */
	for (size_t i = 0; i < s->old_files.len; i++) {
		const struct unwind_store_file *e = &s->old_files.data[i];

		/* Sampled long ago: room, for should_evict too (a live process's keeps it). */
		if (!stale(e, now, recent) && e->key.ino != UNWIND_VDSO_INO &&
		    (e->status == UNWIND_FILE_LOADED ||
		     (e->status == UNWIND_FILE_FULL && e->want_slots)))
			sampled[n++] = *e;
	}
	qsort(sampled, n, sizeof(*sampled), by_sampled_desc);
	for (size_t i = 0, kept = 0; i < n && kept < max_files; i++)
		kept += keep_one(s, &sampled[i]);
	free(sampled);
}
