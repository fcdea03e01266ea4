// SPDX-License-Identifier: BSD-2-Clause
/*
 * .eh_frame to unwind rows (unwind/cfi_table.c), checked row by row against
 * binutils' own interpretation (readelf --debug-dump=frames-interp) on a
 * fixture built -O2 -fomit-frame-pointer, on /bin/ls and on libc: every
 * row readelf prints must be the table's row at that address. No BPF, no root.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"
#include "unwind/cfi_table.h"

#define MAX_CIES 4096

struct oracle {
	size_t rows, mismatches, fdes;
	char first_mismatch[256];
};

static int open_table(const char *path, struct cfi_table *t, int *fd_out, Elf **elf_out)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *elf;
	int err;

	memset(t, 0, sizeof(*t));
	*fd_out = fd;
	*elf_out = NULL;
	if (fd < 0)
		return -errno;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	*elf_out = elf;
	if (!elf)
		return -EINVAL;
	err = cfi_table_build(elf, t);
	return err;
}

static void close_table(struct cfi_table *t, int fd, Elf *elf)
{
	cfi_table_free(t);
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
}

/* Whether the row readelf printed (cfa text, rbp text, ra text) is `r`. */
static bool row_matches(const struct cfi_row *r, const char *cfa, const char *rbp, const char *ra,
			bool signal_cie)
{
	long off;

	if (signal_cie)
		return r->cfa == UNWIND_CFA_SIGNAL;
	if (!strcmp(ra, "u"))
		return r->cfa == UNWIND_CFA_ROOT || r->cfa == UNWIND_CFA_NONE;
	if (strcmp(ra, "c-8"))
		return r->cfa == UNWIND_CFA_NONE;
	if (sscanf(cfa, "rsp+%ld", &off) == 1) {
		if (r->cfa != UNWIND_CFA_SP || r->cfa_offset != off)
			return false;
	} else if (sscanf(cfa, "rbp+%ld", &off) == 1) {
		if (r->cfa != UNWIND_CFA_FP || r->cfa_offset != off)
			return false;
	} else if (!strcmp(cfa, "exp")) {
		return r->cfa == UNWIND_CFA_PLT || r->cfa == UNWIND_CFA_NONE;
	} else {
		return r->cfa == UNWIND_CFA_NONE;
	}
	if (!rbp || !strcmp(rbp, "u") || !strcmp(rbp, "s"))
		return r->fp == UNWIND_FP_SAME;
	if (sscanf(rbp, "c%ld", &off) == 1)
		return r->fp == UNWIND_FP_SAVED && r->fp_offset == off;
	return r->cfa == UNWIND_CFA_NONE;
}

/* Compare every row readelf prints for `path` with the table's. */
static void compare_with_readelf(const char *path, const struct cfi_table *t, struct oracle *o)
{
	char cmd[512], line[1024];
	unsigned long cie_off[MAX_CIES];
	bool cie_signal[MAX_CIES];
	size_t ncies = 0;
	int rbp_col = -1, ra_col = -1;
	bool in_fde = false, signal = false;
	FILE *f;

	memset(o, 0, sizeof(*o));
	snprintf(cmd, sizeof(cmd), "'%s' --debug-dump=frames-interp '%s' 2>/dev/null", READELF_PATH,
		 path);
	f = popen(cmd, "r");
	CHECK(f != NULL);
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long off, cie;
		char aug[32], *cols[16], *tok, *save;
		int n = 0;

		if (sscanf(line, "%lx %*x %*x CIE \"%31[^\"]\"", &off, aug) == 2) {
			in_fde = false;
			if (ncies < MAX_CIES) {
				cie_off[ncies] = off;
				cie_signal[ncies++] = strchr(aug, 'S') != NULL;
			}
			continue;
		}
		if (sscanf(line, "%lx %*x %*x FDE cie=%lx", &off, &cie) == 2) {
			in_fde = true;
			signal = false;
			o->fdes++;
			for (size_t i = 0; i < ncies; i++)
				if (cie_off[i] == cie)
					signal = cie_signal[i];
			continue;
		}
		/* A register held in another prints as "r10 (r10)": one column, not two. */
		for (char *q = strstr(line, " ("); q; q = strstr(q, " ("))
			memmove(q, q + 1, strlen(q));
		for (tok = strtok_r(line, " \t\n", &save); tok && n < 16;
		     tok = strtok_r(NULL, " \t\n", &save))
			cols[n++] = tok;
		if (n >= 2 && !strcmp(cols[0], "LOC")) {
			rbp_col = ra_col = -1;
			for (int i = 0; i < n; i++) {
				if (!strcmp(cols[i], "rbp"))
					rbp_col = i;
				if (!strcmp(cols[i], "ra"))
					ra_col = i;
			}
			continue;
		}
		if (!in_fde || n < 3 || strlen(cols[0]) != 16 || ra_col < 0 || ra_col >= n)
			continue;
		{
			uint64_t loc = strtoull(cols[0], NULL, 16);
			const struct cfi_row *r = cfi_table_lookup(t, loc);
			const char *rbp = rbp_col >= 0 && rbp_col < n ? cols[rbp_col] : NULL;

			o->rows++;
			if (!r || !row_matches(r, cols[1], rbp, cols[ra_col], signal)) {
				if (!o->mismatches++)
					snprintf(o->first_mismatch, sizeof(o->first_mismatch),
						 "%s at %#lx: readelf cfa %s rbp %s ra %s; table "
						 "cfa %d%+d fp %d%+d",
						 path, (unsigned long)loc, cols[1], rbp ? rbp : "-",
						 cols[ra_col], r ? r->cfa : -1,
						 r ? r->cfa_offset : 0, r ? r->fp : -1,
						 r ? r->fp_offset : 0);
			}
		}
	}
	/* Its exit status is left alone: readelf warns (status 1) about libc's unusual opcodes. */
	pclose(f);
}

static void check_against_readelf(const char *path, size_t min_rows)
{
	struct cfi_table t;
	struct oracle o;
	Elf *elf;
	int fd;

	CHECK_EQ_INT(open_table(path, &t, &fd, &elf), 0);
	compare_with_readelf(path, &t, &o);
	fprintf(stderr,
		"  %s: %zu table rows from %zu FDEs (%zu read); readelf rows %zu, %zu differ%s%s\n",
		path, t.len, t.stats.fdes, t.stats.rows_read, o.rows, o.mismatches,
		o.mismatches ? ", first: " : "", o.first_mismatch);
	CHECK(o.rows >= min_rows);
	CHECK_EQ_INT(o.mismatches, 0);
	CHECK_EQ_INT(t.stats.broken_fdes, 0);
	for (size_t i = 1; i < t.len; i++)
		CHECK(t.rows[i - 1].pc < t.rows[i].pc);
	close_table(&t, fd, elf);
}

static void fixture_rows_are_readelfs(void)
{
	struct cfi_table t;
	size_t sp = 0, fp = 0, plt = 0, saved_fp = 0;
	Elf *elf;
	int fd;

	check_against_readelf(CFI_FIX, 10);
	/* The shapes the fixture was built to have are all there. */
	CHECK_EQ_INT(open_table(CFI_FIX, &t, &fd, &elf), 0);
	for (size_t i = 0; i < t.len; i++) {
		sp += t.rows[i].cfa == UNWIND_CFA_SP;
		fp += t.rows[i].cfa == UNWIND_CFA_FP;
		plt += t.rows[i].cfa == UNWIND_CFA_PLT;
		saved_fp += t.rows[i].fp == UNWIND_FP_SAVED;
	}
	CHECK(sp > 0);
	CHECK(fp > 0);	/* alloca: CFA from rbp */
	CHECK(plt > 0); /* calls into libc */
	CHECK(saved_fp > 0);
	close_table(&t, fd, elf);
}

/* The libc this test runs with, from its own maps (its path differs between distributions). */
static bool own_libc(char *path, size_t size)
{
	char line[4096], file[4096];
	bool found = false;
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%*s %*s %*s %*s %*s %4095s", file) == 1 &&
		    strstr(file, "/libc.so")) {
			snprintf(path, size, "%s", file);
			found = true;
		}
	fclose(f);
	return found;
}

static void system_binaries_rows_are_readelfs(void)
{
	char libc[4096];

	check_against_readelf("/bin/ls", 1000);
	CHECK(own_libc(libc, sizeof(libc)));
	check_against_readelf(libc, 10000);
}

static void lookup_finds_the_row_in_force(void)
{
	struct cfi_row rows[] = {
		{ .pc = 0x1000, .cfa = UNWIND_CFA_SP, .cfa_offset = 8 },
		{ .pc = 0x1004, .cfa = UNWIND_CFA_SP, .cfa_offset = 16 },
		{ .pc = 0x1010, .cfa = UNWIND_CFA_NONE },
	};
	struct cfi_table t = { .rows = rows, .len = 3 };

	CHECK(cfi_table_lookup(&t, 0xfff) == NULL);
	CHECK(cfi_table_lookup(&t, 0x1000) == &rows[0]);
	CHECK(cfi_table_lookup(&t, 0x1003) == &rows[0]);
	CHECK(cfi_table_lookup(&t, 0x1004) == &rows[1]);
	CHECK(cfi_table_lookup(&t, 0x100f) == &rows[1]);
	CHECK(cfi_table_lookup(&t, 0xffffffff) == &rows[2]);
}

/*
 * gcc -static links without .eh_frame_hdr: the FDEs are found in .eh_frame
 * itself, and the table is the one the index gives, row for row. Without
 * .eh_frame either, there is no CFI.
 */
static void no_index_reads_eh_frame(void)
{
	struct cfi_table indexed, walked, none;
	Elf *elf1, *elf2, *elf3;
	int fd1, fd2, fd3;

	CHECK_EQ_INT(open_table(CFI_FIX, &indexed, &fd1, &elf1), 0);
	CHECK_EQ_INT(open_table(CFI_FIX_NO_HDR, &walked, &fd2, &elf2), 0);
	CHECK(indexed.len > 10);
	CHECK_EQ_INT(walked.len, indexed.len);
	CHECK_EQ_INT(walked.stats.fdes, indexed.stats.fdes);
	for (size_t i = 0; i < walked.len && i < indexed.len; i++) {
		const struct cfi_row *a = &walked.rows[i], *b = &indexed.rows[i];

		CHECK(a->pc == b->pc && a->cfa == b->cfa && a->cfa_offset == b->cfa_offset &&
		      a->fp == b->fp && a->fp_offset == b->fp_offset &&
		      a->plt_threshold == b->plt_threshold);
	}
	close_table(&indexed, fd1, elf1);
	close_table(&walked, fd2, elf2);
	check_against_readelf(CFI_FIX_NO_HDR, 10);

	CHECK_EQ_INT(open_table(CFI_FIX_NO_CFI, &none, &fd3, &elf3), -ENOENT);
	CHECK_EQ_INT(none.len, 0);
	close_table(&none, fd3, elf3);
}

int main(void)
{
	elf_version(EV_CURRENT);
	RUN(lookup_finds_the_row_in_force);
	RUN(fixture_rows_are_readelfs);
	RUN(system_binaries_rows_are_readelfs);
	RUN(no_index_reads_eh_frame);
	return test_summary();
}
