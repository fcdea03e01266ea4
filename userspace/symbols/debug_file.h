/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Separate debug information. Distributions strip their binaries and ship
 * the .symtab and DWARF in another file, which is found either by the
 * binary's GNU build-id, as DEBUG_ROOT/.build-id/xx/rest.debug, or by the
 * name and CRC in its .gnu_debuglink section, looked up where GDB looks:
 * DIR/NAME, DIR/.debug/NAME and DEBUG_ROOT/DIR/NAME, DIR being the
 * binary's directory.
 */
#ifndef BPFPROF_DEBUG_FILE_H
#define BPFPROF_DEBUG_FILE_H

#include <libelf.h>
#include <stddef.h>

/* Where Debian's -dbgsym packages (and most distributions) install debug files. */
#define DEBUG_ROOT_DEFAULT "/usr/lib/debug"

/*
 * Open DEBUG_ROOT/.build-id/xx/rest.debug for `build_id` (lowercase hex)
 * if that file carries the same build-id. An fd the caller closes, or a
 * negative errno (-ENOENT: no such file, -ESTALE: another build-id).
 */
int debug_file_open_build_id(const char *debug_root, const char *build_id);

/*
 * The separate debug file of `elf`: by build-id first, then by debug link
 * (checked by CRC). `path` is where the binary can be opened now, for the
 * debug link's directories (NULL: build-id only). On success returns an fd
 * the caller closes and, when `found` is not NULL, copies the path opened
 * there; otherwise -ENOENT or a negative errno.
 */
int debug_file_find(Elf *elf, const char *path, const char *debug_root, char *found,
		    size_t found_size);

#endif
