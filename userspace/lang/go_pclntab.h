/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Go's own function table, .gopclntab: what the Go runtime itself unwinds
 * and names its stacks with. Every Go binary has it, stripped (-s -w) or
 * not, with or without frame pointers and DWARF, because the runtime needs
 * it for tracebacks, the garbage collector and panics. Per function it
 * holds the entry, the name, and value tables keyed by PC: the stack
 * pointer's distance from the entry's (pcsp), the file and line.
 *
 * The layouts read are Go 1.16-1.17 (magic 0xfffffffa), 1.18-1.19
 * (0xfffffff0) and 1.20 on (0xfffffff1), with 8-byte pointers. The table
 * is copied out of the file, and every offset in it is checked against its
 * size: a hostile binary gets an error or wrong names, never a read out of
 * bounds or a walk without end.
 */
#ifndef BPFPROF_LANG_GO_PCLNTAB_H
#define BPFPROF_LANG_GO_PCLNTAB_H

#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* funcFlag bits of Go's _func (runtime/symtab.go). */
#define GO_FUNC_FLAG_TOPFRAME 0x1 /* the outermost frame of a goroutine or thread */
#define GO_FUNC_FLAG_SPWRITE  0x2 /* writes SP other than by its frame's size: no unwinding */

struct go_pclntab {
	uint8_t *data; /* the section, copied */
	size_t size;
	uint32_t version; /* 116, 118 or 120 */
	uint32_t nfunc;
	uint8_t quantum;     /* PC step of the value tables (1 on x86) */
	uint64_t text_start; /* the functions' entries are offsets from it (1.18+) */
	/* Offsets in data. */
	size_t funcnametab, cutab, filetab, pctab, functab;
	size_t cutab_len; /* entries */
};

struct go_func {
	uint64_t entry, end;	     /* [entry, end): ELF virtual addresses */
	const char *name;	     /* in the table, NUL-terminated; "" when out of bounds */
	uint32_t pcsp, pcfile, pcln; /* offsets of its value tables in pctab (0: none) */
	uint32_t cu_offset;
	uint8_t func_id, flag;
};

/*
 * The largest section a table is read from: 128 MiB. The go command's is
 * 2.8 MB (a quarter of its 10.7 MB), so this is a Go binary of ~450 MB. A
 * user's file is read, not mapped (util/elf_open.h), and the table then
 * copied: a 900 MiB one (a hole, free to make) cost root 3.7 GB of peak
 * RSS and kept 900 MiB for the symbolizer (issue 37). Over it, Go's code
 * is walked with frame pointers, which Go keeps.
 */
#define GO_PCLNTAB_MAX_BYTES (128u << 20)

/*
 * Find and copy the table of `elf`: the .gopclntab section, Go's PIE layout
 * (.data.rel.ro.gopclntab), or an externally linked PIE's (inside
 * .data.rel.ro, found by its header and its text relocation). 0, -ENOENT
 * (not a Go binary, or a layout not read here), -EINVAL (a corrupt
 * header), -ENOMEM, -E2BIG (a section over GO_PCLNTAB_MAX_BYTES, unread).
 */
int go_pclntab_open(Elf *elf, struct go_pclntab *t);
/*
 * The same from a copy of the section's bytes (taken over: freed by
 * go_pclntab_close, or here on error), with `text` the .text section's
 * address for a header that leaves it to a relocation (PIE).
 */
int go_pclntab_from_bytes(uint8_t *data, size_t size, uint64_t text, struct go_pclntab *t);
/* Whether `elf` has a Go function table, without reading it. */
bool go_pclntab_present(Elf *elf);
void go_pclntab_close(struct go_pclntab *t);

/* Function `i` (< t->nfunc); false when its record is out of bounds. */
bool go_pclntab_func(const struct go_pclntab *t, uint32_t i, struct go_func *f);

/* The index of the function holding `pc`, or -1. */
int64_t go_pclntab_find(const struct go_pclntab *t, uint64_t pc);

/*
 * A value table walked range by range: each go_pcvalue_next gives the
 * value that holds on [*start, *end). Ends (false) at the table's end, at
 * `limit` (the function's end) or after a bounded number of steps.
 */
struct go_pcvalue_iter {
	const struct go_pclntab *t;
	size_t off;
	uint64_t pc, limit;
	int32_t value;
	bool first;
	unsigned steps, max_steps;
};

void go_pcvalue_begin(struct go_pcvalue_iter *it, const struct go_pclntab *t, uint32_t table,
		      uint64_t entry, uint64_t limit);
bool go_pcvalue_next(struct go_pcvalue_iter *it, uint64_t *start, uint64_t *end, int32_t *value);

/* The value table `table` of the function at `entry` gives at `pc`; false when none covers it. */
bool go_pcvalue_at(const struct go_pclntab *t, uint32_t table, uint64_t entry, uint64_t limit,
		   uint64_t pc, int32_t *value);

/* The name of file `fileno` (a pcfile value) of `f`'s unit; NULL out of bounds, "" unnamed. */
const char *go_pclntab_file(const struct go_pclntab *t, const struct go_func *f, int32_t fileno);

/*
 * The source file and line of `pc` in `f`; false when the tables do not
 * say. Each call walks both tables from the entry (the symbolizer has
 * go_lines.h's decoded ones instead).
 */
bool go_pclntab_line(const struct go_pclntab *t, const struct go_func *f, uint64_t pc,
		     const char **file, int *line);

#endif
