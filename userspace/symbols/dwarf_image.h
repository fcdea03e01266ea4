/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The ELF that libdw reads a file's DWARF from.
 *
 * A file nobody but root can change is mapped (elf_open.h): its pages are
 * page cache, and only the ones libdw touches. Any other file is another
 * user's, who may truncate it under us (a mapping would SIGBUS) or make it
 * any size: libelf's ELF_C_FDREAD would read all of it, code and data
 * included, into root's memory for as long as the object lives (a 900 MiB
 * `-g` binary cost 1.1 GB). So only what libdw reads is read, with pread:
 * the .debug_* and .zdebug_* sections and .gnu_debugaltlink, laid out in a
 * compact ELF image of their own (a header, the sections, their names,
 * their headers) that libelf opens with elf_memory(). The file's other
 * sections are left out; the image does not depend on the file once read.
 */
#ifndef BPFPROF_DWARF_IMAGE_H
#define BPFPROF_DWARF_IMAGE_H

#include <libelf.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Most bytes one object's DWARF may take when read (the image, plus what
 * libdw allocates to decompress its compressed sections; a dwz
 * supplementary file counts with the file that names it): 256 MiB. A
 * distribution's largest debug files (libLLVM's) are mapped, not read, and
 * do not count; a user's build with more DWARF than this gets no source
 * lines or inlined frames, its symbols still name its functions (said with -v).
 */
#define DWARF_IMAGE_MAX_BYTES (256ull << 20)

struct dwarf_image {
	Elf *elf;	 /* what libdw reads; NULL when closed */
	void *buf;	 /* the image elf reads, NULL for a mapped file */
	size_t bytes;	 /* bytes of buf */
	size_t inflated; /* what libdw allocates to decompress the debug sections */
};

/*
 * Open the DWARF of the ELF file at `fd` into `img`: mapped when
 * elf_fd_mappable(), else read into an image of at most `max_bytes`
 * (image and decompressed sections together). `fd` is not kept. 0, or a
 * negative errno: -EDQUOT past `max_bytes` but within DWARF_IMAGE_MAX_BYTES
 * (a budget with more room left takes it), -EFBIG past both (or a file
 * over ELF_OPEN_READ_MAX_BYTES, or too many sections: no budget takes it),
 * -ENODATA no debug section, -ENOEXEC not ELF, -EIO the file changed while
 * read, -ENOMEM. Either refusal is made before a byte of the sections is
 * read, but for compressed sections' inflated size, told by the image.
 */
int dwarf_image_open(struct dwarf_image *img, int fd, uint64_t max_bytes);

/*
 * dwarf_image_open() for a part of an object's DWARF (a dwz file beside the
 * file naming it): -EDQUOT within `whole` (what is left of
 * DWARF_IMAGE_MAX_BYTES for it), -EFBIG past.
 */
int dwarf_image_open_part(struct dwarf_image *img, int fd, uint64_t max_bytes, uint64_t whole);

void dwarf_image_close(struct dwarf_image *img);

#endif
