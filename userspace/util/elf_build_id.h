/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * An ELF file's GNU build-id note: the symbolizer names binaries by it, the
 * unwind table cache keys tables by it.
 */
#ifndef BPFPROF_UTIL_ELF_BUILD_ID_H
#define BPFPROF_UTIL_ELF_BUILD_ID_H

#include <libelf.h>
#include <stddef.h>
#include <stdint.h>

/* The longest build-id kept: SHA-1 gives 20 bytes; a longer one is ignored. */
#define ELF_BUILD_ID_MAX 64

/*
 * The build-id of `elf` into out (room for ELF_BUILD_ID_MAX bytes): from a
 * SHT_NOTE section, else (a file without section headers) a PT_NOTE
 * segment. Its length, 0 when there is none. Bounded for a crafted file:
 * only note sections and segments of a few KiB are read, a few of them
 * (elf_build_id.c: NOTE_MAX_BYTES, NOTE_MAX_READ).
 */
size_t elf_build_id(Elf *elf, uint8_t out[ELF_BUILD_ID_MAX]);

/*
 * The build ID Go's linker writes (a note "Go" holding text such as
 * "actionID/contentID", usually longer than ELF_BUILD_ID_MAX): its last
 * ELF_BUILD_ID_MAX bytes, which end with the hash of the binary's content.
 * Go binaries linked by Go itself have no GNU build-id. Its length, 0 when
 * there is none.
 */
size_t elf_go_build_id(Elf *elf, uint8_t out[ELF_BUILD_ID_MAX]);

#endif
