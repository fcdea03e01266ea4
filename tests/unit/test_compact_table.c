// SPDX-License-Identifier: BSD-2-Clause
/*
 * The compact unwind layout (unwind/compact_table.c): on every fixture ELF
 * and this machine's libc and vDSO, the rule compact_lookup finds is the row
 * cfi_table_lookup finds, at each row's first byte and the bytes either
 * side, and at 10k random addresses; page edges, pages without rows and the
 * rule that enters a page from the one before; a row at every byte of a
 * page fits, rows out of order are refused (INVALID), and rules past the
 * store's or a file's room (FULL), adding none. No BPF, no root.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbols/vdso.h"
#include "test.h"
#include "unwind/compact_table.h"
#include "unwind/file_table.h"
#include "util/elf_open.h"

/* The rule a cfi_table row says (NONE, whatever its offsets, is rule 0's). */
static struct unwind_rule expected(const struct cfi_row *r)
{
	if (!r || r->cfa == UNWIND_CFA_NONE)
		return (struct unwind_rule){ 0 };
	return (struct unwind_rule){ .cfa_offset = r->cfa_offset,
				     .fp_offset = r->fp_offset,
				     .rules = UNWIND_RULES(r->cfa, r->fp, r->plt_threshold) };
}

static int mismatches;

/* compact_lookup at addr against the cfi table's row in force there. */
static void check_at(const struct cfi_table *t, const struct compact_view *v, uint64_t addr)
{
	struct unwind_rule want = expected(cfi_table_lookup(t, addr)), got, at_lo, at_hi;
	uint64_t lo, hi;
	uint16_t index;

	if (!compact_lookup(v, addr, &got, &index, &lo, &hi)) {
		/* Outside the pages: before the first row, or after the last (a gap's NONE row). */
		if (want.rules)
			mismatches++;
		return;
	}
	if (memcmp(&want, &got, sizeof(want)) || addr < lo || addr >= hi ||
	    (lo >> UNWIND_CODE_PAGE_SHIFT) != (addr >> UNWIND_CODE_PAGE_SHIFT) ||
	    (hi - 1) >> UNWIND_CODE_PAGE_SHIFT != addr >> UNWIND_CODE_PAGE_SHIFT) {
		if (mismatches < 5)
			fprintf(stderr, "at %#lx: want %d/%d/%#x got %d/%d/%#x [%#lx, %#lx)\n",
				(unsigned long)addr, want.cfa_offset, want.fp_offset, want.rules,
				got.cfa_offset, got.fp_offset, got.rules, (unsigned long)lo,
				(unsigned long)hi);
		mismatches++;
		return;
	}
	/* The range is the rule's: its both ends say the same. */
	at_lo = expected(cfi_table_lookup(t, lo));
	at_hi = expected(cfi_table_lookup(t, hi - 1));
	if (memcmp(&want, &at_lo, sizeof(want)) || memcmp(&want, &at_hi, sizeof(want)))
		mismatches++;
}

/* Lay the table out as the store does: its pages, then its rows two a slot. */
static union unwind_slot *lay_out(const struct compact_table *c)
{
	union unwind_slot *slots =
		calloc(compact_table_slots(c->npages, c->nrows) + 1, sizeof(*slots));

	if (!slots)
		return NULL;
	memcpy(slots, c->pages, c->npages * sizeof(*c->pages));
	memcpy(slots[c->npages].row, c->rows, c->nrows * sizeof(*c->rows));
	return slots;
}

/* compact == cfi at every row's edges and 10k random addresses of the table `t`. */
static void compare(const char *name, const struct cfi_table *t, struct compact_rules *rules)
{
	struct compact_table c;
	union unwind_slot *slots;
	struct compact_view v;
	uint64_t first, last;
	size_t empty = 0;

	CHECK(t->len > 0);
	if (!t->len)
		return;
	CHECK_EQ_INT(compact_table_build(t, rules, SIZE_MAX, &c), 0);
	slots = lay_out(&c);
	CHECK(slots != NULL);
	if (!slots)
		return;
	v = compact_view_of(slots, c.base, c.npages, rules->data);
	mismatches = 0;
	first = t->rows[0].pc;
	last = t->rows[t->len - 1].pc;
	for (size_t i = 0; i < t->len; i++)
		for (int d = -1; d <= 1; d++)
			check_at(t, &v, t->rows[i].pc + (uint64_t)(int64_t)d);
	srandom(38);
	for (int i = 0; i < 10000; i++)
		check_at(t, &v, first - 64 + (uint64_t)random() % (last - first + 128));
	/* Each page's first and last byte, and the bytes either side of its start. */
	for (uint32_t p = 0; p < c.npages; p++) {
		uint64_t start = c.base + ((uint64_t)p << UNWIND_CODE_PAGE_SHIFT);

		check_at(t, &v, start - 1);
		check_at(t, &v, start);
		check_at(t, &v, start + UNWIND_CODE_PAGE_SIZE - 1);
		empty += !c.pages[p].nrows;
	}
	CHECK_EQ_INT(mismatches, 0);
	fprintf(stderr, "%s: %zu rows, %u pages (%zu without rows), %zu rules so far\n", name,
		t->len, c.npages, empty, rules->len);
	free(slots);
	compact_table_free(&c);
}

/* The table of the ELF file at `path`, as the store builds it (CFI under Go's rows). */
static void compare_file(const char *path, struct compact_rules *rules)
{
	struct unwind_built b;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	CHECK_EQ_INT(unwind_file_build(elf_open_fd(fd), &cfi_default_budget, &b), 0);
	CHECK_EQ_INT(b.status, UNWIND_FILE_LOADED);
	if (b.status == UNWIND_FILE_LOADED)
		compare(path, &b.t, rules);
	unwind_built_free(&b);
	close(fd);
}

/* This process's libc, where /proc/self/maps says it is. */
static void libc_path(char *out, size_t size)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");

	out[0] = 0;
	while (f && fgets(line, sizeof(line), f)) {
		char *path = strchr(line, '/');

		if (path && strstr(path, "/libc.so")) {
			path[strcspn(path, "\n")] = 0;
			snprintf(out, size, "%s", path);
			break;
		}
	}
	if (f)
		fclose(f);
}

static void fixtures_agree(void)
{
	const char *paths[] = {
		CFI_FIX,   CFI_FIX_NOPIE, NOFP, NOFP_CPP, STATIC_BINARY,
#ifdef GO_BINARY
		GO_BINARY,
#endif
	};
	struct compact_rules rules;
	char libc[512];

	CHECK_EQ_INT(compact_rules_init(&rules, NULL, UNWIND_MAX_RULES), 0);
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		compare_file(paths[i], &rules);
	libc_path(libc, sizeof(libc));
	CHECK(libc[0] != 0);
	if (libc[0])
		compare_file(libc, &rules);
	compact_rules_free(&rules);
}

static void vdso_agrees(void)
{
	struct compact_rules rules;
	struct unwind_built b;
	void *image;
	size_t size;

	if (vdso_copy(&image, &size)) {
		fprintf(stderr, "no vDSO here: skipped\n");
		return;
	}
	CHECK_EQ_INT(compact_rules_init(&rules, NULL, UNWIND_MAX_RULES), 0);
	CHECK_EQ_INT(unwind_file_build(elf_memory(image, size), &cfi_default_budget, &b), 0);
	if (b.status == UNWIND_FILE_LOADED)
		compare("[vdso]", &b.t, &rules);
	unwind_built_free(&b);
	compact_rules_free(&rules);
	free(image);
}

static struct cfi_row row_at(uint64_t pc, int32_t cfa_offset)
{
	return (struct cfi_row){ .pc = pc, .cfa = UNWIND_CFA_SP, .cfa_offset = cfa_offset };
}

/*
 * Rows on both sides of page edges, a rule that holds across three pages
 * without rows (each enters with it), a row at a page's first byte and one
 * at its last, a NONE gap, and the table's edges.
 */
static void page_edges(void)
{
	const uint64_t P = UNWIND_CODE_PAGE_SIZE, B = 0x400000;
	struct cfi_row rows[] = {
		row_at(B + 0x10, 8),
		row_at(B + P - 1, 16),	  /* the page's last byte */
		row_at(B + P, 24),	  /* the next page's first */
		row_at(B + P + 0x20, 32), /* holds through pages 2, 3 and 4 */
		row_at(B + 5 * P + 0x8, 40),
		{ .pc = B + 5 * P + 0x100, .cfa = UNWIND_CFA_NONE, .cfa_offset = 99 },
		row_at(B + 6 * P - 2, 48),
	};
	struct cfi_table t = { .rows = rows, .len = sizeof(rows) / sizeof(rows[0]) };
	struct compact_rules rules;
	struct compact_table c;
	union unwind_slot *slots;
	struct compact_view v;
	struct unwind_rule r;
	uint64_t lo, hi;
	uint16_t index;

	CHECK_EQ_INT(compact_rules_init(&rules, NULL, UNWIND_MAX_RULES), 0);
	CHECK_EQ_INT(compact_table_build(&t, &rules, SIZE_MAX, &c), 0);
	CHECK_EQ_INT(c.base, B);
	CHECK_EQ_INT(c.npages, 6);
	/* The row at page 1's first byte is its entry rule, not a row. */
	CHECK_EQ_INT(c.nrows, t.len - 1);
	CHECK_EQ_INT(c.pages[1].nrows, 1);
	CHECK_EQ_INT(c.pages[2].nrows + c.pages[3].nrows + c.pages[4].nrows, 0);
	slots = lay_out(&c);
	v = compact_view_of(slots, c.base, c.npages, rules.data);
	/* Before the first row of page 0: no rule (NONE), from the page's start. */
	CHECK(compact_lookup(&v, B, &r, &index, &lo, &hi));
	CHECK(index == 0 && lo == B && hi == B + 0x10);
	/* The last byte's row covers one byte; the next page starts with its own row. */
	CHECK(compact_lookup(&v, B + P - 1, &r, &index, &lo, &hi));
	CHECK(r.cfa_offset == 16 && lo == B + P - 1 && hi == B + P);
	CHECK(compact_lookup(&v, B + P, &r, &index, &lo, &hi));
	CHECK(r.cfa_offset == 24 && lo == B + P && hi == B + P + 0x20);
	/* A rule holds into pages without rows, each its own range (a page at most). */
	CHECK(compact_lookup(&v, B + 3 * P + 5, &r, &index, &lo, &hi));
	CHECK(r.cfa_offset == 32 && lo == B + 3 * P && hi == B + 4 * P);
	CHECK(compact_lookup(&v, B + 5 * P + 7, &r, &index, &lo, &hi));
	CHECK(r.cfa_offset == 32 && lo == B + 5 * P && hi == B + 5 * P + 8);
	/* A NONE row is rule 0, whatever its offsets. */
	CHECK(compact_lookup(&v, B + 5 * P + 0x100, &r, &index, &lo, &hi));
	CHECK(index == 0 && r.rules == 0 && r.cfa_offset == 0);
	/* The last row holds to its page's end; past it and before base, no page. */
	CHECK(compact_lookup(&v, B + 6 * P - 1, &r, &index, &lo, &hi));
	CHECK(r.cfa_offset == 48 && hi == B + 6 * P);
	CHECK(!compact_lookup(&v, B + 6 * P, &r, &index, &lo, &hi));
	CHECK(!compact_lookup(&v, B - 1, &r, &index, &lo, &hi));
	/* Equal rules are kept once: 6 distinct, plus NONE. */
	CHECK_EQ_INT(rules.len, 7);
	/*
	 * Within the pages, the table's rule everywhere. (Past the last row's
	 * page there is none, where cfi_table_lookup keeps the last row: real
	 * tables end with a gap's NONE row, stepped with the frame pointer
	 * either way, as check_at asks on the fixtures.)
	 */
	mismatches = 0;
	for (uint64_t a = B - 2; a < B + 6 * P; a += 7)
		check_at(&t, &v, a);
	CHECK_EQ_INT(mismatches, 0);
	free(slots);
	compact_table_free(&c);
	/* Too big for the slots it may take: nothing built. */
	CHECK_EQ_INT(compact_table_build(&t, &rules, 6 + 3, &c), -E2BIG);
	CHECK_EQ_INT(compact_table_build(&t, &rules, 6 + 4, &c), 0);
	compact_table_free(&c);
	compact_rules_free(&rules);
}

/*
 * A page's rows are a u16: a row at every byte of a page (65536, a crafted
 * FDE or push/pop pairs by the thousand) fits, its first byte's row the
 * page's entry rule, each byte's rule the table's. Rows out of order, which
 * could need more, are refused (INVALID), adding no rule.
 */
static void a_row_at_every_byte_fits_rows_out_of_order_do_not(void)
{
	struct cfi_row *rows = calloc(65536 + 2, sizeof(*rows));
	struct cfi_table t = { .rows = rows, .len = 65536 + 2 };
	struct compact_rules rules;
	struct compact_table c;
	union unwind_slot *slots;
	struct compact_view v;

	CHECK_EQ_INT(compact_rules_init(&rules, NULL, UNWIND_MAX_RULES), 0);
	/* Page 1 whole, and a row on either side of it. */
	rows[0] = row_at(0xfff0, 40);
	for (int i = 0; i < 65536; i++)
		rows[i + 1] = row_at(0x10000 + (uint64_t)i, 8 + 8 * (i & 1));
	rows[65537] = row_at(0x20004, 48);
	CHECK_EQ_INT(compact_table_build(&t, &rules, SIZE_MAX, &c), 0);
	CHECK_EQ_INT(c.npages, 3);
	CHECK_EQ_INT(c.pages[1].nrows, 65535);
	CHECK_EQ_INT(c.nrows, 65535 + 2);
	slots = lay_out(&c);
	v = compact_view_of(slots, c.base, c.npages, rules.data);
	mismatches = 0;
	for (uint64_t a = 0xffe0; a < 0x20010; a++)
		check_at(&t, &v, a);
	CHECK_EQ_INT(mismatches, 0);
	free(slots);
	compact_table_free(&c);
	compact_rules_free(&rules);
	/* Two rows at one PC, then one before: refused, no rule kept. */
	CHECK_EQ_INT(compact_rules_init(&rules, NULL, UNWIND_MAX_RULES), 0);
	rows[2].pc = rows[1].pc;
	CHECK_EQ_INT(compact_table_build(&t, &rules, SIZE_MAX, &c), -EINVAL);
	CHECK(c.pages == NULL && c.rows == NULL);
	CHECK_EQ_INT(rules.len, 1);
	rows[2].pc = rows[1].pc - 1;
	CHECK_EQ_INT(compact_table_build(&t, &rules, SIZE_MAX, &c), -EINVAL);
	compact_rules_free(&rules);
	free(rows);
}

/*
 * Rules past what the store holds, or past what one file may add, refuse
 * the file and add none of its rules: the next file finds the room it left.
 */
static void rule_overflow_adds_nothing(void)
{
	struct cfi_row rows[64];
	struct cfi_table t = { .rows = rows, .len = 64 };
	struct compact_rules rules;
	struct compact_table c;

	for (int i = 0; i < 64; i++)
		rows[i] = row_at(0x1000 + 16 * (uint64_t)i, 8 * (i + 1));
	/* The store's room: NONE and 40 more. */
	CHECK_EQ_INT(compact_rules_init(&rules, NULL, 41), 0);
	CHECK_EQ_INT(compact_table_build(&t, &rules, SIZE_MAX, &c), -ENOSPC);
	CHECK_EQ_INT(rules.len, 1);
	CHECK_EQ_INT(rules.index.len, 0);
	t.len = 40;
	CHECK_EQ_INT(compact_table_build(&t, &rules, SIZE_MAX, &c), 0);
	CHECK_EQ_INT(rules.len, 41);
	compact_table_free(&c);
	/* The same rules again: nothing new, it fits a full store. */
	CHECK_EQ_INT(compact_table_build(&t, &rules, SIZE_MAX, &c), 0);
	compact_table_free(&c);
	compact_rules_free(&rules);
	/* A file's room: 32 new ones. */
	CHECK_EQ_INT(compact_rules_init(&rules, NULL, UNWIND_MAX_RULES), 0);
	rules.file_max = 32;
	t.len = 33;
	CHECK_EQ_INT(compact_table_build(&t, &rules, SIZE_MAX, &c), -ENOSPC);
	CHECK_EQ_INT(rules.len, 1);
	t.len = 32;
	CHECK_EQ_INT(compact_table_build(&t, &rules, SIZE_MAX, &c), 0);
	compact_table_free(&c);
	/* Another file: its own 32. */
	t.rows = rows + 32;
	CHECK_EQ_INT(compact_table_build(&t, &rules, SIZE_MAX, &c), 0);
	CHECK_EQ_INT(rules.len, 65);
	compact_table_free(&c);
	compact_rules_free(&rules);
}

int main(void)
{
	elf_version(EV_CURRENT);
	RUN(page_edges);
	RUN(a_row_at_every_byte_fits_rows_out_of_order_do_not);
	RUN(rule_overflow_adds_nothing);
	RUN(fixtures_agree);
	RUN(vdso_agrees);
	return test_summary();
}
