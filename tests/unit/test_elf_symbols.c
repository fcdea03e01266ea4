// SPDX-License-Identifier: BSD-2-Clause
/*
 * ELF symbol tables of the fixtures built next to this test (see
 * symbols.cmake), checked against what binutils (nm, readelf) and a raw
 * read of the program headers say about the same files.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gelf.h>
#include <string.h>

#include "symbols/elf_symtab.h"
#include "test.h"

struct nm_sym {
	uint64_t addr, size;
	char type;
	char name[256];
};

/* Defined symbols as nm lists them: "addr [size] type name". */
static size_t run_nm(const char *path, struct nm_sym *out, size_t max)
{
	char cmd[PATH_MAX * 2], line[512];
	size_t n = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "'%s' --defined-only -S '%s'", NM_PATH, path);
	p = popen(cmd, "r");
	if (!p)
		return 0;
	while (fgets(line, sizeof(line), p) && n < max) {
		struct nm_sym *s = &out[n];
		unsigned long long a, sz;
		char t, name[256];

		if (sscanf(line, "%llx %llx %c %255s", &a, &sz, &t, name) == 4) {
			s->size = sz;
		} else if (sscanf(line, "%llx %c %255s", &a, &t, name) == 3) {
			s->size = 0;
		} else {
			continue;
		}
		s->addr = a;
		s->type = t;
		snprintf(s->name, sizeof(s->name), "%s", name);
		n++;
	}
	pclose(p);
	return n;
}

static const struct nm_sym *nm_find(const struct nm_sym *syms, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(syms[i].name, name))
			return &syms[i];
	return NULL;
}

/* The build-id as readelf -n prints it, or "" */
static void run_readelf_build_id(const char *path, char *out, size_t size)
{
	char cmd[PATH_MAX * 2], line[512];
	FILE *p;

	out[0] = '\0';
	snprintf(cmd, sizeof(cmd), "'%s' -n '%s'", READELF_PATH, path);
	p = popen(cmd, "r");
	if (!p)
		return;
	while (fgets(line, sizeof(line), p)) {
		char *b = strstr(line, "Build ID: ");

		if (b && sscanf(b + 10, "%127s", out) == 1)
			break;
	}
	pclose(p);
	(void)size;
}

static struct nm_sym nm_lib[4096], nm_exe[4096];
static size_t nm_lib_len, nm_exe_len;

static void test_lib_matches_nm(void)
{
	struct elf_symtab t = { 0 };
	size_t checked = 0;
	const char *fixture_fns[] = { "symfix_lib_alpha",   "symfix_lib_beta",
				      "symfix_lib_local",   "symfix_lib_local_ptr",
				      "_ZN6symfix5gammaEv", "_ZN6symfix4rust17h0123456789abcdefE" };

	nm_lib_len = run_nm(SYMFIX_LIB, nm_lib, 4096);
	CHECK(nm_lib_len > 0);
	CHECK_EQ_INT(elf_symtab_load_path(&t, SYMFIX_LIB, NULL), 0);
	CHECK(t.has_symtab);
	CHECK(t.syms.len > 0);
	CHECK(t.segments.len >= 2);

	for (size_t i = 0; i < sizeof(fixture_fns) / sizeof(fixture_fns[0]); i++) {
		const struct nm_sym *n = nm_find(nm_lib, nm_lib_len, fixture_fns[i]);
		const struct elf_sym *s = elf_symtab_find(&t, fixture_fns[i]);

		CHECK(n != NULL);
		CHECK(s != NULL);
		if (!n || !s)
			continue;
		CHECK(s->start == n->addr);
		CHECK(s->size == n->size);
		CHECK(n->size > 0);
		/* Start, middle, and last byte all belong to the function. */
		CHECK(elf_symtab_lookup(&t, n->addr) == s);
		CHECK(elf_symtab_lookup(&t, n->addr + n->size / 2) == s);
		CHECK(elf_symtab_lookup(&t, n->addr + n->size - 1) == s);
	}

	/* Every sized text symbol nm knows resolves to a symbol at the same address. */
	for (size_t i = 0; i < nm_lib_len; i++) {
		const struct nm_sym *n = &nm_lib[i];
		const struct elf_sym *s;

		if ((n->type != 'T' && n->type != 't' && n->type != 'W') || !n->size)
			continue;
		s = elf_symtab_lookup(&t, n->addr + n->size - 1);
		CHECK(s != NULL);
		if (!s)
			continue;
		CHECK(s->start == n->addr);
		checked++;
	}
	CHECK(checked >= sizeof(fixture_fns) / sizeof(fixture_fns[0]));
	/* The ELF header, not code, is at vaddr 0 of a shared library. */
	CHECK(elf_symtab_lookup(&t, 0) == NULL);
	CHECK(elf_symtab_bytes(&t) > 0);
	elf_symtab_free(&t);
	CHECK_EQ_INT(t.syms.len, 0);
}

static void test_unsized_and_labels(void)
{
	struct elf_symtab t = { 0 };
	const struct nm_sym *nosize, *sized, *label;
	const struct elf_sym *s;

	CHECK_EQ_INT(elf_symtab_load_path(&t, SYMFIX_LIB, NULL), 0);
	nosize = nm_find(nm_lib, nm_lib_len, "symfix_asm_nosize");
	sized = nm_find(nm_lib, nm_lib_len, "symfix_asm_sized");
	label = nm_find(nm_lib, nm_lib_len, "symfix_asm_inner_label");
	/* The fixture is what this case is about: make sure the build gave it. */
	CHECK(nosize && sized && label);
	if (!nosize || !sized || !label)
		goto out;
	CHECK(nosize->size == 0);
	CHECK(sized->size > 0);
	CHECK(label->addr > sized->addr && label->addr < sized->addr + sized->size);

	/* An unsized function extends up to the next symbol. */
	s = elf_symtab_lookup(&t, nosize->addr + 1);
	CHECK(s && !strcmp(elf_symtab_name(&t, s), "symfix_asm_nosize"));
	s = elf_symtab_lookup(&t, sized->addr - 1);
	CHECK(s && !strcmp(elf_symtab_name(&t, s), "symfix_asm_nosize"));
	/* A label inside a sized function does not split it. */
	s = elf_symtab_lookup(&t, label->addr);
	CHECK(s && !strcmp(elf_symtab_name(&t, s), "symfix_asm_sized"));
	CHECK(elf_symtab_find(&t, "symfix_asm_inner_label") == NULL);
out:
	elf_symtab_free(&t);
}

static void test_build_id(void)
{
	struct elf_symtab t = { 0 };
	char expected[128];

	run_readelf_build_id(SYMFIX_LIB, expected, sizeof(expected));
	CHECK_EQ_INT(strlen(expected), 40);
	CHECK_EQ_INT(elf_symtab_load_path(&t, SYMFIX_LIB, NULL), 0);
	CHECK_EQ_STR(t.build_id, expected);
	elf_symtab_free(&t);

	run_readelf_build_id(SYMFIX_EXE, expected, sizeof(expected));
	CHECK_EQ_INT(elf_symtab_load_path(&t, SYMFIX_EXE, NULL), 0);
	CHECK_EQ_STR(t.build_id, expected);
	elf_symtab_free(&t);
}

/* PT_LOAD headers read straight from the file, independently of libelf. */
static size_t raw_pt_loads(const char *path, Elf64_Phdr *out, size_t max)
{
	Elf64_Ehdr eh;
	size_t n = 0;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return 0;
	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) || eh.e_ident[EI_CLASS] != ELFCLASS64)
		goto out;
	for (unsigned i = 0; i < eh.e_phnum && n < max; i++) {
		Elf64_Phdr ph;

		if (pread(fd, &ph, sizeof(ph),
			  (off_t)(eh.e_phoff + (uint64_t)i * eh.e_phentsize)) != sizeof(ph))
			break;
		if (ph.p_type == PT_LOAD)
			out[n++] = ph;
	}
out:
	close(fd);
	return n;
}

static void check_offsets(const char *path)
{
	struct elf_symtab t = { 0 };
	Elf64_Phdr ph[16];
	size_t n = raw_pt_loads(path, ph, 16);
	uint64_t v, max_end = 0;

	CHECK(n >= 2);
	CHECK_EQ_INT(elf_symtab_load_path(&t, path, NULL), 0);
	CHECK_EQ_INT(t.segments.len, n);
	CHECK(n && t.base == ph[0].p_vaddr);
	for (size_t i = 0; i < n; i++) {
		uint64_t off = ph[i].p_offset;

		if (!ph[i].p_filesz)
			continue;
		CHECK_EQ_INT(elf_symtab_offset_to_vaddr(&t, off, &v), 0);
		CHECK(v == ph[i].p_vaddr);
		off = ph[i].p_offset + ph[i].p_filesz - 1;
		CHECK_EQ_INT(elf_symtab_offset_to_vaddr(&t, off, &v), 0);
		CHECK(v == ph[i].p_vaddr + ph[i].p_filesz - 1);
		if (ph[i].p_offset + ph[i].p_filesz > max_end)
			max_end = ph[i].p_offset + ph[i].p_filesz;
	}
	CHECK_EQ_INT(elf_symtab_offset_to_vaddr(&t, max_end + 0x100000, &v), -ENOENT);

	/* Round trip: a function's vaddr -> file offset (by the raw headers) -> vaddr -> symbol. */
	for (size_t i = 0; i < t.syms.len; i++) {
		const struct elf_sym *s = &t.syms.data[i];

		for (size_t j = 0; j < n; j++) {
			if (s->start < ph[j].p_vaddr || s->start >= ph[j].p_vaddr + ph[j].p_filesz)
				continue;
			CHECK_EQ_INT(elf_symtab_offset_to_vaddr(
					     &t, s->start - ph[j].p_vaddr + ph[j].p_offset, &v),
				     0);
			CHECK(v == s->start);
			CHECK(elf_symtab_lookup(&t, v) == s);
		}
	}
	elf_symtab_free(&t);
}

static void test_offsets_lib(void)
{
	check_offsets(SYMFIX_LIB);
}

static void test_offsets_exe(void)
{
	struct elf_symtab t = { 0 };
	const struct nm_sym *n;
	const struct elf_sym *s;

	check_offsets(SYMFIX_EXE);
	nm_exe_len = run_nm(SYMFIX_EXE, nm_exe, 4096);
	CHECK_EQ_INT(elf_symtab_load_path(&t, SYMFIX_EXE, NULL), 0);
	n = nm_find(nm_exe, nm_exe_len, "symfix_main_beta");
	s = elf_symtab_lookup(&t, n ? n->addr + n->size - 1 : 0);
	CHECK(n && s && !strcmp(elf_symtab_name(&t, s), "symfix_main_beta"));
	n = nm_find(nm_exe, nm_exe_len, "main");
	s = elf_symtab_lookup(&t, n ? n->addr : 0);
	CHECK(n && s && !strcmp(elf_symtab_name(&t, s), "main"));
	elf_symtab_free(&t);
}

static void test_stripped_and_debug_file(void)
{
	char dir[] = "/tmp/bpfprof-debug-XXXXXX", sub[PATH_MAX], link[PATH_MAX + 160];
	struct elf_symtab full = { 0 }, stripped = { 0 }, merged = { 0 };
	const struct elf_sym *a, *b;

	CHECK_EQ_INT(elf_symtab_load_path(&full, SYMFIX_EXE, NULL), 0);
	CHECK_EQ_INT(elf_symtab_load_path(&stripped, SYMFIX_EXE_STRIPPED, NULL), 0);
	CHECK(!stripped.has_symtab);
	CHECK(elf_symtab_find(&stripped, "symfix_main_alpha") == NULL);
	CHECK_EQ_STR(stripped.build_id, full.build_id);
	CHECK_EQ_INT(stripped.segments.len, full.segments.len);
	/*
	 * The entry point, unnamed in a stripped executable, is _start, at the
	 * address the full file's own _start has, and no further than that.
	 */
	a = elf_symtab_find(&full, "_start");
	b = elf_symtab_find(&stripped, "_start");
	CHECK(a && b && a->start == b->start && b->size <= 64);
	CHECK(b && elf_symtab_lookup(&stripped, b->start + 5) == b);

	/* Lay the debug file out as /usr/lib/debug/.build-id/xx/rest.debug. */
	CHECK(mkdtemp(dir) != NULL);
	snprintf(sub, sizeof(sub), "%s/.build-id", dir);
	CHECK_EQ_INT(mkdir(sub, 0700), 0);
	snprintf(sub, sizeof(sub), "%s/.build-id/%.2s", dir, full.build_id);
	CHECK_EQ_INT(mkdir(sub, 0700), 0);
	snprintf(link, sizeof(link), "%s/%s.debug", sub, full.build_id + 2);
	CHECK_EQ_INT(symlink(SYMFIX_EXE_DEBUG, link), 0);

	CHECK_EQ_INT(elf_symtab_load_path(&merged, SYMFIX_EXE_STRIPPED, dir), 0);
	CHECK(merged.has_symtab);
	a = elf_symtab_find(&full, "symfix_main_alpha");
	b = elf_symtab_find(&merged, "symfix_main_alpha");
	CHECK(a && b && a->start == b->start && a->size == b->size);
	CHECK_EQ_INT(merged.syms.len, full.syms.len);

	unlink(link);
	rmdir(sub);
	snprintf(sub, sizeof(sub), "%s/.build-id", dir);
	rmdir(sub);
	rmdir(dir);
	elf_symtab_free(&full);
	elf_symtab_free(&stripped);
	elf_symtab_free(&merged);
}

/* Debian's own stripped gzip: its outermost frame is named too. */
static void test_distro_entry_point(void)
{
	struct elf_symtab t = { 0 };
	const struct elf_sym *s;
	GElf_Ehdr eh;
	int fd = open("/bin/gzip", O_RDONLY | O_CLOEXEC);
	Elf *elf;

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	CHECK(elf && gelf_getehdr(elf, &eh));
	CHECK_EQ_INT(elf_symtab_load_fd(&t, fd, NULL), 0);
	CHECK(!t.has_symtab);
	s = elf_symtab_lookup(&t, eh.e_entry + 0x20);
	CHECK(s && !strcmp(elf_symtab_name(&t, s), "_start") && s->start == eh.e_entry);
	elf_end(elf);
	close(fd);
	elf_symtab_free(&t);
}

static void test_memory_image(void)
{
	struct elf_symtab from_file = { 0 }, from_mem = { 0 };
	struct stat st;
	void *image = NULL;
	int fd = open(SYMFIX_LIB, O_RDONLY);

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	CHECK_EQ_INT(fstat(fd, &st), 0);
	image = malloc((size_t)st.st_size);
	CHECK(image != NULL);
	if (image && read(fd, image, (size_t)st.st_size) == st.st_size) {
		CHECK_EQ_INT(elf_symtab_load_mem(&from_mem, image, (size_t)st.st_size), 0);
		CHECK_EQ_INT(elf_symtab_load_path(&from_file, SYMFIX_LIB, NULL), 0);
		CHECK_EQ_INT(from_mem.syms.len, from_file.syms.len);
		CHECK_EQ_STR(from_mem.build_id, from_file.build_id);
		CHECK(from_mem.names.len == from_file.names.len &&
		      !memcmp(from_mem.names.data, from_file.names.data, from_file.names.len));
	}
	free(image);
	close(fd);
	elf_symtab_free(&from_file);
	elf_symtab_free(&from_mem);
}

/*
 * Every PLT stub objdump names ("<puts@plt>:" in .plt, .plt.sec, .plt.got)
 * resolves to the same name here, at its first and last byte, and the
 * lazy-binding header of .plt is "[plt]".
 */
static void check_plt(const char *path, bool want_sec)
{
	char cmd[PATH_MAX * 2], line[512];
	struct elf_symtab t = { 0 };
	size_t named = 0, in_sec = 0;
	bool header = false;
	bool sec = false;
	FILE *p;

	CHECK_EQ_INT(elf_symtab_load_path(&t, path, NULL), 0);
	snprintf(cmd, sizeof(cmd), "'%s' -d -j .plt -j .plt.sec -j .plt.got '%s'", OBJDUMP_PATH,
		 path);
	p = popen(cmd, "r");
	CHECK(p != NULL);
	if (!p)
		return;

	while (fgets(line, sizeof(line), p)) {
		unsigned long long addr;
		char name[256];
		const struct elf_sym *s;

		if (strstr(line, "Disassembly of section"))
			sec = strstr(line, ".plt.sec") != NULL;
		if (sscanf(line, "%llx <%255[^>]>:", &addr, name) != 2 ||
		    (!strstr(name, "@plt") && strcmp(name, ".plt")))
			continue;
		s = elf_symtab_lookup(&t, addr);
		if (strchr(name, '-') || !strcmp(name, ".plt")) {
			/* "<puts@plt-0x10>", or "<.plt>" with IBT: the header before the stubs. */
			CHECK(s != NULL);
			if (s)
				CHECK_EQ_STR(elf_symtab_name(&t, s), "[plt]");
			header = true;
			continue;
		}
		if (!strncmp(name, "*ABS*", 5))
			continue; /* an IFUNC: named after its resolver here */
		CHECK(s != NULL);
		if (!s)
			continue;
		CHECK_EQ_STR(elf_symtab_name(&t, s), name);
		CHECK(elf_symtab_lookup(&t, addr + s->size - 1) == s);
		named++;
		in_sec += sec;
	}
	pclose(p);
	/* puts, printf, getenv at least; the fixture takes strlen's address too. */
	CHECK(named >= 4);
	CHECK(header);
	if (want_sec)
		CHECK(in_sec >= 3);
	elf_symtab_free(&t);
}

static void test_plt_stubs(void)
{
	check_plt(SYMFIX_PLT, false);
}

static void test_plt_stubs_ibt(void)
{
	check_plt(SYMFIX_PLT_IBT, true);
}

static void test_errors(void)
{
	struct elf_symtab t = { 0 };
	char junk[] = "definitely not an ELF file";
	char path[] = "/tmp/bpfprof-notelf-XXXXXX";
	int fd;

	CHECK_EQ_INT(elf_symtab_load_path(&t, "/nonexistent/libnothing.so", NULL), -ENOENT);
	CHECK_EQ_INT(elf_symtab_load_mem(&t, junk, sizeof(junk)), -ENOEXEC);
	fd = mkstemp(path);
	CHECK(fd >= 0);
	if (fd >= 0) {
		CHECK(write(fd, junk, sizeof(junk)) == sizeof(junk));
		close(fd);
		CHECK_EQ_INT(elf_symtab_load_path(&t, path, NULL), -ENOEXEC);
		unlink(path);
	}
	CHECK_EQ_INT(t.syms.len, 0);
	CHECK(elf_symtab_lookup(&t, 0x1000) == NULL);
}

int main(void)
{
	RUN(test_lib_matches_nm);
	RUN(test_unsized_and_labels);
	RUN(test_build_id);
	RUN(test_offsets_lib);
	RUN(test_offsets_exe);
	RUN(test_stripped_and_debug_file);
	RUN(test_distro_entry_point);
	RUN(test_memory_image);
	RUN(test_plt_stubs);
	RUN(test_plt_stubs_ibt);
	RUN(test_errors);
	return test_summary();
}
