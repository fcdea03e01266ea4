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
				unwind_store_sampled(&s, &t[i]->key, sampled[i]);
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
		unwind_store_sampled(&s, &t[0]->key, 50 * SEC);
		unwind_store_sampled(&s, &t[1]->key, 40 * SEC);
		CHECK_EQ_INT(evicted_for(&s, files, t, now), 4);
		CHECK_EQ_INT(unwind_store_compact(&s), 0);
		CHECK_EQ_INT(s.stats.evicted, 1);
		CHECK(unwind_store_sampled(&s, &t[2]->key, now));
		CHECK(t[2]->sampled_at == now && t[2]->status == UNWIND_FILE_FULL);
		s.defer = defer_take;
		f = add_entry(&s, files[2]);
		CHECK(f == t[2] && f->status == UNWIND_FILE_PENDING && !f->evicted);
	}
	unwind_store_free(&s);
out:
	map_entries_free(&maps);
}

/*
 * A store as full_of_own_files makes it, shared by owner, and a user's copy
 * of CFI_FIX mapped by 1001 (the victim) at `victim` (*v), sampled at
 * `sampled` (0: never); then user 1000 maps another copy, `attacker`, for
 * which there is no room. Whether evicting made it room; NULL *v: not tried.
 */
static bool attacker_evicts(const char *victim, const char *attacker, uint64_t sampled,
			    bool *v_evicted)
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
			unwind_store_sampled(&s, &f->key, now - 5 * SEC);
	}
	v = map_path_as(&s, victim, 1001);
	if (!v)
		goto out;
	CHECK(v->status == UNWIND_FILE_LOADED);
	want = v->nslots; /* the attacker's copy is the same file's */
	vkey = v->key;
	if (sampled)
		unwind_store_sampled(&s, &v->key, sampled);
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
	char victim[] = "/tmp/bpfprof-victim-XXXXXX", attacker[] = "/tmp/bpfprof-attacker-XXXXXX";
	bool v_evicted;

	copy_for_anyone(CFI_FIX, victim);
	copy_for_anyone(CFI_FIX, attacker);
	CHECK(!attacker_evicts(victim, attacker, 90 * SEC, &v_evicted));
	CHECK(!v_evicted);
	CHECK(attacker_evicts(victim, attacker, 0, &v_evicted));
	CHECK(v_evicted);
	unlink(victim);
	unlink(attacker);
}
int main(void)
{
	elf_version(EV_CURRENT);
	RUN(tables_go_least_recently_sampled_first);
	RUN(an_evicted_file_is_found_again);
	RUN(a_user_cannot_evict_anothers_sampled_table);
	return test_summary();
}
