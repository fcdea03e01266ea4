// SPDX-License-Identifier: BSD-2-Clause
/*
 * The unwind table store's eviction (unwind/table_evict.c): which tables
 * go when one refused for room is wanted (the least recently used first),
 * which are protected from other users, which are pinned. No BPF, no root.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "symbols/proc_maps.h"
#include "test.h"
#include "unwind/table_store.h"
#include "unwind/table_store_impl.h"
#include "unwind_store_add.h"

/* The executable files this process maps, one entry each (the first mapping of each). */
static size_t distinct_files(const map_entries_t *maps, const struct map_entry **out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < maps->len && n < max; i++) {
		const struct map_entry *e = &maps->data[i];
		bool seen = false;

		if (!e->executable || !e->inode)
			continue;
		for (size_t j = 0; j < n; j++)
			seen |= out[j]->dev == e->dev && out[j]->inode == e->inode;
		if (!seen)
			out[n++] = e;
	}
	return n;
}

/* This process's executable files (read into *maps), at least 3 of them. */
static size_t own_files(map_entries_t *maps, const struct map_entry **out, size_t max)
{
	size_t n;

	CHECK_EQ_INT(proc_maps_read("/proc", getpid(), maps), 0);
	n = distinct_files(maps, out, max);
	CHECK(n >= 3);
	return n;
}

static const struct unwind_store_file *add_entry(struct unwind_store *s, const struct map_entry *e)
{
	return unwind_store_add_mapping(s, (uint32_t)getpid(), 0, e);
}

#define SEC 1000000000ull /* a fake clock's second */

/*
 * A store of files[0..2] (t[0..2]) loaded by root at second 1, one slot
 * short of room for files[3]'s table: whether it is so.
 */
static bool three_and_no_room(struct unwind_store *s, const struct map_entry **files,
			      const struct unwind_store_file *t[3])
{
	struct unwind_file_key keys[3];
	const struct unwind_store_file *d;
	size_t want = 0;
	bool ok = true;

	unwind_store_init(s, NULL, 1u << 22);
	d = add_entry(s, files[3]);
	if (d && d->status == UNWIND_FILE_LOADED)
		want = d->nslots;
	unwind_store_free(s);
	unwind_store_init(s, NULL, 1u << 22);
	for (int i = 0; i < 3; i++) {
		t[i] = add_entry(s, files[i]);
		ok &= t[i] && t[i]->status == UNWIND_FILE_LOADED;
		if (t[i]) {
			entry_of(s, t[i])->loaded_at = 1 * SEC;
			keys[i] = t[i]->key;
		}
	}
	/* An entry added may move those before it: found again. */
	for (int i = 0; ok && i < 3; i++)
		t[i] = unwind_store_find(s, keys[i].dev, keys[i].ino);
	s->max_slots = s->slots.len + want - 1;
	CHECK(ok && want);
	return ok && want;
}

/*
 * files[3] added (FULL: no room), then the tables evicted for it at `now`:
 * which of t[0..2] went (bit i), -1 when none could make room. t[] are
 * found again (an entry added may move the entries).
 */
static int evicted_for(struct unwind_store *s, const struct map_entry **files,
		       const struct unwind_store_file *t[3], uint64_t now)
{
	struct unwind_file_key keys[3] = { t[0]->key, t[1]->key, t[2]->key };
	const struct unwind_store_file *d = add_entry(s, files[3]);
	int mask = 0;

	for (int i = 0; i < 3; i++)
		t[i] = unwind_store_find(s, keys[i].dev, keys[i].ino);

	CHECK(d && d->status == UNWIND_FILE_FULL);
	if (!d || !unwind_store_evict_for(s, d, now))
		return -1;
	for (int i = 0; i < 3; i++)
		if (t[i]->status == UNWIND_FILE_FULL && t[i]->evicted)
			mask |= 1 << i;
	return mask;
}

/*
 * Issue 38: the tables that go for room are the files sampled least
 * recently, those never sampled and loaded 30 s ago first; one sampled in
 * the last second (its process runs) never goes, even when nothing else
 * would make room.
 */
static int lru_case(const map_entries_t *maps, const struct map_entry **files,
		    const uint64_t sampled[3], uint64_t now)
{
	const struct unwind_store_file *t[3];
	struct unwind_store s;
	int mask = -2;

	(void)maps;
	if (three_and_no_room(&s, files, t)) {
		for (int i = 0; i < 3; i++)
			if (sampled[i])
				unwind_store_sampled(&s, &t[i]->key, 0, sampled[i]);
		mask = evicted_for(&s, files, t, now);
	}
	unwind_store_free(&s);
	return mask;
}

static void tables_go_least_recently_sampled_first(void)
{
	map_entries_t maps = { 0 };
	const struct map_entry *files[64];
	uint64_t now = 100 * SEC;

	if (own_files(&maps, files, 64) < 4) {
		fprintf(stderr, "  fewer than 4 files mapped: not tried\n");
		goto out;
	}
	/* c never sampled, loaded 99 s ago: first. */
	CHECK_EQ_INT(lru_case(&maps, files, (uint64_t[3]){ 50 * SEC, 40 * SEC, 0 }, now), 4);
	/* All sampled: the least recently, b. */
	CHECK_EQ_INT(lru_case(&maps, files, (uint64_t[3]){ 50 * SEC, 40 * SEC, 60 * SEC }, now), 2);
	/* b sampled half a second ago (pinned): a, the least recent of the others. */
	CHECK_EQ_INT(
		lru_case(&maps, files, (uint64_t[3]){ 50 * SEC, now - SEC / 2, 60 * SEC }, now), 1);
	/* All in the last second: none goes, the new one stays refused. */
	CHECK_EQ_INT(lru_case(&maps, files,
			      (uint64_t[3]){ now - SEC / 2, now - SEC / 4, now - SEC / 8 }, now),
		     -1);
out:
	map_entries_free(&maps);
}

/*
 * Issue 38: an evicted table's entry stays, and the file is found again: a
 * sample in it asks for it (the caller reads its process's mappings again),
 * and the next process that maps it hands it over to be built again.
 */
static void an_evicted_file_is_found_again(void)
{
	map_entries_t maps = { 0 };
	const struct map_entry *files[64];
	const struct unwind_store_file *t[3], *f;
	struct unwind_store s;
	uint64_t now = 100 * SEC;

	if (own_files(&maps, files, 64) < 4) {
		fprintf(stderr, "  fewer than 4 files mapped: not tried\n");
		goto out;
	}
	if (three_and_no_room(&s, files, t)) {
		unwind_store_sampled(&s, &t[0]->key, 0, 50 * SEC);
		unwind_store_sampled(&s, &t[1]->key, 0, 40 * SEC);
		CHECK_EQ_INT(evicted_for(&s, files, t, now), 4);
		CHECK_EQ_INT(unwind_store_compact(&s), 0);
		CHECK_EQ_INT(s.stats.evicted, 1);
		CHECK(unwind_store_sampled(&s, &t[2]->key, 0, now));
		CHECK(t[2]->sampled_at == now && t[2]->status == UNWIND_FILE_FULL);
		s.defer = defer_take;
		f = add_entry(&s, files[2]);
		CHECK(f == t[2] && f->status == UNWIND_FILE_PENDING && !f->evicted);
	}
	unwind_store_free(&s);
out:
	map_entries_free(&maps);
}

/* Every table of `s` loaded at `at` of the fake clock (pack stamps the real one). */
static void all_loaded_at(struct unwind_store *s, uint64_t at)
{
	for (size_t i = 0; i < s->files.len; i++)
		s->files.data[i].loaded_at = at;
}

static bool attacker_evicts_copies(const char *victim, uint32_t mapper, uint32_t stamper,
				   const char *attacker, uint64_t sampled, bool *v_evicted);

/*
 * A store of this process's files (root's, sampled by root: protected), and
 * a user's copy of CFI_FIX (the victim's) mapped first by user `mapper` (its
 * payer), stamped by user `stamper` at `sampled` (0: never); then user
 * 1000 maps another copy (the attacker's), for which there is no room.
 * Whether evicting made it room; *v_evicted: whether the victim's table went.
 */
static bool attacker_evicts(uint32_t mapper, uint32_t stamper, uint64_t sampled, bool *v_evicted)
{
	char victim[] = "/tmp/bpfprof-victim-XXXXXX", attacker[] = "/tmp/bpfprof-attacker-XXXXXX";
	bool made;

	copy_for_anyone(CFI_FIX, victim);
	copy_for_anyone(CFI_FIX, attacker);
	made = attacker_evicts_copies(victim, mapper, stamper, attacker, sampled, v_evicted);
	unlink(victim);
	unlink(attacker);
	return made;
}

static bool attacker_evicts_copies(const char *victim, uint32_t mapper, uint32_t stamper,
				   const char *attacker, uint64_t sampled, bool *v_evicted)
{
	map_entries_t maps = { 0 };
	const struct map_entry *files[64];
	const struct unwind_store_file *v, *a;
	struct unwind_file_key vkey;
	struct unwind_store s;
	uint64_t now = 100 * SEC;
	size_t n, want;
	bool made = false;

	*v_evicted = false;
	n = own_files(&maps, files, 64);
	unwind_store_init(&s, NULL, 1u << 22);
	unwind_store_share_by_owner(&s);
	/* Root's files, sampled (protected), then the victim's. */
	for (size_t i = 0; i < n; i++) {
		const struct unwind_store_file *f = add_entry(&s, files[i]);

		if (f)
			unwind_store_sampled(&s, &f->key, 0, now - 5 * SEC);
	}
	v = map_path_as(&s, victim, mapper);
	if (!v)
		goto out;
	CHECK(v->status == UNWIND_FILE_LOADED && v->id.uid == mapper);
	want = v->nslots; /* the attacker's copy is the same file's */
	vkey = v->key;
	if (sampled)
		unwind_store_sampled(&s, &v->key, stamper, sampled);
	all_loaded_at(&s, 1 * SEC);
	s.max_slots = s.slots.len + want - 1;
	CHECK(want <= s.max_slots / 4);
	a = map_path_as(&s, attacker, 1000);
	CHECK(a && a->status == UNWIND_FILE_FULL && !unwind_store_over_share(&s, a));
	made = a && unwind_store_evict_for(&s, a, now);
	v = unwind_store_find(&s, vkey.dev, vkey.ino); /* a's entry may have moved it */
	*v_evicted = v && v->status == UNWIND_FILE_FULL && v->evicted;
out:
	unwind_store_free(&s);
	map_entries_free(&maps);
	return made;
}

/*
 * Issue 38 (issue 37, findings 7 and 8): a user cannot evict another
 * user's table that user samples (its protected quarter), nor root's; the
 * control: the victim's table never sampled is evicted for it.
 */
static void a_user_cannot_evict_anothers_sampled_table(void)
{
	bool v_evicted;

	CHECK(!attacker_evicts(1001, 1001, 90 * SEC, &v_evicted));
	CHECK(!v_evicted);
	CHECK(attacker_evicts(1001, 1001, 0, &v_evicted));
	CHECK(v_evicted);
}

/*
 * S2 review, finding 5: a file an attacker maps first is charged to it (its
 * payer), and was its "own" to evict while another user ran it. It is
 * protected by the users whose samples stamped it: another's stamp keeps
 * it from the attacker. The control: stamped by the attacker alone, it is
 * the attacker's to evict.
 */
static void a_file_mapped_first_by_an_attacker_is_protected_by_its_users(void)
{
	bool v_evicted;

	CHECK(!attacker_evicts(1000, 1001, 90 * SEC, &v_evicted));
	CHECK(!v_evicted);
	CHECK(attacker_evicts(1000, 1000, 90 * SEC, &v_evicted));
	CHECK(v_evicted);
}

/* Indices by their slots (sort_slots), fewest first. */
static const uint32_t *sort_slots;

static int by_slots(const void *a, const void *b)
{
	uint32_t x = sort_slots[*(const uint32_t *)a];
	uint32_t y = sort_slots[*(const uint32_t *)b];

	return x < y ? -1 : x > y;
}

/*
 * This process's files with a table: the three smallest (small[], their
 * slots' sum *len) and the largest (*big), when the largest is larger than
 * a quarter of a store of the four (false: not so here).
 */
static bool small_and_big(const map_entries_t *maps, const struct map_entry **files, size_t n,
			  const struct map_entry *small[4], const struct map_entry **big,
			  size_t *len, size_t *want)
{
	uint32_t order[64], slots[64];
	const struct unwind_store_file *f;
	struct unwind_store s;
	size_t k = 0;

	(void)maps;
	unwind_store_init(&s, NULL, 1u << 22);
	for (size_t i = 0; i < n; i++) {
		f = add_entry(&s, files[i]);
		slots[i] = f && f->status == UNWIND_FILE_LOADED ? f->nslots : 0;
		order[i] = (uint32_t)i;
	}
	unwind_store_free(&s);
	sort_slots = slots;
	qsort(order, n, sizeof(*order), by_slots);
	while (k < n && !slots[order[k]])
		k++;
	if (n < k + 5)
		return false;
	*len = 0;
	for (size_t i = 0; i < 4; i++)
		small[i] = files[order[k + i]];
	for (size_t i = 0; i < 3; i++)
		*len += slots[order[k + i]];
	*big = files[order[n - 1]];
	*want = slots[order[n - 1]];
	return 4 * *want > *len + *want;
}

/*
 * A store shared by owner of small[0..2] (root's), each stamped by
 * `stamper` at `at` (their keys into keys[]): whether they were loaded.
 */
static bool three_small(struct unwind_store *s, const struct map_entry *small[4], uint32_t stamper,
			uint64_t at, struct unwind_file_key keys[3])
{
	unwind_store_init(s, NULL, 1u << 22);
	unwind_store_share_by_owner(s);
	for (int i = 0; i < 3; i++) {
		const struct unwind_store_file *f = add_entry(s, small[i]);

		CHECK(f && f->status == UNWIND_FILE_LOADED && !f->id.uid);
		if (!f)
			return false;
		keys[i] = f->key;
		unwind_store_sampled(s, &keys[i], stamper, at);
	}
	return true;
}

/*
 * S2 review, finding 5: a user who asks for a system file larger than a
 * share has it charged to root, and every table root pays for was its own
 * to evict (protection went by payer): another user's libraries, run by
 * that user, went for it. Now root's three smallest files, stamped by user
 * 1001, are protected from user 1000 asking for the largest (the system's,
 * larger than a share): nothing goes. The control: stamped by user 1000
 * itself, they go for it.
 */
static int big_system_file_evicts(uint32_t stamper)
{
	map_entries_t maps = { 0 };
	const struct map_entry *files[64], *small[4], *big;
	struct unwind_file_key keys[3];
	const struct unwind_store_file *f;
	struct unwind_store s;
	size_t n = own_files(&maps, files, 64), len, want;
	int mask = -2;

	if (!small_and_big(&maps, files, n, small, &big, &len, &want)) {
		fprintf(stderr, "  no file large enough against the smallest: not tried\n");
		goto out;
	}
	if (!three_small(&s, small, stamper, 90 * SEC, keys))
		goto free;
	all_loaded_at(&s, 1 * SEC);
	s.max_slots = s.slots.len + want - 1;
	f = unwind_store_add_mapping(&s, (uint32_t)getpid(), 1000, big);
	if (!f)
		goto free;
	CHECK(f->status == UNWIND_FILE_FULL && f->id.system &&
	      store_payer(&s, f->id.uid, true, f->want_slots) == 0);
	mask = unwind_store_evict_for(&s, f, 100 * SEC) ? 0 : -1;
	for (int i = 0; mask >= 0 && i < 3; i++) {
		f = unwind_store_find(&s, keys[i].dev, keys[i].ino);
		if (f->status == UNWIND_FILE_FULL && f->evicted)
			mask |= 1 << i;
	}
free:
	unwind_store_free(&s);
out:
	map_entries_free(&maps);
	return mask;
}

static void a_system_file_others_run_is_protected_from_a_user_who_never_runs_it(void)
{
	int mask = big_system_file_evicts(1001);

	if (mask == -2)
		return;
	CHECK_EQ_INT(mask, -1);
	CHECK(big_system_file_evicts(1000) > 0);
}

/*
 * Root's largest file (the system's, larger than a share: root pays for
 * it) and its three smallest (stamped by root: protected), the largest
 * stamped by `stamper` (UINT32_MAX: none); then user 1000 maps the fourth
 * smallest, with no room but the largest's. Whether the largest went for
 * it (1), nothing could (-1), or not tried (-2).
 */
static int big_table_evicted_for_a_small_one(uint32_t stamper)
{
	map_entries_t maps = { 0 };
	const struct map_entry *files[64], *small[4], *big;
	struct unwind_file_key key, keys[3];
	const struct unwind_store_file *f;
	struct unwind_store s;
	size_t n = own_files(&maps, files, 64), len, want;
	int made = -2;

	if (!small_and_big(&maps, files, n, small, &big, &len, &want)) {
		fprintf(stderr, "  no file large enough against the smallest: not tried\n");
		goto out;
	}
	if (!three_small(&s, small, 0, 95 * SEC, keys))
		goto free;
	f = add_entry(&s, big);
	CHECK(f && f->status == UNWIND_FILE_LOADED && !f->id.uid && f->nslots == want);
	if (!f || f->status != UNWIND_FILE_LOADED)
		goto free;
	key = f->key;
	if (stamper != UINT32_MAX)
		unwind_store_sampled(&s, &key, stamper, 90 * SEC);
	all_loaded_at(&s, 1 * SEC);
	/* Room for the fourth smallest only once the largest is gone. */
	s.max_slots = s.slots.len;
	CHECK(want > s.max_slots / 4);
	f = unwind_store_add_mapping(&s, (uint32_t)getpid(), 1000, small[3]);
	if (!f)
		goto free;
	CHECK(f->status == UNWIND_FILE_FULL && f->id.uid == 1000 &&
	      !unwind_store_over_share(&s, f));
	made = unwind_store_evict_for(&s, f, 100 * SEC) ? 0 : -1;
	f = unwind_store_find(&s, key.dev, key.ino);
	if (made == 0 && f->status == UNWIND_FILE_FULL && f->evicted)
		made = 1;
free:
	unwind_store_free(&s);
out:
	map_entries_free(&maps);
	return made;
}

/*
 * S2 review, finding 5: a table root pays for (a system file larger than a
 * share, cc1 or libLLVM) is past any user's protected quarter alone; who
 * runs it protects it anyway, as root's sampled tables were: user 1001's
 * stamp keeps it from user 1000. The control: stamped by no one, it goes.
 */
static void a_system_file_past_a_share_is_protected_by_its_users(void)
{
	int made = big_table_evicted_for_a_small_one(1001);

	if (made == -2)
		return;
	CHECK_EQ_INT(made, -1);
	CHECK_EQ_INT(big_table_evicted_for_a_small_one(UINT32_MAX), 1);
}

/*
 * A store as three_and_no_room makes it (root's tables, loaded at second
 * 1), t[fresh] loaded at `loaded` instead and never sampled, the others
 * sampled at 50 s, 40 s or 60 s (over a minute before: no longer
 * protected): which went for files[3] at 200 s (bits; 8: the fresh one
 * alone), -1 when none.
 */
static int fresh_case(const struct map_entry **files, uint64_t loaded)
{
	const struct unwind_store_file *t[3];
	struct unwind_store s;
	uint64_t sampled[3] = { 50 * SEC, 40 * SEC, 60 * SEC };
	int mask = -2, fresh = 0;

	if (three_and_no_room(&s, files, t)) {
		/* The smallest is fresh: a quarter of the store holds it. */
		for (int i = 1; i < 3; i++)
			if (t[i]->nslots < t[fresh]->nslots)
				fresh = i;
		CHECK(t[fresh]->nslots <= s.max_slots / 4);
		sampled[fresh] = 0;
		for (int i = 0; i < 3; i++)
			if (sampled[i])
				unwind_store_sampled(&s, &t[i]->key, 0, sampled[i]);
		entry_of(&s, t[fresh])->loaded_at = loaded;
		mask = evicted_for(&s, files, t, 200 * SEC);
		/* The one that went: the least recently used of the others, or the fresh one. */
		mask = mask < 0 ? mask : mask == 1 << fresh ? 8 : mask;
	}
	unwind_store_free(&s);
	return mask;
}

/*
 * S2 review, finding 4: a table never sampled went first (its key 0), so
 * the tables built at exec or mmap time, before their process's first
 * sample, went before any other, and two builds on a full store evicted
 * each other in turn. Now a table loaded in the last UNWIND_STORE_PIN_NS is
 * pinned, and a table's age is the later of its last sample and its load:
 * loaded 1 s or 5 s ago, it stays, and one of the others, sampled minutes
 * ago, goes.
 */
static void a_table_just_built_is_not_the_first_to_go(void)
{
	map_entries_t maps = { 0 };
	const struct map_entry *files[64];
	int mask;

	if (own_files(&maps, files, 64) < 4) {
		fprintf(stderr, "  fewer than 4 files mapped: not tried\n");
		goto out;
	}
	mask = fresh_case(files, 199 * SEC);
	CHECK(mask != 8 && mask > 0);
	mask = fresh_case(files, 195 * SEC);
	CHECK(mask != 8 && mask > 0);
	/* The control: loaded 199 s ago, never sampled, it goes first. */
	CHECK_EQ_INT(fresh_case(files, 1 * SEC), 8);
out:
	map_entries_free(&maps);
}

/*
 * S2 review, finding 4: the pin on fresh tables holds a user's most recent
 * loads up to a quarter of the store, not more: one that loads table after
 * table does not keep the store. This process's tables, loaded by user
 * 1000 in the last second (far more than a quarter of the store): some go
 * for user 1001's new table.
 */
static void fresh_tables_are_pinned_up_to_a_quarter(void)
{
	char mine[] = "/tmp/bpfprof-mine-XXXXXX";
	map_entries_t maps = { 0 };
	const struct map_entry *files[64];
	const struct unwind_store_file *f;
	struct unwind_store s;
	size_t n = own_files(&maps, files, 64), want;

	copy_for_anyone(CFI_FIX, mine);
	unwind_store_init(&s, NULL, 1u << 22);
	unwind_store_share_by_owner(&s);
	for (size_t i = 0; i < n; i++)
		add_entry(&s, files[i]);
	for (size_t i = 0; i < s.files.len; i++) {
		s.files.data[i].loaded_at = 99 * SEC + i * SEC / 64;
		s.files.data[i].loaded_by = 1000;
	}
	want = slots_of(CFI_FIX);
	s.max_slots = s.slots.len + want - 1;
	CHECK(s.slots.len > s.max_slots / 4);
	f = map_path_as(&s, mine, 1001);
	if (f) {
		CHECK(f->status == UNWIND_FILE_FULL);
		CHECK(unwind_store_evict_for(&s, f, 100 * SEC));
	} else {
		fprintf(stderr, "  /tmp is noexec: not tried\n");
	}
	unwind_store_free(&s);
	map_entries_free(&maps);
	unlink(mine);
}

/*
 * S2 review, finding 13: every sample's files are stamped, by user, a
 * user's stamp of a file renewed at most every UNWIND_STORE_STAMP_NS; a
 * file keeps UNWIND_STORE_STAMPS users, a new one in the oldest's place.
 */
static void a_users_stamp_is_renewed_at_most_every_stamp_period(void)
{
	map_entries_t maps = { 0 };
	const struct map_entry *files[64];
	const struct unwind_store_file *f;
	struct unwind_store s;
	uint64_t t0 = 10 * SEC;
	size_t seen;

	own_files(&maps, files, 64);
	unwind_store_init(&s, NULL, 1u << 22);
	f = add_entry(&s, files[0]);
	CHECK(f && f->status == UNWIND_FILE_LOADED);
	if (!f)
		goto out;
	unwind_store_sampled(&s, &f->key, 1001, t0);
	unwind_store_sampled(&s, &f->key, 1001, t0 + UNWIND_STORE_STAMP_NS / 2);
	CHECK(f->sampled_at == t0);
	unwind_store_sampled(&s, &f->key, 1002, t0 + UNWIND_STORE_STAMP_NS / 2);
	CHECK(f->sampled_at == t0 + UNWIND_STORE_STAMP_NS / 2);
	unwind_store_sampled(&s, &f->key, 1001, t0 + UNWIND_STORE_STAMP_NS);
	CHECK(f->sampled_at == t0 + UNWIND_STORE_STAMP_NS);
	/* Users 1003..1005 later: 1002's stamp, the oldest, gives way. */
	for (uint32_t u = 1003; u <= 1005; u++)
		unwind_store_sampled(&s, &f->key, u, t0 + 2 * SEC + u);
	seen = 0;
	for (size_t i = 0; i < UNWIND_STORE_STAMPS; i++) {
		CHECK(f->stamps[i].uid != 1002);
		seen += f->stamps[i].uid == 1001 && f->stamps[i].at == t0 + UNWIND_STORE_STAMP_NS;
	}
	CHECK_EQ_INT(seen, 1);
out:
	unwind_store_free(&s);
	map_entries_free(&maps);
}

int main(void)
{
	elf_version(EV_CURRENT);
	RUN(tables_go_least_recently_sampled_first);
	RUN(an_evicted_file_is_found_again);
	RUN(a_user_cannot_evict_anothers_sampled_table);
	RUN(a_file_mapped_first_by_an_attacker_is_protected_by_its_users);
	RUN(a_system_file_others_run_is_protected_from_a_user_who_never_runs_it);
	RUN(a_system_file_past_a_share_is_protected_by_its_users);
	RUN(a_table_just_built_is_not_the_first_to_go);
	RUN(fresh_tables_are_pinned_up_to_a_quarter);
	RUN(a_users_stamp_is_renewed_at_most_every_stamp_period);
	return test_summary();
}
