/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A binary's entry point that no FDE covers. The dynamic loader's own entry
 * (glibc's RTLD_START: _start calls _dl_start, then _dl_start_user runs the
 * libraries' constructors through _dl_init and jumps to the program) is
 * written in assembly without CFI, so every process's start-up, all its
 * constructors, ran into a gap where the walk stopped early ("code its
 * binary's CFI does not cover"): a fifth of make's, sh's and cmake's
 * samples on a build machine. The entry point has no caller by
 * definition (the kernel starts the process there), so the gap it starts
 * becomes a root row, as glibc's crt1 _start says of itself.
 */
#ifndef BPFPROF_UNWIND_CFI_ENTRY_H
#define BPFPROF_UNWIND_CFI_ENTRY_H

#include <libelf.h>
#include <stdbool.h>

#include "cfi_table.h"

/* The most bytes of code from the entry point made a root: ld.so's is 64. */
#define CFI_ENTRY_GAP_MAX 256

/*
 * In `t` (sorted, built from `elf`): when `elf`'s entry point lies before
 * the first row or in a gap row (UNWIND_CFA_NONE), the code from it to the
 * next row, at most CFI_ENTRY_GAP_MAX bytes, becomes an UNWIND_CFA_ROOT row
 * (a gap row after it when the next row is farther). Returns true when it
 * did; -ENOMEM leaves `t` as it was and returns false.
 */
bool cfi_mark_entry_root(Elf *elf, struct cfi_table *t);

#endif
