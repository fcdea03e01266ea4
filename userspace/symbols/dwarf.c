// SPDX-License-Identifier: BSD-2-Clause
/*
 * DWARF lookups for the symbolizer.
 *
 * An address is first mapped to its compilation unit through our own
 * index of unit address ranges: libdw's dwarf_addrdie() relies on
 * .debug_aranges, which clang and some linkers do not emit. The first
 * lookup in a unit indexes the address ranges of its functions, so that
 * later ones find their function by binary search and only walk down that
 * function's lexical blocks and inlined calls; dwarf_getscopes() would walk
 * every top-level DIE of the unit on every lookup (54 us per random
 * address in libc's DWARF, against 3 us this way).
 *
 * What the index misses (nested functions, units without ranges) goes
 * through dwarf_getscopes(), which finds the innermost scope holding the
 * address but past an inlined call continues with the scopes of the
 * inlined function's abstract definition, not with the functions it was
 * inlined into; dwarf_getscopes_die() on that innermost scope gives the
 * concrete nesting, which is the chain of calls that really happened.
 */
#include "dwarf.h"

#include <dwarf.h> /* the system's: DW_TAG_*, DW_AT_* */
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../util/hashmap.h"
#include "../util/vec.h"
#include "debug_file.h"
#include "dwarf_image.h"

/* Inline chains deeper than this are cut (the symbolizer keeps fewer anyway). */
#define CHAIN_MAX 64

/* Rough heap cost of libdw's per-unit state, for statistics only. */
#define UNIT_BYTES	 256 /* Dwarf_CU and its lookup tree node */
#define LINE_ROW_BYTES	 48  /* one decoded line table row */
#define FILE_ENTRY_BYTES 32  /* one file table entry */

/* Namespaces and classes nest; functions deeper than this are left to dwarf_getscopes(). */
#define NEST_MAX 16

/* An address range of a unit: [lo, hi) belongs to units[cu]. */
struct cu_range {
	uint64_t lo, hi;
	uint32_t cu;
};

/* An address range of a function's code. */
struct fn_range {
	uint64_t lo, hi;
	Dwarf_Die die;
};

typedef VEC(struct fn_range) fn_ranges_t;

struct unit {
	Dwarf_Die die;	 /* to search in: the unit, or a skeleton's split unit */
	fn_ranges_t fns; /* sorted by lo; built at the first lookup in the unit */
	bool indexed;
};

struct dwarf_info {
	struct dwarf_image image; /* the file's debug sections, mapped or read */
	Dwarf *dbg;
	/* A dwz supplementary file we found ourselves (libdw frees its own). */
	struct dwarf_image alt_image;
	Dwarf *alt;
	VEC(struct unit) units;
	VEC(struct cu_range) ranges; /* sorted by lo */
	struct hmap lines_read;	     /* unit DIE offset -> 1: its line table is counted below */
	size_t line_bytes;
	/*
	 * dwarf_getscopes fails on malformed units and leaks 32 bytes each time
	 * (elfutils 0.188): after this many failures in one file it is not asked
	 * again, so a day-long run does not leak per lookup.
	 */
	unsigned scopes_failures;
};

#define SCOPES_FAILURES_MAX 64

/* Heap an image holds: what was read and what libdw inflates from it (a mapping is page cache). */
static uint64_t image_bytes(const struct dwarf_image *img)
{
	return img->bytes + img->inflated;
}

static const char *section_name(Elf *elf, size_t shstrndx, Elf_Scn *scn, GElf_Shdr *sh)
{
	if (!gelf_getshdr(scn, sh))
		return NULL;
	return elf_strptr(elf, shstrndx, sh->sh_name);
}

bool dwarf_info_present(Elf *elf)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (!elf || elf_getshdrstrndx(elf, &shstrndx))
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name = section_name(elf, shstrndx, scn, &sh);

		if (!name || sh.sh_type == SHT_NOBITS || !sh.sh_size)
			continue;
		/* .zdebug_* is the old GNU compression; libdw reads both. */
		if (!strcmp(name, ".debug_info") || !strcmp(name, ".debug_line") ||
		    !strcmp(name, ".zdebug_info") || !strcmp(name, ".zdebug_line"))
			return true;
	}
	return false;
}

/*
 * A dwz supplementary file, found by its build-id under the debug root (a
 * root-owned tree), opened by us and handed to libdw. libdw's own search
 * would open the name the file records, relative to the debug file's
 * directory, with a plain open(): a FIFO its owner put there would block us.
 * So libdw must never search: a file that names a supplementary file we
 * cannot find gives no DWARF (-ENOENT), and its symbols still name its
 * functions; so does one whose supplementary file is past what is left of
 * `max_bytes` (-EDQUOT, or -EFBIG past what is left of DWARF_IMAGE_MAX_BYTES).
 * 0 when there is none or it is attached.
 */
static int attach_alt(struct dwarf_info *d, const char *debug_root, uint64_t max_bytes)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *id = NULL;
	const char *name = NULL;
	char idhex[2 * 64 + 1];
	ssize_t n = dwelf_dwarf_gnu_debugaltlink(d->dbg, &name, (const void **)&id);
	uint64_t used;
	int fd, err;

	if (n <= 0)
		return 0; /* none, or unreadable: libdw cannot search for it either */
	if (n > 64 || !id)
		return -ENOENT;
	for (ssize_t i = 0; i < n; i++) {
		idhex[2 * i] = hex[id[i] >> 4];
		idhex[2 * i + 1] = hex[id[i] & 15];
	}
	idhex[2 * n] = '\0';
	fd = debug_file_open_build_id(debug_root, idhex);
	if (fd < 0)
		return -ENOENT;
	/* Within what the file naming it left of the budget, and of any budget. */
	used = image_bytes(&d->image);
	err = dwarf_image_open_part(&d->alt_image, fd, used < max_bytes ? max_bytes - used : 0,
				    used < DWARF_IMAGE_MAX_BYTES ? DWARF_IMAGE_MAX_BYTES - used
								 : 0);
	if (!err && !d->alt_image.buf && elf_cntl(d->alt_image.elf, ELF_C_FDREAD))
		err = -EIO;
	if (!err)
		d->alt = dwarf_begin_elf(d->alt_image.elf, DWARF_C_READ, NULL);
	close(fd);
	if (err == -EFBIG || err == -EDQUOT)
		return err;
	if (!d->alt)
		return -ENOENT;
	dwarf_setalt(d->dbg, d->alt);
	return 0;
}

static int cmp_range(const void *a, const void *b)
{
	const struct cu_range *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->hi < y->hi ? -1 : x->hi > y->hi;
}

/* Add the address ranges of one unit DIE. */
static int index_unit(struct dwarf_info *d, Dwarf_Die *cudie, const Dwarf_Die *search)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;
	uint32_t cu = (uint32_t)d->units.len;
	bool any = false;

	while ((off = dwarf_ranges(cudie, off, &base, &lo, &hi)) > 0) {
		/*
		 * Code the linker dropped (COMDAT duplicates, --gc-sections)
		 * keeps its DWARF with address 0 or a -1/-2 tombstone.
		 */
		if (lo == 0 || hi <= lo || lo >= UINT64_MAX - 1)
			continue;
		if (vec_push(&d->ranges, ((struct cu_range){ lo, hi, cu })))
			return -ENOMEM;
		any = true;
	}
	if (any && vec_push(&d->units, ((struct unit){ .die = *search })))
		return -ENOMEM;
	return 0;
}

static int build_index(struct dwarf_info *d)
{
	Dwarf_CU *cu = NULL, *next;
	Dwarf_Half version;
	uint8_t type;
	Dwarf_Die cudie;
	int err;

	for (;;) {
		/*
		 * No split unit is asked for: libdw would open the .dwo the
		 * skeleton names (any path its builder chose) with a plain
		 * open(). A skeleton keeps the addresses and the line table;
		 * its inlined frames, in the .dwo, are not shown.
		 */
		if (dwarf_get_units(d->dbg, cu, &next, &version, &type, &cudie, NULL))
			break;
		cu = next;
		if (type == DW_UT_skeleton || type == DW_UT_compile || type == DW_UT_partial) {
			err = index_unit(d, &cudie, &cudie);
		} else {
			continue; /* type units hold no code */
		}
		if (err)
			return err;
	}
	if (d->ranges.len)
		vec_sort(&d->ranges, cmp_range);
	return 0;
}

int dwarf_info_open(struct dwarf_info **out, int fd, const char *debug_root)
{
	return dwarf_info_open_capped(out, fd, debug_root, DWARF_IMAGE_MAX_BYTES);
}

int dwarf_info_open_capped(struct dwarf_info **out, int fd, const char *debug_root,
			   uint64_t max_bytes)
{
	struct dwarf_info *d;
	int err;

	*out = NULL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	err = dwarf_image_open(&d->image, fd, max_bytes);
	if (err)
		goto fail;
	d->dbg = dwarf_begin_elf(d->image.elf, DWARF_C_READ, NULL);
	if (!d->dbg) {
		err = -ENODATA;
		goto fail;
	}
	err = attach_alt(d, debug_root ? debug_root : DEBUG_ROOT_DEFAULT, max_bytes);
	if (err)
		goto fail;
	err = build_index(d);
	if (err)
		goto fail;
	/*
	 * A mapped file is mapped in full, so `fd` is not needed past this
	 * call (libdw would have looked for split DWARF relative to it; an
	 * image has no fd, and we ask for no split unit). A read one is in
	 * the image already.
	 */
	if (!d->image.buf && elf_cntl(d->image.elf, ELF_C_FDREAD)) {
		err = -EIO;
		goto fail;
	}
	*out = d;
	return 0;
fail:
	dwarf_info_free(d);
	return err;
}

/* The unit holding `addr` in our index, or NULL. */
static struct unit *find_unit(struct dwarf_info *d, uint64_t addr)
{
	size_t lo = 0, hi = d->ranges.len;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (d->ranges.data[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Ranges of different units may nest (bad producers); a few back is enough. */
	for (size_t i = lo, k = 0; i > 0 && k < 8; i--, k++) {
		const struct cu_range *r = &d->ranges.data[i - 1];

		if (addr < r->hi)
			return &d->units.data[r->cu];
	}
	return NULL;
}

static int add_function(fn_ranges_t *fns, Dwarf_Die *die)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;

	/* Declarations have no ranges; definitions one, or several when split (.cold). */
	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		if (lo == 0 || hi <= lo || lo >= UINT64_MAX - 1)
			continue;
		if (vec_push(fns, ((struct fn_range){ lo, hi, *die })))
			return -ENOMEM;
	}
	return 0;
}

/* The functions with code among the children of `parent`, through namespaces and classes. */
static int collect_functions(fn_ranges_t *fns, Dwarf_Die *parent, unsigned depth)
{
	Dwarf_Die child;
	int err = 0;

	if (depth > NEST_MAX || dwarf_child(parent, &child))
		return 0;
	do {
		switch (dwarf_tag(&child)) {
		case DW_TAG_subprogram:
			err = add_function(fns, &child);
			break;
		case DW_TAG_namespace:
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
		case DW_TAG_module:
			err = collect_functions(fns, &child, depth + 1);
			break;
		default:
			break;
		}
	} while (!err && dwarf_siblingof(&child, &child) == 0);
	return err;
}

static int cmp_fn(const void *a, const void *b)
{
	const struct fn_range *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->hi < y->hi ? -1 : x->hi > y->hi;
}

/* Index the functions of `u` once; on failure lookups take the slow way. */
static void index_functions(struct unit *u)
{
	u->indexed = true;
	if (collect_functions(&u->fns, &u->die, 0)) {
		vec_free(&u->fns);
		return;
	}
	if (u->fns.len)
		vec_sort(&u->fns, cmp_fn);
}

static const struct fn_range *find_function(const struct unit *u, uint64_t addr)
{
	size_t lo = 0, hi = u->fns.len;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (u->fns.data[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo, k = 0; i > 0 && k < 8; i--, k++)
		if (addr < u->fns.data[i - 1].hi)
			return &u->fns.data[i - 1];
	return NULL;
}

/*
 * The function chain of `addr` through the unit's function index: the
 * function, then down through its lexical blocks and inlined calls, into
 * the one child holding the address at each level. 0 when no function of
 * the index holds the address.
 */
static unsigned indexed_chain(const struct unit *u, uint64_t addr, Dwarf_Die *chain)
{
	const struct fn_range *fn = find_function(u, addr);
	Dwarf_Die die, child;
	unsigned count = 1;
	bool deeper = true;

	if (!fn)
		return 0;
	chain[0] = die = fn->die;
	while (deeper) {
		deeper = false;
		if (dwarf_child(&die, &child))
			break;
		do {
			int tag = dwarf_tag(&child);

			if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_lexical_block &&
			    tag != DW_TAG_try_block && tag != DW_TAG_catch_block)
				continue;
			if (dwarf_haspc(&child, addr) != 1)
				continue;
			if (tag == DW_TAG_inlined_subroutine && count < CHAIN_MAX)
				chain[count++] = child;
			die = child;
			deeper = true;
			break;
		} while (dwarf_siblingof(&child, &child) == 0);
	}
	return count;
}

/* Count a unit's line table in the statistics, the first time it is decoded. */
static void count_lines(struct dwarf_info *d, Dwarf_Die *cudie)
{
	struct hmap_key key = { dwarf_dieoffset(cudie), 0 };
	Dwarf_Lines *lines;
	Dwarf_Files *files;
	size_t nlines = 0, nfiles = 0;

	if (hmap_get(&d->lines_read, key, NULL))
		return;
	if (hmap_put(&d->lines_read, key, 1))
		return; /* statistics only: a missed count is no error */
	if (!dwarf_getsrclines(cudie, &lines, &nlines))
		d->line_bytes += nlines * LINE_ROW_BYTES;
	if (!dwarf_getsrcfiles(cudie, &files, &nfiles))
		d->line_bytes += nfiles * FILE_ENTRY_BYTES;
}

static int clamp_line(Dwarf_Word v)
{
	return v > INT_MAX ? 0 : (int)v;
}

/* Entry `idx` of the file table of the unit holding `die`; NULL when none. */
static const char *unit_file(Dwarf_Die *die, Dwarf_Word idx)
{
	Dwarf_Die cu_mem, *cudie = dwarf_diecu(die, &cu_mem, NULL, NULL);
	Dwarf_Files *files;
	size_t nfiles;
	const char *name;

	if (!cudie || dwarf_getsrcfiles(cudie, &files, &nfiles) || idx >= nfiles)
		return NULL;
	name = dwarf_filesrc(files, idx, NULL, NULL);
	/* libdw's placeholder for DWARF 4's unused entry 0. */
	return name && strcmp(name, "???") ? name : NULL;
}

/* Where the inlined call `inlined` is, in the function it was inlined into. */
static void call_site(Dwarf_Die *inlined, struct dwarf_location *caller)
{
	Dwarf_Attribute attr;
	Dwarf_Word v;

	if (!dwarf_formudata(dwarf_attr(inlined, DW_AT_call_line, &attr), &v))
		caller->line = clamp_line(v);
	if (!dwarf_formudata(dwarf_attr(inlined, DW_AT_call_file, &attr), &v))
		caller->file = unit_file(inlined, v);
}

/* Name and definition of the function `die` (a subprogram or inlined call) is of. */
static void describe(Dwarf_Die *die, struct dwarf_location *loc)
{
	Dwarf_Attribute attr;
	const char *name;
	int line = 0;

	/* Through DW_AT_abstract_origin / DW_AT_specification to where the names are. */
	name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));
	if (!name)
		name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr));
	if (!name)
		name = dwarf_diename(die);
	loc->name = name && name[0] ? name : NULL;
	loc->decl_file = dwarf_decl_file(die);
	loc->decl_line = dwarf_decl_line(die, &line) ? 0 : line;
}

static void line_of(Dwarf_Line *line, struct dwarf_location *loc)
{
	int l = 0;

	if (!line)
		return;
	loc->file = dwarf_linesrc(line, NULL, NULL);
	loc->line = dwarf_lineno(line, &l) || l < 0 ? 0 : l;
}

/*
 * The functions on the concrete scope chain of `addr`, outer to inner:
 * the innermost subprogram, then each inlined call inside it.
 */
static unsigned function_chain(struct dwarf_info *d, Dwarf_Die *cudie, uint64_t addr,
			       Dwarf_Die *chain)
{
	Dwarf_Die *scopes = NULL, inner;
	int n, sub = -1;
	unsigned count = 0;

	if (d->scopes_failures >= SCOPES_FAILURES_MAX)
		return 0;
	n = dwarf_getscopes(cudie, addr, &scopes);
	if (n < 0)
		d->scopes_failures++;
	if (n > 0) {
		inner = scopes[0];
		free(scopes);
		scopes = NULL;
		n = dwarf_getscopes_die(&inner, &scopes);
	}
	/* scopes[0] is innermost; a nested function (GNU C) is its own real function. */
	for (int i = 0; i < n && sub < 0; i++)
		if (dwarf_tag(&scopes[i]) == DW_TAG_subprogram)
			sub = i;
	/* Dwarf_Die values stay valid after the array holding them is freed. */
	for (int i = sub; i >= 0 && count < CHAIN_MAX; i--)
		if (i == sub || dwarf_tag(&scopes[i]) == DW_TAG_inlined_subroutine)
			chain[count++] = scopes[i];
	free(scopes);
	return count;
}

unsigned dwarf_info_lookup(struct dwarf_info *d, uint64_t vaddr, struct dwarf_location *out,
			   unsigned max)
{
	Dwarf_Die cu_mem, *cudie, chain[CHAIN_MAX];
	struct unit *u;
	Dwarf_Line *line;
	unsigned n = 0, count;

	if (!d || !max)
		return 0;
	u = find_unit(d, vaddr);
	/* Units without range attributes may still be in .debug_aranges. */
	cudie = u ? &u->die : dwarf_addrdie(d->dbg, vaddr, &cu_mem);
	if (!cudie)
		return 0;
	count_lines(d, cudie);
	line = dwarf_getsrc_die(cudie, vaddr);
	if (u && !u->indexed)
		index_functions(u);
	if (u)
		n = indexed_chain(u, vaddr, chain);
	if (!n)
		n = function_chain(d, cudie, vaddr, chain);
	if (!n) {
		if (!line)
			return 0;
		/* Code without a function DIE (assembly): the line alone. */
		memset(&out[0], 0, sizeof(out[0]));
		line_of(line, &out[0]);
		return 1;
	}
	count = n < max ? n : max;
	for (unsigned k = 0; k < count; k++) {
		memset(&out[k], 0, sizeof(out[k]));
		describe(&chain[k], &out[k]);
		/* Each function is at its call of the next one in, the last at the address. */
		if (k + 1 < n)
			call_site(&chain[k + 1], &out[k]);
		else
			line_of(line, &out[k]);
	}
	return count;
}

size_t dwarf_info_read_bytes(const struct dwarf_info *d)
{
	if (!d)
		return 0;
	return (d->image.buf ? image_bytes(&d->image) : 0) +
	       (d->alt_image.buf ? image_bytes(&d->alt_image) : 0);
}

size_t dwarf_info_bytes(const struct dwarf_info *d)
{
	if (!d)
		return 0;
	size_t bytes = sizeof(*d) + d->units.cap * sizeof(*d->units.data) +
		       d->ranges.cap * sizeof(*d->ranges.data) +
		       d->lines_read.cap * sizeof(struct hmap_slot) + d->units.len * UNIT_BYTES +
		       d->line_bytes + image_bytes(&d->image) + image_bytes(&d->alt_image);

	for (size_t i = 0; i < d->units.len; i++)
		bytes += d->units.data[i].fns.cap * sizeof(struct fn_range);
	return bytes;
}

void dwarf_info_free(struct dwarf_info *d)
{
	if (!d)
		return;
	if (d->dbg)
		dwarf_end(d->dbg);
	if (d->alt)
		dwarf_end(d->alt);
	dwarf_image_close(&d->alt_image);
	dwarf_image_close(&d->image);
	for (size_t i = 0; i < d->units.len; i++)
		vec_free(&d->units.data[i].fns);
	vec_free(&d->units);
	vec_free(&d->ranges);
	hmap_free(&d->lines_read);
	free(d);
}
