// SPDX-License-Identifier: BSD-2-Clause
/*
 * Mark and sweep of the symbolizer's objects and of the JIT perf maps, as
 * `bpfprof continuous` uses them to stay flat under process churn: swept
 * objects give back their memory, their open files and their ids; marked
 * ones resolve exactly as before; a swept file comes back cleanly when
 * mapped again; and a thousand register/sweep rounds use no more than one.
 *
 * Files are told apart by (device, inode), so fake mappings of the one
 * fixture library with made-up device numbers are as many distinct
 * objects, each opening (and keeping) the real file. No process is behind
 * them: the proc root does not exist, so files are opened by path.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stddef.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "model/model.h"
#include "symbols/elf_symtab.h"
#include "symbols/jit_maps.h"
#include "symbols/symbolizer.h"
#include "symbols/symbolizer_internal.h"
#include "test.h"

#define FAKE_MAJOR 250
#define NOBODY_PID 4242 /* pid of the fake mappings; no such process under the fake proc */

/* File offsets of two fixture functions, the model's (object, offset) form. */
static uint64_t alpha_off, beta_off;
static struct stat lib_st;

/* Descriptors this process has open. */
static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

/* File offset of `name` in the fixture library, through the segment holding it. */
static bool file_offset_of(const struct elf_symtab *t, const char *name, uint64_t *out)
{
	const struct elf_sym *sym = elf_symtab_find(t, name);

	if (!sym)
		return false;
	for (size_t i = 0; i < t->segments.len; i++) {
		const struct elf_segment *seg = &t->segments.data[i];

		if (sym->start >= seg->vaddr && sym->start < seg->vaddr + seg->filesz) {
			*out = sym->start - seg->vaddr + seg->offset;
			return true;
		}
	}
	return false;
}

static bool setup_fixture(void)
{
	struct elf_symtab t = { 0 };
	bool ok;

	if (stat(SYMFIX_LIB, &lib_st) || elf_symtab_load_path(&t, SYMFIX_LIB, NULL))
		return false;
	ok = file_offset_of(&t, "symfix_lib_alpha", &alpha_off) &&
	     file_offset_of(&t, "symfix_lib_beta", &beta_off);
	elf_symtab_free(&t);
	return ok;
}

/* An executable mapping of the fixture library, seen as file number `n` (a device of its own). */
static struct map_entry lib_mapping(unsigned n, bool deleted)
{
	return (struct map_entry){ .start = 0x10000,
				   .end = 0x20000,
				   .dev = makedev(FAKE_MAJOR, n),
				   .inode = lib_st.st_ino,
				   .readable = true,
				   .executable = true,
				   .path = SYMFIX_LIB,
				   .deleted = deleted };
}

static struct symbolizer *new_symbolizer(void)
{
	return symbolizer_new("/nonexistent-proc", "/nonexistent/kallsyms");
}

static int64_t register_file(struct symbolizer *s, unsigned n, bool deleted)
{
	struct map_entry m = lib_mapping(n, deleted);

	return symbolizer_object_for_mapping(s, NOBODY_PID, &m);
}

/* `path` (stat `st`), mapped executable, seen as file number `n`. */
static int64_t register_path(struct symbolizer *s, unsigned n, const char *path,
			     const struct stat *st)
{
	struct map_entry m = { .start = 0x10000,
			       .end = 0x20000,
			       .dev = makedev(FAKE_MAJOR, n),
			       .inode = st->st_ino,
			       .readable = true,
			       .executable = true,
			       .path = (char *)path };

	return symbolizer_object_for_mapping(s, NOBODY_PID, &m);
}

static bool in_list(const int64_t *ids, size_t n, int64_t id)
{
	for (size_t i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

#define NFILES 16

static void test_sweep_frees_unmarked(void)
{
	struct symbolizer *s = new_symbolizer();
	struct symbolizer_stats before, after;
	struct resolved_frame f, g;
	int64_t ids[NFILES], swept_ids[NFILES], again, max_id = 0;
	const char *alpha_name, *beta_name, *alpha_file;
	size_t nswept = 0;
	int alpha_line, fds0;
	char expected[64];

	CHECK(s != NULL);
	if (!s)
		return;
	fds0 = count_fds();
	/* The last one is a deleted file: indexed by path, not by inode. */
	for (unsigned i = 0; i < NFILES; i++) {
		ids[i] = register_file(s, i + 1, i == NFILES - 1);
		CHECK(ids[i] >= OBJ_FIRST_FILE && !in_list(ids, i, ids[i]));
		if (ids[i] > max_id)
			max_id = ids[i];
	}
	for (unsigned i = 0; i < NFILES; i++)
		if (ids[i] < 0)
			goto out;
	symbolizer_get_stats(s, &before);
	CHECK_EQ_INT(before.objects, NFILES);
	CHECK_EQ_INT(before.open_files, NFILES);
	CHECK_EQ_INT(count_fds(), fds0 + NFILES);

	/* Resolving reads the file and closes it. */
	symbolizer_resolve(s, (uint32_t)ids[0], alpha_off, false, &f);
	CHECK_EQ_STR(f.items[0].func, "symfix_lib_alpha");
	alpha_name = f.items[0].func;
	alpha_file = f.items[0].file;
	alpha_line = f.items[0].line;
	symbolizer_resolve(s, (uint32_t)ids[2], beta_off, false, &f);
	CHECK_EQ_STR(f.items[0].func, "symfix_lib_beta");
	beta_name = f.items[0].func;
	/* Byte 0 is the ELF header: no function, so the name is made of the offset. */
	symbolizer_resolve(s, (uint32_t)ids[2], 0, false, &f);
	CHECK_EQ_STR(f.items[0].func, "libsymfix.so+0x0");
	for (unsigned i = 1; i < NFILES; i += 2) {
		symbolizer_resolve(s, (uint32_t)ids[i], alpha_off, false, &f);
		CHECK_EQ_STR(f.items[0].func, "symfix_lib_alpha");
	}
	symbolizer_get_stats(s, &before);
	/* Still open: the even ones but 0 and 2, which were resolved. */
	CHECK_EQ_INT(before.open_files, NFILES / 2 - 2);
	CHECK_EQ_INT(count_fds(), fds0 + NFILES / 2 - 2);
	CHECK(before.dwarf_objects >= 1);

	/* Keep the even ones; the reserved ids and ids never handed out are ignored. */
	symbolizer_retain_begin(s);
	for (unsigned i = 0; i < NFILES; i += 2)
		symbolizer_retain(s, (uint32_t)ids[i]);
	symbolizer_retain(s, OBJ_KERNEL);
	symbolizer_retain(s, OBJ_OFFCPU);
	symbolizer_retain(s, (uint32_t)max_id + 1000);
	CHECK_EQ_INT(symbolizer_sweep(s), NFILES / 2);
	for (unsigned i = 1; i < NFILES; i += 2)
		swept_ids[nswept++] = ids[i];

	symbolizer_get_stats(s, &after);
	CHECK_EQ_INT(after.objects, NFILES / 2);
	CHECK(after.bytes < before.bytes);
	CHECK(after.dwarf_bytes < before.dwarf_bytes);
	CHECK(after.symbols_loaded < before.symbols_loaded);
	/* The unresolved swept ones had their files open: closed now (the kept ones keep theirs).
	 */
	CHECK_EQ_INT(after.open_files, NFILES / 2 - 2);
	CHECK_EQ_INT(count_fds(), fds0 + NFILES / 2 - 2);

	/* The reserved objects stay. */
	CHECK(symbolizer_object(s, OBJ_KERNEL) && symbolizer_object(s, OBJ_OFFCPU));
	/* Swept ids name nothing: their frames are bare addresses. */
	for (size_t i = 0; i < nswept; i++)
		CHECK(symbolizer_object(s, (uint32_t)swept_ids[i]) == NULL);
	symbolizer_resolve(s, (uint32_t)swept_ids[0], alpha_off, false, &f);
	snprintf(expected, sizeof(expected), "0x%" PRIx64, alpha_off);
	CHECK_EQ_STR(f.items[0].func, expected);
	CHECK(f.lib == NULL && f.resource == NULL);

	/* Marked ones answer exactly as before: same strings, even the same pointers. */
	symbolizer_resolve(s, (uint32_t)ids[0], alpha_off, false, &g);
	CHECK(g.items[0].func == alpha_name);
	CHECK_EQ_STR(g.items[0].func, "symfix_lib_alpha");
	CHECK(g.items[0].file == alpha_file && g.items[0].line == alpha_line);
	CHECK(g.lib == symbolizer_object(s, (uint32_t)ids[0]));
	symbolizer_resolve(s, (uint32_t)ids[2], beta_off, false, &g);
	CHECK(g.items[0].func == beta_name);
	symbolizer_resolve(s, (uint32_t)ids[2], 0, false, &g);
	CHECK_EQ_STR(g.items[0].func, "libsymfix.so+0x0");
	/* Marked but never resolved: its file was kept, so it loads now. */
	symbolizer_resolve(s, (uint32_t)ids[4], beta_off, false, &g);
	CHECK_EQ_STR(g.items[0].func, "symfix_lib_beta");
	/* Marked files are still found by their key: same ids. */
	CHECK_EQ_INT(register_file(s, 1, false), ids[0]);
	CHECK_EQ_INT(register_file(s, 5, false), ids[4]);

	/* A swept file mapped again comes back under a reused id, and works. */
	again = register_file(s, 2, false);
	CHECK(in_list(swept_ids, nswept, again));
	CHECK_EQ_INT(register_file(s, 2, false), again);
	if (again >= 0) {
		symbolizer_resolve(s, (uint32_t)again, alpha_off, false, &f);
		CHECK_EQ_STR(f.items[0].func, "symfix_lib_alpha");
		CHECK(f.lib && f.lib->build_id && strlen(f.lib->build_id) == 40);
	}
	/* So does the deleted one, found by path again. */
	again = register_file(s, NFILES, true);
	CHECK(in_list(swept_ids, nswept, again));
	CHECK_EQ_INT(register_file(s, NFILES, true), again);
	if (again >= 0) {
		symbolizer_resolve(s, (uint32_t)again, beta_off, false, &f);
		CHECK_EQ_STR(f.items[0].func, "symfix_lib_beta");
	}
	/* New files fill the other freed slots before the table grows. */
	for (unsigned i = 0; i < nswept - 2; i++) {
		int64_t id = register_file(s, 100 + i, false);

		CHECK(id >= OBJ_FIRST_FILE && id <= max_id);
	}
	symbolizer_get_stats(s, &after);
	CHECK_EQ_INT(after.objects, NFILES);

	/* The next sweep drops the address names made before it; the others stay. */
	symbolizer_retain_begin(s);
	symbolizer_retain(s, (uint32_t)ids[0]);
	symbolizer_retain(s, (uint32_t)ids[2]);
	CHECK_EQ_INT(symbolizer_sweep(s), NFILES - 2);
	symbolizer_resolve(s, (uint32_t)ids[0], alpha_off, false, &g);
	CHECK(g.items[0].func == alpha_name);
	symbolizer_resolve(s, (uint32_t)ids[2], 0, false, &g);
	CHECK_EQ_STR(g.items[0].func, "libsymfix.so+0x0");
	symbolizer_get_stats(s, &after);
	CHECK_EQ_INT(after.objects, 2);
	CHECK_EQ_INT(after.open_files, 0);
	CHECK_EQ_INT(count_fds(), fds0);
out:
	symbolizer_free(s);
	CHECK_EQ_INT(count_fds(), fds0);
}

/* The vDSO is shared by every process: never swept, even when nothing marks it. */
static void test_vdso_always_kept(void)
{
	struct symbolizer *s = new_symbolizer();
	struct map_entry vdso = {
		.start = 0x7000, .end = 0x9000, .executable = true, .path = "[vdso]"
	};
	int64_t v, lib, later;

	CHECK(s != NULL);
	if (!s)
		return;
	v = symbolizer_object_for_mapping(s, NOBODY_PID, &vdso);
	lib = register_file(s, 1, false);
	CHECK(v >= OBJ_FIRST_FILE && lib >= OBJ_FIRST_FILE);
	symbolizer_retain_begin(s);
	/* Registered during the marking: counts as marked, so it is not swept from under us. */
	later = register_file(s, 2, false);
	CHECK_EQ_INT(symbolizer_sweep(s), 1);
	CHECK(symbolizer_object(s, (uint32_t)v) && symbolizer_object(s, (uint32_t)later));
	CHECK(symbolizer_object(s, (uint32_t)lib) == NULL);
	CHECK_EQ_INT(symbolizer_object_for_mapping(s, NOBODY_PID + 1, &vdso), v);
	/* A sweep with no retain_begin before it frees nothing: every object is marked. */
	CHECK_EQ_INT(symbolizer_sweep(s), 0);
	symbolizer_free(s);
}

/*
 * Churn: every round maps new files (one of them deleted), resolves in one
 * of them and at a new unknown address, and keeps only one long-lived file.
 * After the first round nothing may grow: objects, files, bytes, ids.
 */
static void test_churn_stays_flat(void)
{
	enum { ROUNDS = 1000, PER_ROUND = 4 };
	struct symbolizer *s = new_symbolizer();
	struct symbolizer_stats first = { 0 }, st;
	struct resolved_frame f;
	int64_t keep, max_id = 0;
	int fds_first = 0, bad_rounds = 0;
	const char *keep_name = NULL;

	CHECK(s != NULL);
	if (!s)
		return;
	keep = register_file(s, 1, false);
	CHECK(keep >= OBJ_FIRST_FILE);
	if (keep < 0)
		goto out;
	for (unsigned r = 0; r < ROUNDS; r++) {
		bool ok = true;

		for (unsigned k = 0; k < PER_ROUND; k++) {
			int64_t id = register_file(s, 1000 + r * PER_ROUND + k, k == PER_ROUND - 1);

			ok &= id >= OBJ_FIRST_FILE;
			if (id > max_id && r == 0)
				max_id = id;
			ok &= r == 0 || id <= max_id;
			if (k == 0 && id >= 0) {
				symbolizer_resolve(s, (uint32_t)id, alpha_off, false, &f);
				ok &= !strcmp(f.items[0].func, "symfix_lib_alpha");
			}
		}
		symbolizer_resolve(s, OBJ_UNKNOWN, 0x7f0000000000ULL + r * 16, false, &f);
		symbolizer_resolve(s, (uint32_t)keep, beta_off, false, &f);
		ok &= !strcmp(f.items[0].func, "symfix_lib_beta");
		if (r == 0)
			keep_name = f.items[0].func;
		ok &= f.items[0].func == keep_name;

		symbolizer_retain_begin(s);
		symbolizer_retain(s, (uint32_t)keep);
		ok &= symbolizer_sweep(s) == PER_ROUND;
		symbolizer_get_stats(s, &st);
		if (r == 0) {
			first = st;
			fds_first = count_fds();
			CHECK_EQ_INT(first.objects, 1);
			CHECK_EQ_INT(first.open_files, 0);
		} else {
			ok &= st.objects == first.objects && st.open_files == first.open_files &&
			      st.bytes <= first.bytes && st.dwarf_bytes <= first.dwarf_bytes &&
			      count_fds() == fds_first;
		}
		if (!ok && bad_rounds++ == 0)
			fprintf(stderr,
				"  round %u: objects %" PRIu64 " files %" PRIu64 " bytes %" PRIu64
				" (first: %" PRIu64 " %" PRIu64 " %" PRIu64 ")\n",
				r, st.objects, st.open_files, st.bytes, first.objects,
				first.open_files, first.bytes);
	}
	CHECK_EQ_INT(bad_rounds, 0);
	fprintf(stderr, "  after %d rounds: %" PRIu64 " objects, %" PRIu64 " bytes\n", ROUNDS,
		st.objects, st.bytes);
out:
	symbolizer_free(s);
}

/* ---- JIT perf maps ---------------------------------------------------------- */

/*
 * A fake proc: each process is pid NSPID inside its own pid and mount
 * namespaces, with its map at PROC/PID/root/tmp/perf-NSPID.map naming one
 * function "jit_PID" at 0x1000..0x1100.
 */
#define NSPID 7
static char jit_dir[] = "/tmp/test_symbolizer_evict.XXXXXX";
static char jit_proc[128];

static bool write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return false;
	fputs(text, f);
	return fclose(f) == 0;
}

static bool make_dirs(const char *path)
{
	char buf[PATH_MAX + 16];

	snprintf(buf, sizeof(buf), "mkdir -p '%s'", path);
	return system(buf) == 0;
}

static bool make_jit_process(uint32_t pid)
{
	char path[PATH_MAX], text[128];

	snprintf(path, sizeof(path), "%s/%u/root/tmp", jit_proc, pid);
	if (!make_dirs(path))
		return false;
	snprintf(path, sizeof(path), "%s/%u/ns", jit_proc, pid);
	if (!make_dirs(path))
		return false;
	snprintf(path, sizeof(path), "%s/%u/ns/mnt", jit_proc, pid);
	if (symlink("mnt:[4026532001]", path))
		return false;
	snprintf(path, sizeof(path), "%s/%u/status", jit_proc, pid);
	snprintf(text, sizeof(text), "Name:\tnode\nTgid:\t%u\nNSpid:\t%u\t%d\n", pid, pid, NSPID);
	if (!write_text(path, text))
		return false;
	snprintf(path, sizeof(path), "%s/%u/root/tmp/perf-%d.map", jit_proc, pid, NSPID);
	snprintf(text, sizeof(text), "1000 100 jit_%u\n", pid);
	return write_text(path, text);
}

static bool setup_jit_proc(void)
{
	char path[PATH_MAX];

	if (!mkdtemp(jit_dir))
		return false;
	snprintf(jit_proc, sizeof(jit_proc), "%s/proc", jit_dir);
	snprintf(path, sizeof(path), "%s/self/ns", jit_proc);
	if (!make_dirs(path))
		return false;
	snprintf(path, sizeof(path), "%s/self/ns/mnt", jit_proc);
	return symlink("mnt:[4026531841]", path) == 0;
}

static void teardown_jit_proc(void)
{
	char cmd[PATH_MAX];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", jit_dir);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", jit_dir);
}

#define JIT_PIDS   8
#define FIRST_PID  5000
#define NO_MAP_PID 90000 /* and up: processes without a map */

static const char *jit_name(struct jit_maps *j, int64_t id, uint64_t addr)
{
	struct resolved_frame f;

	if (id < 0 || !jit_maps_resolve(j, (uint32_t)id, addr, &f))
		return NULL;
	return f.items[0].func;
}

static void test_jit_sweep(void)
{
	struct jit_maps *j = jit_maps_new(jit_proc);
	int64_t ids[JIT_PIDS], swept_ids[JIT_PIDS], again;
	const char *names[JIT_PIDS];
	size_t before, after, nswept = 0;
	char expected[32];
	int fds0;

	CHECK(j != NULL);
	if (!j)
		return;
	fds0 = count_fds();
	for (unsigned i = 0; i < JIT_PIDS; i++) {
		ids[i] = jit_maps_object(j, FIRST_PID + i, false, 1);
		CHECK(ids[i] >= OBJ_FIRST_JIT && !in_list(ids, i, ids[i]));
		names[i] = jit_name(j, ids[i], 0x1010);
		snprintf(expected, sizeof(expected), "jit_%u", FIRST_PID + i);
		CHECK_EQ_STR(names[i], expected);
	}
	CHECK_EQ_INT(jit_maps_object(j, NO_MAP_PID, false, 1), -ENOENT);
	/* Code the map does not name: one frame for all of it, not one per address. */
	CHECK_EQ_STR(jit_name(j, ids[0], 0x5000), "[anon exec]");
	/* Every map stays open, so that it can be read after its process exits. */
	CHECK_EQ_INT(count_fds(), fds0 + JIT_PIDS);
	before = jit_maps_bytes(j);

	jit_maps_retain_begin(j);
	for (unsigned i = 0; i < JIT_PIDS; i += 2)
		jit_maps_retain(j, (uint32_t)ids[i]);
	jit_maps_retain(j, OBJ_FIRST_FILE); /* a symbolizer id: not ours, ignored */
	jit_maps_retain(j, OBJ_FIRST_JIT + 100000);
	CHECK_EQ_INT(jit_maps_sweep(j), JIT_PIDS / 2);
	for (unsigned i = 1; i < JIT_PIDS; i += 2)
		swept_ids[nswept++] = ids[i];
	after = jit_maps_bytes(j);
	CHECK(after < before);
	CHECK_EQ_INT(count_fds(), fds0 + JIT_PIDS / 2);

	/* Kept maps answer as before, with the same strings. */
	for (unsigned i = 0; i < JIT_PIDS; i += 2) {
		CHECK(jit_name(j, ids[i], 0x1010) == names[i]);
		CHECK_EQ_INT(jit_maps_object(j, FIRST_PID + i, false, 2), ids[i]);
	}
	/* A swept id is still ours, but nothing names its code. */
	CHECK_EQ_STR(jit_name(j, swept_ids[0], 0x1010), "[anon exec]");
	/*
	 * The process seen again: its map is read anew, under a reused id (the
	 * slots were those JIT_PIDS processes and the map-less one).
	 */
	again = jit_maps_object(j, FIRST_PID + 1, false, 3);
	CHECK(again >= OBJ_FIRST_JIT && again <= OBJ_FIRST_JIT + JIT_PIDS);
	for (unsigned i = 0; i < JIT_PIDS; i += 2)
		CHECK(again != ids[i]);
	CHECK_EQ_STR(jit_name(j, again, 0x1010), "jit_5001");
	CHECK_EQ_INT(count_fds(), fds0 + JIT_PIDS / 2 + 1);

	/* Nothing marked: everything goes, files included. */
	jit_maps_retain_begin(j);
	CHECK_EQ_INT(jit_maps_sweep(j), JIT_PIDS / 2 + 1);
	CHECK_EQ_INT(count_fds(), fds0);
	jit_maps_free(j);
}

/*
 * A JVM writes its map as it exits (DumpPerfMapAtExit): the map is there
 * only once /proc has forgotten the process. Its code is named all the
 * same, from the map in the process's own /tmp; until then it is one
 * frame, not one per address.
 */
#define EXIT_PID 7000
static void test_jit_map_written_at_exit(void)
{
	struct jit_maps *j = jit_maps_new(jit_proc);
	char path[PATH_MAX], map[PATH_MAX], cmd[2 * PATH_MAX + 32];
	int64_t id;

	CHECK(j != NULL && make_jit_process(EXIT_PID));
	if (!j)
		return;
	snprintf(map, sizeof(map), "%s/%u/root/tmp/perf-%d.map", jit_proc, EXIT_PID, NSPID);
	unlink(map);
	/* Code in anonymous executable memory: the process runs JIT code, no map yet. */
	id = jit_maps_object(j, EXIT_PID, true, 1);
	CHECK(id >= OBJ_FIRST_JIT);
	CHECK_EQ_STR(jit_name(j, id, 0x1010), "[anon exec]");
	CHECK_EQ_STR(jit_name(j, id, 0x2020), "[anon exec]");
	/* It exits: its /proc entry goes (the root it had stays held), then its map appears. */
	snprintf(path, sizeof(path), "%s/%u", jit_proc, EXIT_PID);
	snprintf(cmd, sizeof(cmd), "mv '%s' '%s.gone'", path, path);
	CHECK(system(cmd) == 0);
	snprintf(map, sizeof(map), "%s/%u.gone/root/tmp/perf-%d.map", jit_proc, EXIT_PID, NSPID);
	CHECK(write_text(map, "1000 100 jit_at_exit\n"));
	/* A map not found is looked for again once JIT_RETRY_NS (100 ms) has passed. */
	usleep(150 * 1000);
	CHECK_EQ_STR(jit_name(j, id, 0x1010), "jit_at_exit");
	CHECK_EQ_STR(jit_name(j, id, 0x2020), "[anon exec]");
	jit_maps_free(j);
}

/* Processes come and go: a thousand rounds of maps and map-less pids hold no more than one. */
static void test_jit_churn_stays_flat(void)
{
	enum { ROUNDS = 1000, PER_ROUND = 3 };
	struct jit_maps *j = jit_maps_new(jit_proc);
	size_t first = 0;
	int64_t keep;
	int fds_first = 0, bad_rounds = 0;
	const char *keep_name;

	CHECK(j != NULL);
	if (!j)
		return;
	keep = jit_maps_object(j, FIRST_PID, false, 1);
	keep_name = jit_name(j, keep, 0x1000);
	CHECK_EQ_STR(keep_name, "jit_5000");
	for (unsigned r = 0; r < ROUNDS; r++) {
		uint64_t now = (uint64_t)(r + 1) * 1000000000ULL;
		bool ok = true;
		size_t bytes;

		for (unsigned k = 0; k < PER_ROUND; k++) {
			uint32_t pid = FIRST_PID + 1 + (r * PER_ROUND + k) % (JIT_PIDS - 1);
			int64_t id = jit_maps_object(j, pid, false, now);
			char expected[32];

			/* Slots: the kept one, then a map and a map-less pid per process of a
			 * round. */
			ok &= id >= OBJ_FIRST_JIT && id <= OBJ_FIRST_JIT + 2 * PER_ROUND;
			snprintf(expected, sizeof(expected), "jit_%u", pid);
			ok &= jit_name(j, id, 0x1050) && !strcmp(jit_name(j, id, 0x1050), expected);
			/* Unknown code at a new address every time, and a new map-less process. */
			ok &= jit_name(j, id, 0x900000 + r) != NULL;
			ok &= jit_maps_object(j, NO_MAP_PID + r * PER_ROUND + k, false, now) ==
			      -ENOENT;
		}
		ok &= jit_name(j, keep, 0x1000) == keep_name;
		jit_maps_retain_begin(j);
		jit_maps_retain(j, (uint32_t)keep);
		ok &= jit_maps_sweep(j) == PER_ROUND;
		bytes = jit_maps_bytes(j);
		if (r == 0) {
			first = bytes;
			fds_first = count_fds();
		} else {
			ok &= bytes <= first && count_fds() == fds_first;
		}
		if (!ok && bad_rounds++ == 0)
			fprintf(stderr, "  round %u: %zu bytes (first %zu), %d fds (first %d)\n", r,
				bytes, first, count_fds(), fds_first);
	}
	CHECK_EQ_INT(bad_rounds, 0);
	jit_maps_free(j);
}

/* BPFPROF_TEST_SUBUID: a file of root's giving `owner` 65536 uids from `first`. */
static char subuid_path[] = "/tmp/bpfprof-subuid-XXXXXX";
static bool subuids_of(unsigned owner, unsigned first)
{
	int fd = mkstemp(subuid_path);
	char line[64];
	int n = snprintf(line, sizeof(line), "%u:%u:65536\n", owner, first);
	bool ok = fd >= 0 && write(fd, line, (size_t)n) == n && fchmod(fd, 0644) == 0;

	if (fd >= 0)
		close(fd);
	return ok && setenv("BPFPROF_TEST_SUBUID", subuid_path, 1) == 0;
}

/*
 * `path`, a copy of `copy` (anyone may write it) 300 MiB long, sparse,
 * whose .debug_info says it takes 280 MiB of that: more DWARF than any
 * budget reads (DWARF_IMAGE_MAX_BYTES), refused for its own size before a
 * byte of it is read.
 */
static bool make_huge_dwarf(const char *copy, const char *path)
{
	char cmd[3 * PATH_MAX + 64];
	uint64_t size = 280ull << 20;
	Elf_Scn *scn = NULL;
	size_t shstrndx, at = 0;
	GElf_Ehdr eh;
	GElf_Shdr sh;
	Elf *e;
	int fd;

	snprintf(cmd, sizeof(cmd), "cp %s %s && chmod 0666 %s && truncate -s 300M %s", copy, path,
		 path, path);
	if (system(cmd) != 0 || (fd = open(path, O_RDWR | O_CLOEXEC)) < 0)
		return false;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (e && gelf_getehdr(e, &eh) && !elf_getshdrstrndx(e, &shstrndx))
		while ((scn = elf_nextscn(e, scn)) && gelf_getshdr(scn, &sh))
			if (!strcmp(elf_strptr(e, shstrndx, sh.sh_name) ?: "", ".debug_info")) {
				at = eh.e_shoff + elf_ndxscn(scn) * eh.e_shentsize +
				     offsetof(Elf64_Shdr, sh_size);
				break;
			}
	if (e)
		elf_end(e);
	if (at && pwrite(fd, &size, sizeof(size), (off_t)at) != sizeof(size))
		at = 0;
	close(fd);
	return at != 0;
}

/*
 * The DWARF budget across objects: a copy of the fixture library that others
 * may write (so read into memory, not mapped) as file after file; each
 * reads R bytes. With room for 2.5 R, two get lines and the third only its
 * symbols; sweeping one gives its room to a file mapped after, but not to a
 * file refused for its own size (more DWARF than any budget takes), which is
 * not read again. One owner holds at most its own share; under root, another
 * owner's file still has room.
 */
static void test_dwarf_budget(void)
{
	char copy[] = "/tmp/bpfprof-dwarf-budget-XXXXXX", other[sizeof(copy) + 2],
	     huge[sizeof(copy) + 2];
	struct symbolizer *s = NULL;
	struct symbolizer_stats st;
	struct resolved_frame f;
	struct stat cst, ost, hst;
	uint64_t one;
	int64_t ids[4], huge_id;
	/* Four paths: a build tree under a mktemp -d clone makes them long. */
	char cmd[4 * PATH_MAX + 64];
	bool subs;
	int fd = mkstemp(copy);

	/*
	 * Suffixed, not with the last letter replaced: mkstemp's name may end
	 * in that letter already, and the copies would then be one file.
	 */
	snprintf(other, sizeof(other), "%s.o", copy);
	snprintf(huge, sizeof(huge), "%s.h", copy);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	close(fd);
	snprintf(cmd, sizeof(cmd), "cp %s %s && cp %s %s && chmod 0666 %s %s", SYMFIX_LIB, copy,
		 SYMFIX_LIB, other, copy, other);
	CHECK_EQ_INT(system(cmd), 0);
	CHECK(stat(copy, &cst) == 0 && stat(other, &ost) == 0);
	CHECK(make_huge_dwarf(copy, huge) && stat(huge, &hst) == 0);

	/* R: what one copy reads. */
	s = new_symbolizer();
	ids[0] = register_path(s, 1, copy, &cst);
	CHECK(ids[0] >= OBJ_FIRST_FILE);
	symbolizer_resolve(s, (uint32_t)ids[0], alpha_off, false, &f);
	CHECK(f.items[0].file && f.items[0].line > 0);
	symbolizer_get_stats(s, &st);
	one = st.dwarf_read_bytes;
	CHECK(one > 0);
	symbolizer_free(s);

	s = new_symbolizer();
	symbolizer_set_dwarf_budget(s, one * 5 / 2, one * 5 / 2);
	for (unsigned i = 0; i < 3; i++) {
		ids[i] = register_path(s, i + 1, copy, &cst);
		symbolizer_resolve(s, (uint32_t)ids[i], alpha_off, false, &f);
		CHECK_EQ_STR(f.items[0].func, "symfix_lib_alpha");
		if (i < 2)
			CHECK(f.items[0].file && f.items[0].line > 0);
		else
			CHECK(f.items[0].file == NULL && f.items[0].line == 0);
	}
	/* Refused for its own size: its symbols only, and not for the budget. */
	huge_id = register_path(s, 5, huge, &hst);
	symbolizer_resolve(s, (uint32_t)huge_id, alpha_off, false, &f);
	CHECK_EQ_STR(f.items[0].func, "symfix_lib_alpha");
	CHECK(f.items[0].file == NULL && f.items[0].line == 0);
	symbolizer_get_stats(s, &st);
	CHECK_EQ_INT(st.dwarf_read_bytes, 2 * one);
	/*
	 * The first swept: the one refused for the budget reads its DWARF when
	 * next resolved, and a file mapped after it finds no room again. The
	 * one refused for its own size stays refused: no read of it again.
	 */
	symbolizer_retain_begin(s);
	symbolizer_retain(s, (uint32_t)ids[1]);
	symbolizer_retain(s, (uint32_t)ids[2]);
	symbolizer_retain(s, (uint32_t)huge_id);
	CHECK_EQ_INT(symbolizer_sweep(s), 1);
	CHECK(huge_id >= OBJ_FIRST_FILE && s->objects.data[huge_id] &&
	      s->objects.data[huge_id]->dwarf_state == LOAD_FAILED);
	symbolizer_resolve(s, (uint32_t)ids[2], beta_off, false, &f);
	CHECK_EQ_STR(f.items[0].func, "symfix_lib_beta");
	CHECK(f.items[0].file && f.items[0].line > 0);
	ids[3] = register_path(s, 4, copy, &cst);
	symbolizer_resolve(s, (uint32_t)ids[3], alpha_off, false, &f);
	CHECK(f.items[0].file == NULL);
	symbolizer_free(s);

	/* One owner's share: 1.5 R of 10 R; uid 4321 has subordinate uids, read at the first file.
	 */
	subs = subuids_of(4321, 100000);
	s = new_symbolizer();
	symbolizer_set_dwarf_budget(s, one * 10, one * 3 / 2);
	ids[0] = register_path(s, 1, copy, &cst);
	ids[1] = register_path(s, 2, copy, &cst);
	symbolizer_resolve(s, (uint32_t)ids[0], alpha_off, false, &f);
	CHECK(f.items[0].file && f.items[0].line > 0);
	symbolizer_resolve(s, (uint32_t)ids[1], alpha_off, false, &f);
	CHECK(f.items[0].file == NULL);
	if (geteuid() == 0 && subs && chown(other, 4321, 4321) == 0 && stat(other, &ost) == 0) {
		/* Another owner's file is read within its own share. */
		ids[2] = register_path(s, 3, other, &ost);
		symbolizer_resolve(s, (uint32_t)ids[2], alpha_off, false, &f);
		CHECK(f.items[0].file && f.items[0].line > 0);
		/* A file of one of that owner's subordinate uids counts as the owner's: no room. */
		CHECK(chown(copy, 100007, 100007) == 0 && stat(copy, &cst) == 0);
		ids[3] = register_path(s, 4, copy, &cst);
		symbolizer_resolve(s, (uint32_t)ids[3], alpha_off, false, &f);
		CHECK(f.items[0].file == NULL);
	} else {
		fprintf(stderr, "  not root: another owner's share is not tried\n");
	}
	symbolizer_free(s);
	unsetenv("BPFPROF_TEST_SUBUID");
	if (subs)
		unlink(subuid_path);
	unlink(copy);
	unlink(other);
	unlink(huge);
}

int main(void)
{
	if (!setup_fixture()) {
		fprintf(stderr, "cannot read the fixture library %s\n", SYMFIX_LIB);
		return 1;
	}
	RUN(test_sweep_frees_unmarked);
	RUN(test_vdso_always_kept);
	RUN(test_churn_stays_flat);
	RUN(test_dwarf_budget);
	if (!setup_jit_proc()) {
		fprintf(stderr, "cannot build the fake proc under %s\n", jit_dir);
		return 1;
	}
	for (unsigned i = 0; i < JIT_PIDS; i++)
		if (!make_jit_process(FIRST_PID + i)) {
			fprintf(stderr, "cannot make process %u in %s\n", FIRST_PID + i, jit_proc);
			teardown_jit_proc();
			return 1;
		}
	RUN(test_jit_sweep);
	RUN(test_jit_map_written_at_exit);
	RUN(test_jit_churn_stays_flat);
	teardown_jit_proc();
	return test_summary();
}
