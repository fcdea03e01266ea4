/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Source locations from DWARF, read with elfutils' libdw: for an address,
 * the function it is in, the functions inlined into that function there
 * (outer to inner), and the source line reached in each of them.
 *
 * Opening reads or maps the debug sections (dwarf_image.h), decompresses
 * them and reads the unit headers, to index which compilation unit covers
 * which addresses; a unit's line table and function ranges are read the
 * first time an address in it is looked up.
 */
#ifndef BPFPROF_DWARF_H
#define BPFPROF_DWARF_H

#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dwarf_info;

/* One function on the inline chain of an address. Strings live until dwarf_info_free. */
struct dwarf_location {
	/* Linkage (mangled) name, else the plain name; NULL when DWARF names no function. */
	const char *name;
	/*
	 * Where this function is at the address: for the innermost one the
	 * address' own line, for the others the line calling the next one in.
	 */
	const char *file; /* NULL when unknown */
	int line;	  /* 0 when unknown */
	/* Where the function itself is defined (DW_AT_decl_file / decl_line). */
	const char *decl_file;
	int decl_line;
};

/* Does `elf` carry DWARF that locates code (.debug_info or .debug_line with contents)? */
bool dwarf_info_present(Elf *elf);

/*
 * Read the DWARF of the ELF file at `fd` (the binary or its separate debug
 * file): mapped if only root can change it, else only its debug sections
 * read, within DWARF_IMAGE_MAX_BYTES (dwarf_image.h). `fd` is not kept: the
 * caller may close it on return. A dwz supplementary file
 * (.gnu_debugaltlink) is looked up by build-id under `debug_root` (NULL:
 * DEBUG_ROOT_DEFAULT), never where the file says, and counts in the same
 * budget. 0 and *out set, or a negative errno (-ENODATA: no DWARF in the
 * file, -EFBIG: more DWARF than DWARF_IMAGE_MAX_BYTES or a file too large to
 * read; with dwarf_info_open_capped, -EDQUOT: more than `max_bytes` but
 * within DWARF_IMAGE_MAX_BYTES, see dwarf_image_open).
 */
int dwarf_info_open(struct dwarf_info **out, int fd, const char *debug_root);

/* dwarf_info_open() within `max_bytes` of DWARF read into memory, not DWARF_IMAGE_MAX_BYTES. */
int dwarf_info_open_capped(struct dwarf_info **out, int fd, const char *debug_root,
			   uint64_t max_bytes);

/*
 * Locate `vaddr` (a link-time virtual address, as in the ELF's symbols):
 * fills out[0..n-1] outer to inner, out[0] being the function the code
 * belongs to, and returns n (at most `max`; the innermost are dropped past
 * it). Returns 0 when DWARF does not cover the address. When the address
 * has a line but no function DIE (assembly), n is 1 with a NULL name.
 */
unsigned dwarf_info_lookup(struct dwarf_info *d, uint64_t vaddr, struct dwarf_location *out,
			   unsigned max);

/*
 * Bytes of the file's DWARF read into memory (dwarf_image.h: a file that a
 * user other than root can change, and its dwz file), decompressed
 * sections included; 0 for a mapped file.
 */
size_t dwarf_info_read_bytes(const struct dwarf_info *d);

/* Estimated heap held: our unit index, decompressed sections, line tables read so far. */
size_t dwarf_info_bytes(const struct dwarf_info *d);

void dwarf_info_free(struct dwarf_info *d);

#endif
