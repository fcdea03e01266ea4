// SPDX-License-Identifier: BSD-2-Clause
/*
 * ELF function symbols for symbolization.
 *
 * Symbols come from .symtab (full, but stripped from most distribution
 * binaries) and .dynsym (exported functions only). Both are merged: at one
 * address the best alias wins (sized, global, fewest leading underscores).
 * Symbols without a size (hand-written assembly) extend to the next symbol
 * or the end of their section, but never split a sized function.
 */
#include "elf_symtab.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lang/code_runtime.h"
#include "../lang/go_pclntab.h"
#include "../util/safe_open.h"
#include "debug_file.h"
#include "elf_plt.h"
#include "../util/elf_build_id.h"
#include "../util/elf_open.h"

/* A symbol while loading; `name` points into libelf's string table. */
struct raw_sym {
	uint64_t start, size;
	uint64_t limit; /* end of its section: an unsized symbol stops here */
	const char *name;
	uint32_t rank; /* higher wins among aliases at one address */
	uint32_t seq;  /* load order, for a stable result */
	bool sized;
};

typedef VEC(struct raw_sym) raw_syms_t;

/* How many earlier symbols a lookup checks for one that encloses a nested one. */
#define NESTED_LOOKBACK 8

static int elf_init(void)
{
	return elf_version(EV_CURRENT) == EV_NONE ? -ELIBBAD : 0;
}

static int read_segments(Elf *elf, struct elf_symtab *t)
{
	size_t n;

	if (elf_getphdrnum(elf, &n))
		return -ENOEXEC;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		struct elf_segment seg;

		if (!gelf_getphdr(elf, (int)i, &ph))
			return -ENOEXEC;
		if (ph.p_type != PT_LOAD)
			continue;
		seg.offset = ph.p_offset;
		seg.vaddr = ph.p_vaddr;
		seg.filesz = ph.p_filesz;
		seg.memsz = ph.p_memsz;
		seg.flags = ph.p_flags;
		if (vec_push(&t->segments, seg))
			return -ENOMEM;
	}
	if (!t->segments.len)
		return -ENOEXEC;
	t->base = t->segments.data[0].vaddr;
	return 0;
}

/* The GNU build-id note, as lowercase hex ("" when none). */
static void read_build_id(Elf *elf, struct elf_symtab *t)
{
	static const char hex[] = "0123456789abcdef";
	uint8_t id[ELF_BUILD_ID_MAX];
	size_t len = elf_build_id(elf, id);

	for (size_t i = 0; i < len; i++) {
		t->build_id[2 * i] = hex[id[i] >> 4];
		t->build_id[2 * i + 1] = hex[id[i] & 15];
	}
	t->build_id[2 * len] = '\0';
}

/* Prefer sized functions, then global over weak over local, then fewer leading underscores. */
static uint32_t symbol_rank(const GElf_Sym *sym, const char *name)
{
	unsigned type = GELF_ST_TYPE(sym->st_info), bind = GELF_ST_BIND(sym->st_info);
	unsigned underscores = 0;
	uint32_t r = 0;

	if (sym->st_size)
		r += 1000;
	if (type == STT_FUNC || type == STT_GNU_IFUNC)
		r += 100;
	r += bind == STB_GLOBAL ? 20 : bind == STB_WEAK ? 10 : 0;
	while (name[underscores] == '_' && underscores < 9)
		underscores++;
	return r + 9 - underscores;
}

/* Mapping symbols ($x, $d on arm64) and assembler locals (.L) name no function. */
static bool is_junk_name(const char *name)
{
	return !name[0] || name[0] == '$' || (name[0] == '.' && name[1] == 'L');
}

static int read_symbol_section(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, raw_syms_t *out)
{
	Elf_Data *data;
	size_t count;

	if ((sh->sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
		return 0; /* an unreadable table is skipped, not fatal */
	data = elf_getdata(scn, NULL);
	if (!data || !sh->sh_entsize)
		return 0;
	count = data->d_size / sh->sh_entsize;
	for (size_t i = 1; i < count; i++) {
		GElf_Sym sym;
		GElf_Shdr tsh;
		Elf_Scn *target;
		struct raw_sym r;
		const char *name;
		unsigned type;

		if (!gelf_getsym(data, (int)i, &sym))
			continue;
		type = GELF_ST_TYPE(sym.st_info);
		if (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE)
			continue;
		/* Undefined (imports) and special sections (absolute, common) are not code here. */
		if (!sym.st_value || sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE)
			continue;
		target = elf_getscn(elf, sym.st_shndx);
		if (!target || !gelf_getshdr(target, &tsh))
			continue;
		if ((tsh.sh_flags & (SHF_ALLOC | SHF_EXECINSTR)) != (SHF_ALLOC | SHF_EXECINSTR))
			continue;
		name = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (!name || is_junk_name(name))
			continue;
		r.start = sym.st_value;
		r.size = sym.st_size;
		r.sized = sym.st_size != 0;
		r.limit = tsh.sh_addr + tsh.sh_size;
		r.name = name;
		r.rank = symbol_rank(&sym, name);
		r.seq = (uint32_t)out->len;
		if (vec_push(out, r))
			return -ENOMEM;
	}
	return 0;
}

static int read_symbols(Elf *elf, raw_syms_t *out, bool *has_symtab)
{
	Elf_Scn *scn = NULL;
	int err;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM)
			continue;
		if (sh.sh_type == SHT_SYMTAB && sh.sh_size)
			*has_symtab = true;
		err = read_symbol_section(elf, scn, &sh, out);
		if (err)
			return err;
	}
	return 0;
}

static int cmp_raw(const void *a, const void *b)
{
	const struct raw_sym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank > y->rank ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int append_name(struct elf_symtab *t, const char *name, uint32_t *off)
{
	size_t len = strlen(name);

	if (t->names.len + len + 1 > UINT32_MAX)
		return -ENOMEM;
	if (vec_reserve(&t->names, len + 1))
		return -ENOMEM;
	*off = (uint32_t)t->names.len;
	memcpy(t->names.data + t->names.len, name, len + 1);
	t->names.len += len + 1;
	return 0;
}

/*
 * Sort, keep one symbol per address, drop unsized labels inside sized
 * functions, give unsized symbols the extent up to the next symbol, and copy
 * the surviving names out of libelf's buffers.
 */
static int finalize_symbols(struct elf_symtab *t, raw_syms_t *raw)
{
	uint64_t cover_end = 0;
	size_t n = 0;

	if (!raw->len)
		return 0;
	vec_sort(raw, cmp_raw);
	for (size_t i = 0; i < raw->len; i++) {
		struct raw_sym *r = &raw->data[i];

		if (n && raw->data[n - 1].start == r->start)
			continue;
		if (!r->sized && r->start < cover_end)
			continue;
		if (r->sized && r->start + r->size > cover_end)
			cover_end = r->start + r->size;
		raw->data[n++] = *r;
	}
	raw->len = n;

	if (vec_reserve(&t->syms, n))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct raw_sym *r = &raw->data[i];
		struct elf_sym s = { .start = r->start, .size = r->size };

		if (!r->sized) {
			uint64_t end = r->limit;

			if (i + 1 < n && raw->data[i + 1].start < end)
				end = raw->data[i + 1].start;
			if (end <= r->start)
				continue;
			s.size = end - r->start;
		}
		if (append_name(t, r->name, &s.name))
			return -ENOMEM;
		t->syms.data[t->syms.len++] = s;
	}
	return 0;
}

/*
 * The program's entry point, which a stripped executable leaves unnamed:
 * its .dynsym has no _start, so the outermost frame of every whole stack
 * would read "gzip+0x3e19" and not be seen as a thread root. Named
 * "_start" (what every C runtime calls it) at the lowest rank, so that any
 * real symbol at the entry wins, and unsized, so that a sized symbol
 * covering it keeps its name; it spans at most ENTRY_STUB_MAX bytes (glibc's
 * _start is 38), up to the next symbol or the end of its segment.
 */
#define ENTRY_STUB_MAX 64

static int add_entry_symbol(Elf *elf, const struct elf_symtab *t, raw_syms_t *raw)
{
	GElf_Ehdr eh;

	if (!gelf_getehdr(elf, &eh) || !eh.e_entry || (eh.e_type != ET_EXEC && eh.e_type != ET_DYN))
		return 0;
	for (size_t i = 0; i < t->segments.len; i++) {
		const struct elf_segment *seg = &t->segments.data[i];
		uint64_t end = seg->vaddr + seg->filesz;
		struct raw_sym r = {
			.start = eh.e_entry, .name = "_start", .rank = 0, .seq = (uint32_t)raw->len
		};

		if (!(seg->flags & PF_X) || eh.e_entry < seg->vaddr || eh.e_entry >= end)
			continue;
		r.limit = end - eh.e_entry < ENTRY_STUB_MAX ? end : eh.e_entry + ENTRY_STUB_MAX;
		return vec_push(raw, r) ? -ENOMEM : 0;
	}
	return 0;
}

/*
 * A Go binary stripped of its symbol table (-ldflags='-s -w', as release
 * builds are) still has .gopclntab, which the runtime needs: its function
 * names and extents name the frames. `go` stays open until the names are
 * copied out (finalize_symbols).
 */
static int add_go_symbols(Elf *elf, struct go_pclntab *go, raw_syms_t *raw)
{
	if (go_pclntab_open(elf, go))
		return 0; /* not Go, or a layout not read: no names from it */
	for (uint32_t i = 0; i < go->nfunc; i++) {
		struct go_func f;
		struct raw_sym r;

		if (!go_pclntab_func(go, i, &f) || !f.name[0] || f.end <= f.entry)
			continue;
		r = (struct raw_sym){ .start = f.entry,
				      .size = f.end - f.entry,
				      .limit = f.end,
				      .name = f.name,
				      .rank = 1100,
				      .seq = (uint32_t)raw->len,
				      .sized = true };
		if (vec_push(raw, r))
			return -ENOMEM;
	}
	return 0;
}

/* Separate debug info, as Debian's -dbgsym packages install it: DIR/.build-id/xx/rest.debug. */
static Elf *open_debug_file(const struct elf_symtab *t, const char *debug_dir, int *fd)
{
	Elf *elf;

	*fd = debug_file_open_build_id(debug_dir, t->build_id);
	if (*fd < 0)
		return NULL;
	elf = elf_open_fd(*fd);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		elf_end(elf);
		close(*fd);
		return NULL;
	}
	return elf;
}

/*
 * Symbols of `elf`, and of `debug` (an open separate debug file) or else
 * of the one under `debug_dir` when `elf` itself has no .symtab.
 */
static int load_elf(struct elf_symtab *t, Elf *elf, Elf *debug, const char *debug_dir)
{
	raw_syms_t raw = { 0 };
	plt_stubs_t stubs = { 0 };
	struct go_pclntab go = { 0 };
	Elf *found = NULL;
	int debug_fd = -1;
	int err;

	if (elf_kind(elf) != ELF_K_ELF)
		return -ENOEXEC;
	err = read_segments(elf, t);
	if (err)
		goto out;
	read_build_id(elf, t);
	err = read_symbols(elf, &raw, &t->has_symtab);
	if (err)
		goto out;
	if (!t->has_symtab && !debug && debug_dir)
		debug = found = open_debug_file(t, debug_dir, &debug_fd);
	if (!t->has_symtab && debug && elf_kind(debug) == ELF_K_ELF) {
		err = read_symbols(debug, &raw, &t->has_symtab);
		if (err)
			goto out;
	}
	/* The code of the PLT is only in the file itself, never in a debug file. */
	err = elf_plt_stubs(elf, &stubs);
	if (err)
		goto out;
	for (size_t i = 0; i < stubs.len; i++) {
		const struct plt_stub *p = &stubs.data[i];
		/* Lowest rank: any real symbol at the same address names it instead. */
		struct raw_sym r = { .start = p->start,
				     .size = p->size,
				     .limit = p->start + p->size,
				     .name = p->name,
				     .rank = 0,
				     .seq = (uint32_t)raw.len,
				     .sized = true };

		if (vec_push(&raw, r)) {
			err = -ENOMEM;
			goto out;
		}
	}
	err = add_entry_symbol(elf, t, &raw);
	if (!err && !t->has_symtab)
		err = add_go_symbols(elf, &go, &raw);
	if (err)
		goto out;
	/* Names still point into the ELF images: copy them before closing. */
	err = finalize_symbols(t, &raw);
	if (!err)
		t->runtime = go_pclntab_present(elf) ? CODE_RUNTIME_GO
			     : elf_symtab_find(t, "_PyEval_EvalFrameDefault") ||
					     elf_symtab_find(t, "PyEval_EvalFrameEx") /* 2.7 */
				     ? CODE_RUNTIME_PYTHON
				     : CODE_RUNTIME_NATIVE;
out:
	vec_free(&raw);
	plt_stubs_free(&stubs);
	go_pclntab_close(&go);
	if (found) {
		elf_end(found);
		close(debug_fd);
	}
	if (err)
		elf_symtab_free(t);
	return err;
}

bool elf_has_symtab(Elf *elf)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB && sh.sh_size)
			return true;
	}
	return false;
}

int elf_symtab_load_elf(struct elf_symtab *t, Elf *elf, Elf *debug)
{
	int err = elf_init();

	return err ? err : load_elf(t, elf, debug, NULL);
}

int elf_symtab_load_fd(struct elf_symtab *t, int fd, const char *debug_dir)
{
	Elf *elf;
	int err = elf_init();

	if (err)
		return err;
	elf = elf_open_fd(fd);
	if (!elf)
		return -ENOEXEC;
	err = load_elf(t, elf, NULL, debug_dir);
	elf_end(elf);
	return err;
}

int elf_symtab_load_path(struct elf_symtab *t, const char *path, const char *debug_dir)
{
	int fd = open_regular(path, 0);
	int err;

	if (fd < 0)
		return fd;
	err = elf_symtab_load_fd(t, fd, debug_dir);
	close(fd);
	return err;
}

int elf_symtab_load_mem(struct elf_symtab *t, void *image, size_t size)
{
	Elf *elf;
	int err = elf_init();

	if (err)
		return err;
	elf = elf_memory(image, size);
	if (!elf)
		return -ENOEXEC;
	err = load_elf(t, elf, NULL, NULL);
	elf_end(elf);
	return err;
}

int elf_symtab_offset_to_vaddr(const struct elf_symtab *t, uint64_t offset, uint64_t *vaddr)
{
	const uint64_t page = 4096;

	for (size_t i = 0; i < t->segments.len; i++) {
		const struct elf_segment *s = &t->segments.data[i];

		if (offset >= s->offset && offset - s->offset < s->filesz) {
			*vaddr = offset - s->offset + s->vaddr;
			return 0;
		}
	}
	/*
	 * The kernel maps whole pages, so the page that holds the start of a
	 * segment is mapped with it, and code offsets there still translate.
	 */
	for (size_t i = 0; i < t->segments.len; i++) {
		const struct elf_segment *s = &t->segments.data[i];
		uint64_t lo = s->offset & ~(page - 1);

		if (offset >= lo && offset < s->offset && s->vaddr >= s->offset - offset) {
			*vaddr = s->vaddr - (s->offset - offset);
			return 0;
		}
	}
	return -ENOENT;
}

const struct elf_sym *elf_symtab_lookup(const struct elf_symtab *t, uint64_t vaddr)
{
	size_t lo = 0, hi = t->syms.len;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->syms.data[mid].start <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* lo - 1 starts closest below vaddr; an outer sized function may enclose a nested one. */
	for (size_t i = lo, k = 0; i > 0 && k < NESTED_LOOKBACK; i--, k++) {
		const struct elf_sym *s = &t->syms.data[i - 1];

		if (vaddr - s->start < s->size)
			return s;
	}
	return NULL;
}

const struct elf_sym *elf_symtab_find(const struct elf_symtab *t, const char *name)
{
	for (size_t i = 0; i < t->syms.len; i++)
		if (!strcmp(elf_symtab_name(t, &t->syms.data[i]), name))
			return &t->syms.data[i];
	return NULL;
}

size_t elf_symtab_bytes(const struct elf_symtab *t)
{
	return t->segments.cap * sizeof(*t->segments.data) + t->syms.cap * sizeof(*t->syms.data) +
	       t->names.cap;
}

void elf_symtab_free(struct elf_symtab *t)
{
	vec_free(&t->segments);
	vec_free(&t->syms);
	vec_free(&t->names);
	t->build_id[0] = '\0';
	t->base = 0;
	t->has_symtab = false;
	t->runtime = 0;
}
