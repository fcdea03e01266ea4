/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Where each FDE of a binary's .eh_frame starts, for cfi_table. The linker
 * indexes them in .eh_frame_hdr, but gcc does not ask for that index when
 * it links -static (non-PIE): static glibc finds its frames by registering
 * .eh_frame at start-up instead. So a static binary has its CFI and no
 * index, and the index is built here by walking .eh_frame's records.
 */
#ifndef BPFPROF_UNWIND_EH_FRAME_INDEX_H
#define BPFPROF_UNWIND_EH_FRAME_INDEX_H

#include <stddef.h>
#include <stdint.h>

/*
 * The initial locations (ELF virtual addresses) of every FDE in `data`, the
 * contents of .eh_frame loaded at `vaddr`, in the order met; *out is
 * malloc'd (NULL when there are none). Walking stops at a zero terminator
 * or the end of the data; a malformed record (a length past the end, a
 * CIE pointer to no CIE, an encoding it does not read) ends the walk with
 * -EINVAL, nothing kept. Returns 0, -EINVAL, -ENOTSUP (a pointer encoding
 * other than absolute or PC-relative) or -ENOMEM.
 */
int eh_frame_fde_starts(const uint8_t *data, size_t size, uint64_t vaddr, uint64_t **out,
			size_t *count);

#endif
