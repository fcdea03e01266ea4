// SPDX-License-Identifier: BSD-2-Clause
/*
 * Go's files and lines decoded once per function, within a budget per
 * binary (lang/go_lines.c, issue 37). On a real Go binary (Debian's `go`
 * command) they are go_pclntab_line's, address for address. On a hostile
 * table whose functions share one stream of 2^20 steps that cover no code
 * (what made each distinct sampled address cost ~1.7 ms): each function is
 * decoded once however many of its addresses are asked, and the binary's
 * decoding stops at its budget, after which lookups cost nothing. Steps
 * are counted, not timed. No root.
 */
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "go_image.h"
#include "lang/go_lines.h"
#include "lang/go_pclntab.h"
#include "test.h"

#ifndef GO_BINARY
#define GO_BINARY "/usr/lib/go/bin/go"
#endif

static void same_as_walking_on_a_real_binary(void)
{
	int fd = open(GO_BINARY, O_RDONLY | O_CLOEXEC);
	Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
	struct go_lines *l = go_lines_new();
	struct go_pclntab t;
	size_t asked = 0, named = 0, differ = 0;

	CHECK(elf != NULL && l != NULL);
	if (!elf || !l || go_pclntab_open(elf, &t)) {
		CHECK(!"the go command's table");
		goto out;
	}
	for (uint32_t i = 0; i < t.nfunc; i++) {
		struct go_func f;

		if (!go_pclntab_func(&t, i, &f) || f.end <= f.entry)
			continue;
		/* The entry, a few addresses inside, the last byte, and past the end. */
		for (uint64_t pc = f.entry; pc <= f.end; pc += (f.end - f.entry) / 5 + 1) {
			const char *fa = NULL, *fb = NULL;
			int la = 0, lb = 0;
			bool a = go_pclntab_line(&t, &f, pc, &fa, &la);
			bool b = go_lines_at(l, &t, &f, pc, &fb, &lb);

			asked++;
			named += a;
			differ += a != b || (a && (la != lb || strcmp(fa, fb)));
		}
	}
	fprintf(stderr,
		"  %zu addresses of %u functions, %zu with a line, %zu differ; "
		"%llu steps decoded, %zu bytes kept\n",
		asked, t.nfunc, named, differ, (unsigned long long)go_lines_steps(l),
		go_lines_bytes(l));
	CHECK(named > asked / 2);
	CHECK_EQ_INT(differ, 0);
	/* Every function's two tables, decoded once each, well within the budget. */
	CHECK(go_lines_steps(l) < GO_LINES_STEPS / 4);
	go_pclntab_close(&t);
out:
	go_lines_free(l);
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
}

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

enum { SPAN = 1 << 20, NOISE = (1 << 19) - 4, TEXT = 0x401000 };

/*
 * A Go 1.20 table of `nfunc` functions SPAN bytes apart, all of one record
 * whose file and line tables are one stream: NOISE pairs of steps that
 * cover no code (value +1, then -1), then value 1 over the whole function.
 */
static uint8_t *noisy_line_table(size_t *size, uint32_t nfunc)
{
	enum { HDR = 72 };
	size_t names = HDR, cutab = names + 4, filetab = cutab + 8, pctab = filetab + 8;
	size_t stream = 2 + 4 * (size_t)NOISE + 5;
	size_t functab = (pctab + 1 + stream + 3) & ~(size_t)3;
	size_t record = functab + 8 * ((size_t)nfunc + 1);
	uint8_t *t, *p;

	*size = record + 48;
	t = calloc(1, *size);
	if (!t)
		return NULL;
	go_image_header(t, nfunc, TEXT, names, cutab, filetab, pctab, functab);
	memcpy(t + names, "f", 2);
	/* cutab: files 0 and 1 are both "x.go" */
	memcpy(t + filetab, "x.go", 5);
	p = t + pctab + 1;
	*p++ = 2; /* value 0, no code */
	*p++ = 0;
	for (size_t i = 0; i < NOISE; i++) {
		*p++ = 2; /* +1 */
		*p++ = 0;
		*p++ = 1; /* -1 */
		*p++ = 0;
	}
	*p++ = 2; /* value 1 over SPAN bytes (a varint of 0x100000) */
	*p++ = 0x80;
	*p++ = 0x80;
	*p++ = 0x40;
	*p++ = 0;
	for (uint32_t i = 0; i <= nfunc; i++) {
		put32(t + functab + 8 * (size_t)i, i * SPAN);
		put32(t + functab + 8 * (size_t)i + 4, (uint32_t)(record - functab));
	}
	/* entryoff nameoff args deferreturn pcsp pcfile pcln npcdata cu startLine id flag */
	put32(t + record + 20, 1);
	put32(t + record + 24, 1);
	return t;
}

static void hostile_table_is_decoded_once_within_budget(void)
{
	enum { NFUNC = 64, PER_FUNC = 80 };
	size_t size;
	uint8_t *bytes = noisy_line_table(&size, NFUNC);
	struct go_lines *l = go_lines_new();
	struct go_pclntab t;
	struct go_func f;
	const char *file;
	uint64_t one;
	size_t named = 0;
	int line;

	CHECK(bytes && l);
	if (!bytes || !l || go_pclntab_from_bytes(bytes, size, TEXT, &t)) {
		CHECK(!"the hostile table");
		go_lines_free(l);
		return;
	}
	/* As walked: the line is there, after the whole stream. */
	CHECK(go_pclntab_func(&t, 0, &f));
	CHECK(go_pclntab_line(&t, &f, f.entry + 100, &file, &line) && line == 1);

	/* Function 0's many addresses: its tables (here one stream) decoded once. */
	for (uint64_t k = 0; k < PER_FUNC; k++)
		named += go_lines_at(l, &t, &f, f.entry + 1 + 997 * k, &file, &line) && line == 1 &&
			 !strcmp(file, "x.go");
	one = go_lines_steps(l);
	fprintf(stderr, "  %zu of %d addresses of one function named, %llu steps\n", named,
		PER_FUNC, (unsigned long long)one);
	CHECK_EQ_INT(named, PER_FUNC);
	CHECK(one >= 2 * (uint64_t)NOISE && one <= 2 * (2 * (uint64_t)NOISE + 2));

	/* Every function's addresses: decoding stops at the budget, then costs nothing. */
	named = 0;
	for (uint32_t i = 0; i < NFUNC; i++) {
		CHECK(go_pclntab_func(&t, i, &f));
		for (uint64_t k = 0; k < PER_FUNC; k++)
			named += go_lines_at(l, &t, &f, f.entry + 1 + 997 * k, &file, &line);
	}
	fprintf(stderr, "  %zu of %d addresses named, %llu steps (budget %u)\n", named,
		NFUNC * PER_FUNC, (unsigned long long)go_lines_steps(l), GO_LINES_STEPS);
	CHECK(go_lines_steps(l) <= GO_LINES_STEPS);
	/* Walked per address, that would have been 4 * 2^20 steps for each. */
	CHECK(named >= (GO_LINES_STEPS / one - 1) * PER_FUNC && named < NFUNC * PER_FUNC);
	/* Those decoded still answer, and memory is a range or two per table. */
	CHECK(go_pclntab_func(&t, 0, &f) && go_lines_at(l, &t, &f, f.entry + 5, &file, &line));
	CHECK(go_lines_bytes(l) < 64 * 1024 + 2 * NFUNC * 64);
	/* The last function was past the budget; the next profile decodes it. */
	CHECK(go_pclntab_func(&t, NFUNC - 1, &f));
	CHECK(!go_lines_at(l, &t, &f, f.entry + 1, &file, &line));
	go_lines_new_profile(l);
	CHECK_EQ_INT(go_lines_steps(l), 0);
	CHECK(go_lines_at(l, &t, &f, f.entry + 1, &file, &line) && line == 1);
	go_pclntab_close(&t);
	go_lines_free(l);
}

int main(void)
{
	elf_version(EV_CURRENT);
	RUN(same_as_walking_on_a_real_binary);
	RUN(hostile_table_is_decoded_once_within_budget);
	return test_summary();
}
