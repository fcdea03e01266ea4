// SPDX-License-Identifier: BSD-2-Clause
/*
 * The unwind table store (unwind/table_store.c): files by device and inode,
 * loaded once, their rows packed for the BPF unwinder and equal to the
 * table's; the load bias of PIE and non-PIE executables; files without CFI,
 * not ELF, or too big for the capacity; the vDSO's own table. No BPF, no root.
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

#include "symbols/elf_symtab.h"
#include "symbols/proc_maps.h"
#include "symbols/vdso.h"
#include "test.h"
#include "unwind_store_add.h"
#include "unwind/cfi_table.h"
#include "unwind/table_store.h"
#include "unwind/table_store_impl.h"

static void rows_are_the_tables(void)
{
	struct unwind_store s;
	const struct unwind_store_file *f;
	struct cfi_table t;
	Elf *elf;
	int fd;

	unwind_store_init(&s, NULL, 1u << 20);
	f = add_path(&s, CFI_FIX);
	CHECK(f && f->status == UNWIND_FILE_LOADED);
	fd = open(CFI_FIX, O_RDONLY | O_CLOEXEC);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	CHECK_EQ_INT(cfi_table_build(elf, &t), 0);
	if (f && f->status == UNWIND_FILE_LOADED) {
		struct compact_view v = unwind_store_view(&s, f);

		CHECK_EQ_INT(f->info.first_slot, 0);
		/* Rows at a page's first byte are its entry rule, not rows. */
		CHECK(f->nrows <= t.len && f->nrows + f->info.npages >= t.len);
		CHECK_EQ_INT(f->nslots, compact_table_slots(f->info.npages, f->nrows));
		/* A PIE's text segment sits at its file offset. */
		CHECK_EQ_INT(f->info.bias, 0);
		/* Each row's rule from its first byte on, as the store's view finds it. */
		for (size_t i = 0; i < t.len && i < f->nrows; i++) {
			struct unwind_rule r;
			uint64_t lo, hi;
			uint16_t index;

			CHECK(compact_lookup(&v, t.rows[i].pc, &r, &index, &lo, &hi));
			CHECK_EQ_INT(lo, t.rows[i].pc);
			if (t.rows[i].cfa == UNWIND_CFA_NONE) {
				CHECK_EQ_INT(index, 0);
				continue;
			}
			CHECK_EQ_INT(r.cfa_offset, t.rows[i].cfa_offset);
			CHECK_EQ_INT(r.fp_offset, t.rows[i].fp_offset);
			CHECK_EQ_INT(UNWIND_RULE_CFA(r.rules), t.rows[i].cfa);
			CHECK_EQ_INT(UNWIND_RULE_FP(r.rules), t.rows[i].fp);
			CHECK_EQ_INT(UNWIND_RULE_PLT(r.rules), t.rows[i].plt_threshold);
		}
	}
	cfi_table_free(&t);
	elf_end(elf);
	close(fd);
	unwind_store_free(&s);
}

static void files_are_loaded_once_and_found_by_dev_and_inode(void)
{
	struct unwind_store s;
	const struct unwind_store_file *a, *b, *again;
	struct stat st;
	size_t slots;

	unwind_store_init(&s, NULL, 1u << 20);
	a = add_path(&s, CFI_FIX);
	slots = s.slots.len;
	b = add_path(&s, CFI_FIX_NOPIE);
	CHECK(a && b);
	if (!a || !b)
		goto out;
	/* The second file's run follows the first's. */
	CHECK_EQ_INT(b->status, UNWIND_FILE_LOADED);
	CHECK_EQ_INT(b->info.first_slot, slots);
	/* Linked at 0x400000: its text's address is its offset plus that. */
	CHECK_EQ_INT(b->info.bias, 0x400000);
	again = add_path(&s, CFI_FIX);
	CHECK(again != NULL && again->info.first_slot == 0);
	CHECK_EQ_INT(s.files.len, 2);
	CHECK_EQ_INT(s.stats.files[UNWIND_FILE_LOADED], 2);
	CHECK(stat(CFI_FIX, &st) == 0);
	CHECK(unwind_store_find(&s, unwind_kernel_dev(major(st.st_dev), minor(st.st_dev)),
				st.st_ino) == &s.files.data[0]);
	/* An inode no file here has (ino + 1 was the second fixture's in one CI clone). */
	CHECK(unwind_store_find(&s, unwind_kernel_dev(major(st.st_dev), minor(st.st_dev)),
				UNWIND_VDSO_INO - 1) == NULL);
out:
	unwind_store_free(&s);
}

static void files_without_cfi_not_elf_or_too_big(void)
{
	struct unwind_store s;
	const struct unwind_store_file *f;

	unwind_store_init(&s, NULL, 8);
	f = add_path(&s, CFI_FIX);
	CHECK(f && f->status == UNWIND_FILE_FULL);
	CHECK_EQ_INT(s.slots.len, 0);
	unwind_store_free(&s);

	unwind_store_init(&s, NULL, 1u << 20);
	f = add_path(&s, CFI_FIX_NO_CFI);
	CHECK(f && f->status == UNWIND_FILE_NO_CFI);
	f = add_path(&s, CFI_FIX_SOURCE);
	CHECK(f && f->status == UNWIND_FILE_INVALID);
	CHECK_EQ_INT(s.slots.len, 0);
	CHECK_EQ_INT(s.stats.files[UNWIND_FILE_NO_CFI], 1);
	CHECK_EQ_INT(s.stats.files[UNWIND_FILE_INVALID], 1);
	unwind_store_free(&s);
}

/* Copy file `from` over `to` in place (same inode, new contents). */
static void overwrite(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY | O_CLOEXEC), out = open(to, O_WRONLY | O_TRUNC | O_CLOEXEC);
	ssize_t n;

	CHECK(in >= 0 && out >= 0);
	while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
		CHECK(write(out, buf, (size_t)n) == n);
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
}

/*
 * (dev, inode) alone is not a file (issue 27): a deleted binary's inode is
 * reused, a library is rewritten in place. Another file under the same
 * (dev, inode) gets its own table, not the old one's.
 */
static void another_file_under_the_same_inode_is_built_again(void)
{
	char path[] = "/tmp/bpfprof-test-store-XXXXXX";
	const struct unwind_store_file *f;
	struct unwind_store s;
	struct stat before, after;
	uint32_t nslots;
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	close(fd);
	unwind_store_init(&s, NULL, 1u << 20);
	overwrite(CFI_FIX_NOPIE, path);
	f = add_path(&s, path);
	CHECK(f && f->status == UNWIND_FILE_LOADED && f->info.bias == 0x400000);
	nslots = f ? f->nslots : 0;
	CHECK(stat(path, &before) == 0);
	/* The same file again: not read again. */
	f = add_path(&s, path);
	CHECK(f && f->info.first_slot == 0 && s.slots.len == nslots);
	overwrite(CFI_FIX, path);
	CHECK(stat(path, &after) == 0);
	CHECK_EQ_INT(after.st_ino, before.st_ino);
	f = add_path(&s, path);
	/* The PIE's table now: its own rows after the old ones, its own bias. */
	CHECK(f && f->status == UNWIND_FILE_LOADED);
	if (f) {
		CHECK_EQ_INT(f->info.first_slot, nslots);
		CHECK_EQ_INT(f->info.bias, 0);
	}
	CHECK_EQ_INT(s.files.len, 1);
	unwind_store_free(&s);
	unlink(path);
}

/* The rule in force at every 16th byte of `f`'s pages, hashed: what its lookups find. */
static uint64_t lookups_of(const struct unwind_store *s, const struct unwind_store_file *f)
{
	struct compact_view v = unwind_store_view(s, f);
	uint64_t sum = 0, lo, hi;
	struct unwind_rule r;
	uint16_t index;

	for (uint64_t a = f->info.base; a < f->info.base + ((uint64_t)f->info.npages << 16);
	     a += 16)
		if (compact_lookup(&v, a, &r, &index, &lo, &hi))
			sum = sum * 31 + (uint32_t)r.cfa_offset * 7 + (uint16_t)r.fp_offset * 3 +
			      r.rules;
	return sum;
}

/*
 * Issue 38: compacting moves the tables kept down over the slots of one
 * evicted (nothing built again, the same lookups, the rules of the one
 * gone given back), and the evicted one's entry stays, FULL and evicted,
 * its size kept: the next process that maps it queues it again.
 */
static void compacting_moves_the_tables_kept_down_over_those_evicted(void)
{
	struct unwind_store s;
	struct unwind_store_file *a;
	const struct unwind_store_file *b;
	struct unwind_file_key key = { 0 };
	uint32_t nslots_a = 0, nslots_b = 0;
	uint64_t built, sum = 0;

	unwind_store_init(&s, NULL, 1u << 20);
	a = (struct unwind_store_file *)add_path(&s, CFI_FIX);
	key = a ? a->key : key;
	b = add_path(&s, CFI_FIX_NOPIE);
	/* b's entry may have moved a's. */
	a = a ? (struct unwind_store_file *)unwind_store_find(&s, key.dev, key.ino) : NULL;
	CHECK(a && b && a->status == UNWIND_FILE_LOADED && b->status == UNWIND_FILE_LOADED);
	if (!a || !b || a->status != UNWIND_FILE_LOADED || b->status != UNWIND_FILE_LOADED)
		goto out;
	nslots_a = a->nslots;
	nslots_b = b->nslots;
	CHECK_EQ_INT(b->info.first_slot, nslots_a);
	sum = lookups_of(&s, b);
	built = s.stats.files[UNWIND_FILE_LOADED];
	store_evict(&s, a, 0);
	CHECK_EQ_INT(s.alloc.held_slots, nslots_a);
	CHECK_EQ_INT(unwind_store_compact(&s), 0);
	CHECK_EQ_INT(s.alloc.held_slots, 0);
	CHECK_EQ_INT(s.slots.len, nslots_b);
	CHECK_EQ_INT(b->info.first_slot, 0);
	CHECK_EQ_INT(b->info.bias, 0x400000);
	CHECK(lookups_of(&s, b) == sum);
	CHECK_EQ_INT(s.stats.files[UNWIND_FILE_LOADED], built); /* moved, not built */
	CHECK_EQ_INT(s.stats.evicted, 1);
	CHECK(a->status == UNWIND_FILE_FULL && a->evicted && a->want_slots == nslots_a);
	/* Added again: built again, after b. */
	b = add_path(&s, CFI_FIX);
	CHECK(b && b->status == UNWIND_FILE_LOADED && b->info.first_slot == nslots_b &&
	      !b->evicted);
out:
	unwind_store_free(&s);
}

/* A new identity for `path` (same inode): its mtime set to `sec`. */
static void retouch(const char *path, long sec)
{
	struct timespec t[2] = { { sec, 0 }, { sec, 0 } };

	CHECK(utimensat(AT_FDCWD, path, t, 0) == 0);
}

/*
 * Issue 27: a file replaced under its (dev, inode) leaves its old rows
 * dead, counted for compacting to win back; a file refused as FULL is built
 * again after compacting (not FULL for the rest of the run); and one whose
 * identity changes more than UNWIND_STORE_MAX_CHANGES times a minute is
 * not built again: frame pointers, until the minute is over.
 */
static void replaced_rows_are_dead_full_is_not_kept_churn_is_refused(void)
{
	char path[] = "/tmp/bpfprof-test-store-XXXXXX";
	const struct unwind_store_file *f;
	struct unwind_store s;
	uint32_t nslots = 0;
	uint64_t built;
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	close(fd);
	overwrite(CFI_FIX_NOPIE, path);
	nslots = slots_of(path);
	CHECK(nslots > 0);
	/* Room for two tables of it. */
	unwind_store_init(&s, NULL, 2 * (size_t)nslots + nslots / 2);
	retouch(path, 1000);
	f = add_path(&s, path);
	CHECK(f && f->status == UNWIND_FILE_LOADED);
	retouch(path, 1001);
	f = add_path(&s, path);
	CHECK(f && f->status == UNWIND_FILE_LOADED);
	CHECK_EQ_INT(s.alloc.held_slots, nslots);
	retouch(path, 1002);
	f = add_path(&s, path);
	CHECK(f && f->status == UNWIND_FILE_FULL);
	CHECK_EQ_INT(s.alloc.held_slots, 2 * (size_t)nslots);
	/*
	 * Compacting wins the dead slots back (no table evicted for them), and
	 * the FULL file is built again.
	 */
	CHECK(f && unwind_store_evict_for(&s, f, 1000ull * 1000000000ull));
	CHECK_EQ_INT(s.stats.evicted, 0);
	CHECK_EQ_INT(unwind_store_compact(&s), 0);
	CHECK_EQ_INT(s.alloc.held_slots, 0);
	f = add_path(&s, path);
	CHECK(f && f->status == UNWIND_FILE_LOADED);
	CHECK_EQ_INT(s.slots.len, nslots);
	/* Two changes so far this minute, two more allowed, then refused. */
	retouch(path, 1003);
	f = add_path(&s, path);
	CHECK(f && f->status == UNWIND_FILE_LOADED && !f->churning);
	retouch(path, 1004);
	f = add_path(&s, path);
	CHECK(f && f->status == UNWIND_FILE_FULL && !f->churning); /* not compacted in between */
	built = s.stats.files[UNWIND_FILE_LOADED] + s.stats.files[UNWIND_FILE_FULL];
	retouch(path, 1005);
	f = add_path(&s, path);
	CHECK(f && f->status == UNWIND_FILE_OVER_BUDGET && f->churning);
	retouch(path, 1006);
	f = add_path(&s, path);
	CHECK(f && f->status == UNWIND_FILE_OVER_BUDGET && f->churning);
	CHECK_EQ_INT(s.stats.files[UNWIND_FILE_LOADED] + s.stats.files[UNWIND_FILE_FULL], built);
	unwind_store_free(&s);
	unlink(path);
}

static int defer_calls;

/* A queue that is full the first time, then takes the file. */
static int defer_busy_once(void *ctx, const struct unwind_store_file *f, int fd, const char *path,
			   const char *link, bool stale)
{
	(void)ctx, (void)f, (void)path, (void)link, (void)stale;
	close(fd);
	return defer_calls++ ? 0 : -EBUSY;
}

/*
 * Issue 27: a file whose hand-over failed (a full queue, no memory) is not
 * PENDING for ever: the next mapping of it hands it over again, and the
 * failure is not the recording's.
 */
static void a_lost_build_is_handed_over_again(void)
{
	map_entries_t maps = { 0 };
	const struct map_entry *e = NULL;
	const struct unwind_store_file *f;
	struct unwind_store s;

	CHECK_EQ_INT(proc_maps_read("/proc", getpid(), &maps), 0);
	for (size_t i = 0; i < maps.len && !e; i++)
		if (maps.data[i].executable && maps.data[i].inode)
			e = &maps.data[i];
	CHECK(e != NULL);
	if (!e) {
		map_entries_free(&maps);
		return;
	}
	unwind_store_init(&s, NULL, 1u << 20);
	s.defer = defer_busy_once;
	defer_calls = 0;
	f = unwind_store_add_mapping(&s, (uint32_t)getpid(), (uint32_t)getuid(), e);
	CHECK(f && f->status == UNWIND_FILE_PENDING);
	CHECK_EQ_INT(defer_calls, 1);
	f = unwind_store_add_mapping(&s, (uint32_t)getpid(), (uint32_t)getuid(), e);
	CHECK(f && f->status == UNWIND_FILE_PENDING);
	CHECK_EQ_INT(defer_calls, 2);
	/* Taken now: not handed over a third time. */
	f = unwind_store_add_mapping(&s, (uint32_t)getpid(), (uint32_t)getuid(), e);
	CHECK_EQ_INT(defer_calls, 2);
	/* A build lost later (the worker's): handed over again too. */
	if (f)
		unwind_store_retry(&s, &f->key, &f->id);
	f = unwind_store_add_mapping(&s, (uint32_t)getpid(), (uint32_t)getuid(), e);
	CHECK_EQ_INT(defer_calls, 3);
	unwind_store_free(&s);
	map_entries_free(&maps);
}

/* With the caller's buffer (the mapped BPF array), rows go straight into it, and stay its own. */
static void rows_go_into_the_callers_buffer(void)
{
	static union unwind_slot buf[1024];
	struct unwind_store s;
	const struct unwind_store_file *f;

	unwind_store_init(&s, buf, 1024);
	f = add_path(&s, CFI_FIX);
	CHECK(f && f->status == UNWIND_FILE_LOADED);
	CHECK(s.slots.data == buf);
	/* Its first page holds its rows, which follow its pages. */
	if (f && f->status == UNWIND_FILE_LOADED)
		CHECK(buf[f->info.first_slot].page.nrows != 0 && s.slots.len == f->nslots &&
		      buf[f->info.first_slot + f->info.npages].row[1].pc_lo != 0);
	unwind_store_free(&s); /* does not free buf */
	unwind_store_init(&s, buf, 8);
	f = add_path(&s, CFI_FIX);
	CHECK(f && f->status == UNWIND_FILE_FULL);
	unwind_store_free(&s);
}

/*
 * The vDSO, which has no file: keyed (0, UNWIND_VDSO_INO), built from our
 * own image once, its rows covering the function a clock_gettime call runs.
 */
static void the_vdso_has_a_table_of_its_own(void)
{
	struct unwind_store s;
	const struct unwind_store_file *f, *again;
	uint64_t base = getauxval(AT_SYSINFO_EHDR);
	size_t size, size2;
	struct elf_symtab syms = { 0 };
	const struct elf_sym *sym;

	if (!base) {
		printf("   (no vDSO here: nothing to test)\n");
		return;
	}
	unwind_store_init(&s, NULL, 1u << 20);
	f = unwind_store_add_vdso(&s, &size);
	CHECK(f && f->status == UNWIND_FILE_LOADED && size > 0);
	again = unwind_store_add_vdso(&s, &size2);
	CHECK(again == f && size2 == size);
	CHECK(unwind_store_find(&s, 0, UNWIND_VDSO_INO) == f);
	CHECK_EQ_INT(s.files.len, 1);
	if (!f || f->status != UNWIND_FILE_LOADED || vdso_load(&syms))
		goto out;
	sym = elf_symtab_find(&syms, "__vdso_clock_gettime");
	CHECK(sym != NULL);
	if (sym) {
		/* The row in force inside the function has CFI, and its range holds the PC. */
		struct compact_view v = unwind_store_view(&s, f);
		uint64_t pc = sym->start + 1, lo = 0, hi = 0;
		struct unwind_rule r = { 0 };
		uint16_t index;

		CHECK(compact_lookup(&v, pc, &r, &index, &lo, &hi));
		CHECK(UNWIND_RULE_CFA(r.rules) != UNWIND_CFA_NONE && lo <= pc && pc < hi);
	}
out:
	elf_symtab_free(&syms);
	unwind_store_free(&s);
}

int main(void)
{
	elf_version(EV_CURRENT);
	CHECK_EQ_INT(unwind_kernel_dev(8, 1), (8u << 20) | 1);
	RUN(rows_are_the_tables);
	RUN(files_are_loaded_once_and_found_by_dev_and_inode);
	RUN(files_without_cfi_not_elf_or_too_big);
	RUN(rows_go_into_the_callers_buffer);
	RUN(another_file_under_the_same_inode_is_built_again);
	RUN(compacting_moves_the_tables_kept_down_over_those_evicted);
	RUN(the_vdso_has_a_table_of_its_own);
	RUN(replaced_rows_are_dead_full_is_not_kept_churn_is_refused);
	RUN(a_lost_build_is_handed_over_again);
	return test_summary();
}
