// SPDX-License-Identifier: BSD-2-Clause
/*
 * Whether a file's table may be stored, and whose it is (see
 * table_store.h: unwind_store_share_by_owner): the file cap, the users'
 * shares of the slots and of the rules, and their counts.
 */
#include "table_store.h"
#include "table_store_impl.h"

#include <errno.h>
#include <stdint.h>
#include <time.h>

#include "cfi_table.h"
#include "../util/clock.h"

void unwind_store_share_by_owner(struct unwind_store *s)
{
	s->owner_shares = true;
}

void unwind_store_limit_files(struct unwind_store *s, size_t n)
{
	s->max_files = n;
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

uint32_t store_slots_of_owner(const struct unwind_store *s, uint32_t uid)
{
	uint32_t n = 0;

	hmap_get(&s->owner_slots, (struct hmap_key){ uid, 0 }, &n);
	return n;
}

uint32_t store_tables_of_owner(const struct unwind_store *s, uint32_t uid)
{
	uint32_t n = 0;

	hmap_get(&s->owner_files, (struct hmap_key){ uid, 0 }, &n);
	return n;
}

/*
 * Whether one more table of n slots of user uid's files would take it past
 * its share (root's: none): of the slots, or of the BPF file map's entries.
 */
bool store_past_share(const struct unwind_store *s, uint32_t uid, size_t n)
{
	if (!s->owner_shares || !uid)
		return false;
	return store_slots_of_owner(s, uid) + n > s->max_slots / 4 ||
	       (s->max_files && store_tables_of_owner(s, uid) + 1 > s->max_files / 4);
}

/* Whether the BPF file map has an entry left for one more table. */
bool store_entry_free(const struct unwind_store *s)
{
	return !s->max_files || s->loaded_tables < s->max_files;
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
uint32_t store_payer(const struct unwind_store *s, uint32_t uid, bool system, size_t n)
{
	return s->owner_shares && system && n > s->max_slots / 4 ? 0 : uid;
}

/*
 * Whether n more slots of a file that a process of `uid` maps may be
 * stored: UNWIND_FILE_LOADED, UNWIND_FILE_OVER_BUDGET for a file past the
 * file cap (one file never takes the store; a system file's cap is the
 * store), or UNWIND_FILE_FULL for no room or, with owner_shares, past its
 * payer's share (see owner_slots and payer: root's are exempt, and a
 * system file larger than a share is root's). A FULL file is taken by a
 * user with room who maps it, or for whom evicting others makes room.
 */
int store_admit(const struct unwind_store *s, uint32_t uid, bool system, size_t n)
{
	if (n > (system ? s->max_slots : unwind_store_file_cap(s)) || n > UINT32_MAX)
		return s->owner_shares ? UNWIND_FILE_OVER_BUDGET : UNWIND_FILE_FULL;
	if (s->slots.len > s->max_slots || n > s->max_slots - s->slots.len || !store_entry_free(s))
		return UNWIND_FILE_FULL;
	return store_past_share(s, store_payer(s, uid, system, n), n) ? UNWIND_FILE_FULL
								      : UNWIND_FILE_LOADED;
}

bool unwind_store_over_share(const struct unwind_store *s, const struct unwind_store_file *f)
{
	/* admit's share test, for the slots the refused build needs (not its rules). */
	return f->status == UNWIND_FILE_FULL && f->want_slots && !f->want_rules &&
	       store_past_share(s, store_payer(s, f->id.uid, f->id.system, f->want_slots),
				f->want_slots);
}

const char *unwind_store_full_reason(const struct unwind_store *s,
				     const struct unwind_store_file *f)
{
	if (f->want_rules)
		return "no room for its rules in its user's share";
	return unwind_store_over_share(s, f) ? "refused for its user's share of the store"
					     : "no room in the unwind store";
}

/*
 * A table of n slots of user uid's was stored (n 0 and !table: the counts
 * made, at what they are); 0 or -ENOMEM, only when a count is new.
 */
int store_charge(struct unwind_store *s, uint32_t uid, size_t n, bool table)
{
	if (hmap_put(&s->owner_slots, (struct hmap_key){ uid, 0 },
		     store_slots_of_owner(s, uid) + (uint32_t)n) ||
	    hmap_put(&s->owner_files, (struct hmap_key){ uid, 0 },
		     store_tables_of_owner(s, uid) + table))
		return -ENOMEM;
	s->loaded_tables += table;
	return 0;
}

/* A table of n slots of user uid's is no longer stored. */
void store_uncharge(struct unwind_store *s, uint32_t uid, size_t n)
{
	uint32_t held = store_slots_of_owner(s, uid), tables = store_tables_of_owner(s, uid);

	/* Cannot fail: the keys are there (charged when it was stored). */
	(void)hmap_put(&s->owner_slots, (struct hmap_key){ uid, 0 },
		       held > n ? held - (uint32_t)n : 0);
	(void)hmap_put(&s->owner_files, (struct hmap_key){ uid, 0 }, tables ? tables - 1 : 0);
	if (s->loaded_tables)
		s->loaded_tables--;
}

/*
 * The rules user `uid`'s file may add: a file's, within the array's room
 * and the user's and all users' room.
 */
size_t store_rules_room(const struct unwind_store *s, uint32_t uid)
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
bool store_rules_fit(const struct unwind_store *s, const struct unwind_store_file *e, uint32_t uid)
{
	return !e->want_rules || store_rules_room(s, uid) >= e->want_rules;
}

/*
 * A FULL entry that a process of `uid` maps now, with room for its rows
 * (and its rules, when refused for them), or for which evicting others
 * would make room (one evicted, or refused while the store was full):
 * built again, charged to that user (whose share, not the first user's,
 * it then takes).
 */
bool store_readmit(const struct unwind_store *s, const struct unwind_store_file *e, uint32_t uid)
{
	if (e->status != UNWIND_FILE_FULL || !e->want_slots)
		return false;
	if (store_admit(s, uid, e->id.system, e->want_slots) == UNWIND_FILE_LOADED)
		return store_rules_fit(s, e, store_payer(s, uid, e->id.system, e->want_slots));
	return store_room_by_eviction(s, e, uid, clock_ns(CLOCK_MONOTONIC));
}

/* A file of user `uid` added n rules; 0 or -ENOMEM (then nothing is counted). */
int store_charge_rules(struct unwind_store *s, uint32_t uid, size_t n)
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
int store_open_counts(struct unwind_store *s, uint32_t uid)
{
	uint32_t rules = 0;

	if (store_charge(s, uid, 0, false))
		return -ENOMEM;
	if (!s->owner_shares || !uid)
		return 0;
	hmap_get(&s->owner_rules, (struct hmap_key){ uid, 0 }, &rules);
	return hmap_put(&s->owner_rules, (struct hmap_key){ uid, 0 }, rules);
}
