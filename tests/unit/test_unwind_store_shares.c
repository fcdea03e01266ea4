// SPDX-License-Identifier: BSD-2-Clause
/*
 * The unwind table store's budgets (unwind/table_store.c): a user's share
 * of the rows, the per-file cap (the system's files held to the store's
 * capacity), a file refused for one user built for another with room, and
 * the rebuild that keeps sampled files first and evicts at most once a
 * minute for each user. No BPF, no root.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "symbols/proc_maps.h"
#include "test.h"
#include "unwind/cfi_table.h"
#include "unwind/table_store.h"
#include "unwind_store_add.h"

#define RECENT_NS UNWIND_STORE_RECENT_NS /* the recording's horizon, on a fake clock */

/*
 * add_all_mappings: every executable file this process maps, charged to
 * `uid`; rows loaded. *full: those refused, for lack of room or share
 * (FULL) or past the file cap (OVER_BUDGET).
 */
static size_t add_all_mappings(struct unwind_store *s, const map_entries_t *maps, uint32_t uid,
			       size_t *full)
{
	size_t slots = 0;

	*full = 0;
	for (size_t i = 0; i < maps->len; i++) {
		const struct unwind_store_file *f;

		if (!maps->data[i].executable || !maps->data[i].inode)
			continue;
		f = unwind_store_add_mapping(s, (uint32_t)getpid(), uid, &maps->data[i]);
		if (f && (f->status == UNWIND_FILE_FULL || f->status == UNWIND_FILE_OVER_BUDGET))
			(*full)++;
		if (f && f->status == UNWIND_FILE_LOADED)
			slots += f->nslots;
	}
	return slots;
}

/*
 * Shared by owner: a user's files take at most a quarter of the rows, and
 * one file at most a quarter, whoever maps it; root's processes are the
 * system's (only the file cap applies).
 */
static void a_users_files_take_at_most_its_share(void)
{
	map_entries_t maps = { 0 };
	struct unwind_store s;
	size_t all, slots, full, largest = 0, share;

	CHECK_EQ_INT(proc_maps_read("/proc", getpid(), &maps), 0);
	unwind_store_init(&s, NULL, 1u << 22);
	all = add_all_mappings(&s, &maps, 1000, &full);
	for (size_t i = 0; i < s.files.len; i++)
		if (s.files.data[i].nslots > largest)
			largest = s.files.data[i].nslots;
	unwind_store_free(&s);
	CHECK(all > largest && full == 0);
	/*
	 * A share holds half of them, and the largest (a system file larger
	 * than a share is the system's: payer in table_store.c), not them all.
	 */
	share = largest > all / 2 ? (all + largest) / 2 : all / 2;
	unwind_store_init(&s, NULL, 4 * share);
	unwind_store_share_by_owner(&s);
	slots = add_all_mappings(&s, &maps, 1000, &full);
	CHECK(slots <= share);
	CHECK(full > 0);
	CHECK_EQ_INT(s.slots.len, slots);
	unwind_store_free(&s);
	/* Root: only a file past a quarter of the store (one at most) is not. */
	unwind_store_init(&s, NULL, 4 * share);
	unwind_store_share_by_owner(&s);
	slots = add_all_mappings(&s, &maps, 0, &full);
	CHECK(full <= 1);
	CHECK(full == 1 || slots == all);
	unwind_store_free(&s);
	map_entries_free(&maps);
}

/*
 * Issue 37, finding 8: a file's table is capped at a quarter of the store
 * (the build budget too: it stops there, not at the default 2M rows); past
 * it the file is OVER_BUDGET, frame pointers, and nothing is stored.
 */
static void a_file_past_its_cap_is_over_budget_and_not_built_past_it(void)
{
	const struct unwind_store_file *f;
	struct unwind_store s;
	struct cfi_budget b, fb;
	struct stat st;
	uint32_t nslots = 0;
	char copy[] = "/tmp/bpfprof-cap-XXXXXX", cmd[256];
	int fd = mkstemp(copy);

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	close(fd);
	/* A copy others may write: no package's, whoever runs the test. */
	snprintf(cmd, sizeof(cmd), "cp %s %s && chmod 0666 %s", CFI_FIX, copy, copy);
	CHECK_EQ_INT(system(cmd), 0);
	nslots = slots_of(CFI_FIX);
	CHECK(nslots > 4);
	/* Without shares (tools, tests): the default budget. */
	unwind_store_init(&s, NULL, 1u << 21);
	unwind_store_budget(&s, &b);
	CHECK_EQ_INT(b.file_rows, CFI_FILE_MAX_ROWS);
	CHECK_EQ_INT(b.user_file_rows, 0);
	unwind_store_share_by_owner(&s);
	unwind_store_budget(&s, &b);
	/*
	 * A user's file: a quarter of the store's slots, rows read two a slot;
	 * the system's: the store's capacity.
	 */
	CHECK_EQ_INT(b.file_rows, CFI_FILE_MAX_ROWS);
	CHECK_EQ_INT(b.user_file_rows, 2 * ((1u << 21) / 4));
	CHECK_EQ_INT(unwind_store_file_cap(&s), (1u << 21) / 4);
	CHECK_EQ_INT(cfi_budget_pick(&b, false).file_rows, 2 * ((1u << 21) / 4));
	CHECK_EQ_INT(cfi_budget_pick(&b, true).file_rows, CFI_FILE_MAX_ROWS);
	fd = open(copy, O_RDONLY | O_CLOEXEC);
	fb = cfi_budget_for_file(&b, fd);
	CHECK_EQ_INT(fb.file_rows, 2 * ((1u << 21) / 4));
	if (fd >= 0)
		close(fd);
	unwind_store_free(&s);
	/* A quarter of the store is half the file: a user's is over budget, no rows. */
	unwind_store_init(&s, NULL, 2 * (size_t)nslots);
	unwind_store_share_by_owner(&s);
	f = add_path(&s, copy);
	CHECK(f && f->status == UNWIND_FILE_OVER_BUDGET);
	CHECK_EQ_INT(s.slots.len, 0);
	/* The system's (root's, 0755, as a package's is): built whole, within the store. */
	fd = open(CFI_FIX, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && fstat(fd, &st) == 0 && cfi_file_is_system(fd, &st)) {
		/* The file system is asked too (FUSE's owner and mode are its server's word). */
		CHECK(!cfi_file_is_system(-1, &st));
		f = add_path(&s, CFI_FIX);
		CHECK(f && f->status == UNWIND_FILE_LOADED && f->nslots == nslots);
		fb = cfi_budget_for_file(&b, fd);
		CHECK_EQ_INT(fb.file_rows, CFI_FILE_MAX_ROWS);
	} else {
		fprintf(stderr, "  %s is not root's alone: the system's cap is not tried\n",
			CFI_FIX);
	}
	if (fd >= 0)
		close(fd);
	unwind_store_free(&s);
	/* A quarter is the whole file: loaded. */
	unwind_store_init(&s, NULL, 4 * (size_t)nslots + 64);
	unwind_store_share_by_owner(&s);
	f = add_path(&s, copy);
	CHECK(f && f->status == UNWIND_FILE_LOADED);
	unwind_store_free(&s);
	unlink(copy);
}

/*
 * Issue 37, finding 8: a file refused because its first user is past their
 * share (python3, libc, another user's program) is not FULL for everyone:
 * the next process of a user with room that maps it takes it, its rows
 * charged to that user. The first user mapping it again changes nothing.
 */
static void a_file_refused_for_one_users_share_is_taken_by_another_with_room(void)
{
	map_entries_t maps = { 0 };
	struct unwind_store s;
	size_t all, full, slots, share, largest = 0, taken = 0, still = 0, builds;

	CHECK_EQ_INT(proc_maps_read("/proc", getpid(), &maps), 0);
	unwind_store_init(&s, NULL, 1u << 22);
	all = add_all_mappings(&s, &maps, 1000, &full);
	for (size_t i = 0; i < s.files.len; i++)
		if (s.files.data[i].nslots > largest)
			largest = s.files.data[i].nslots;
	unwind_store_free(&s);
	CHECK(all > largest && full == 0);
	/*
	 * A user's share (and the file cap), a quarter of the store, holds the
	 * largest file but not them all: user 2001 is refused some for its share.
	 */
	share = (all + largest) / 2;
	unwind_store_init(&s, NULL, 4 * share);
	unwind_store_share_by_owner(&s);
	slots = add_all_mappings(&s, &maps, 2001, &full);
	CHECK(full > 0 && slots <= share);
	/* Refused for its share, not for room (the store holds 4 shares): what -v names. */
	for (size_t i = 0; i < s.files.len; i++)
		if (s.files.data[i].status == UNWIND_FILE_FULL)
			CHECK(unwind_store_over_share(&s, &s.files.data[i]));
	/* 2001 again: still past its share, nothing built again. */
	builds = s.stats.files[UNWIND_FILE_FULL] + s.stats.files[UNWIND_FILE_LOADED];
	CHECK_EQ_INT(add_all_mappings(&s, &maps, 2001, &full), slots);
	CHECK_EQ_INT(s.stats.files[UNWIND_FILE_FULL] + s.stats.files[UNWIND_FILE_LOADED], builds);
	/* User 2002, with room: takes what 2001 was refused, charged to itself. */
	add_all_mappings(&s, &maps, 2002, &full);
	for (size_t i = 0; i < s.files.len; i++) {
		const struct unwind_store_file *f = &s.files.data[i];

		if (f->id.uid == 2002)
			taken += f->status == UNWIND_FILE_LOADED;
		if (f->status == UNWIND_FILE_LOADED)
			CHECK(!unwind_store_over_share(&s, f));
		if (f->status == UNWIND_FILE_FULL)
			still++;
	}
	CHECK(taken > 0);
	/* What is still refused is past 2002's share too. */
	CHECK(still == 0 || s.slots.len - slots + largest > share);
	CHECK(s.slots.len <= all);
	unwind_store_free(&s);
	map_entries_free(&maps);
}

/* The slots charged to user `uid` (unwind_store.owner_slots). */
static uint32_t charged_to(const struct unwind_store *s, uint32_t uid)
{
	uint32_t n = 0;

	hmap_get(&s->owner_slots, (struct hmap_key){ uid, 0 }, &n);
	return n;
}

/* A copy of `from` at a new path (`path`: a mkstemp template) any user may write: no package's. */
static void copy_for_anyone(const char *from, char *path)
{
	char cmd[512];
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
	snprintf(cmd, sizeof(cmd), "cp %s %s && chmod 0777 %s", from, path, path);
	CHECK_EQ_INT(system(cmd), 0);
}

/*
 * Review of issue 37: a system file larger than a user's share (cc1 at
 * 600k rows, libLLVM-16 past 1M, a share 512k) mapped by a user other than
 * root was built whole, then thrown away as FULL for that user's share,
 * for every user but root. It is loaded, its rows the system's. The
 * controls: a copy the user may write, as large, is over the file cap; a
 * system file that fits a share still counts in the user's (a flood of the
 * system's libraries is held to it).
 */
static void a_system_file_past_a_users_share_is_loaded_as_the_systems(void)
{
	const struct unwind_store_file *f;
	struct unwind_store s;
	struct stat st;
	uint32_t nslots = slots_of(CFI_FIX);
	char mine[] = "/tmp/bpfprof-mine-XXXXXX";
	int fd = open(CFI_FIX, O_RDONLY | O_CLOEXEC);

	CHECK(fd >= 0 && nslots > 4);
	if (fd < 0 || fstat(fd, &st) || !cfi_file_is_system(fd, &st)) {
		fprintf(stderr, "  %s is not root's alone: not tried\n", CFI_FIX);
		if (fd >= 0)
			close(fd);
		return;
	}
	close(fd);
	copy_for_anyone(CFI_FIX, mine);
	/* A share (and a user's file cap) is half the file: the system's is loaded whole. */
	unwind_store_init(&s, NULL, 2 * (size_t)nslots);
	unwind_store_share_by_owner(&s);
	f = map_path_as(&s, CFI_FIX, 1000);
	CHECK(f && f->status == UNWIND_FILE_LOADED && f->nslots == nslots);
	CHECK(f && f->id.uid == 0);
	CHECK_EQ_INT(charged_to(&s, 1000), 0);
	CHECK_EQ_INT(charged_to(&s, 0), nslots);
	f = map_path_as(&s, mine, 1000);
	if (f)
		CHECK(f->status == UNWIND_FILE_OVER_BUDGET);
	else
		fprintf(stderr, "  /tmp is noexec: the user's own file is not tried\n");
	unwind_store_free(&s);
	/*
	 * A share holds the file once, not twice (2 slots to spare, fewer than it takes):
	 * the user's copy takes it, the system's is then FULL.
	 */
	unwind_store_init(&s, NULL, 4 * (size_t)nslots + 8);
	unwind_store_share_by_owner(&s);
	f = map_path_as(&s, mine, 1000);
	if (f) {
		CHECK(f->status == UNWIND_FILE_LOADED && f->id.uid == 1000);
		f = map_path_as(&s, CFI_FIX, 1000);
		CHECK(f && f->status == UNWIND_FILE_FULL);
		CHECK_EQ_INT(charged_to(&s, 1000), nslots);
		CHECK_EQ_INT(charged_to(&s, 0), 0);
	}
	unwind_store_free(&s);
	unlink(mine);
}

static int defer_take(void *ctx, const struct unwind_store_file *f, int fd, const char *path,
		      const char *link, bool stale)
{
	(void)ctx, (void)f, (void)path, (void)link, (void)stale;
	close(fd);
	return 0;
}

/*
 * A user's file mapped (PENDING, handed over), then completed with a table
 * of three rows `npages` code pages apart end to end: its status, or -1.
 */
static int three_rows_over(struct unwind_store *s, uint32_t npages)
{
	char mine[] = "/tmp/bpfprof-sparse-XXXXXX";
	struct cfi_row rows[3] = {
		{ .pc = 0x10000, .cfa = UNWIND_CFA_SP, .cfa_offset = 8 },
		{ .pc = 0x10010, .cfa = UNWIND_CFA_SP, .cfa_offset = 16 },
		{ .pc = 0x10000 + ((uint64_t)(npages - 1) << UNWIND_CODE_PAGE_SHIFT),
		  .cfa = UNWIND_CFA_SP,
		  .cfa_offset = 8 },
	};
	struct unwind_built b = { .status = UNWIND_FILE_LOADED, .t = { .rows = rows, .len = 3 } };
	const struct unwind_store_file *f;
	int status = -1;

	copy_for_anyone(CFI_FIX, mine);
	f = map_path_as(s, mine, 1000);
	CHECK(f && f->status == UNWIND_FILE_PENDING);
	if (f && f->status == UNWIND_FILE_PENDING) {
		struct unwind_file_key key = f->key;
		struct unwind_file_id id = f->id;

		f = unwind_store_complete(s, &key, &id, &b);
		status = f ? f->status : -1;
	}
	unlink(mine);
	return status;
}

/*
 * Review of S1, finding 7: a file whose few rows lie far apart (a hostile
 * user's) took a page slot for each empty 64 KiB of code between them, its
 * user's whole share for three rows. Past 64 pages more than its rows it
 * is OVER_BUDGET (frame pointers), charged nothing; at 64 it is loaded.
 */
static void a_sparse_file_is_over_budget_not_a_share_of_empty_pages(void)
{
	struct unwind_store s;
	size_t used;

	unwind_store_init(&s, NULL, 1u << 20);
	unwind_store_share_by_owner(&s);
	s.defer = defer_take;
	CHECK_EQ_INT(three_rows_over(&s, 3 + 64), UNWIND_FILE_LOADED);
	used = s.slots.len;
	CHECK(used > 64);
	CHECK_EQ_INT(charged_to(&s, 1000), used);
	CHECK_EQ_INT(three_rows_over(&s, 100000), UNWIND_FILE_OVER_BUDGET);
	CHECK_EQ_INT(charged_to(&s, 1000), used);
	CHECK_EQ_INT(s.slots.len, used);
	unwind_store_free(&s);
}

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

/* files[0] and files[1] added (again) as *a and *b: whether both are loaded. */
static bool first_two_loaded(struct unwind_store *s, const struct map_entry **files,
			     const struct unwind_store_file **a, const struct unwind_store_file **b)
{
	*a = add_entry(s, files[0]);
	*b = add_entry(s, files[1]);
	CHECK(*a && *b && (*a)->status == UNWIND_FILE_LOADED && (*b)->status == UNWIND_FILE_LOADED);
	return *a && *b && (*a)->status == UNWIND_FILE_LOADED && (*b)->status == UNWIND_FILE_LOADED;
}

/*
 * Issue 37, finding 8: a rebuild keeps the files samples fell in first,
 * most recently sampled first, whether a process maps them again or not
 * (a program that runs now and then keeps its table); the files never
 * sampled get what is left.
 */
static void a_rebuild_keeps_sampled_files_first_most_recent_first(void)
{
	map_entries_t maps = { 0 };
	const struct map_entry *files[64];
	const struct unwind_store_file *f, *a, *b;
	struct unwind_store s;
	struct unwind_file_key ka, kb;
	size_t n, ra, rb;

	n = own_files(&maps, files, 64);
	if (n < 3)
		goto out;
	unwind_store_init(&s, NULL, 1u << 22);
	for (size_t i = 0; i < n; i++)
		add_entry(&s, files[i]);
	if (!first_two_loaded(&s, files, &a, &b))
		goto free;
	ka = a->key, kb = b->key;
	ra = a->nslots, rb = b->nslots;
	/* b sampled last, a before it; the others never. */
	unwind_store_sampled(&s, &ka, 100);
	unwind_store_sampled(&s, &kb, 200);
	/* Room for b and not for a as well. */
	s.max_slots = ra + rb - 1;
	CHECK_EQ_INT(unwind_store_reset(&s), 0);
	unwind_store_keep_recent(&s, 16, 300, RECENT_NS);
	/* Kept though no process mapped it again: b, the most recent. */
	f = unwind_store_find(&s, kb.dev, kb.ino);
	CHECK(f && f->status == UNWIND_FILE_LOADED && f->sampled_at == 200);
	CHECK(unwind_store_find(&s, ka.dev, ka.ino) == NULL);
	/* The files met after (never sampled) are refused where no room is left. */
	for (size_t i = 2; i < n; i++) {
		f = add_entry(&s, files[i]);
		CHECK(f != NULL);
	}
	unwind_store_rebuilt(&s);
	f = unwind_store_find(&s, kb.dev, kb.ino);
	CHECK(f && f->status == UNWIND_FILE_LOADED && f->info.first_slot == 0);
	CHECK(s.slots.len <= s.max_slots);
	/* Room for both: both kept, b first. */
	s.max_slots = 1u << 22;
	unwind_store_sampled(&s, &kb, 300);
	f = add_entry(&s, files[0]);
	CHECK(f && f->status == UNWIND_FILE_LOADED);
	unwind_store_sampled(&s, &ka, 250);
	CHECK_EQ_INT(unwind_store_reset(&s), 0);
	unwind_store_keep_recent(&s, 16, 300, RECENT_NS);
	a = unwind_store_find(&s, ka.dev, ka.ino);
	b = unwind_store_find(&s, kb.dev, kb.ino);
	CHECK(a && b && b->info.first_slot == 0 && a->info.first_slot == rb);
	CHECK_EQ_INT(s.files.len, 2);
	/* At most max_files of them. */
	CHECK_EQ_INT(unwind_store_reset(&s), 0);
	unwind_store_keep_recent(&s, 1, 300, RECENT_NS);
	CHECK_EQ_INT(s.files.len, 1);
	CHECK(unwind_store_find(&s, kb.dev, kb.ino) != NULL);
	unwind_store_rebuilt(&s);
free:
	unwind_store_free(&s);
out:
	map_entries_free(&maps);
}

/*
 * Review of issue 37: a rebuild kept a file sampled however long ago ahead
 * of a live process's file, though unwind_store_should_evict counted its
 * rows as room. One not sampled in the last 30 s is kept only if a process
 * maps it, as any file; one sampled since is kept first (the control).
 */
static void a_file_sampled_long_ago_is_not_kept_at_a_rebuild(void)
{
	map_entries_t maps = { 0 };
	const struct map_entry *files[64];
	const struct unwind_store_file *a, *b, *f;
	struct unwind_store s;
	struct unwind_file_key ka;
	uint64_t now = 1000ull * 1000000000ull;
	size_t n, one;

	n = own_files(&maps, files, 64);
	if (n < 3)
		goto out;
	unwind_store_init(&s, NULL, 1u << 22);
	if (!first_two_loaded(&s, files, &a, &b))
		goto free;
	ka = a->key;
	/* Room for either, not both. */
	one = a->nslots > b->nslots ? a->nslots : b->nslots;
	/* a sampled 31 s ago, no process maps it; b a live process's, never sampled. */
	unwind_store_sampled(&s, &ka, now - RECENT_NS - 1000000000ull);
	s.max_slots = one;
	CHECK_EQ_INT(unwind_store_reset(&s), 0);
	unwind_store_keep_recent(&s, 16, now, RECENT_NS);
	CHECK(unwind_store_find(&s, ka.dev, ka.ino) == NULL);
	f = add_entry(&s, files[1]);
	CHECK(f && f->status == UNWIND_FILE_LOADED);
	unwind_store_rebuilt(&s);
	CHECK(unwind_store_find(&s, ka.dev, ka.ino) == NULL);
	/* The control: a sampled 29 s ago is kept, b refused for it. */
	s.max_slots = 1u << 22;
	f = add_entry(&s, files[0]);
	CHECK(f && f->status == UNWIND_FILE_LOADED);
	unwind_store_sampled(&s, &ka, now - RECENT_NS + 1000000000ull);
	s.max_slots = one;
	CHECK_EQ_INT(unwind_store_reset(&s), 0);
	unwind_store_keep_recent(&s, 16, now, RECENT_NS);
	f = unwind_store_find(&s, ka.dev, ka.ino);
	CHECK(f && f->status == UNWIND_FILE_LOADED);
	f = add_entry(&s, files[1]);
	CHECK(f && f->status == UNWIND_FILE_FULL);
	unwind_store_rebuilt(&s);
free:
	unwind_store_free(&s);
out:
	map_entries_free(&maps);
}

/*
 * Issue 37, finding 8: a file refused for lack of room (the store full of
 * files never sampled) that is then sampled calls for a rebuild, which
 * holds room for it: when its process maps it again it is built into that
 * room, and a file never sampled is refused in its place.
 */
static void a_sampled_file_refused_gets_room_at_the_rebuild(void)
{
	map_entries_t maps = { 0 };
	const struct map_entry *files[64];
	const struct unwind_store_file *f;
	struct unwind_store s;
	struct unwind_file_key kv;
	size_t n, total = 0, victim = 0, others_full = 0;
	uint64_t now = 1000ull * 1000000000ull;

	n = own_files(&maps, files, 64);
	if (n < 3)
		goto out;
	unwind_store_init(&s, NULL, 1u << 22);
	for (size_t i = 0; i < n; i++) {
		f = add_entry(&s, files[i]);
		if (f && f->status == UNWIND_FILE_LOADED)
			total += f->nslots;
	}
	f = add_entry(&s, files[n - 1]);
	victim = f && f->status == UNWIND_FILE_LOADED ? f->nslots : 0;
	unwind_store_free(&s);
	CHECK(victim > 0 && total > victim);
	if (!victim || total <= victim)
		goto out;
	/* Room for all but the last file (met last: refused). */
	unwind_store_init(&s, NULL, total - 1);
	for (size_t i = 0; i < n; i++)
		f = add_entry(&s, files[i]);
	CHECK(f && f->status == UNWIND_FILE_FULL && f->want_slots == victim);
	if (!f || f->status != UNWIND_FILE_FULL)
		goto free;
	kv = f->key;
	/* Not sampled: nothing to evict for. */
	CHECK(!unwind_store_should_evict(&s, now, RECENT_NS, 0));
	unwind_store_sampled(&s, &kv, now);
	CHECK(unwind_store_should_evict(&s, now + 1, RECENT_NS, 0));
	/* Sampled long ago: no longer (called again by a sample, of long ago). */
	unwind_store_sampled(&s, &kv, now);
	CHECK(!unwind_store_should_evict(&s, now + 31ull * 1000000000ull, RECENT_NS, 0));
	CHECK_EQ_INT(unwind_store_reset(&s), 0);
	unwind_store_keep_recent(&s, 16, now + 1, RECENT_NS);
	f = unwind_store_find(&s, kv.dev, kv.ino);
	CHECK(f && f->status == UNWIND_FILE_PENDING && f->reserved == victim);
	CHECK_EQ_INT(s.reserved_slots, victim);
	/* The live processes' files, in the same order: the sampled one gets its room. */
	for (size_t i = 0; i < n; i++) {
		f = add_entry(&s, files[i]);
		if (i + 1 < n && f && f->status == UNWIND_FILE_FULL)
			others_full++;
	}
	unwind_store_rebuilt(&s);
	f = unwind_store_find(&s, kv.dev, kv.ino);
	CHECK(f && f->status == UNWIND_FILE_LOADED && f->nslots == victim);
	CHECK(others_full > 0);
	CHECK_EQ_INT(s.reserved_slots, 0);
	CHECK(s.slots.len <= s.max_slots);
free:
	unwind_store_free(&s);
out:
	map_entries_free(&maps);
}

/*
 * A refused file of `uid`, sampled: whether it calls for an eviction
 * rebuild at `now`, then 10 s later, then 61 s after the first (each after
 * a sample of it then), into called[3].
 */
static bool evict_calls(uint32_t uid, bool called[3])
{
	map_entries_t maps = { 0 };
	const struct map_entry *files[64];
	const struct unwind_store_file *f = NULL;
	struct unwind_store s;
	size_t n, total = 0;
	uint64_t now = 1000ull * 1000000000ull, after[3] = { 0, 10, 61 };
	bool ok = false;

	n = own_files(&maps, files, 64);
	if (n < 3)
		goto out;
	unwind_store_init(&s, NULL, 1u << 22);
	for (size_t i = 0; i < n; i++) {
		f = unwind_store_add_mapping(&s, (uint32_t)getpid(), uid, files[i]);
		if (f && f->status == UNWIND_FILE_LOADED)
			total += f->nslots;
	}
	unwind_store_free(&s);
	unwind_store_init(&s, NULL, total - 1);
	for (size_t i = 0; i < n; i++)
		f = unwind_store_add_mapping(&s, (uint32_t)getpid(), uid, files[i]);
	ok = f && f->status == UNWIND_FILE_FULL;
	for (int i = 0; ok && i < 3; i++) {
		uint64_t t = now + after[i] * 1000000000ull;

		unwind_store_sampled(&s, &f->key, t);
		called[i] = unwind_store_should_evict(&s, t, RECENT_NS, 60ull * 1000000000ull);
	}
	unwind_store_free(&s);
out:
	map_entries_free(&maps);
	return ok;
}

/*
 * A user other than root calls for an eviction rebuild at most once a
 * minute (review of issue 37: one sampling a refused file of its own now
 * and then made the whole store rebuild every 5 s); root's files may at
 * each look.
 */
static void a_user_calls_for_an_eviction_rebuild_once_a_minute(void)
{
	bool user[3] = { 0 }, root[3] = { 0 };

	CHECK(evict_calls(4242, user));
	CHECK(user[0] && !user[1] && user[2]);
	CHECK(evict_calls(0, root));
	CHECK(root[0] && root[1] && root[2]);
}

/*
 * The rules CFI_FIX's table adds (NONE aside), and a copy of it at `mine`
 * that the user may write: its rules are the user's.
 */
static size_t rules_of_a_users_copy(char *mine)
{
	const struct unwind_store_file *f;
	struct unwind_store s;
	size_t nrules;

	unwind_store_init(&s, NULL, 1u << 20);
	f = add_path(&s, CFI_FIX);
	CHECK(f && f->status == UNWIND_FILE_LOADED);
	nrules = s.rules.len - 1;
	CHECK(nrules > 2);
	unwind_store_free(&s);
	copy_for_anyone(CFI_FIX, mine);
	return nrules;
}

/* A store shared by owner, with room for `max` rules. */
static void store_of_rules(struct unwind_store *s, size_t max)
{
	unwind_store_init(s, NULL, 1u << 20);
	unwind_store_share_by_owner(s);
	s->rules.max = max;
}

/*
 * Issue 38: the rules kept once for every file are never given back, so a
 * user's files add at most a quarter of them: past it the file is FULL
 * (counted), adding none; root's files (the system's) are exempt. The
 * control: with room for the file's rules, the same file is loaded.
 */
static void a_users_files_add_at_most_a_quarter_of_the_rules(void)
{
	const struct unwind_store_file *f;
	struct unwind_store s;
	char mine[] = "/tmp/bpfprof-rules-XXXXXX";
	size_t nrules = rules_of_a_users_copy(mine);

	/* A quarter of the rules is one fewer than the file's. */
	store_of_rules(&s, 4 * (nrules - 1));
	f = map_path_as(&s, mine, 1000);
	if (!f) {
		fprintf(stderr, "  /tmp is noexec: not tried\n");
		goto out;
	}
	CHECK(f->status == UNWIND_FILE_FULL && f->want_rules == nrules);
	CHECK_EQ_INT(s.stats.rules_full, 1);
	CHECK_EQ_INT(s.rules.len, 1);
	CHECK_EQ_INT(s.slots.len, 0);
	/* Root's: exempt, loaded. */
	f = map_path_as(&s, CFI_FIX, 0);
	CHECK(f && f->status == UNWIND_FILE_LOADED);
	CHECK_EQ_INT(s.rules.len, nrules + 1);
	unwind_store_free(&s);
	/* The control: a quarter holds the file's rules. */
	store_of_rules(&s, 4 * nrules);
	f = map_path_as(&s, mine, 1000);
	CHECK(f && f->status == UNWIND_FILE_LOADED);
	CHECK_EQ_INT(s.stats.rules_full, 0);
	CHECK_EQ_INT(s.user_rules, nrules);
out:
	unwind_store_free(&s);
	unlink(mine);
}

/* User `uid`'s files added n rules (none of them in the array). */
static void spend_rules(struct unwind_store *s, uint32_t uid, size_t n)
{
	CHECK_EQ_INT(hmap_put(&s->owner_rules, (struct hmap_key){ uid, 0 }, (uint32_t)n), 0);
	s->user_rules += n;
}

/*
 * Review of issue 38's compact rows: a file refused because its payer had
 * no rule room left is taken by another user with room who maps it (it
 * was FULL for everyone until a rebuild), and is not built again for its
 * payer, neither when mapped again nor at a rebuild (each build failed
 * again, up to a second of CPU).
 */
static void a_file_refused_for_rules_is_taken_by_a_user_with_rule_room(void)
{
	const struct unwind_store_file *f;
	struct unwind_store s;
	char mine[] = "/tmp/bpfprof-rules-XXXXXX";
	size_t nrules = rules_of_a_users_copy(mine);

	/* A quarter holds the file's rules; user 1000 has spent its quarter. */
	store_of_rules(&s, 4 * nrules);
	spend_rules(&s, 1000, nrules);
	f = map_path_as(&s, mine, 1000);
	if (!f) {
		fprintf(stderr, "  /tmp is noexec: not tried\n");
		goto out;
	}
	CHECK(f->status == UNWIND_FILE_FULL);
	CHECK_EQ_INT(s.stats.rules_full, 1);
	/* Its payer again, then after a rebuild: not built again. */
	f = map_path_as(&s, mine, 1000);
	CHECK(f && f->status == UNWIND_FILE_FULL);
	CHECK_EQ_INT(unwind_store_reset(&s), 0);
	spend_rules(&s, 1000, nrules); /* in the files kept */
	f = map_path_as(&s, mine, 1000);
	unwind_store_rebuilt(&s);
	CHECK(f && f->status == UNWIND_FILE_FULL);
	CHECK_EQ_INT(s.stats.rules_full, 1);
	CHECK(f && !strcmp(unwind_store_full_reason(&s, f),
			   "no room for its rules in its user's share"));
	/* User 1001, its quarter free: loaded, its rules the new payer's. */
	f = map_path_as(&s, mine, 1001);
	CHECK(f && f->status == UNWIND_FILE_LOADED);
	CHECK(f && f->id.uid == 1001);
	CHECK_EQ_INT(s.stats.rules_full, 1);
	CHECK_EQ_INT(s.user_rules, 2 * nrules);
out:
	unwind_store_free(&s);
	unlink(mine);
}

/* The rules file `f`'s pages and rows point to, summed up in order. */
static uint64_t sum_of_rules(const struct unwind_store *s, const struct unwind_store_file *f)
{
	struct compact_view v = unwind_store_view(s, f);
	uint64_t sum = 0;

	for (uint32_t i = 0; i < f->info.npages; i++) {
		const struct unwind_page *p = &v.pages[i];

		for (int32_t j = -1; j < (int32_t)p->nrows; j++) {
			uint16_t k = j < 0 ? p->entry_rule : v.rows[p->first_row + j].rule;
			const struct unwind_rule *r = &v.rules[k];

			sum = sum * 31 + (uint32_t)r->cfa_offset * 7 + (uint16_t)r->fp_offset * 3 +
			      r->rules;
		}
	}
	return sum;
}

/*
 * Review of issue 38's compact rows: the rules are built again at a
 * rebuild from the files kept, so that those of files gone return, with
 * their users' count (two users at their quarter held every other user's
 * new rules out for the whole recording). A file kept keeps its rules.
 */
static void a_rebuild_gives_back_the_rules_of_files_gone(void)
{
	const struct unwind_store_file *f;
	struct unwind_file_key key;
	struct unwind_store s;
	char mine[] = "/tmp/bpfprof-rules-XXXXXX";
	size_t nrules = rules_of_a_users_copy(mine);
	uint64_t sum;

	/*
	 * User 1000's file after a rule of a file gone (so that its rules move),
	 * and user 1002's files (gone) at their quarter.
	 */
	store_of_rules(&s, 4 * nrules);
	s.rules.data[s.rules.len++] = (struct unwind_rule){ .cfa_offset = 12345 };
	f = map_path_as(&s, mine, 1000);
	if (!f) {
		fprintf(stderr, "  /tmp is noexec: not tried\n");
		goto out;
	}
	CHECK(f->status == UNWIND_FILE_LOADED);
	key = f->key;
	sum = sum_of_rules(&s, f);
	spend_rules(&s, 1002, nrules);
	CHECK_EQ_INT(s.user_rules, 2 * nrules);
	/* 1000's file sampled, kept: its rules only, counted as its user's. */
	unwind_store_sampled(&s, &key, 100);
	CHECK_EQ_INT(unwind_store_reset(&s), 0);
	unwind_store_keep_recent(&s, 16, 200, RECENT_NS);
	unwind_store_rebuilt(&s);
	f = unwind_store_find(&s, key.dev, key.ino);
	CHECK(f && f->status == UNWIND_FILE_LOADED);
	CHECK_EQ_INT(s.rules.len, nrules + 1);
	CHECK(f && sum_of_rules(&s, f) == sum);
	CHECK_EQ_INT(s.user_rules, nrules);
	/* Not sampled since: gone at the next rebuild, and its rules with it. */
	CHECK_EQ_INT(unwind_store_reset(&s), 0);
	unwind_store_keep_recent(&s, 16, 200 + 2 * RECENT_NS, RECENT_NS);
	unwind_store_rebuilt(&s);
	CHECK(!unwind_store_find(&s, key.dev, key.ino));
	CHECK_EQ_INT(s.rules.len, 1);
	CHECK_EQ_INT(s.user_rules, 0);
	/* Another user's file adds them again. */
	f = map_path_as(&s, mine, 1001);
	CHECK(f && f->status == UNWIND_FILE_LOADED);
	CHECK_EQ_INT(s.user_rules, nrules);
out:
	unwind_store_free(&s);
	unlink(mine);
}

int main(void)
{
	elf_version(EV_CURRENT);
	RUN(a_users_files_take_at_most_its_share);
	RUN(a_file_past_its_cap_is_over_budget_and_not_built_past_it);
	RUN(a_file_refused_for_one_users_share_is_taken_by_another_with_room);
	RUN(a_system_file_past_a_users_share_is_loaded_as_the_systems);
	RUN(a_sparse_file_is_over_budget_not_a_share_of_empty_pages);
	RUN(a_rebuild_keeps_sampled_files_first_most_recent_first);
	RUN(a_file_sampled_long_ago_is_not_kept_at_a_rebuild);
	RUN(a_sampled_file_refused_gets_room_at_the_rebuild);
	RUN(a_user_calls_for_an_eviction_rebuild_once_a_minute);
	RUN(a_users_files_add_at_most_a_quarter_of_the_rules);
	RUN(a_file_refused_for_rules_is_taken_by_a_user_with_rule_room);
	RUN(a_rebuild_gives_back_the_rules_of_files_gone);
	return test_summary();
}
