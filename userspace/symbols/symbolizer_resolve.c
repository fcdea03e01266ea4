// SPDX-License-Identifier: BSD-2-Clause
/*
 * Turning a (object, offset) into names: kernel addresses through kallsyms,
 * file offsets through the object's symbol table and DWARF (inlined calls
 * become items of their own), anything else into "0x..." or "lib+0x...".
 * The objects themselves are symbolizer.c's.
 */
#include "symbolizer.h"
#include "symbolizer_internal.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "../lang/go_lines.h"
#include "../lang/go_pclntab.h"
#include "demangle.h"
#include "dwarf.h"
#include "frame_objects.h"

/* Returned when even an "[unknown]"-style name cannot be allocated. */
static const char out_of_memory_name[] = "[unsymbolized]";

static const char *intern_or_fallback(struct name_table *t, const char *str)
{
	const char *copy = sym_name_intern(t, str, NULL);

	return copy ? copy : out_of_memory_name;
}

/* "PREFIX0xVALUE", valid until the next sweep. */
static const char *hex_name(struct symbolizer *s, const char *prefix, uint64_t value)
{
	char buf[PATH_MAX + 32];

	snprintf(buf, sizeof(buf), "%s0x%" PRIx64, prefix, value);
	return intern_or_fallback(&s->addr_names, buf);
}

/*
 * The name to show for a symbol, demangled once into `names` (those of
 * the symbol's object): `cache` is the symbol's slot in a per-table array
 * (NULL if that array could not be allocated).
 */
static const char *display_name(struct name_table *names, uint32_t *cache, const char *raw)
{
	const char *shown;
	char *pretty;
	uint32_t idx;

	if (cache && *cache == DISPLAY_RAW)
		return raw;
	if (cache && *cache)
		return strtab_get(&names->strs, *cache - 1);
	pretty = demangle(raw);
	if (!pretty) {
		if (cache)
			*cache = DISPLAY_RAW;
		return raw;
	}
	shown = sym_name_intern(names, pretty, &idx);
	free(pretty);
	if (!shown)
		return raw;
	if (cache)
		*cache = idx + 1;
	return shown;
}

/* The cache slot of symbol `i` of a table of `n`, allocating the array on first use. */
static uint32_t *display_slot(uint32_t **array, size_t n, size_t i)
{
	if (!*array && n)
		*array = calloc(n, sizeof(**array));
	return *array ? &(*array)[i] : NULL;
}

static void resolve_kernel(struct symbolizer *s, uint64_t addr, bool is_return,
			   struct resolved_frame *out)
{
	uint64_t lookup = addr - (is_return && addr ? 1 : 0);
	const struct ksym *sym = NULL;
	const char *module;
	char buf[128];

	out->kernel = true;
	out->resource = s->objects.data[OBJ_KERNEL]->info.name;
	if (sym_ensure_kallsyms(s))
		sym = kallsyms_lookup(&s->ksyms, lookup);
	if (!sym) {
		out->items[0].func = hex_name(s, "", addr);
		return;
	}
	out->items[0].func = display_name(
		&s->names,
		display_slot(&s->ksym_display, s->ksyms.syms.len, sym - s->ksyms.syms.data),
		kallsyms_name(&s->ksyms, sym));
	module = kallsyms_module(&s->ksyms, sym);
	if (module) {
		snprintf(buf, sizeof(buf), "[%s]", module);
		out->resource = intern_or_fallback(&s->names, buf);
	}
}

/* A DWARF function name of `o` as shown: demangled once per distinct name. */
static const char *dwarf_display_name(struct object *o, const char *raw)
{
	struct hmap_key key = { (uint64_t)(uintptr_t)raw, 0 };
	const char *shown;
	char *pretty;
	uint32_t idx;

	if (hmap_get(&o->dwarf_names, key, &idx))
		return strtab_get(&o->names.strs, idx);
	pretty = demangle(raw);
	shown = sym_name_intern(&o->names, pretty ? pretty : raw, &idx);
	free(pretty);
	if (!shown)
		return raw;
	/* Only a cache: a failed insert costs a second demangling later. */
	hmap_put(&o->dwarf_names, key, idx);
	return shown;
}

/* "libname+0xOFFSET": what an address without any name is called. */
static const char *offset_name(struct symbolizer *s, const struct object *o, uint64_t offset)
{
	char prefix[PATH_MAX];

	snprintf(prefix, sizeof(prefix), "%s+", o->info.name);
	return hex_name(s, prefix, offset);
}

/*
 * Fill `out` from DWARF locations (outer to inner). Item 0 keeps the symbol
 * table's name when there is one (`symbol`): DWARF names the definition,
 * which in C may be an internal alias ("__GI___libc_write" for write,
 * "__printf" for printf) where the symbol table has the public name, the
 * one other profilers show. Otherwise the DWARF name, else the offset.
 */
static void fill_from_dwarf(struct symbolizer *s, struct object *o, uint64_t offset,
			    const struct dwarf_location *locs, unsigned n, const char *symbol,
			    struct resolved_frame *out)
{
	out->count = n;
	for (unsigned k = 0; k < n; k++) {
		const struct dwarf_location *l = &locs[k];
		const char *file = l->file ? l->file : l->decl_file;
		const char *name = k == 0 ? symbol : NULL;

		if (!name && l->name)
			name = dwarf_display_name(o, l->name);
		if (!name)
			name = k == 0 ? offset_name(s, o, offset) : "[inlined]";
		out->items[k].func = name;
		out->items[k].file = file;
		out->items[k].line = l->line;
		/* A start line in another file than `file` would point into the wrong source. */
		if (l->decl_line > 0 && l->decl_file && file && !strcmp(l->decl_file, file))
			out->items[k].start_line = l->decl_line;
	}
}

/*
 * A Go function's file and line from .gopclntab (no DWARF); the line at
 * its entry stands for where it starts (Go 1.20's startLine is the func
 * keyword's, a line or two above: close enough to open the source there).
 */
static void fill_from_go(struct object *o, uint64_t vaddr, struct resolved_frame *out)
{
	int64_t i = go_pclntab_find(o->go, vaddr);
	struct go_func f;
	const char *file, *start_file;
	int line, start;

	if (i < 0 || !go_pclntab_func(o->go, (uint32_t)i, &f) ||
	    !go_lines_at(o->go_lines, o->go, &f, vaddr, &file, &line))
		return;
	out->items[0].file = file;
	out->items[0].line = line;
	if (go_lines_at(o->go_lines, o->go, &f, f.entry, &start_file, &start) &&
	    !strcmp(start_file, file))
		out->items[0].start_line = start;
}

/* Whether a symbol starts exactly at file offset `offset` (the object is loaded). */
static bool starts_function(struct object *o, uint64_t offset)
{
	const struct elf_sym *sym;
	uint64_t vaddr;

	if (elf_symtab_offset_to_vaddr(&o->symtab, offset, &vaddr))
		return false;
	sym = elf_symtab_lookup(&o->symtab, vaddr);
	return sym && sym->start == vaddr;
}

static void resolve_file(struct symbolizer *s, struct object *o, uint64_t offset, bool is_return,
			 struct resolved_frame *out)
{
	/* A return address points after the call; the call itself is one byte earlier. */
	uint64_t lookup = offset - (is_return && offset ? 1 : 0);
	struct dwarf_location locs[RESOLVED_MAX_DEPTH];
	const struct elf_sym *sym = NULL;
	const char *symbol = NULL;
	unsigned nlocs = 0;
	uint64_t vaddr;

	out->resource = o->info.name;
	out->lib = &o->info;
	if (sym_ensure_loaded(s, o) && !elf_symtab_offset_to_vaddr(&o->symtab, lookup, &vaddr)) {
		out->address = (int64_t)(vaddr - o->symtab.base);
		sym = elf_symtab_lookup(&o->symtab, vaddr);
		if (sym_ensure_dwarf(s, o))
			nlocs = dwarf_info_lookup(o->dwarf, vaddr, locs, RESOLVED_MAX_DEPTH);
	}
	/*
	 * A "return address" at the very start of a function, with no function
	 * before it: a signal trampoline (__restore_rt), which the kernel makes
	 * the handler's return address. The byte before is the padding in front
	 * of it; the trampoline is the frame.
	 */
	if (!sym && !nlocs && lookup != offset && starts_function(o, offset)) {
		resolve_file(s, o, offset, false, out);
		return;
	}
	if (sym) {
		size_t i = (size_t)(sym - o->symtab.syms.data);

		symbol = display_name(&o->names, display_slot(&o->display, o->symtab.syms.len, i),
				      elf_symtab_name(&o->symtab, sym));
		if (symbol && sym->start >= o->symtab.base) {
			out->symbol_address = (int64_t)(sym->start - o->symtab.base);
			out->symbol_size = sym->size;
			out->symbol_name = symbol;
		}
	}
	if (nlocs)
		fill_from_dwarf(s, o, lookup, locs, nlocs, symbol, out);
	else
		out->items[0].func = symbol ? symbol : offset_name(s, o, lookup);
	if (!nlocs && o->go && out->address >= 0)
		fill_from_go(o, vaddr, out);
}

void symbolizer_resolve(struct symbolizer *s, uint32_t object, uint64_t offset, bool is_return,
			struct resolved_frame *out)
{
	memset(out, 0, sizeof(*out));
	out->count = 1;
	out->address = -1;
	out->symbol_address = -1;
	s->lookups++;

	if (object == OBJ_KERNEL) {
		resolve_kernel(s, offset, is_return, out);
	} else if (object < OBJ_FIRST_FILE || object >= s->objects.len ||
		   !s->objects.data[object]) {
		/*
		 * An unknown address, an id never handed out or swept (or a
		 * synthetic one, which the profile's tables name instead): only
		 * the address is known.
		 */
		out->items[0].func = hex_name(s, "", offset);
	} else {
		resolve_file(s, s->objects.data[object], offset, is_return, out);
	}
}
