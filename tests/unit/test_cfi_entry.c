// SPDX-License-Identifier: BSD-2-Clause
/*
 * The entry point no FDE covers is a root row (unwind/cfi_entry.c): on a
 * fixture whose _start is assembly without CFI, as ld.so's entry is; the
 * dynamic loader itself when the machine has one like it; and a program
 * whose crt1 _start has its own FDE stays as its CFI says. No BPF, no root.
 */
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"
#include "unwind/cfi_entry.h"
#include "unwind/cfi_table.h"

struct built {
	int fd;
	Elf *elf;
	struct cfi_table t;
	uint64_t entry;
};

static int build(const char *path, struct built *b)
{
	GElf_Ehdr eh;

	memset(b, 0, sizeof(*b));
	b->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (b->fd < 0)
		return -1;
	b->elf = elf_begin(b->fd, ELF_C_READ_MMAP, NULL);
	if (!b->elf || !gelf_getehdr(b->elf, &eh))
		return -1;
	b->entry = eh.e_entry;
	return cfi_table_build(b->elf, &b->t);
}

static void done(struct built *b)
{
	cfi_table_free(&b->t);
	if (b->elf)
		elf_end(b->elf);
	if (b->fd >= 0)
		close(b->fd);
}

static int cfa_at(const struct built *b, uint64_t pc)
{
	const struct cfi_row *r = cfi_table_lookup(&b->t, pc);

	return r ? r->cfa : -1;
}

/* No two neighbours equal but for pc, sorted: the form the store packs. */
static void check_form(const struct built *b)
{
	for (size_t i = 1; i < b->t.len; i++) {
		const struct cfi_row *p = &b->t.rows[i - 1], *r = &b->t.rows[i];

		CHECK(p->pc < r->pc);
		CHECK(!(p->cfa == r->cfa && p->cfa_offset == r->cfa_offset && p->fp == r->fp &&
			p->fp_offset == r->fp_offset && p->plt_threshold == r->plt_threshold));
	}
}

static void assembly_entry_is_a_root(void)
{
	struct built b;

	CHECK_EQ_INT(build(ENTRY_FIX, &b), 0);
	CHECK(b.t.stats.entry_root);
	/* _start: xor, mov, and, call: 14 bytes, each a root; the C function after is not. */
	for (uint64_t pc = b.entry; pc < b.entry + 14; pc++)
		CHECK_EQ_INT(cfa_at(&b, pc), UNWIND_CFA_ROOT);
	CHECK(cfa_at(&b, b.entry + CFI_ENTRY_GAP_MAX) != UNWIND_CFA_ROOT);
	check_form(&b);
	done(&b);
}

static void crt1_entry_is_left_alone(void)
{
	struct built b;
	size_t len;

	CHECK_EQ_INT(build(CFI_FIX, &b), 0);
	len = b.t.len;
	CHECK(!b.t.stats.entry_root);
	/* glibc's _start says itself that it has no caller. */
	CHECK_EQ_INT(cfa_at(&b, b.entry), UNWIND_CFA_ROOT);
	CHECK_EQ_INT(b.t.len, len);
	done(&b);
}

static void dynamic_loader_entry_is_a_root(void)
{
	static const char *const loaders[] = { "/lib64/ld-linux-x86-64.so.2",
					       "/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2" };
	struct built b;

	for (size_t i = 0; i < sizeof(loaders) / sizeof(loaders[0]); i++) {
		if (access(loaders[i], R_OK))
			continue;
		CHECK_EQ_INT(build(loaders[i], &b), 0);
		/* Made a root, or one by its own CFI: never a gap where the walk stops. */
		printf("%s: entry 0x%llx, %s\n", loaders[i], (unsigned long long)b.entry,
		       b.t.stats.entry_root ? "a gap made a root" : "its own CFI");
		CHECK_EQ_INT(cfa_at(&b, b.entry), UNWIND_CFA_ROOT);
		check_form(&b);
		done(&b);
		return;
	}
	printf("no x86_64 dynamic loader here: not checked\n");
}

int main(void)
{
	elf_version(EV_CURRENT);
	RUN(assembly_entry_is_a_root);
	RUN(crt1_entry_is_left_alone);
	RUN(dynamic_loader_entry_is_a_root);
	return test_summary();
}
