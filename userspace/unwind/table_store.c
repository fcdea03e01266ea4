// SPDX-License-Identifier: BSD-2-Clause
/*
 * The unwind tables of the files met so far (see table_store.h): each file
 * built once with cfi_table_build, its rows packed into the BPF layout
 * (compact_table).
 */
#include "table_store.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "cfi_table.h"
#include "go_table.h"
#include "../symbols/proc_maps.h"
#include "../symbols/vdso.h"
#include "../util/clock.h"
#include "../util/elf_open.h"

void unwind_store_init(struct unwind_store *s, union unwind_slot *slots, size_t max_slots)
{
	memset(s, 0, sizeof(*s));
	s->max_slots = max_slots;
	if (slots) {
		/* Full capacity from the start: vec_reserve never reallocates it. */
		s->slots.data = slots;
		s->slots.cap = max_slots;
		s->slots_external = true;
	}
	/* No memory: room for no rule (but NONE), every file FULL. */
	(void)compact_rules_init(&s->rules, NULL, UNWIND_MAX_RULES);
}

int unwind_store_rules_in(struct unwind_store *s, struct unwind_rule *rules, size_t max)
{
	compact_rules_free(&s->rules);
	return compact_rules_init(&s->rules, rules, max);
}

struct compact_view unwind_store_view(const struct unwind_store *s,
				      const struct unwind_store_file *f)
{
	return compact_view_of(s->slots.data + f->info.first_slot, f->info.base, f->info.npages,
			       s->rules.data);
}

void unwind_store_share_by_owner(struct unwind_store *s)
{
	s->owner_shares = true;
}

size_t unwind_store_file_cap(const struct unwind_store *s)
{
	return s->owner_shares ? s->max_slots / 4 : s->max_slots;
}

void unwind_store_budget(const struct unwind_store *s, struct cfi_budget *b)
{
	size_t cap = unwind_store_file_cap(s);

	*b = cfi_default_budget;
	/*
	 * Rows read, before merging, two a slot: a table past the cap in slots
	 * (its pages with its rows, after merging) is refused at packing; one
	 * past it before costs no more. Without shares, a file past the
	 * capacity is FULL (it may fit after a rebuild), as ever. The system's
	 * files (cfi_budget_pick) are held to the store's capacity only: no
	 * user makes them.
	 */
	if (s->owner_shares && 2 * cap < b->file_rows)
		b->user_file_rows = 2 * cap;
	if (s->owner_shares && 2 * s->max_slots < b->file_rows)
		b->file_rows = 2 * s->max_slots;
}

void unwind_store_free(struct unwind_store *s)
{
	unwind_store_rebuilt(s);
	if (!s->slots_external)
		vec_free(&s->slots);
	vec_free(&s->files);
	hmap_free(&s->index);
	hmap_free(&s->owner_slots);
	hmap_free(&s->evict_asked);
	hmap_free(&s->owner_rules);
	compact_rules_free(&s->rules);
	memset(s, 0, sizeof(*s));
}

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

static void release(struct unwind_store *s, struct unwind_store_file *e);

void unwind_store_rebuilt(struct unwind_store *s)
{
	/* Room held for sampled files no process mapped again: theirs when they come. */
	for (size_t i = 0; i < s->files.len; i++)
		if (s->files.data[i].retry)
			release(s, &s->files.data[i]);
	free(s->old_slots);
	s->old_slots = NULL;
	free(s->old_rules);
	s->old_rules = NULL;
	s->old_rules_len = 0;
	vec_free(&s->old_files);
	hmap_free(&s->old_index);
}

uint64_t unwind_kernel_dev(unsigned int major, unsigned int minor)
{
	return ((uint64_t)major << 20) | minor; /* MKDEV of include/linux/kdev_t.h */
}

static struct hmap_key file_key(uint64_t dev, uint64_t ino)
{
	return (struct hmap_key){ dev, ino };
}

const struct unwind_store_file *unwind_store_find(const struct unwind_store *s, uint64_t dev,
						  uint64_t ino)
{
	uint32_t idx;

	return hmap_get(&s->index, file_key(dev, ino), &idx) ? &s->files.data[idx] : NULL;
}

static uint32_t slots_of_owner(const struct unwind_store *s, uint32_t uid)
{
	uint32_t n = 0;

	hmap_get(&s->owner_slots, (struct hmap_key){ uid, 0 }, &n);
	return n;
}

/* Whether n more slots of user uid's files would take it past its share (root's: none). */
static bool past_share(const struct unwind_store *s, uint32_t uid, size_t n)
{
	return s->owner_shares && uid && slots_of_owner(s, uid) + n > s->max_slots / 4;
}

/*
 * Whose slots n more slots of a file that a process of `uid` maps are: that
 * user's, or the system's (root's, exempt from the shares) for a system
 * file larger than a whole share. No user makes the system's files, and
 * their largest (before compact rows: cc1 at 600k rows, libLLVM-16 past
 * 1M, a share 512k) held
 * to a share were FULL for every user but root, after a build of up to a
 * second. A smaller one counts in its user's share, so that one user's
 * flood of the system's libraries still leaves room for everyone else's.
 */
static uint32_t payer(const struct unwind_store *s, uint32_t uid, bool system, size_t n)
{
	return s->owner_shares && system && n > s->max_slots / 4 ? 0 : uid;
}

/*
 * Whether n more slots of a file that a process of `uid` maps may be
 * stored: UNWIND_FILE_LOADED, UNWIND_FILE_OVER_BUDGET for a file past the
 * file cap (one file never takes the store; a system file's cap is the
 * store), or UNWIND_FILE_FULL for no room (slots held for sampled files'
 * builds are no room) or, with owner_shares, past its payer's share (see
 * owner_slots and payer: root's are exempt, and a system file larger than
 * a share is root's). A FULL file is taken by a user with room who maps
 * it, or built again at the next rebuild, when there may be room.
 */
static int admit(const struct unwind_store *s, uint32_t uid, bool system, size_t n)
{
	if (n > (system ? s->max_slots : unwind_store_file_cap(s)) || n > UINT32_MAX)
		return s->owner_shares ? UNWIND_FILE_OVER_BUDGET : UNWIND_FILE_FULL;
	if (s->slots.len + s->reserved_slots > s->max_slots ||
	    n > s->max_slots - s->slots.len - s->reserved_slots)
		return UNWIND_FILE_FULL;
	return past_share(s, payer(s, uid, system, n), n) ? UNWIND_FILE_FULL : UNWIND_FILE_LOADED;
}

bool unwind_store_over_share(const struct unwind_store *s, const struct unwind_store_file *f)
{
	/* admit's share test, for the slots the refused build needs (not its rules). */
	return f->status == UNWIND_FILE_FULL && f->want_slots && !f->want_rules &&
	       past_share(s, payer(s, f->id.uid, f->id.system, f->want_slots), f->want_slots);
}

const char *unwind_store_full_reason(const struct unwind_store *s,
				     const struct unwind_store_file *f)
{
	if (f->want_rules)
		return "no room for its rules in its user's share";
	return unwind_store_over_share(s, f) ? "refused for its user's share of the store"
					     : "no room in the unwind store";
}

/* n slots of user uid's file were stored; 0 or -ENOMEM. */
static int charge(struct unwind_store *s, uint32_t uid, size_t n)
{
	return hmap_put(&s->owner_slots, (struct hmap_key){ uid, 0 },
			slots_of_owner(s, uid) + (uint32_t)n);
}

/* The slots held for the entry's build go back (it was built, lost, or replaced). */
static void release(struct unwind_store *s, struct unwind_store_file *e)
{
	uint32_t held = slots_of_owner(s, e->id.uid);

	if (!e->reserved)
		return;
	s->reserved_slots -= e->reserved;
	/* Cannot fail: the key is there, and a put of an existing key allocates nothing. */
	(void)hmap_put(&s->owner_slots, (struct hmap_key){ e->id.uid, 0 },
		       held > e->reserved ? held - e->reserved : 0);
	e->reserved = 0;
}

/*
 * The rules user `uid`'s file may add: a file's, within the array's room
 * and the user's and all users' room.
 */
static size_t rules_room(const struct unwind_store *s, uint32_t uid)
{
	uint32_t had = 0;
	size_t room = COMPACT_FILE_MAX_RULES;

	if (s->rules.len >= s->rules.max)
		return 0;
	if (room > s->rules.max - s->rules.len)
		room = s->rules.max - s->rules.len;
	if (!s->owner_shares || !uid)
		return room;
	hmap_get(&s->owner_rules, (struct hmap_key){ uid, 0 }, &had);
	if (had >= s->rules.max / 4 || s->user_rules >= s->rules.max / 2)
		return 0;
	if (room > s->rules.max / 4 - had)
		room = s->rules.max / 4 - had;
	if (room > s->rules.max / 2 - s->user_rules)
		room = s->rules.max / 2 - s->user_rules;
	return room;
}

/* Whether user `uid` has the rule room entry `e`, refused for its rules, needs. */
static bool rules_fit(const struct unwind_store *s, const struct unwind_store_file *e, uint32_t uid)
{
	return !e->want_rules || rules_room(s, uid) >= e->want_rules;
}

/*
 * A FULL entry that a process of `uid` maps now, with room for its rows
 * (and its rules, when refused for them): built again, charged to that
 * user (whose share, not the first user's, it then takes).
 */
static bool readmit(const struct unwind_store *s, const struct unwind_store_file *e, uint32_t uid)
{
	return e->status == UNWIND_FILE_FULL && e->want_slots &&
	       admit(s, uid, e->id.system, e->want_slots) == UNWIND_FILE_LOADED &&
	       rules_fit(s, e, payer(s, uid, e->id.system, e->want_slots));
}

/* A file of user `uid` added n rules; 0 or -ENOMEM (then nothing is counted). */
static int charge_rules(struct unwind_store *s, uint32_t uid, size_t n)
{
	uint32_t had = 0;

	if (!s->owner_shares || !uid || !n)
		return 0;
	hmap_get(&s->owner_rules, (struct hmap_key){ uid, 0 }, &had);
	if (hmap_put(&s->owner_rules, (struct hmap_key){ uid, 0 }, had + (uint32_t)n))
		return -ENOMEM;
	s->user_rules += n;
	return 0;
}

/*
 * User `uid`'s counts of slots and rules, there (at what they are) before a
 * table is packed: charging them after its rules are added is then a put
 * of an existing key, which allocates nothing and cannot fail, so that no
 * rule is left added, nor a count raised, for a table not stored. 0 or -ENOMEM.
 */
static int open_counts(struct unwind_store *s, uint32_t uid)
{
	uint32_t rules = 0;

	if (charge(s, uid, 0))
		return -ENOMEM;
	if (!s->owner_shares || !uid)
		return 0;
	hmap_get(&s->owner_rules, (struct hmap_key){ uid, 0 }, &rules);
	return hmap_put(&s->owner_rules, (struct hmap_key){ uid, 0 }, rules);
}

/*
 * Code pages past a table's rows, at most (beyond one a row): a file
 * whose few rows lie far apart (crafted: a real file's pages hold
 * thousands) would spend a share on empty pages.
 */
#define SPARSE_PAGES 64

/* Whether the table `t` would take more pages than rows + SPARSE_PAGES. */
static bool sparse(const struct cfi_table *t, size_t nslots)
{
	size_t row_slots = (t->len + 1) / 2;

	return nslots != SIZE_MAX && nslots - row_slots > t->len + SPARSE_PAGES;
}

/* The compact table `c` into the slots reserved: its pages, then its rows two a slot. */
static void lay_out(struct unwind_store *s, const struct compact_table *c)
{
	union unwind_slot *at = s->slots.data + s->slots.len;
	size_t n = compact_table_slots(c->npages, c->nrows);

	memcpy(at, c->pages, c->npages * sizeof(*c->pages));
	/* An odd count leaves half a slot: zero, not what the slot held before a rebuild. */
	memset(at + n - (c->nrows & 1), 0, (c->nrows & 1) * sizeof(*at));
	memcpy(at[c->npages].row, c->rows, c->nrows * sizeof(*c->rows));
	s->slots.len += n;
}

/*
 * Pack the table built for entry `e` after the slots already stored; its
 * final status (FULL: e->want_slots, the slots it needs, and
 * e->want_rules when its rules do not fit), or -ENOMEM. Its slots are
 * charged to its payer, whose uid it takes.
 */
static int pack(struct unwind_store *s, struct unwind_store_file *e, struct unwind_built *b)
{
	size_t n = compact_table_slots_of(&b->t), rules_before, room;
	struct compact_table c;
	uint32_t uid;
	int status, err;

	if (b->status != UNWIND_FILE_LOADED)
		return b->status;
	if (sparse(&b->t, n))
		return UNWIND_FILE_OVER_BUDGET;
	/* Room first: the rules of a file that does not fit are not added. */
	status = admit(s, e->id.uid, e->id.system, n);
	if (status == UNWIND_FILE_FULL)
		e->want_slots = n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
	if (status != UNWIND_FILE_LOADED)
		return status;
	uid = payer(s, e->id.uid, e->id.system, n);
	if (vec_reserve(&s->slots, n) || open_counts(s, uid))
		return -ENOMEM;
	rules_before = s->rules.len;
	room = rules_room(s, uid);
	s->rules.file_max = room;
	err = compact_table_build(&b->t, &s->rules, n, &c);
	s->rules.file_max = COMPACT_FILE_MAX_RULES;
	switch (err) {
	case 0:
		n = compact_table_slots(c.npages, c.nrows); /* at most what was admitted */
		break;
	case -ENOSPC:
		/*
		 * Its slots and the rule room it lacked kept: a user with more
		 * rule room who maps it takes it (readmit), and a rebuild builds
		 * it again only when its payer has that room (adopt).
		 */
		s->stats.rules_full++;
		e->want_slots = n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
		e->want_rules = (uint32_t)room + 1;
		return UNWIND_FILE_FULL;
	case -EINVAL:
		return UNWIND_FILE_INVALID; /* rows out of order: a builder's bug */
	default:
		return -ENOMEM;
	}
	/* Cannot fail: both keys are there (open_counts). */
	(void)charge(s, uid, n);
	(void)charge_rules(s, uid, s->rules.len - rules_before);
	e->id.uid = uid;
	e->info = (struct unwind_file_info){ .base = c.base,
					     .bias = b->bias,
					     .first_slot = (uint32_t)s->slots.len,
					     .npages = c.npages };
	e->nslots = (uint32_t)n;
	e->nrows = c.nrows;
	lay_out(s, &c);
	compact_table_free(&c);
	return UNWIND_FILE_LOADED;
}

static void count_build(struct unwind_store *s, const struct unwind_built *b)
{
	s->stats.build_ns += b->build_ns;
	if (b->build_ns > s->stats.longest_ns)
		s->stats.longest_ns = b->build_ns;
}

/* The identity of the file open at `fd` (stat `st`); fd -1: `system` unknown, false. */
static struct unwind_file_id id_of(int fd, const struct stat *st)
{
	return (struct unwind_file_id){
		.size = (uint64_t)st->st_size,
		.mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec,
		.ctime_ns = (int64_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec,
		.system = cfi_file_is_system(fd, st),
	};
}

static bool same_id(const struct unwind_file_id *a, const struct unwind_file_id *b)
{
	return a->size == b->size && a->mtime_ns == b->mtime_ns && a->ctime_ns == b->ctime_ns;
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
	room = rules_room(s, f->id.uid);
	s->rules.file_max = room;
	err = compact_table_remap(at, old->info.npages, old->nrows, s->old_rules, s->old_rules_len,
				  &s->rules);
	s->rules.file_max = COMPACT_FILE_MAX_RULES;
	if (err == -ENOSPC) {
		s->stats.rules_full++;
		f->want_rules = (uint32_t)room + 1;
	}
	return err ? err : charge_rules(s, f->id.uid, s->rules.len - before);
}

/*
 * During a rebuild: `f` (new, PENDING) takes the table it had before, when
 * it was built and is still that file. Whether it did.
 */
static bool adopt(struct unwind_store *s, struct unwind_store_file *f)
{
	const struct unwind_store_file *old;
	uint32_t idx;
	int err;

	if (!s->old_slots || !hmap_get(&s->old_index, file_key(f->key.dev, f->key.ino), &idx))
		return false;
	old = &s->old_files.data[idx];
	/* Its changes keep counting across rebuilds. */
	f->changes = old->changes;
	f->changes_at = old->changes_at;
	if (!same_id(&old->id, &f->id))
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
		if (admit(s, f->id.uid, f->id.system, old->want_slots) != UNWIND_FILE_LOADED ||
		    !rules_fit(s, old, payer(s, f->id.uid, f->id.system, old->want_slots))) {
			f->status = UNWIND_FILE_FULL;
			f->want_slots = old->want_slots;
			f->want_rules = old->want_rules;
			return true;
		}
		f->id.uid = payer(s, f->id.uid, f->id.system, old->want_slots);
		if (!charge(s, f->id.uid, old->want_slots)) {
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
	if (admit(s, f->id.uid, f->id.system, old->nslots) != UNWIND_FILE_LOADED) {
		f->status = UNWIND_FILE_FULL;
		f->want_slots = old->nslots;
		return true;
	}
	f->id.uid = payer(s, f->id.uid, f->id.system, old->nslots);
	err = vec_reserve(&s->slots, old->nslots) ? -ENOMEM : copy_rows(s, f, old);
	if (err == -ENOSPC) {
		/* Its payer's rule room went to the files kept before it. */
		f->status = UNWIND_FILE_FULL;
		f->want_slots = old->nslots;
		return true;
	}
	if (err || charge(s, f->id.uid, old->nslots)) {
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

/*
 * Another file under `e`'s (dev, ino): `f` (PENDING) now, built again, the
 * old rows counted dead. A file that changes more than
 * UNWIND_STORE_MAX_CHANGES times a minute (a user touching a big binary
 * between mappings) is not: each build would cost its budget and its rows
 * again. It is OVER_BUDGET, churning (*known: nothing to build), until
 * the minute is over.
 */
static void replace(struct unwind_store *s, struct unwind_store_file *e,
		    const struct unwind_store_file *f, bool *known)
{
	uint64_t now = clock_ns(CLOCK_MONOTONIC);
	uint32_t changes = e->changes;
	uint64_t since = e->changes_at;

	if (e->status == UNWIND_FILE_LOADED)
		s->dead_slots += e->nslots;
	release(s, e);
	if (!since || now - since > UNWIND_STORE_CHANGES_WINDOW_NS) {
		changes = 0;
		since = now;
	}
	*e = *f;
	e->changes = changes + 1;
	e->changes_at = since;
	if (e->changes > UNWIND_STORE_MAX_CHANGES) {
		e->status = UNWIND_FILE_OVER_BUDGET;
		e->churning = true;
		s->stats.files[UNWIND_FILE_OVER_BUDGET]++;
		*known = true;
	}
}

/*
 * The entry of (dev, ino) for a file of identity `id`: the existing one
 * (*known set when it is of that file) or a new one, PENDING. NULL: ENOMEM.
 */
static struct unwind_store_file *entry_for(struct unwind_store *s, uint64_t dev, uint64_t ino,
					   const struct unwind_file_id *id, bool *known)
{
	struct unwind_store_file f = { .key = { dev, ino },
				       .id = *id,
				       .status = UNWIND_FILE_PENDING };
	uint32_t idx;

	*known = false;
	if (hmap_get(&s->index, file_key(dev, ino), &idx)) {
		struct unwind_store_file *e = &s->files.data[idx];

		*known = same_id(&e->id, id);
		if (*known && e->retry && e->status == UNWIND_FILE_PENDING) {
			/* Its build was lost, or it held room after a rebuild: built now. */
			e->retry = false;
			*known = false;
		} else if (*known && readmit(s, e, id->uid)) {
			/* Refused for another user's share (or room): this one has room. */
			e->status = UNWIND_FILE_PENDING;
			e->id.uid = id->uid;
			e->want_slots = 0;
			e->want_rules = 0;
			*known = false;
		} else if (!*known) {
			replace(s, e, &f, known);
		}
		return e;
	}
	*known = adopt(s, &f);
	if (vec_push(&s->files, f) ||
	    hmap_put(&s->index, file_key(dev, ino), (uint32_t)(s->files.len - 1))) {
		errno = ENOMEM;
		return NULL;
	}
	return &vec_last(&s->files);
}

/* The entry's table, built (`b`): packed, the entry final. NULL with errno ENOMEM. */
static struct unwind_store_file *settle(struct unwind_store *s, struct unwind_store_file *e,
					struct unwind_built *b)
{
	int status;

	count_build(s, b);
	release(s, e);
	e->want_slots = 0;
	e->want_rules = 0;
	status = pack(s, e, b);
	if (status < 0) {
		errno = -status;
		return NULL;
	}
	e->status = (uint8_t)status;
	s->stats.files[e->status]++;
	return e;
}

/* Build the entry's table now, from `elf` (ended here). */
static const struct unwind_store_file *build_now(struct unwind_store *s,
						 struct unwind_store_file *e, Elf *elf)
{
	struct unwind_built b;
	struct cfi_budget budget;
	int err;

	unwind_store_budget(s, &budget);
	budget = cfi_budget_pick(&budget, e->id.system);
	err = unwind_file_build(elf, &budget, &b);

	if (err) {
		errno = -err;
		return NULL;
	}
	e = settle(s, e, &b);
	unwind_built_free(&b);
	return e;
}

const struct unwind_store_file *unwind_store_add(struct unwind_store *s, uint64_t dev, uint64_t ino,
						 int fd)
{
	struct unwind_file_id id = { 0 };
	struct unwind_store_file *e;
	struct stat st;
	bool known;

	if (!fstat(fd, &st))
		id = id_of(fd, &st);
	e = entry_for(s, dev, ino, &id, &known);
	if (!e || known)
		return e;
	return build_now(s, e, elf_open_fd(fd));
}

const struct unwind_store_file *unwind_store_complete(struct unwind_store *s,
						      const struct unwind_file_key *key,
						      const struct unwind_file_id *id,
						      struct unwind_built *b)
{
	uint32_t idx;
	struct unwind_store_file *e;

	errno = 0;
	if (!hmap_get(&s->index, file_key(key->dev, key->ino), &idx))
		return NULL;
	e = &s->files.data[idx];
	if (e->status != UNWIND_FILE_PENDING || !same_id(&e->id, id))
		return NULL;
	return settle(s, e, b);
}

void unwind_store_retry(struct unwind_store *s, const struct unwind_file_key *key,
			const struct unwind_file_id *id)
{
	uint32_t idx;
	struct unwind_store_file *e;

	if (!hmap_get(&s->index, file_key(key->dev, key->ino), &idx))
		return;
	e = &s->files.data[idx];
	if (e->status == UNWIND_FILE_PENDING && same_id(&e->id, id)) {
		e->retry = true;
		release(s, e); /* its file may never come back */
	}
}

const struct unwind_store_file *unwind_store_add_vdso(struct unwind_store *s, size_t *size)
{
	const struct unwind_store_file *f = unwind_store_find(s, 0, UNWIND_VDSO_INO);
	void *image;
	int err;

	*size = 0;
	if (f) {
		*size = s->vdso_size;
		return f;
	}
	err = vdso_copy(&image, size);
	if (err) {
		errno = err == -ENOMEM ? ENOMEM : 0;
		return NULL;
	}
	{
		struct unwind_file_id id = { .size = *size };
		struct unwind_store_file *e;
		bool known;

		e = entry_for(s, 0, UNWIND_VDSO_INO, &id, &known);
		f = e && !known ? build_now(s, e, elf_memory(image, *size)) : e;
	}
	free(image);
	if (f)
		s->vdso_size = *size;
	return f;
}

const struct unwind_store_file *unwind_store_add_mapping(struct unwind_store *s, uint32_t pid,
							 uint32_t uid, const struct map_entry *e)
{
	uint64_t dev = unwind_kernel_dev(major(e->dev), minor(e->dev));
	const struct unwind_store_file *f;
	struct unwind_store_file *entry;
	struct unwind_file_id id;
	bool known, replaced;
	char link[96];
	struct stat st;
	int fd, err;

	errno = 0;
	if (!e->executable || !e->inode)
		return NULL;
	snprintf(link, sizeof(link), "/proc/%u/map_files/%" PRIx64 "-%" PRIx64, pid, e->start,
		 e->end);
	/* Known and still that file (stat follows the link to it): nothing to open. */
	if ((f = unwind_store_find(s, dev, e->inode))) {
		if (stat(link, &st))
			return f;
		id = id_of(-1, &st); /* to compare only */
		/*
		 * A lost build (retry) is handed over again, and a file refused for
		 * lack of room is taken by a user who has room for it.
		 */
		if (same_id(&f->id, &id) && !f->retry && !readmit(s, f, uid))
			return f;
	}
	fd = open(link, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		errno = 0;
		return NULL;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return NULL;
	}
	/* What is read is what was fstat'ed: the identity kept is the descriptor's. */
	id = id_of(fd, &st);
	id.uid = uid;
	/* Another file under its (dev, ino): the old rows must go (not so for a retry). */
	replaced = f && !same_id(&f->id, &id);
	entry = entry_for(s, dev, e->inode, &id, &known);
	/* Refused for changing too often: the old rows must still go (fd closed there). */
	if (entry && known && replaced && entry->churning && s->defer) {
		s->defer(s->defer_ctx, entry, fd, e->path, link, true);
		errno = 0;
		return entry;
	}
	if (!entry || known) {
		close(fd);
		return entry;
	}
	if (s->defer) {
		/* Not taken (a full queue, no memory): not fatal, tried again when next met. */
		err = s->defer(s->defer_ctx, entry, fd, e->path, link, replaced);
		if (err && entry->status == UNWIND_FILE_PENDING) {
			entry->retry = true;
			release(s, entry); /* it may never be mapped again */
		}
		errno = 0;
		return entry;
	}
	f = build_now(s, entry, elf_open_fd(fd));
	if (!f && errno != ENOMEM)
		errno = 0;
	close(fd);
	return f;
}

void unwind_store_sampled(struct unwind_store *s, const struct unwind_file_key *key, uint64_t now)
{
	uint32_t idx;
	struct unwind_store_file *e;

	if (!hmap_get(&s->index, file_key(key->dev, key->ino), &idx))
		return;
	e = &s->files.data[idx];
	e->sampled_at = now;
	/* An eviction gives back slots, not rules: one refused for its rules does not ask. */
	if (e->status == UNWIND_FILE_FULL && e->want_slots && !e->want_rules)
		s->sampled_refused = true;
}

void unwind_store_published(struct unwind_store *s, const struct unwind_store_file *f, uint64_t now)
{
	struct unwind_store_file *e = &s->files.data[f - s->files.data];

	if (!e->published_at)
		e->published_at = now;
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
		helps = !s->owner_shares || !payer(s, e->id.uid, e->id.system, e->want_slots) ||
			slots_of_owner(s, e->id.uid) - evicted + e->want_slots <= s->max_slots / 4;
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
	adopted = adopt(s, &f);
	if (!adopted && f.reserved)
		f.retry = true; /* handed over when a process maps it (entry_for), its room held */
	else if (!adopted || f.status != UNWIND_FILE_LOADED)
		return false;
	s->files.data[s->files.len++] = f; /* room reserved above */
	if (hmap_put(&s->index, file_key(f.key.dev, f.key.ino), (uint32_t)(s->files.len - 1))) {
		release(s, &vec_last(&s->files));
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
