/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * MiniDebugInfo: an xz-compressed ELF in a stripped binary's .gnu_debugdata
 * section that holds the .symtab of its internal functions (Fedora, RHEL
 * and others ship binaries this way, so that backtraces name them without
 * the debug package).
 */
#ifndef BPFPROF_MINIDEBUGINFO_H
#define BPFPROF_MINIDEBUGINFO_H

#include <libelf.h>
#include <stddef.h>

/* Decompressed embedded ELFs larger than this are refused (a hostile binary's xz bomb). */
#define MINIDEBUGINFO_MAX_BYTES (256u << 20)

/*
 * The ELF image inside `elf`'s .gnu_debugdata, decompressed into a malloc'd
 * buffer the caller frees (*image, *size); -ENOENT when there is none,
 * -ENOTSUP when bpfprof was built without liblzma, -EBADMSG when it does
 * not decompress, -EFBIG past MINIDEBUGINFO_MAX_BYTES.
 */
int minidebuginfo_read(Elf *elf, void **image, size_t *size);

#endif
