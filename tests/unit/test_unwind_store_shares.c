// SPDX-License-Identifier: BSD-2-Clause
/*
 * The unwind table store's budgets (unwind/table_store.c): a user's share
 * of the rows, the per-file cap (the system's files held to the store's
 * capacity), a file refused for one user built for another with room (eviction
 * by use: test_unwind_store_evict.c). No BPF, no root.
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
#include "unwind/table_store_impl.h"
#include "unwind_store_add.h"

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

/* Of `s`'s entries: those LOADED charged to `uid` (UINT32_MAX: anyone's), and FULL ones. */
static size_t tables_of(const struct unwind_store *s, uint32_t uid, size_t *full)
{
	size_t n = 0;

	*full = 0;
	for (size_t i = 0; i < s->files.len; i++) {
		const struct unwind_store_file *f = &s->files.data[i];

		n += f->status == UNWIND_FILE_LOADED && (uid == UINT32_MAX || f->id.uid == uid);
		*full += f->status == UNWIND_FILE_FULL;
	}
	return n;
}

/*
 * S2 review, finding 3: the BPF file map (unwind_files, 16384 entries) had
 * no share: one user's thousands of tiny files, far below its share of
 * slots, took every entry, and every other user's tables were LOADED but
 * never published. A user's tables now hold at most a quarter of the
 * map's entries (unwind_store_limit_files): past it, FULL for its share,
 * and another user with room takes what it was refused. The store holds no
 * more tables than the map's entries: one more is FULL for room, and
 * evicting makes it an entry (not slots: there are plenty).
 */
static void a_users_tables_take_at_most_a_quarter_of_the_file_map(void)
{
	map_entries_t maps = { 0 };
	struct unwind_store s;
	size_t loaded, full, refused, share;

	CHECK_EQ_INT(proc_maps_read("/proc", getpid(), &maps), 0);
	unwind_store_init(&s, NULL, 1u << 22);
	add_all_mappings(&s, &maps, 1000, &full);
	loaded = tables_of(&s, UINT32_MAX, &full);
	unwind_store_free(&s);
	CHECK(loaded >= 4);
	share = (loaded + 1) / 2; /* the rest fits a share too */
	unwind_store_init(&s, NULL, 1u << 22);
	unwind_store_share_by_owner(&s);
	unwind_store_limit_files(&s, 4 * share);
	add_all_mappings(&s, &maps, 1000, &refused);
	CHECK_EQ_INT(tables_of(&s, 1000, &full), share);
	CHECK_EQ_INT(full, loaded - share);
	for (size_t i = 0; i < s.files.len; i++)
		if (s.files.data[i].status == UNWIND_FILE_FULL)
			CHECK(unwind_store_over_share(&s, &s.files.data[i]));
	/* User 1001 takes what 1000 was refused, within its own quarter. */
	add_all_mappings(&s, &maps, 1001, &refused);
	CHECK_EQ_INT(tables_of(&s, 1001, &full), loaded - share);
	CHECK_EQ_INT(full, 0);
	unwind_store_free(&s);
	/* Root's (exempt from shares) fill the map, one short: the last waits for an entry. */
	unwind_store_init(&s, NULL, 1u << 22);
	unwind_store_share_by_owner(&s);
	unwind_store_limit_files(&s, loaded - 1);
	add_all_mappings(&s, &maps, 0, &refused);
	CHECK_EQ_INT(tables_of(&s, UINT32_MAX, &full), loaded - 1);
	CHECK_EQ_INT(full, 1);
	for (size_t i = 0; i < s.files.len; i++)
		s.files.data[i].loaded_at = 1;
	for (size_t i = 0; i < s.files.len; i++) {
		const struct unwind_store_file *f = &s.files.data[i];

		if (f->status != UNWIND_FILE_FULL)
			continue;
		CHECK(s.slots.len + f->want_slots <= s.max_slots &&
		      !unwind_store_over_share(&s, f));
		CHECK(unwind_store_evict_for(&s, f, 100ull * 1000000000ull));
		CHECK_EQ_INT(s.stats.evicted, 1);
		break;
	}
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

/*
 * A user's file (a copy at `mine`, a mkstemp template, the caller's to
 * unlink) mapped (PENDING, handed over), then completed with a table of
 * three rows `npages` code pages apart end to end: its status, or -1.
 */
static int three_rows_over(struct unwind_store *s, char *mine, uint32_t npages)
{
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
	char a[] = "/tmp/bpfprof-sparse-XXXXXX", b[] = "/tmp/bpfprof-sparse-XXXXXX";
	struct unwind_store s;
	size_t used;

	unwind_store_init(&s, NULL, 1u << 20);
	unwind_store_share_by_owner(&s);
	s.defer = defer_take;
	CHECK_EQ_INT(three_rows_over(&s, a, 3 + 64), UNWIND_FILE_LOADED);
	used = s.slots.len;
	CHECK(used > 64);
	CHECK_EQ_INT(charged_to(&s, 1000), used);
	CHECK_EQ_INT(three_rows_over(&s, b, 100000), UNWIND_FILE_OVER_BUDGET);
	CHECK_EQ_INT(charged_to(&s, 1000), used);
	CHECK_EQ_INT(s.slots.len, used);
	unwind_store_free(&s);
	unlink(a);
	unlink(b);
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
 * A store whose quarter holds the rules of the user's copy at `mine`
 * (nrules), user 1000's quarter spent, and the copy mapped by user 1000:
 * its entry (FULL); NULL when /tmp is noexec (said).
 */
static const struct unwind_store_file *refused_for_rules(struct unwind_store *s, char *mine,
							 size_t nrules)
{
	const struct unwind_store_file *f;

	store_of_rules(s, 4 * nrules);
	spend_rules(s, 1000, nrules);
	f = map_path_as(s, mine, 1000);
	if (!f) {
		fprintf(stderr, "  /tmp is noexec: not tried\n");
		return NULL;
	}
	CHECK(f->status == UNWIND_FILE_FULL && f->want_rules);
	CHECK_EQ_INT(s->stats.rules_full, 1);
	CHECK_EQ_INT(s->stats.files[UNWIND_FILE_FULL], 1);
	return f;
}

/*
 * Review of issue 38's compact rows: a file refused because its payer had
 * no rule room left is taken by another user with room who maps it (it
 * was FULL for everyone until a rebuild), and is not built again for its
 * payer, neither when mapped again nor after compacting (each build failed
 * again, up to a second of CPU).
 */
static void a_file_refused_for_rules_is_taken_by_a_user_with_rule_room(void)
{
	const struct unwind_store_file *f;
	struct unwind_store s;
	char mine[] = "/tmp/bpfprof-rules-XXXXXX";
	size_t nrules = rules_of_a_users_copy(mine);

	f = refused_for_rules(&s, mine, nrules);
	if (!f)
		goto out;
	/* Its payer again, then after compacting: not built again. */
	f = map_path_as(&s, mine, 1000);
	CHECK(f && f->status == UNWIND_FILE_FULL);
	CHECK_EQ_INT(unwind_store_compact(&s), 0);
	spend_rules(&s, 1000, nrules); /* as if in tables kept */
	f = map_path_as(&s, mine, 1000);
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
/*
 * Issue 38: a file refused for its rules is PENDING again when rules may
 * have come back (unwind_store_retry_now: the loader compacts the store
 * after evictions, which gives back the evicted tables' rules), built once
 * more when next met, and counted once.
 */
static void a_file_refused_for_rules_is_tried_again_once_rules_return(void)
{
	char mine[] = "/tmp/bpfprof-rules-XXXXXX";
	struct unwind_store s;
	const struct unwind_store_file *f =
		refused_for_rules(&s, mine, rules_of_a_users_copy(mine));

	if (!f)
		goto out;
	unwind_store_retry_now(&s, f);
	CHECK(f->status == UNWIND_FILE_PENDING && f->retry);
	/* Its user's rules given back (as compacting does with its evicted tables'). */
	spend_rules(&s, 1000, 0);
	s.user_rules = 0;
	f = map_path_as(&s, mine, 1000);
	CHECK(f && f->status == UNWIND_FILE_LOADED && !f->retry);
	CHECK_EQ_INT(s.stats.files[UNWIND_FILE_FULL], 0);
	CHECK_EQ_INT(s.stats.rules_full, 0);
out:
	unwind_store_free(&s);
	unlink(mine);
}

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
 * compaction from the tables kept, so that those of tables gone return, with
 * their users' count (two users at their quarter held every other user's
 * new rules out for the whole recording). A file kept keeps its rules.
 */
static void compacting_gives_back_the_rules_of_tables_gone(void)
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
	/* Compacted: 1000's file kept, its rules only, counted as its user's. */
	CHECK_EQ_INT(unwind_store_compact(&s), 0);
	f = unwind_store_find(&s, key.dev, key.ino);
	CHECK(f && f->status == UNWIND_FILE_LOADED);
	CHECK_EQ_INT(s.rules.len, nrules + 1);
	CHECK(f && sum_of_rules(&s, f) == sum);
	CHECK_EQ_INT(s.user_rules, nrules);
	/* Evicted: its rules go with it at the next compaction. */
	if (f)
		store_evict(&s, entry_of(&s, f), 0);
	CHECK_EQ_INT(unwind_store_compact(&s), 0);
	f = unwind_store_find(&s, key.dev, key.ino);
	CHECK(f && f->status == UNWIND_FILE_FULL && f->evicted);
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
	RUN(a_users_tables_take_at_most_a_quarter_of_the_file_map);
	RUN(a_system_file_past_a_users_share_is_loaded_as_the_systems);
	RUN(a_sparse_file_is_over_budget_not_a_share_of_empty_pages);
	RUN(a_users_files_add_at_most_a_quarter_of_the_rules);
	RUN(a_file_refused_for_rules_is_taken_by_a_user_with_rule_room);
	RUN(a_file_refused_for_rules_is_tried_again_once_rules_return);
	RUN(compacting_gives_back_the_rules_of_tables_gone);
	return test_summary();
}
