// SPDX-License-Identifier: BSD-2-Clause
/*
 * Ruby frames (issue 40): an iseq's line from its succinct index
 * (lang/ruby_lines.c), against a plain count; naming iseqs from a fake
 * process's memory (lang/ruby_procs.c), hostile ones included; and, where
 * Debian's libruby is installed, what ruby_info_read finds in it.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lang/ruby_layout.h"
#include "lang/ruby_lines.h"
#include "lang/proc_mem.h"
#include "lang/ruby_procs.h"
#include "ruby_image.h"
#include "test.h"
#include "util/elf_open.h"

#define LIBRUBY "/usr/lib/x86_64-linux-gnu/libruby-3.1.so.3.1"

/* Every position's line, for entries at `pos` (each entry's line: 100 + its index). */
static void check_lines(uint32_t max_pos, const uint32_t *pos, uint32_t n)
{
	uint8_t *entries = calloc(n, 12), *table = rb_image_succ_table(max_pos, pos, n);
	struct ruby_lines l = { entries, n, 12, 0, table, ruby_succ_table_bytes(max_pos) };
	unsigned wrong = 0;

	CHECK(entries && table);
	if (!entries || !table)
		goto out;
	for (uint32_t i = 0; i < n; i++) {
		int line = 100 + (int)i;

		memcpy(entries + 12 * i, &line, 4);
	}
	for (uint32_t p = 0, e = 0; p < max_pos; p++) {
		while (e + 1 < n && pos[e + 1] <= p)
			e++;
		wrong += ruby_line_at(&l, p) != 100 + (int)e;
	}
	CHECK_EQ_INT(wrong, 0);
	/* Past the table (a hostile pc): no line, no read past it. */
	CHECK_EQ_INT(ruby_line_at(&l, max_pos + 100000), 0);
out:
	free(entries);
	free(table);
}

static void test_lines(void)
{
	static uint32_t pos[4096];
	uint32_t n = 0;

	/* Small: within the immediate part only. */
	pos[n++] = 0, pos[n++] = 3, pos[n++] = 9, pos[n++] = 40;
	check_lines(50, pos, n);
	/* Across blocks: a start every 1 to 7 words over 3000 words. */
	n = 0;
	srand(7);
	for (uint32_t p = 0; p < 3000 && n < 4096; p += 1 + (uint32_t)(rand() % 7))
		pos[n++] = p;
	check_lines(3000, pos, n);
	/* One entry: its line whatever the position, with no table. */
	{
		uint8_t entry[12] = { 42 };
		struct ruby_lines l = { entry, 1, 12, 0, NULL, 0 };

		CHECK_EQ_INT(ruby_line_at(&l, 12345), 42);
	}
}

/* A fake process: one pid, memory at [base, base + size). */
struct fake_mem {
	uint32_t pid;
	uint64_t base;
	uint8_t bytes[16384];
};

static ssize_t fake_read(void *ctx, uint32_t pid, uint64_t addr, void *buf, size_t len)
{
	struct fake_mem *m = ctx;

	if (pid != m->pid || addr < m->base || addr - m->base > sizeof(m->bytes) ||
	    len > sizeof(m->bytes) - (addr - m->base))
		return -1;
	memcpy(buf, m->bytes + (addr - m->base), len);
	return (ssize_t)len;
}

static void put64(struct fake_mem *m, uint64_t at, uint64_t v)
{
	memcpy(m->bytes + at, &v, 8);
}

/* A String at `at`: embedded when short, else its bytes at `heap`. */
static void put_string(struct fake_mem *m, const struct ruby_code_layout *l, uint64_t at,
		       const char *s, uint64_t heap)
{
	size_t len = strlen(s);

	if (len < 24) {
		put64(m, at, RUBY_TYPE_STRING | (uint64_t)len << l->rstring_embed_shift);
		memcpy(m->bytes + at + l->rstring_embed, s, len);
	} else {
		put64(m, at, RUBY_TYPE_STRING | l->rstring_noembed);
		put64(m, at + l->rstring_heap_len, len);
		put64(m, at + l->rstring_heap_ptr, m->base + heap);
		memcpy(m->bytes + heap, s, len);
	}
}

/*
 * An iseq at 0x100 (body at 0x200): label "block in rb_inner", pathobj
 * [path, realpath] at 0x400, first line 7, 200 words with entries
 * starting at 0, 60 and 130 (lines 8, 9, 10).
 */
static void fake_iseq(struct fake_mem *m, const struct ruby_code_layout *l)
{
	static const uint32_t pos[] = { 0, 60, 130 };
	uint8_t *table = rb_image_succ_table(200, pos, 3);
	uint32_t size = 200, n = 3;

	memset(m->bytes, 0, sizeof(m->bytes));
	put64(m, 0x100, RUBY_TYPE_IMEMO | (uint64_t)l->imemo_iseq << 12);
	put64(m, 0x100 + l->iseq_body, m->base + 0x200);
	put64(m, 0x200 + l->body_iseq_encoded, m->base + 0x4000);
	memcpy(m->bytes + 0x200 + l->body_iseq_size, &size, 4);
	put64(m, 0x200 + l->body_label, m->base + 0x300);
	put64(m, 0x200 + l->body_pathobj, m->base + 0x400);
	put64(m, 0x200 + l->body_first_lineno, 7 << 1 | 1);
	put64(m, 0x200 + l->body_insns_body, m->base + 0x800);
	memcpy(m->bytes + 0x200 + l->body_insns_size, &n, 4);
	put64(m, 0x200 + l->body_succ_table, m->base + 0x900);
	put_string(m, l, 0x300, "block in rb_inner", 0);
	put64(m, 0x400, RUBY_TYPE_ARRAY | l->rarray_embed_flag | 2ull << l->rarray_embed_shift);
	put64(m, 0x400 + l->rarray_embed, m->base + 0x500);
	put64(m, 0x400 + l->rarray_embed + 8, m->base + 0x600);
	put_string(m, l, 0x500, "rbfuncs.rb", 0);
	put_string(m, l, 0x600, "/srv/app/lib/a/long/way/down/rbfuncs.rb", 0x700);
	for (uint32_t i = 0; i < n; i++) {
		int line = 8 + (int)i;

		memcpy(m->bytes + 0x800 + 12 * i, &line, 4);
	}
	memcpy(m->bytes + 0x900, table, ruby_succ_table_bytes(200));
	free(table);
}

static struct fake_mem mem = { .pid = 77, .base = 0x7f0000000000 };

/* The registry reading `mem`, after `change` made the fake iseq hostile (NULL: none). */
static struct ruby_procs *fake_procs(void (*change)(const struct ruby_code_layout *l))
{
	struct ruby_procs *p = ruby_procs_new();
	const struct ruby_code_layout *code;
	struct rb_layout frames;

	CHECK(ruby_layout_for(0x030102, &frames, &code));
	fake_iseq(&mem, code);
	if (change)
		change(code);
	ruby_procs_set_reader(p, fake_read, &mem);
	CHECK_EQ_INT(ruby_procs_add(p, 77, 1000, code, "/srv"), 0);
	return p;
}

static void test_names(void)
{
	const struct ruby_code_layout *code;
	struct rb_layout frames;
	struct ruby_location loc;
	struct ruby_procs *p = fake_procs(NULL);
	uint64_t iseq = mem.base + 0x100, enc = mem.base + 0x4000;

	CHECK(!ruby_layout_for(0x020700, &frames, &code));
	/* The pc is the next instruction's: word 70's pc names word 69, in the second entry. */
	CHECK_EQ_INT(ruby_procs_resolve(p, 77, iseq, enc + 8 * 70, &loc), 0);
	CHECK_EQ_STR(loc.label, "block in rb_inner");
	CHECK_EQ_STR(loc.path, "/srv/app/lib/a/long/way/down/rbfuncs.rb");
	CHECK_EQ_INT(loc.first_line, 7);
	CHECK_EQ_INT(loc.line, 9);
	CHECK_EQ_INT(ruby_procs_resolve(p, 77, iseq, enc + 8 * 150, &loc), 0);
	CHECK_EQ_INT(loc.line, 10);
	/* A pc outside the iseq (hostile): its first line. */
	CHECK_EQ_INT(ruby_procs_resolve(p, 77, iseq, enc - 8, &loc), 0);
	CHECK_EQ_INT(loc.line, 7);
	CHECK_EQ_INT(ruby_procs_resolve(p, 77, iseq, enc + 8 * 100000, &loc), 0);
	CHECK_EQ_INT(loc.line, 7);
	/* Not an iseq: a String's address. */
	CHECK_EQ_INT(ruby_procs_resolve(p, 77, mem.base + 0x300, 0, &loc), -ENOENT);
	/* Unreadable. */
	CHECK_EQ_INT(ruby_procs_resolve(p, 77, 0x1000, 0, &loc), -EIO);
	/* Not a Ruby process known here. */
	CHECK_EQ_INT(ruby_procs_resolve(p, 78, iseq, enc, &loc), -ENOENT);
	ruby_procs_free(p);
}

/* Hostile lengths: a label of 2^62 bytes, a line table of 2^32 entries; a relative path. */
static void make_hostile(const struct ruby_code_layout *l)
{
	uint32_t n = 0xffffffff;

	put64(&mem, 0x300, RUBY_TYPE_STRING | l->rstring_noembed);
	put64(&mem, 0x300 + l->rstring_heap_len, 1ull << 62);
	memcpy(mem.bytes + 0x200 + l->body_insns_size, &n, 4);
	/* A plain String pathobj, relative: made absolute against the cwd. */
	put64(&mem, 0x200 + l->body_pathobj, mem.base + 0x500);
}

static void test_hostile(void)
{
	struct ruby_location loc;
	struct ruby_procs *p = fake_procs(make_hostile);
	uint64_t iseq = mem.base + 0x100, enc = mem.base + 0x4000;

	CHECK_EQ_INT(ruby_procs_resolve(p, 77, iseq, enc + 8 * 70, &loc), 0);
	CHECK_EQ_STR(loc.label, "[unknown Ruby method]");
	CHECK_EQ_STR(loc.path, "/srv/rbfuncs.rb");
	CHECK_EQ_INT(loc.line, 7);
	/* Past the process's budget: not read, named so. */
	ruby_procs_set_limits(p, 1, 1, 500);
	ruby_procs_set_reader(p, fake_read, &mem);
	CHECK_EQ_INT(ruby_procs_resolve(p, 77, iseq, enc, &loc), 0);
	CHECK_EQ_INT(ruby_procs_resolve(p, 77, iseq + 8, enc, &loc), 0);
	CHECK_EQ_STR(loc.label, "[Ruby code past bpfprof's memory budget]");
	ruby_procs_free(p);
}

/* Script paths: relative ones made absolute; "-e" and "<internal:...>" kept as they are. */
static void test_paths(void)
{
	static const char *const cases[][2] = {
		{ "./app.rb", "/srv/app.rb" },
		{ "lib/a.rb", "/srv/lib/a.rb" },
		{ "/abs/b.rb", "/abs/b.rb" },
		{ "-e", "-e" },
		{ "<internal:kernel>", "<internal:kernel>" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = proc_path_absolute("/srv", strdup(cases[i][0]));

		CHECK_EQ_STR(got, cases[i][1]);
		free(got);
	}
	CHECK(proc_path_absolute("/srv", NULL) == NULL);
}

/* Debian's libruby: a Ruby 3.1 with its ruby_current_ec found; else skipped by name. */
static void test_libruby(void)
{
	struct ruby_info info;
	int fd = open(LIBRUBY, O_RDONLY | O_CLOEXEC);
	Elf *elf;

	if (fd < 0) {
		fprintf(stderr, "skip: %s is not installed (apt-get install ruby)\n", LIBRUBY);
		return;
	}
	elf_version(EV_CURRENT);
	elf = elf_open_fd(fd);
	CHECK(elf);
	if (elf) {
		CHECK_EQ_INT(ruby_info_read(elf, &info), 1);
		CHECK_EQ_INT(info.version >> 8, 0x0301);
		CHECK(info.modid_slot && info.exec_start && info.exec_size > 1000);
		CHECK_EQ_INT(info.frames.cfp_size, 64);
		/* vm_exec_core: 17.5 KiB, apart from rb_vm_exec. */
		CHECK(info.core_end - info.core_start > 10000);
		CHECK(info.core_end <= info.exec_start ||
		      info.core_start >= info.exec_start + info.exec_size);
		elf_end(elf);
	}
	close(fd);
}

int main(void)
{
	RUN(test_lines);
	RUN(test_names);
	RUN(test_hostile);
	RUN(test_paths);
	RUN(test_libruby);
	return test_summary();
}
