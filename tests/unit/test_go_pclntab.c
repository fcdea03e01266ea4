// SPDX-License-Identifier: BSD-2-Clause
/*
 * Go's function table (lang/go_pclntab.c) and the unwind rows made from it
 * (unwind/go_table.c), on a real Go binary: Debian's own `go` command
 * (golang-go, which the test dependencies install; stripped of .symtab, so
 * its names come from .gopclntab alone). Then the same table damaged every
 * way a hostile binary could: truncated, header fields and bytes changed,
 * which must give errors or other names, never a read out of bounds (the
 * sanitizer build runs this) or a walk without end. No BPF, no root.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "eh_image.h"
#include "go_image.h"
#include "lang/go_pclntab.h"
#include "test.h"
#include "unwind/go_table.h"
#include "util/elf_section.h"

#ifndef GO_BINARY
#define GO_BINARY "/usr/lib/go/bin/go"
#endif

static Elf *open_elf(const char *path, int *fd)
{
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0)
		return NULL;
	return elf_begin(*fd, ELF_C_READ_MMAP, NULL);
}

static void close_elf(Elf *elf, int fd)
{
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
}

static void real_table_reads(void)
{
	struct go_pclntab t;
	int fd, found_goexit = 0, roots = 0;
	uint64_t prev_end = 0;
	size_t bad = 0;
	Elf *elf = open_elf(GO_BINARY, &fd);

	CHECK(elf != NULL);
	if (!elf)
		return;
	CHECK(go_pclntab_present(elf));
	CHECK_EQ_INT(go_pclntab_open(elf, &t), 0);
	CHECK(t.version >= 116);
	CHECK(t.nfunc > 1000);
	for (uint32_t i = 0; i < t.nfunc; i++) {
		struct go_func f;
		struct go_pcvalue_iter it;
		uint64_t a, b, covered;
		int32_t sp;

		if (!go_pclntab_func(&t, i, &f)) {
			bad++;
			continue;
		}
		/* Sorted, contiguous, each function found by its own entry and last byte. */
		CHECK(f.entry >= prev_end && f.end >= f.entry);
		prev_end = f.end;
		if (f.end > f.entry)
			CHECK(go_pclntab_find(&t, f.entry) == i &&
			      go_pclntab_find(&t, f.end - 1) == i);
		if (!strcmp(f.name, "runtime.goexit")) {
			found_goexit = 1;
			CHECK(f.flag & GO_FUNC_FLAG_TOPFRAME);
		}
		roots += !!(f.flag & GO_FUNC_FLAG_TOPFRAME);
		/*
		 * pcsp starts at the entry with SP where the call left it and tiles
		 * the function's code, which may stop short of the next entry (padding).
		 */
		go_pcvalue_begin(&it, &t, f.pcsp, f.entry, f.end);
		covered = f.entry;
		while (go_pcvalue_next(&it, &a, &b, &sp)) {
			if (a == f.entry)
				CHECK_EQ_INT(sp, 0);
			/* syscall.rawVforkSyscall pops its return address for vfork: -8. */
			CHECK(a == covered && b >= a && sp >= -8);
			covered = b;
		}
		CHECK(covered <= f.end && (covered > f.entry || !f.pcsp || f.end == f.entry));
	}
	CHECK_EQ_INT(bad, 0);
	CHECK(found_goexit);
	CHECK(roots >= 3);
	/* main.main has a file and a line (the go command's own source). */
	{
		struct go_func f = { 0 };
		const char *file = NULL;
		int line = 0;

		for (uint32_t i = 0; i < t.nfunc; i++)
			if (go_pclntab_func(&t, i, &f) && !strcmp(f.name, "main.main"))
				break;
		CHECK_EQ_STR(f.name, "main.main");
		CHECK(go_pclntab_line(&t, &f, f.entry, &file, &line));
		CHECK(file && strstr(file, ".go") && line > 0);
	}
	CHECK(go_pclntab_find(&t, 0) == -1);
	go_pclntab_close(&t);
	close_elf(elf, fd);
}

static void rows_unwind_go(void)
{
	struct cfi_table rows, base = { 0 };
	struct go_table_stats st;
	uint64_t lo, hi;
	int fd;
	Elf *elf = open_elf(GO_BINARY, &fd);

	CHECK(elf != NULL);
	if (!elf)
		return;
	CHECK_EQ_INT(go_table_build(elf, &cfi_default_budget, &rows, &lo, &hi, &st), 0);
	CHECK(rows.len > st.funcs && st.funcs > 1000);
	CHECK(st.roots >= 3 && st.stack_switches > 0);
	CHECK(lo < hi && rows.rows[0].pc == lo);
	for (size_t i = 1; i < rows.len; i++)
		CHECK(rows.rows[i].pc > rows.rows[i - 1].pc);
	/*
	 * Every ordinary function's entry: SP + 8 is the CFA (the return
	 * address just pushed), also when the function before it ended with
	 * the same row (a frameless leaf after a frameless leaf).
	 */
	{
		struct go_pclntab t;
		size_t checked = 0, wrong = 0;

		CHECK_EQ_INT(go_pclntab_open(elf, &t), 0);
		for (uint32_t i = 0; i < t.nfunc; i++) {
			struct go_func f;
			const struct cfi_row *r;

			if (!go_pclntab_func(&t, i, &f) || !f.pcsp || f.end == f.entry ||
			    (f.flag & (GO_FUNC_FLAG_TOPFRAME | GO_FUNC_FLAG_SPWRITE)) ||
			    strstr(f.name, "sigreturn") || strstr(f.name, "asmcgocall"))
				continue;
			r = cfi_table_lookup(&rows, f.entry);
			checked++;
			wrong += !(r && r->cfa == UNWIND_CFA_SP && r->cfa_offset == 8);
		}
		fprintf(stderr, "  %zu function entries, %zu without CFA = SP + 8\n", checked,
			wrong);
		CHECK(checked > 1000);
		CHECK_EQ_INT(wrong, 0);
		CHECK(st.bad_funcs < st.funcs / 100);
		go_pclntab_close(&t);
	}
	/*
	 * The caller's BP, which Go's prologue saves at CFA - 16, is restored
	 * from there once saved (issue 37): runtime.park_m (g0's side of mcall)
	 * keeps BP from its entry through the store after its SUBQ, restores it
	 * after the store, and keeps it again past its epilogue.
	 */
	{
		struct go_pclntab t;
		struct go_pcvalue_iter it;
		struct go_func f = { 0 };
		const struct cfi_row *r;
		uint64_t a = 0, b = 0;
		int32_t sp = 0;

		CHECK(st.saves_bp > st.funcs / 2 && st.saves_bp <= st.prologues_read);
		CHECK_EQ_INT(go_pclntab_open(elf, &t), 0);
		for (uint32_t i = 0; i < t.nfunc; i++)
			if (go_pclntab_func(&t, i, &f) && !strcmp(f.name, "runtime.park_m"))
				break;
		CHECK_EQ_STR(f.name, "runtime.park_m");
		go_pcvalue_begin(&it, &t, f.pcsp, f.entry, f.end);
		while (go_pcvalue_next(&it, &a, &b, &sp) && sp <= 0)
			;
		CHECK(sp > 8 && a > f.entry && b > a + 8);
		r = cfi_table_lookup(&rows, f.entry);
		CHECK(r && r->fp == UNWIND_FP_SAME);
		r = cfi_table_lookup(&rows, a);
		CHECK(r && r->fp == UNWIND_FP_SAME && r->cfa_offset == sp + 8);
		r = cfi_table_lookup(&rows, b - 1);
		CHECK(r && r->fp == UNWIND_FP_SAVED && r->fp_offset == -16 &&
		      r->cfa == UNWIND_CFA_SP && r->cfa_offset == sp + 8);
		r = cfi_table_lookup(&rows, f.end - 1); /* morestack's call, SP at the entry's */
		CHECK(r && r->fp == UNWIND_FP_SAME && r->cfa_offset == 8);
		go_pclntab_close(&t);
	}
	/* Over nothing: Go's rows alone, and past hi no usable row. */
	CHECK_EQ_INT(go_table_overlay(&base, &rows, lo, hi), 0);
	CHECK(base.len >= rows.len);
	CHECK(cfi_table_lookup(&base, hi) && cfi_table_lookup(&base, hi)->cfa == UNWIND_CFA_NONE);
	cfi_table_free(&base);
	cfi_table_free(&rows);
	close_elf(elf, fd);
}

/* C's CFI around Go's: the C rows before and after stay, Go's replace what lies between. */
static void overlay_keeps_c_rows(void)
{
	struct cfi_row c[] = {
		{ .pc = 0x100, .cfa = UNWIND_CFA_SP, .cfa_offset = 8 },
		{ .pc = 0x200, .cfa = UNWIND_CFA_SP, .cfa_offset = 16 },
		{ .pc = 0x300, .cfa = UNWIND_CFA_FP, .cfa_offset = 16 },
		{ .pc = 0x500, .cfa = UNWIND_CFA_SP, .cfa_offset = 24 },
	};
	struct cfi_row g[] = {
		{ .pc = 0x250, .cfa = UNWIND_CFA_SP, .cfa_offset = 8 },
		{ .pc = 0x260, .cfa = UNWIND_CFA_SP, .cfa_offset = 40 },
	};
	struct cfi_table base = { .rows = malloc(sizeof(c)), .len = 4 };
	struct cfi_table over = { .rows = g, .len = 2 };

	memcpy(base.rows, c, sizeof(c));
	CHECK_EQ_INT(go_table_overlay(&base, &over, 0x250, 0x400), 0);
	CHECK(cfi_table_lookup(&base, 0x1ff)->cfa_offset == 8);
	CHECK(cfi_table_lookup(&base, 0x24f)->cfa_offset == 16);
	CHECK(cfi_table_lookup(&base, 0x250)->cfa_offset == 8);
	CHECK(cfi_table_lookup(&base, 0x3ff)->cfa_offset == 40);
	/* At hi, the C row in force there (0x300's) holds again. */
	CHECK(cfi_table_lookup(&base, 0x400)->cfa == UNWIND_CFA_FP);
	CHECK(cfi_table_lookup(&base, 0x500)->cfa_offset == 24);
	cfi_table_free(&base);
}

/* Walk everything a table offers, as the unwinder and symbolizer would. */
static void walk_all(struct go_pclntab *t)
{
	for (uint32_t i = 0; i < t->nfunc && i < 4000; i++) {
		struct go_func f;
		struct go_pcvalue_iter it;
		uint64_t a, b;
		int32_t v;
		const char *file;
		int line;

		if (!go_pclntab_func(t, i, &f))
			continue;
		(void)strlen(f.name);
		go_pcvalue_begin(&it, t, f.pcsp, f.entry, f.end);
		while (go_pcvalue_next(&it, &a, &b, &v))
			;
		if (go_pclntab_line(t, &f, f.entry, &file, &line))
			(void)strlen(file);
		go_pclntab_find(t, f.entry);
	}
}

static void hostile_tables(void)
{
	GElf_Shdr shdr;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	Elf_Data *data = NULL;
	int fd;
	Elf *elf = open_elf(GO_BINARY, &fd);
	unsigned seed = 26;

	CHECK(elf != NULL);
	if (!elf || elf_getshdrstrndx(elf, &shstrndx))
		return;
	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &shdr) && elf_strptr(elf, shstrndx, shdr.sh_name) &&
		    !strcmp(elf_strptr(elf, shstrndx, shdr.sh_name), ".gopclntab"))
			break;
	data = scn ? elf_getdata(scn, NULL) : NULL;
	CHECK(data && data->d_size > 4096);
	if (!data || data->d_size <= 4096)
		goto out;
	/* Truncated anywhere: the header's offsets past the end are refused. */
	for (size_t cut = 0; cut < data->d_size; cut += data->d_size / 97 + 1) {
		uint8_t *copy = malloc(cut ? cut : 1);
		struct go_pclntab t;

		memcpy(copy, data->d_buf, cut);
		if (!go_pclntab_from_bytes(copy, cut, 0x401000, &t)) {
			walk_all(&t);
			go_pclntab_close(&t);
		}
	}
	/* Random bytes changed, the header's fields first. */
	for (int round = 0; round < 300; round++) {
		uint8_t *copy = malloc(data->d_size);
		struct go_pclntab t;

		memcpy(copy, data->d_buf, data->d_size);
		for (int k = 0; k < 8; k++) {
			size_t at = round < 100 ? (size_t)rand_r(&seed) % 72
						: (size_t)rand_r(&seed) % data->d_size;

			copy[at] = (uint8_t)rand_r(&seed);
		}
		if (!go_pclntab_from_bytes(copy, data->d_size, 0x401000, &t)) {
			walk_all(&t);
			go_pclntab_close(&t);
		}
	}
	/* A header whose function table has no room for nfunc + 1 entries, or none at all. */
	{
		uint8_t *h = calloc(1, 128);
		struct go_pclntab t;
		uint64_t v;

		memcpy(h, data->d_buf, 64); /* the real header (1.18+), then lies */
		v = 0xffffffffull;
		memcpy(h + 8, &v, 8);
		for (int k = 0; k < 4; k++) { /* funcname, cu, filetab, pctab: inside */
			v = 72 + 8 * (uint64_t)k;
			memcpy(h + 32 + 8 * k, &v, 8);
		}
		v = 124; /* the function table: 4 bytes before the end */
		memcpy(h + 64, &v, 8);
		CHECK_EQ_INT(go_pclntab_from_bytes(h, 128, 0x401000, &t), -EINVAL);
	}
	/* Value tables that never advance stop after the function's size in steps. */
	{
		struct go_pclntab t = { 0 };
		struct go_pcvalue_iter it;
		static uint8_t zeros[4096];
		uint64_t a, b;
		int32_t v;
		unsigned n = 0;

		for (size_t i = 0; i < sizeof(zeros); i += 2) {
			zeros[i] = 2;	  /* value +1 */
			zeros[i + 1] = 0; /* pc +0 */
		}
		t.data = zeros;
		t.size = sizeof(zeros);
		t.quantum = 1;
		t.pctab = 0;
		go_pcvalue_begin(&it, &t, 1, 0x1000, 0x1010);
		while (go_pcvalue_next(&it, &a, &b, &v))
			n++;
		CHECK(n <= 0x10 + 2);
	}
	/* Not a table at all. */
	{
		uint8_t *junk = calloc(1, 128);
		struct go_pclntab t;

		CHECK_EQ_INT(go_pclntab_from_bytes(junk, 128, 0, &t), -ENOENT);
	}
out:
	close_elf(elf, fd);
}

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

/*
 * Issue 27: a table whose 60,000 function entries, 64 KiB apart, share one
 * record and so one pcsp stream of a row per byte names 3.9G rows from
 * 0.6 MB. Without a budget that is 94 GB of rows; it must be refused
 * within the file's budget, rows and time, and stop when told to.
 */
static uint8_t *shared_stream_table(size_t *size, uint32_t nfunc)
{
	enum { SPAN = 65536, HDR = 72 };
	size_t names = HDR, pctab = names + 8, stream = 2 * SPAN + 2;
	size_t functab = pctab + stream, record = functab + 8 * ((size_t)nfunc + 1);
	uint8_t *t;

	*size = record + 48;
	t = calloc(1, *size);
	if (!t)
		return NULL;
	/* funcnametab: "f"; cutab, filetab: empty */
	go_image_header(t, nfunc, 0x401000, names, names + 2, names + 2, pctab, functab);
	t[names] = 'f';
	/* pcsp at 1: SP one byte deeper at every byte (never two rows alike). */
	for (size_t i = 0; i < SPAN; i++) {
		t[pctab + 1 + 2 * i] = 2;
		t[pctab + 2 + 2 * i] = 1;
	}
	for (uint32_t i = 0; i <= nfunc; i++) {
		put32(t + functab + 8 * (size_t)i, i * SPAN);
		put32(t + functab + 8 * (size_t)i + 4, (uint32_t)(record - functab));
	}
	/* entryoff nameoff args deferreturn pcsp pcfile pcln npcdata cu startLine id flag */
	put32(t + record + 16, 1);
	return t;
}

static void shared_pcsp_refused(void)
{
	size_t size;
	uint8_t *bytes = shared_stream_table(&size, 60000);
	struct go_pclntab t;
	struct cfi_table rows;
	struct go_table_stats st;
	uint64_t lo, hi, t0;
	bool stop = true;
	struct cfi_budget b = cfi_default_budget;
	struct timespec ts;

	CHECK(bytes != NULL);
	if (!bytes)
		return;
	CHECK(size < 1024 * 1024);
	CHECK_EQ_INT(go_pclntab_from_bytes(bytes, size, 0x401000, &t), 0);
	/* CPU time, which the budget counts: the machine may be busy. */
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	t0 = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	CHECK_EQ_INT(go_table_from_pclntab(&t, NULL, &cfi_default_budget, &rows, &lo, &hi, &st),
		     -E2BIG);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	t0 = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec - t0;
	printf("refused (%s) after %.0f ms of CPU\n", st.over_budget ? st.over_budget : "-",
	       (double)t0 / 1e6);
	CHECK(t0 < CFI_FILE_MAX_CPU_NS + CFI_FILE_MAX_CPU_NS / 4);
	CHECK(st.over_budget != NULL);
	CHECK(rows.rows == NULL && rows.len == 0);
	/* Told to stop: it ends at once, with nothing. */
	b.stop = &stop;
	CHECK_EQ_INT(go_table_from_pclntab(&t, NULL, &b, &rows, &lo, &hi, &st), -ECANCELED);
	/* A few such functions fit: the budget refuses the size, not the shape. */
	go_pclntab_close(&t);
	bytes = shared_stream_table(&size, 4);
	CHECK_EQ_INT(go_pclntab_from_bytes(bytes, size, 0x401000, &t), 0);
	CHECK_EQ_INT(go_table_from_pclntab(&t, NULL, &cfi_default_budget, &rows, &lo, &hi, &st), 0);
	CHECK(rows.len >= 4 * 65536);
	cfi_table_free(&rows);
	go_pclntab_close(&t);
}

/*
 * Go's prologues are read through util/elf_section.c's windows: the file's
 * bytes at a window's start, across a window's end, up to the section's end
 * and not past it, in both kinds of libelf handle; past the window cap, no more.
 */
static void code_reads_through_windows(void)
{
	int fd = open(GO_BINARY, O_RDONLY | O_CLOEXEC);

	CHECK(fd >= 0);
	for (int mapped = 0; fd >= 0 && mapped < 2; mapped++) {
		Elf *elf = elf_begin(fd, mapped ? ELF_C_READ_MMAP : ELF_C_READ, NULL);
		struct elf_code_reader r = { .elf = elf };
		GElf_Shdr sh;
		uint64_t at[4];
		uint8_t got[9], want[9];

		CHECK(elf && elf_section_by_name(elf, ".text", &sh));
		if (!elf || !elf_section_by_name(elf, ".text", &sh))
			break;
		CHECK(sh.sh_size > 4 * ELF_CODE_WINDOW);
		at[0] = sh.sh_addr;
		at[1] = (sh.sh_addr | (ELF_CODE_WINDOW - 1)) + 1 + ELF_CODE_WINDOW - 4; /* across */
		at[2] = at[1] + 4;
		at[3] = sh.sh_addr + sh.sh_size - sizeof(got);
		for (size_t i = 0; i < 4; i++) {
			CHECK_EQ_INT(elf_code_reader_read(&r, at[i], got, sizeof(got)), 0);
			CHECK(pread(fd, want, sizeof(want),
				    (off_t)(sh.sh_offset + (at[i] - sh.sh_addr))) == sizeof(want));
			CHECK(!memcmp(got, want, sizeof(got)));
			CHECK_EQ_INT(elf_read_code(elf, at[i], got, sizeof(got)), 0);
			CHECK(!memcmp(got, want, sizeof(got)));
		}
		CHECK(r.windows <= 4);
		CHECK(elf_code_reader_read(&r, at[3] + 1, got, sizeof(got)) != 0);
		CHECK(elf_read_code(elf, at[3] + 1, got, sizeof(got)) != 0);
		CHECK_EQ_INT(elf_code_reader_read(&r, 0, got, 1), -ENOENT);
		r.windows = ELF_CODE_MAX_WINDOWS;
		CHECK_EQ_INT(elf_code_reader_read(&r, at[0], got, 1), -E2BIG);
		elf_end(elf);
	}
	if (fd >= 0)
		close(fd);
}

/* The hand-made code of prologue_table()'s functions, from TEXT. */
#define TEXT 0x401000u
static uint8_t text[0x100];

static int read_text(void *ctx, uint64_t vaddr, void *buf, size_t len)
{
	(void)ctx;
	if (vaddr < TEXT || vaddr + len > TEXT + sizeof(text))
		return -ENOENT;
	memcpy(buf, text + (vaddr - TEXT), len);
	return 0;
}

/* As read_text, as an elf_code_reader past its windows is (-E2BIG) from TEXT + 0x40 on. */
static int read_text_below_0x40(void *ctx, uint64_t vaddr, void *buf, size_t len)
{
	return vaddr >= TEXT + 0x40 ? -E2BIG : read_text(ctx, vaddr, buf, len);
}

/*
 * Four functions, each prologue's instructions in text[]:
 *   A (0x00) Go 1.21: PUSHQ BP at 5, MOVQ SP, BP at 6 (SP 8), SUBQ to 0x28 at 0x10
 *   B (0x40) NOFRAME assembly: PUSHQ AX (SP 8), not BP
 *   C (0x60) Go 1.19: SUBQ $0x28, SP, then MOVQ BP, 0x20(SP) at 0x6a
 *   D (0xa0) the same shape storing BP at 0x18(SP): not its frame's slot
 */
static uint8_t *prologue_table(size_t *size)
{
	enum { HDR = 72, NFUNC = 4, REC = 48 };
	static const uint8_t streams[] = {
		/* pcsp: (zigzag value delta, pc delta) pairs, then 0; from 1 (0 is "none") */
		0, 2,	 6,    16,   0x0a, 0x40, 0x28, 0x4f, 8, 0, /* A at 1 */
		2, 1,	 16,   0x0f, 15,   0x10, 0,		   /* B at 10 */
		2, 0x0a, 0x50, 0x26, 0x4f, 0x10, 0,		   /* C at 17 */
		2, 0x0a, 0x50, 0x26, 0x4f, 0x10, 0,		   /* D at 24 */
	};
	static const uint32_t entry[NFUNC + 1] = { 0, 0x40, 0x60, 0xa0, 0xe0 };
	static const uint32_t pcsp[NFUNC] = { 1, 10, 17, 24 };
	size_t names = HDR, pctab = names + 8, functab = pctab + sizeof(streams);
	size_t records = functab + 8 * (NFUNC + 1);
	uint8_t *t;

	*size = records + REC * NFUNC;
	t = calloc(1, *size);
	if (!t)
		return NULL;
	go_image_header(t, NFUNC, TEXT, names, names + 8, names + 8, pctab, functab);
	memcpy(t + names, "a\0b\0c\0d\0", 8);
	memcpy(t + pctab, streams, sizeof(streams));
	for (uint32_t i = 0; i <= NFUNC; i++) {
		put32(t + functab + 8 * i, entry[i]);
		put32(t + functab + 8 * i + 4, (uint32_t)(records - functab + REC * (i % NFUNC)));
	}
	/* entryoff nameoff args deferreturn pcsp pcfile pcln npcdata cu startLine id flag */
	for (uint32_t i = 0; i < NFUNC; i++) {
		put32(t + records + REC * i, entry[i]);
		put32(t + records + REC * i + 4, 2 * i);
		put32(t + records + REC * i + 16, pcsp[i]);
	}
	memset(text, 0x90, sizeof(text));
	memcpy(text + 0x05, "\x55\x48\x89\xe5", 4);
	memcpy(text + 0x40, "\x50\x48\x89\xe5", 4);
	memcpy(text + 0x6a, "\x48\x89\x6c\x24\x20", 5);
	memcpy(text + 0xaa, "\x48\x89\x6c\x24\x18", 5);
	return t;
}

static void check_row(const struct cfi_table *rows, uint64_t pc, int32_t cfa_offset, uint8_t fp)
{
	const struct cfi_row *r = cfi_table_lookup(rows, TEXT + pc);

	CHECK(r && r->cfa == UNWIND_CFA_SP);
	if (!r)
		return;
	CHECK_EQ_INT(r->cfa_offset, cfa_offset);
	CHECK_EQ_INT(r->fp, fp);
	CHECK_EQ_INT(r->fp == UNWIND_FP_SAVED ? r->fp_offset : -16, -16);
}

/* `t`'s rows into `rows` (0 expected), reading code through `code`: its stats. */
static struct go_table_stats build_rows(const struct go_pclntab *t, const struct go_code *code,
					struct cfi_table *rows)
{
	struct go_table_stats st = { 0 };
	uint64_t lo, hi;

	CHECK_EQ_INT(go_table_from_pclntab(t, code, &cfi_default_budget, rows, &lo, &hi, &st), 0);
	return st;
}

/*
 * Go's rows restore the caller's BP where, and only where, the prologue
 * has saved it at CFA - 16 (issue 37): with BP kept as it was, a walk from
 * g0 at mcall climbed the BP chain of g0's frames one link per step.
 */
static void rows_restore_saved_bp(void)
{
	const struct go_code code = { read_text, NULL };
	const struct go_code capped = { read_text_below_0x40, NULL };
	struct go_pclntab t;
	struct cfi_table rows;
	struct go_table_stats st;
	size_t size;
	uint8_t *bytes = prologue_table(&size);

	CHECK(bytes != NULL);
	if (!bytes)
		return;
	CHECK_EQ_INT(go_pclntab_from_bytes(bytes, size, TEXT, &t), 0);
	st = build_rows(&t, &code, &rows);
	CHECK_EQ_INT(st.funcs, 4);
	CHECK_EQ_INT(st.prologues_read, 4);
	CHECK_EQ_INT(st.saves_bp, 2);
	/* A: saved by the PUSHQ before 6, kept through the SUBQ, the epilogue's POPQ ends it. */
	check_row(&rows, 0x05, 8, UNWIND_FP_SAME);
	check_row(&rows, 0x06, 16, UNWIND_FP_SAVED);
	check_row(&rows, 0x10, 0x30, UNWIND_FP_SAVED);
	check_row(&rows, 0x38, 8, UNWIND_FP_SAME);
	/* B: another register pushed. */
	check_row(&rows, 0x41, 16, UNWIND_FP_SAME);
	/* C: not at the store itself (the slot holds anything), from the next instruction. */
	check_row(&rows, 0x69, 8, UNWIND_FP_SAME);
	check_row(&rows, 0x6a, 0x30, UNWIND_FP_SAME);
	check_row(&rows, 0x6f, 0x30, UNWIND_FP_SAVED);
	check_row(&rows, 0x9f, 8, UNWIND_FP_SAME);
	/* D: a store elsewhere is not the frame's. */
	check_row(&rows, 0xb0, 0x30, UNWIND_FP_SAME);
	cfi_table_free(&rows);
	/* Without the code, BP is never restored. */
	CHECK_EQ_INT(build_rows(&t, NULL, &rows).saves_bp, 0);
	check_row(&rows, 0x6f, 0x30, UNWIND_FP_SAME);
	cfi_table_free(&rows);
	/* A reader past the code it keeps (-E2BIG from 0x40 on): those prologues count as lost. */
	st = build_rows(&t, &capped, &rows);
	CHECK_EQ_INT(st.prologues_read, 4);
	CHECK_EQ_INT(st.prologues_lost, 3);
	CHECK_EQ_INT(st.saves_bp, 1);
	check_row(&rows, 0x06, 16, UNWIND_FP_SAVED);
	check_row(&rows, 0x6f, 0x30, UNWIND_FP_SAME);
	cfi_table_free(&rows);
	go_pclntab_close(&t);
}

/*
 * A .gopclntab whose header claims more than GO_PCLNTAB_MAX_BYTES (issue
 * 37: a 900 MiB hole cost 3.7 GB): refused on its size, never read. The
 * image holds a few bytes: a reader that tried would fail another way.
 */
static void huge_section_refused_unread(void)
{
	size_t total, names;
	uint8_t *img = calloc(1, eh_image_size(256));
	Elf64_Shdr *sh;
	struct go_pclntab t;
	struct cfi_table rows;
	struct go_table_stats st;
	uint64_t lo, hi;
	Elf *elf;

	if (!img)
		return;
	total = eh_image_finish(img, 0x1000, 128, 0x1080, 128);
	sh = (Elf64_Shdr *)(img + ((Elf64_Ehdr *)img)->e_shoff);
	/* Section 2 (".eh_frame_hdr", 14 bytes of name) renamed. */
	names = sh[3].sh_offset;
	memcpy(img + names + sh[2].sh_name, ".gopclntab", 11);
	sh[2].sh_size = (uint64_t)GO_PCLNTAB_MAX_BYTES + 1;
	elf = elf_memory((char *)img, total);
	CHECK(elf != NULL);
	CHECK_EQ_INT(go_pclntab_open(elf, &t), -E2BIG);
	CHECK_EQ_INT(go_table_build(elf, &cfi_default_budget, &rows, &lo, &hi, &st), -E2BIG);
	CHECK(st.over_budget && !strcmp(st.over_budget, "the size of .gopclntab"));
	elf_end(elf);
	free(img);
}

int main(void)
{
	elf_version(EV_CURRENT);
	RUN(real_table_reads);
	RUN(rows_unwind_go);
	RUN(overlay_keeps_c_rows);
	RUN(hostile_tables);
	RUN(shared_pcsp_refused);
	RUN(code_reads_through_windows);
	RUN(rows_restore_saved_bp);
	RUN(huge_section_refused_unread);
	return test_summary();
}
