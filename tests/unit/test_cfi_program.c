// SPDX-License-Identifier: BSD-2-Clause
/*
 * The CFI programs run once (unwind/cfi_program.c, issue 27):
 *  - on real binaries, cfi_table_build's table is row for row the one
 *    libdw's dwarf_cfi_addrframe gave before (cfi_table_libdw.c), statistics
 *    included; BPFPROF_CFI_COMPARE="file file ..." compares those instead
 *    (and prints both build times);
 *  - an FDE of 300k rows costs time linear in its rows, and the budgets
 *    stop longer ones;
 *  - remember_state nests only so deep, a CIE cannot hold rows, and every
 *    instruction is bounds-checked.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cfi_table_libdw.h"
#include "test.h"
#include "unwind/cfi_clone.h"
#include "unwind/cfi_program.h"
#include "unwind/cfi_table.h"

/* This thread's CPU time: what the machine's other load does not stretch. */
static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static bool same_row(const struct cfi_row *a, const struct cfi_row *b)
{
	return a->pc == b->pc && a->cfa == b->cfa && a->cfa_offset == b->cfa_offset &&
	       a->fp == b->fp && a->fp_offset == b->fp_offset &&
	       a->plt_threshold == b->plt_threshold;
}

static size_t files_compared, rows_compared;

/* Both tables of `path`; a file that is not ELF or has no CFI is skipped. */
static void compare_file(const char *path, bool report)
{
	struct cfi_table now, before;
	double t0, t1, t2;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int err_now, err_before;
	Elf *elf;

	if (fd < 0)
		return;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		if (elf)
			elf_end(elf);
		close(fd);
		return;
	}
	t0 = now_s();
	err_now = cfi_table_build(elf, &now);
	t1 = now_s();
	err_before = cfi_table_build_libdw(elf, &before);
	t2 = now_s();
	if (err_now != err_before)
		fprintf(stderr, "%s: %d now, %d before\n", path, err_now, err_before);
	CHECK_EQ_INT(err_now, err_before);
	if (!err_now && !err_before) {
		size_t first = SIZE_MAX, n = now.len < before.len ? now.len : before.len;

		for (size_t i = 0; i < n && first == SIZE_MAX; i++)
			if (!same_row(&now.rows[i], &before.rows[i]))
				first = i;
		if (first != SIZE_MAX || now.len != before.len) {
			size_t i = first == SIZE_MAX ? n : first;

			fprintf(stderr, "%s: %zu rows now, %zu before; first difference: row %zu",
				path, now.len, before.len, i);
			if (i < n)
				fprintf(stderr,
					" pc %#llx: now cfa %u%+d fp %u%+d plt %u, before "
					"pc %#llx cfa %u%+d fp %u%+d plt %u",
					(unsigned long long)now.rows[i].pc, now.rows[i].cfa,
					now.rows[i].cfa_offset, now.rows[i].fp,
					now.rows[i].fp_offset, now.rows[i].plt_threshold,
					(unsigned long long)before.rows[i].pc, before.rows[i].cfa,
					before.rows[i].cfa_offset, before.rows[i].fp,
					before.rows[i].fp_offset, before.rows[i].plt_threshold);
			fprintf(stderr, "\n");
		}
		CHECK_EQ_INT(now.len, before.len);
		CHECK(first == SIZE_MAX);
		CHECK_EQ_INT(now.stats.fdes, before.stats.fdes);
		CHECK_EQ_INT(now.stats.rows_read, before.stats.rows_read);
		CHECK_EQ_INT(now.stats.unsupported_cfa, before.stats.unsupported_cfa);
		CHECK_EQ_INT(now.stats.unsupported_ra, before.stats.unsupported_ra);
		CHECK_EQ_INT(now.stats.unsupported_fp, before.stats.unsupported_fp);
		CHECK_EQ_INT(now.stats.broken_fdes, before.stats.broken_fdes);
		CHECK_EQ_INT(now.stats.clone_returns, before.stats.clone_returns);
		CHECK_EQ_INT(now.stats.entry_root, before.stats.entry_root);
		if (report)
			printf("%-60s %9zu rows (%zu read, longest FDE %zu) %7zu FDEs  now %8.1f "
			       "ms  libdw %8.1f ms\n",
			       path, now.len, now.stats.rows_read, now.stats.largest_fde,
			       now.stats.fdes, (t1 - t0) * 1e3, (t2 - t1) * 1e3);
		files_compared++;
		rows_compared += now.len;
	}
	if (!err_now)
		cfi_table_free(&now);
	if (!err_before)
		cfi_table_free(&before);
	elf_end(elf);
	close(fd);
}

/* The system's own binaries that every Debian has, and the fixtures'. */
static void test_same_tables_as_libdw(void)
{
	static const char *const files[] = {
		CFI_FIX,
		CFI_FIX ".nohdr",
		"/bin/ls",
		"/bin/bash",
		"/usr/bin/python3",
		"/lib/x86_64-linux-gnu/libc.so.6",
		"/lib64/ld-linux-x86-64.so.2",
		"/lib/x86_64-linux-gnu/libstdc++.so.6",
		"/lib/x86_64-linux-gnu/libm.so.6",
		"/lib/x86_64-linux-gnu/libelf.so.1",
		"/lib/x86_64-linux-gnu/libdw.so.1",
#ifdef GO_BINARY
		GO_BINARY,
#endif
#ifdef STATIC_BINARY
		STATIC_BINARY,
#endif
	};
	const char *env = getenv("BPFPROF_CFI_COMPARE");

	elf_version(EV_CURRENT);
	if (env) {
		char *list = strdup(env), *save = NULL;

		for (char *p = strtok_r(list, " \n", &save); p; p = strtok_r(NULL, " \n", &save))
			compare_file(p, true);
		free(list);
	} else {
		for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
			compare_file(files[i], true);
		CHECK(files_compared >= 6);
	}
	printf("compared %zu files, %zu rows: identical unless reported above\n", files_compared,
	       rows_compared);
}

/*
 * Debian's glibc, and glibc linked -static: clone's and clone3's returns
 * (the syscall's bytes up to the child's entry, which no FDE covers) are
 * UNWIND_CFA_CLONE rows with the parent's rule (CFA = RSP + 8) right before
 * the child's root row; a program without clone (ls) has none.
 */
static void check_clone_returns(const char *path, size_t want)
{
	struct cfi_table t;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
	size_t found = 0;

	CHECK(elf != NULL);
	if (!elf) {
		if (fd >= 0)
			close(fd);
		return;
	}
	CHECK_EQ_INT(cfi_table_build(elf, &t), 0);
	for (size_t i = 0; i + 1 < t.len; i++) {
		if (t.rows[i].cfa != UNWIND_CFA_CLONE)
			continue;
		found++;
		CHECK_EQ_INT(t.rows[i].cfa_offset, 8);
		CHECK_EQ_INT(t.rows[i + 1].cfa, UNWIND_CFA_ROOT);
		CHECK(t.rows[i + 1].pc - t.rows[i].pc <= CFI_CLONE_GAP_MAX);
	}
	printf("%s: %zu clone returns\n", path, found);
	CHECK_EQ_INT(found, want);
	CHECK_EQ_INT(t.stats.clone_returns, want);
	cfi_table_free(&t);
	elf_end(elf);
	close(fd);
}

static void test_clone_returns(void)
{
	elf_version(EV_CURRENT);
	check_clone_returns("/lib/x86_64-linux-gnu/libc.so.6", 2);
	check_clone_returns("/bin/ls", 0);
#ifdef STATIC_BINARY
	check_clone_returns(STATIC_BINARY, 2);
#endif
}

/* A CIE (code align 1, data align -8, RA 16, "zR" pcrel sdata4) and one FDE. */
struct section {
	uint8_t *buf;
	size_t len, cap;
};

static void put(struct section *s, const void *p, size_t n)
{
	if (s->len + n > s->cap) {
		s->cap = (s->len + n) * 2;
		s->buf = realloc(s->buf, s->cap);
	}
	memcpy(s->buf + s->len, p, n);
	s->len += n;
}

static void put_u8(struct section *s, uint8_t v)
{
	put(s, &v, 1);
}

static void put_u32(struct section *s, uint32_t v)
{
	put(s, &v, 4);
}

static void patch_len(struct section *s, size_t at)
{
	while ((s->len - at) % 4)
		put_u8(s, 0);
	uint32_t len = (uint32_t)(s->len - at - 4);

	memcpy(s->buf + at, &len, 4);
}

/* CIE at 0 (initial: def_cfa rsp+8, RA at cfa-8), one FDE of `insns` over [0x1000, +range). */
static void make_section(struct section *s, const uint8_t *insns, size_t n, uint32_t range)
{
	static const uint8_t cie[] = { 1, 'z', 'R', 0, 1, 0x78, 16, 1, 0x1b, 0x0c, 7, 8, 0x90, 1 };
	size_t fde_at;
	int32_t pc;

	memset(s, 0, sizeof(*s));
	put_u32(s, 0);
	put_u32(s, 0);
	put(s, cie, sizeof(cie));
	patch_len(s, 0);
	fde_at = s->len;
	put_u32(s, 0);
	put_u32(s, (uint32_t)(s->len));		  /* back to the CIE at 0 */
	pc = (int32_t)(0x1000 - (int64_t)s->len); /* pcrel from this field, vaddr 0 */
	put(s, &pc, 4);
	put_u32(s, range);
	put_u8(s, 0); /* augmentation data: none */
	put(s, insns, n);
	patch_len(s, fde_at);
	put_u32(s, 0);
}

struct collect {
	size_t rows;
	uint64_t last_pc;
	int64_t last_cfa;
	bool ordered;
};

static int count_row(void *ctx, uint64_t pc, const struct cfi_rules *r)
{
	struct collect *c = ctx;

	if (c->rows && pc <= c->last_pc)
		c->ordered = false;
	c->rows++;
	c->last_pc = pc;
	c->last_cfa = r->cfa_offset;
	return 0;
}

static int run_section(struct section *s, uint64_t ops, struct collect *out, uint64_t *bad_pc)
{
	struct eh_cie cie;
	struct eh_fde fde;
	struct cfi_rules initial;
	size_t cie_off = SIZE_MAX;
	struct cfi_program p = { &cie, s->buf, 0, &ops };
	size_t fde_off = 0;
	int err;

	/* The FDE is the record after the CIE. */
	memcpy(&fde_off, s->buf, 4);
	fde_off += 4;
	err = eh_frame_fde(s->buf, s->len, 0, fde_off, &fde, &cie, &cie_off);
	if (err)
		return err;
	cfi_rules_init(&initial);
	if ((err = cfi_program_cie(&p, &initial)))
		return err;
	memset(out, 0, sizeof(*out));
	out->ordered = true;
	return cfi_program_fde(&p, &fde, &initial, count_row, out, bad_pc);
}

/* 300k rows (advance_loc 1, def_cfa_offset 16 / 8 alternating) in one pass. */
static void test_long_fde_is_linear(void)
{
	const size_t rows = 300000;
	struct section s;
	struct collect c;
	uint8_t *insns = malloc(rows * 3);
	uint64_t bad = 0;
	double t0;

	for (size_t i = 0; i < rows; i++) {
		insns[3 * i] = 0x0e; /* def_cfa_offset */
		insns[3 * i + 1] = i % 2 ? 8 : 16;
		insns[3 * i + 2] = 0x41; /* advance_loc 1 */
	}
	make_section(&s, insns, rows * 3, (uint32_t)rows);
	t0 = now_s();
	CHECK_EQ_INT(run_section(&s, UINT64_MAX, &c, &bad), 0);
	printf("300k-row FDE: %zu rows in %.1f ms\n", c.rows, (now_s() - t0) * 1e3);
	CHECK_EQ_INT(c.rows, rows);
	CHECK(c.ordered);
	CHECK(now_s() - t0 < 1.0);
	/* The instruction budget stops it. */
	CHECK_EQ_INT(run_section(&s, 1000, &c, &bad), -E2BIG);
	CHECK(c.rows < 1000);
	free(insns);
	free(s.buf);
}

static void test_state_stack_is_bounded(void)
{
	uint8_t insns[CFI_STATE_STACK_MAX + 8];
	struct section s;
	struct collect c;
	uint64_t bad = 0;
	size_t n = 0;

	/* Deeper than the stack: an error, after no row. */
	for (; n < CFI_STATE_STACK_MAX + 1; n++)
		insns[n] = 0x0a;
	make_section(&s, insns, n, 16);
	CHECK_EQ_INT(run_section(&s, UINT64_MAX, &c, &bad), -EINVAL);
	CHECK_EQ_INT(bad, 0x1000);
	free(s.buf);

	/* remember, change, advance, restore: the row after has the CIE's CFA again. */
	{
		const uint8_t prog[] = { 0x0a, 0x0e, 32, 0x44, 0x0b, 0x44 };

		make_section(&s, prog, sizeof(prog), 16);
		CHECK_EQ_INT(run_section(&s, UINT64_MAX, &c, &bad), 0);
		CHECK_EQ_INT(c.rows, 3);
		CHECK_EQ_INT(c.last_cfa, 8);
		free(s.buf);
	}
	/* restore_state with nothing remembered: an error where the row starts. */
	{
		const uint8_t prog[] = { 0x44, 0x0b };

		make_section(&s, prog, sizeof(prog), 16);
		CHECK_EQ_INT(run_section(&s, UINT64_MAX, &c, &bad), -EINVAL);
		CHECK_EQ_INT(c.rows, 1);
		CHECK_EQ_INT(bad, 0x1004);
		free(s.buf);
	}
}

/* Every prefix of a program with one of each instruction: errors, never a read past. */
static void test_truncated_instructions(void)
{
	const uint8_t prog[] = {
		0x02, 4,		 /* advance_loc1 */
		0x03, 4,  0,		 /* advance_loc2 */
		0x04, 4,  0,	0,    0, /* advance_loc4 */
		0x0c, 6,  16,		 /* def_cfa rbp+16 */
		0x86, 2,		 /* offset rbp at cfa-16 */
		0x11, 6,  0x7e,		 /* offset_extended_sf rbp, -2*-8 */
		0x2f, 16, 1,		 /* GNU_negative_offset_extended ra */
		0x10, 6,  2,	0x23, 8, /* expression rbp: plus_uconst 8 */
		0x16, 16, 1,	0x96,	 /* val_expression ra */
		0x2e, 8,		 /* GNU_args_size */
		0x0f, 1,  0x9c,		 /* def_cfa_expression */
		0x0d, 7,		 /* def_cfa_register: invalid after an expression */
		0xc6,			 /* restore rbp */
		0x06, 16,		 /* restore_extended ra */
		0x41,
	};
	struct section s;
	struct collect c;
	uint64_t bad;

	for (size_t n = 0; n <= sizeof(prog); n++) {
		uint8_t *copy = malloc(n ? n : 1);

		memcpy(copy, prog, n);
		make_section(&s, copy, n, 64);
		(void)run_section(&s, UINT64_MAX, &c, &bad);
		CHECK(c.ordered);
		free(copy);
		free(s.buf);
	}
}

int main(void)
{
	RUN(test_long_fde_is_linear);
	RUN(test_state_stack_is_bounded);
	RUN(test_truncated_instructions);
	RUN(test_same_tables_as_libdw);
	RUN(test_clone_returns);
	return test_summary();
}
