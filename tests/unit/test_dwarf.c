// SPDX-License-Identifier: BSD-2-Clause
/*
 * Source lines and inlined frames from DWARF, through the symbolizer's API,
 * on a fixture built -O2 -g (fixtures/dwarf/dwarf_fix.c): outer_work()
 * calls mid_step() which calls leaf_mix(), both always inlined.
 *
 * Expected lines come from MARK_* comments in the fixture's source, and
 * binutils' addr2line (which shares no code with libdw) is the reference
 * for every address of outer_work(). The same answers are then required
 * of a stripped copy whose debug info is only in a separate file, found by
 * build-id or by .gnu_debuglink, and of a file deleted after registration.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "emit/profile_tables.h"
#include "model/model.h"
#include "symbols/elf_symtab.h"
#include "symbols/symbolizer.h"
#include "test.h"

/* The fixture's line numbers, from its marker comments. */
static struct {
	int leaf_def, leaf_body, mid_def, mid_call, outer_def, outer_call;
} mark;

/* outer_work() in the unstripped fixture. */
static struct elf_symtab fix;
static uint64_t outer_start, outer_size;

/* Line holding "/\* MARKER *\/" in the fixture source; 0 when absent. */
static int marker_line(const char *marker)
{
	char needle[64], buf[512];
	FILE *f = fopen(DWARF_FIX_SOURCE, "r");
	int line = 0, found = 0;

	if (!f)
		return 0;
	snprintf(needle, sizeof(needle), "/* %s */", marker);
	while (!found && fgets(buf, sizeof(buf), f)) {
		line++;
		if (strstr(buf, needle))
			found = line;
	}
	fclose(f);
	return found;
}

static const char *base_name(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;

	return slash ? slash + 1 : path;
}

/* File offset of a virtual address of the fixture, through its PT_LOAD. */
static uint64_t offset_of(uint64_t vaddr)
{
	for (size_t i = 0; i < fix.segments.len; i++) {
		const struct elf_segment *seg = &fix.segments.data[i];

		if (vaddr >= seg->vaddr && vaddr < seg->vaddr + seg->filesz)
			return vaddr - seg->vaddr + seg->offset;
	}
	return UINT64_MAX;
}

/* Register `path` as a process mapping, as the model does while the process lives. */
static int64_t register_file(struct symbolizer *s, const char *path)
{
	struct stat st;
	struct map_entry m = { .start = 0x10000,
			       .end = 0x20000,
			       .readable = true,
			       .executable = true,
			       .path = (char *)path };

	if (stat(path, &st))
		return -errno;
	m.dev = st.st_dev;
	m.inode = st.st_ino;
	return symbolizer_object_for_mapping(s, 4242, &m);
}

/* A symbolizer whose /proc is empty: only the path (or a kept fd) reaches files. */
static struct symbolizer *new_symbolizer(const char *debug_root)
{
	struct symbolizer *s = symbolizer_new("/nonexistent-proc", "/nonexistent/kallsyms");

	if (s && symbolizer_set_debug_root(s, debug_root)) {
		symbolizer_free(s);
		return NULL;
	}
	return s;
}

static int copy_file(const char *from, const char *to, const char *extra)
{
	char buf[65536];
	int in = open(from, O_RDONLY | O_CLOEXEC), out;
	ssize_t n;
	int err = 0;

	if (in < 0)
		return -errno;
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	if (out < 0) {
		close(in);
		return -errno;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			err = -EIO;
	if (n < 0)
		err = -errno;
	if (extra && write(out, extra, strlen(extra)) != (ssize_t)strlen(extra))
		err = -EIO;
	close(in);
	if (close(out))
		err = -errno;
	return err;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static void remove_tree(const char *dir)
{
	nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* The inline chain addr2line reports for `vaddr`, outer to inner; its length. */
static unsigned addr2line_chain(const char *binary, uint64_t vaddr, char names[][64], int *lines,
				unsigned max)
{
	char cmd[PATH_MAX * 2], fn[256], loc[PATH_MAX];
	char inner_names[RESOLVED_MAX_DEPTH][64];
	int inner_lines[RESOLVED_MAX_DEPTH];
	unsigned n = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "'%s' -i -f -e '%s' 0x%" PRIx64, ADDR2LINE_PATH, binary, vaddr);
	p = popen(cmd, "r");
	if (!p)
		return 0;
	/* Pairs of lines, innermost first: "function" then "file:line (discriminator N)". */
	while (n < max && n < RESOLVED_MAX_DEPTH && fgets(fn, sizeof(fn), p) &&
	       fgets(loc, sizeof(loc), p)) {
		char *colon = strrchr(loc, ':');

		fn[strcspn(fn, "\n")] = '\0';
		snprintf(inner_names[n], sizeof(inner_names[n]), "%.63s", fn);
		inner_lines[n] = colon ? atoi(colon + 1) : 0;
		n++;
	}
	pclose(p);
	for (unsigned i = 0; i < n; i++) {
		snprintf(names[i], 64, "%s", inner_names[n - 1 - i]);
		lines[i] = inner_lines[n - 1 - i];
	}
	return n;
}

static bool setup_fixture(void)
{
	const struct elf_sym *sym;

	mark.leaf_def = marker_line("MARK_LEAF_DEF");
	mark.leaf_body = marker_line("MARK_LEAF_BODY");
	mark.mid_def = marker_line("MARK_MID_DEF");
	mark.mid_call = marker_line("MARK_MID_CALL");
	mark.outer_def = marker_line("MARK_OUTER_DEF");
	mark.outer_call = marker_line("MARK_OUTER_CALL");
	CHECK(mark.leaf_def && mark.leaf_body && mark.mid_def && mark.mid_call && mark.outer_def &&
	      mark.outer_call);
	CHECK_EQ_INT(elf_symtab_load_path(&fix, DWARF_FIX, NULL), 0);
	sym = elf_symtab_find(&fix, "outer_work");
	CHECK(sym != NULL);
	if (!sym)
		return false;
	outer_start = sym->start;
	outer_size = sym->size;
	CHECK(outer_size > 0 && offset_of(outer_start) != UINT64_MAX);
	return outer_size > 0 && offset_of(outer_start) != UINT64_MAX && mark.leaf_body;
}

/* The first address of outer_work() whose chain is outer_work > mid_step > leaf_mix. */
static bool find_deepest(struct symbolizer *s, uint32_t obj, uint64_t *vaddr,
			 struct resolved_frame *f)
{
	for (uint64_t a = outer_start; a < outer_start + outer_size; a++) {
		symbolizer_resolve(s, obj, offset_of(a), false, f);
		if (f->count == 3) {
			*vaddr = a;
			return true;
		}
	}
	return false;
}

/* What every way of reaching the debug info must give at the deepest address. */
static void check_deep_chain(const struct resolved_frame *f)
{
	CHECK_EQ_INT(f->count, 3);
	CHECK_EQ_STR(f->items[0].func, "outer_work");
	CHECK_EQ_STR(f->items[1].func, "mid_step");
	CHECK_EQ_STR(f->items[2].func, "leaf_mix");
	for (unsigned k = 0; k < 3; k++)
		CHECK_EQ_STR(base_name(f->items[k].file), "dwarf_fix.c");
	/* Each function at its call of the next, the innermost at the address itself. */
	CHECK_EQ_INT(f->items[0].line, mark.outer_call);
	CHECK_EQ_INT(f->items[1].line, mark.mid_call);
	CHECK_EQ_INT(f->items[2].line, mark.leaf_body);
	CHECK_EQ_INT(f->items[0].start_line, mark.outer_def);
	CHECK_EQ_INT(f->items[1].start_line, mark.mid_def);
	CHECK_EQ_INT(f->items[2].start_line, mark.leaf_def);
}

static void test_inline_chain(void)
{
	struct symbolizer *s = new_symbolizer("/nonexistent-debug");
	struct resolved_frame f, g;
	char names[RESOLVED_MAX_DEPTH][64];
	int lines[RESOLVED_MAX_DEPTH];
	unsigned compared = 0, inlined = 0;
	const struct elf_sym *alias;
	uint64_t deep = 0;
	int64_t obj;

	CHECK(s != NULL);
	if (!s)
		return;
	obj = register_file(s, DWARF_FIX);
	CHECK(obj >= OBJ_FIRST_FILE);
	if (obj < 0)
		goto out;
	CHECK(find_deepest(s, (uint32_t)obj, &deep, &f));
	check_deep_chain(&f);
	CHECK_EQ_STR(f.resource, "dwarf_fix");
	CHECK(f.address == (int64_t)(deep - fix.base));

	/* A return address one past is looked up one byte back: the same chain. */
	symbolizer_resolve(s, (uint32_t)obj, offset_of(deep) + 1, true, &g);
	CHECK_EQ_INT(g.count, f.count);
	for (unsigned k = 0; k < f.count && k < g.count; k++) {
		CHECK(g.items[k].func == f.items[k].func);
		CHECK_EQ_INT(g.items[k].line, f.items[k].line);
	}

	/* Every address of outer_work(), against addr2line: the same functions and lines. */
	for (uint64_t a = outer_start; a < outer_start + outer_size; a++) {
		unsigned n = addr2line_chain(DWARF_FIX, a, names, lines, RESOLVED_MAX_DEPTH);

		symbolizer_resolve(s, (uint32_t)obj, offset_of(a), false, &f);
		CHECK_EQ_STR(f.items[0].func, "outer_work");
		CHECK_EQ_INT(f.count, n);
		for (unsigned k = 0; k < n && k < f.count; k++) {
			CHECK_EQ_STR(f.items[k].func, names[k]);
			CHECK_EQ_INT(f.items[k].line, lines[k]);
		}
		compared += n > 0;
		inlined += f.count > 1;
	}
	fprintf(stderr, "  %u addresses compared with addr2line, %u with inlined frames\n",
		compared, inlined);
	CHECK(compared == outer_size);
	CHECK(inlined > 0);

	/* DWARF calls it impl_twice; the symbol table's public name wins, as without DWARF. */
	alias = elf_symtab_find(&fix, "public_twice");
	CHECK(alias != NULL);
	if (alias) {
		symbolizer_resolve(s, (uint32_t)obj, offset_of(alias->start), false, &f);
		CHECK_EQ_STR(f.items[0].func, "public_twice");
		CHECK_EQ_INT(f.count, 1);
		CHECK_EQ_STR(base_name(f.items[0].file), "dwarf_fix.c");
		CHECK_EQ_INT(f.items[0].start_line, marker_line("MARK_TWICE_DEF"));
	}
out:
	symbolizer_free(s);
}

/* The frames of one resolved address become profile frames with depths, lines, funcs. */
static void resolve_with_symbolizer(void *ctx, const struct raw_frame *f,
				    struct resolved_frame *out)
{
	symbolizer_resolve(ctx, f->object, f->offset, f->is_return, out);
}

static void test_profile_tables(void)
{
	struct symbolizer *s = new_symbolizer("/nonexistent-debug");
	static const char *const names[] = { "outer_work", "mid_step", "leaf_mix" };
	const int *starts[] = { &mark.outer_def, &mark.mid_def, &mark.leaf_def };
	const int *lines[] = { &mark.outer_call, &mark.mid_call, &mark.leaf_body };
	struct profile_tables t;
	struct resolved_frame f;
	struct model m;
	uint64_t deep;
	uint32_t st;
	int64_t obj;

	model_init(&m, NULL, 0);
	CHECK(s != NULL);
	if (!s)
		return;
	obj = register_file(s, DWARF_FIX);
	if (obj < 0 || !find_deepest(s, (uint32_t)obj, &deep, &f)) {
		CHECK(!"no inlined address");
		goto out;
	}
	CHECK_EQ_INT(vec_push(&m.frames, ((struct raw_frame){ (uint32_t)obj, 0, offset_of(deep) })),
		     0);
	CHECK_EQ_INT(vec_push(&m.stacks, ((struct raw_stack){ NO_INDEX, 0 })), 0);
	CHECK_EQ_INT(profile_tables_build(&t, &m, resolve_with_symbolizer, s), 0);
	/* One raw frame, three profile frames: leaf first walking up the stack. */
	st = profile_stack_of(&t, 0);
	for (int k = 2; k >= 0; k--) {
		const struct pt_frame *fr;
		const struct pt_func *fn;

		CHECK(st != NO_INDEX);
		if (st == NO_INDEX)
			break;
		fr = &t.frames.data[t.stacks.data[st].frame];
		fn = &t.funcs.data[fr->func];
		CHECK_EQ_STR(strtab_get(&t.strings, fn->name), names[k]);
		CHECK_EQ_INT(fr->inline_depth, k);
		CHECK_EQ_INT(fr->line, *lines[k]);
		CHECK(fr->address == (int64_t)(deep - fix.base));
		/* funcTable.lineNumber is where the function starts; the source is its file. */
		CHECK_EQ_INT(fn->line, *starts[k]);
		CHECK(fn->source >= 0);
		if (fn->source >= 0)
			CHECK_EQ_STR(base_name(strtab_get(&t.strings, t.sources.data[fn->source])),
				     "dwarf_fix.c");
		st = t.stacks.data[st].prefix;
	}
	CHECK(st == NO_INDEX);
	profile_tables_free(&t);
out:
	model_free(&m);
	symbolizer_free(s);
}

/* A stripped copy: names and lines from the separate debug file, found by build-id. */
static void test_build_id_debug_file(void)
{
	char root[] = "/tmp/bpfprof-dwarf-XXXXXX", dir[PATH_MAX], link[PATH_MAX + 160];
	struct symbolizer *s = NULL, *bare = NULL;
	const struct elf_sym *start = elf_symtab_find(&fix, "_start");
	struct symbolizer_stats st;
	struct resolved_frame f;
	char expected[128];
	uint64_t deep;
	int64_t obj;

	CHECK(mkdtemp(root) != NULL);
	CHECK(strlen(fix.build_id) == 40);
	/* Lay the debug file out as DEBUG_ROOT/.build-id/xx/rest.debug. */
	snprintf(dir, sizeof(dir), "%s/.build-id", root);
	CHECK_EQ_INT(mkdir(dir, 0700), 0);
	snprintf(dir, sizeof(dir), "%s/.build-id/%.2s", root, fix.build_id);
	CHECK_EQ_INT(mkdir(dir, 0700), 0);
	snprintf(link, sizeof(link), "%s/%s.debug", dir, fix.build_id + 2);
	CHECK_EQ_INT(copy_file(DWARF_FIX_DEBUG, link, NULL), 0);

	s = new_symbolizer(root);
	CHECK(s != NULL);
	if (!s)
		goto out;
	obj = register_file(s, DWARF_FIX_STRIPPED);
	CHECK(obj >= OBJ_FIRST_FILE);
	if (obj < 0)
		goto out;
	CHECK(find_deepest(s, (uint32_t)obj, &deep, &f));
	check_deep_chain(&f);
	CHECK_EQ_STR(f.resource, "dwarf_fix.stripped");
	CHECK(f.lib && f.lib->build_id && !strcmp(f.lib->build_id, fix.build_id));
	/* _start has no DWARF (crt1.o) and is not exported: the debug file's .symtab names it. */
	CHECK(start != NULL);
	if (start) {
		symbolizer_resolve(s, (uint32_t)obj, offset_of(start->start), false, &f);
		CHECK_EQ_STR(f.items[0].func, "_start");
	}
	symbolizer_get_stats(s, &st);
	CHECK_EQ_INT(st.dwarf_objects, 1);
	CHECK(st.dwarf_bytes > 0 && st.bytes > st.dwarf_bytes);
	fprintf(stderr, "  DWARF state: %" PRIu64 " bytes of %" PRIu64 " held\n", st.dwarf_bytes,
		st.bytes);

	/* Without the debug file: no DWARF, no .symtab, only the "lib+0xOFF" fallback. */
	bare = new_symbolizer(dir); /* a directory without .build-id below it */
	CHECK(bare != NULL);
	if (!bare)
		goto out;
	obj = register_file(bare, DWARF_FIX_STRIPPED);
	CHECK(obj >= OBJ_FIRST_FILE);
	if (obj < 0)
		goto out;
	symbolizer_resolve(bare, (uint32_t)obj, offset_of(deep), false, &f);
	snprintf(expected, sizeof(expected), "dwarf_fix.stripped+0x%" PRIx64, offset_of(deep));
	CHECK_EQ_STR(f.items[0].func, expected);
	CHECK_EQ_INT(f.count, 1);
	CHECK(f.items[0].file == NULL && f.items[0].line == 0);
	symbolizer_get_stats(bare, &st);
	CHECK_EQ_INT(st.dwarf_objects, 0);
	symbolizer_free(bare);

	/* A debug file with DWARF and no .symtab: DWARF alone names every function. */
	CHECK_EQ_INT(copy_file(DWARF_FIX_NOSYM_DEBUG, link, NULL), 0);
	bare = new_symbolizer(root);
	obj = bare ? register_file(bare, DWARF_FIX_STRIPPED) : -ENOMEM;
	CHECK(obj >= OBJ_FIRST_FILE);
	if (obj < 0)
		goto out;
	symbolizer_resolve(bare, (uint32_t)obj, offset_of(deep), false, &f);
	check_deep_chain(&f);
	/* No symbol table could have named outer_work: neither file has it. */
	for (unsigned i = 0; i < 2; i++) {
		struct elf_symtab t = { 0 };

		CHECK_EQ_INT(elf_symtab_load_path(
				     &t, i ? DWARF_FIX_NOSYM_DEBUG : DWARF_FIX_STRIPPED, NULL),
			     0);
		CHECK(!t.has_symtab && elf_symtab_lookup(&t, deep) == NULL);
		elf_symtab_free(&t);
	}
	symbolizer_free(bare);

	/* Another build's debug file under the build-id path: refused. */
	CHECK_EQ_INT(copy_file(DWARF_FIX_OTHER_DEBUG, link, NULL), 0);
	bare = new_symbolizer(root);
	obj = bare ? register_file(bare, DWARF_FIX_STRIPPED) : -ENOMEM;
	CHECK(obj >= OBJ_FIRST_FILE);
	if (obj < 0)
		goto out;
	symbolizer_resolve(bare, (uint32_t)obj, offset_of(deep), false, &f);
	CHECK_EQ_STR(f.items[0].func, expected);
	CHECK(f.items[0].file == NULL);
out:
	symbolizer_free(s);
	symbolizer_free(bare);
	remove_tree(root);
}

/* No debug file is used for `bin`: the address `deep` has only the fallback name. */
static void check_unnamed(const char *bin, uint64_t deep)
{
	struct symbolizer *s = new_symbolizer("/nonexistent-debug");
	int64_t obj = s ? register_file(s, bin) : -ENOMEM;
	struct resolved_frame f;
	char expected[64];

	CHECK(obj >= OBJ_FIRST_FILE);
	if (obj >= 0 && deep) {
		symbolizer_resolve(s, (uint32_t)obj, offset_of(deep), false, &f);
		snprintf(expected, sizeof(expected), "app+0x%" PRIx64, offset_of(deep));
		CHECK_EQ_STR(f.items[0].func, expected);
		CHECK_EQ_INT(f.count, 1);
	}
	symbolizer_free(s);
}

/* A stripped binary with a .gnu_debuglink: the named file next to it, or in .debug/, if its CRC
 * matches. */
static void test_debuglink(void)
{
	char root[] = "/tmp/bpfprof-dwarf-XXXXXX", bin[PATH_MAX], dbg[PATH_MAX], sub[PATH_MAX];
	char moved[PATH_MAX + 32];
	struct resolved_frame f;
	struct symbolizer *s;
	uint64_t deep = 0;
	int64_t obj;

	CHECK(mkdtemp(root) != NULL);
	snprintf(bin, sizeof(bin), "%s/app", root);
	CHECK_EQ_INT(copy_file(DWARF_FIX_LINKED, bin, NULL), 0);

	/* 1. DIR/dwarf_fix.debug. The debug root is empty: build-id lookup cannot find it. */
	snprintf(dbg, sizeof(dbg), "%s/dwarf_fix.debug", root);
	CHECK_EQ_INT(copy_file(DWARF_FIX_DEBUG, dbg, NULL), 0);
	s = new_symbolizer("/nonexistent-debug");
	obj = s ? register_file(s, bin) : -ENOMEM;
	CHECK(obj >= OBJ_FIRST_FILE);
	if (obj >= 0) {
		CHECK(find_deepest(s, (uint32_t)obj, &deep, &f));
		check_deep_chain(&f);
	}
	symbolizer_free(s);

	/* 2. DIR/.debug/dwarf_fix.debug. */
	snprintf(sub, sizeof(sub), "%s/.debug", root);
	CHECK_EQ_INT(mkdir(sub, 0700), 0);
	snprintf(moved, sizeof(moved), "%s/dwarf_fix.debug", sub);
	CHECK_EQ_INT(rename(dbg, moved), 0);
	s = new_symbolizer("/nonexistent-debug");
	obj = s ? register_file(s, bin) : -ENOMEM;
	CHECK(obj >= OBJ_FIRST_FILE);
	if (obj >= 0) {
		CHECK(find_deepest(s, (uint32_t)obj, &deep, &f));
		check_deep_chain(&f);
	}
	symbolizer_free(s);

	/* 3. A file of that name whose CRC differs (another build): not used. */
	CHECK_EQ_INT(copy_file(DWARF_FIX_DEBUG, moved, "x"), 0);
	check_unnamed(bin, deep);

	/*
	 * 4. The binary's owner put FIFOs where the debug file is looked for:
	 * refused at once (a plain open() waited for a writer forever; the
	 * alarm turns such a hang into a failure).
	 */
	CHECK_EQ_INT(unlink(moved), 0);
	CHECK_EQ_INT(mkfifo(moved, 0600), 0);
	CHECK_EQ_INT(mkfifo(dbg, 0600), 0);
	alarm(20);
	check_unnamed(bin, deep);
	alarm(0);
	remove_tree(root);
}

/*
 * A file deleted after registration (its process exited, its container is
 * gone): the fd opened at registration still reads it. With no fd to keep,
 * the same file cannot be reopened and resolves to the fallback name.
 */
static void test_file_kept_from_registration(void)
{
	char root[] = "/tmp/bpfprof-dwarf-XXXXXX", bin[PATH_MAX], expected[128];
	struct symbolizer_stats st;
	struct resolved_frame f;
	uint64_t deep = 0;

	CHECK(mkdtemp(root) != NULL);
	snprintf(bin, sizeof(bin), "%s/gone", root);
	for (unsigned keep = 0; keep < 2; keep++) {
		struct symbolizer *s = new_symbolizer("/nonexistent-debug");
		int64_t obj;

		CHECK(s != NULL);
		if (!s)
			break;
		if (!keep)
			symbolizer_set_max_open_files(s, 0);
		CHECK_EQ_INT(copy_file(DWARF_FIX, bin, NULL), 0);
		obj = register_file(s, bin);
		CHECK(obj >= OBJ_FIRST_FILE);
		symbolizer_get_stats(s, &st);
		CHECK_EQ_INT(st.open_files, keep);
		CHECK_EQ_INT(unlink(bin), 0);
		if (obj < 0) {
			symbolizer_free(s);
			continue;
		}
		if (keep) {
			CHECK(find_deepest(s, (uint32_t)obj, &deep, &f));
			check_deep_chain(&f);
			/* Symbols and DWARF are read: the kept file is closed. */
			symbolizer_get_stats(s, &st);
			CHECK_EQ_INT(st.open_files, 0);
			CHECK_EQ_INT(st.objects_failed, 0);
		} else {
			symbolizer_resolve(s, (uint32_t)obj, offset_of(outer_start), false, &f);
			snprintf(expected, sizeof(expected), "gone+0x%" PRIx64,
				 offset_of(outer_start));
			CHECK_EQ_STR(f.items[0].func, expected);
			symbolizer_get_stats(s, &st);
			CHECK_EQ_INT(st.objects_failed, 1);
		}
		symbolizer_free(s);
	}
	remove_tree(root);
}

int main(void)
{
	if (!setup_fixture()) {
		fprintf(stderr, "fixture not usable\n");
		return 1;
	}
	RUN(test_inline_chain);
	RUN(test_profile_tables);
	RUN(test_build_id_debug_file);
	RUN(test_debuglink);
	RUN(test_file_kept_from_registration);
	elf_symtab_free(&fix);
	return test_summary();
}
