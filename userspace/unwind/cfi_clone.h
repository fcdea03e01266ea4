/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The few bytes after a clone or clone3 syscall that no FDE covers. glibc
 * ends the parent's FDE before the syscall ("in the child the unwind info
 * will be wrong") and starts the child's (an undefined return address: the
 * thread's root) a few instructions later, so both threads come back from
 * the kernel into a gap. Samples land there all the time where threads
 * come and go (the parent in copy_process, the child's first return to
 * user space); walked with a frame pointer that is not one, their stacks
 * ran past the thread's end. Those gaps become UNWIND_CFA_CLONE rows: the
 * walker tells the threads apart by RAX (0 in the child).
 */
#ifndef BPFPROF_UNWIND_CFI_CLONE_H
#define BPFPROF_UNWIND_CFI_CLONE_H

#include <libelf.h>
#include <stddef.h>

#include "cfi_table.h"

/*
 * In `rows` (sorted, of `elf`): each gap row (UNWIND_CFA_NONE) that starts
 * with a syscall instruction right after an SP-based row and runs at most
 * CFI_CLONE_GAP_MAX bytes into a root row becomes an UNWIND_CFA_CLONE row
 * with the row before's rules. Returns how many.
 */
size_t cfi_mark_clone_returns(Elf *elf, struct cfi_row *rows, size_t len);

/* glibc's: 10 bytes (test, jl, je, ret); padding may follow. */
#define CFI_CLONE_GAP_MAX    32
/* The code bytes looked at per file: glibc has two such gaps, a hostile file many. */
#define CFI_CLONE_MAX_CHECKS 64

#endif
