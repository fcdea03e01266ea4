/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unwind rows for Go code, from .gopclntab (lang/go_pclntab.h) rather
 * than CFI: the Go linker writes no .eh_frame for Go code, and Go's
 * frame-pointer chain breaks in assembly that uses BP as a register (the
 * crypto and math kernels, where CPU-bound Go programs spend their time).
 * pcsp gives, at every PC, how far SP is below the entry's, which is what
 * the Go runtime unwinds with: CFA = SP + delta + 8, the return address at
 * CFA - 8, exactly, with or without frame pointers. Where the function's
 * prologue saved the caller's BP (at CFA - 16, just below the return
 * address, read from its instructions), the rows restore it from there:
 * at a stack switch the walk then has the BP the switch was entered with.
 *
 * Special functions, by the runtime's own marks:
 *   - TOPFRAME (runtime.goexit, runtime.mstart, runtime.rt0_go): a root,
 *     where the walk ends; but runtime.sigtramp, the signal handler's
 *     entry, returns through the restorer to the code it interrupted;
 *   - runtime.asmcgocall, which switches to the system stack to call C:
 *     its caller is found through BP, which it leaves the Go caller's
 *     (CFA = BP + 16, UNWIND_CFA_SWITCH), so stacks in C called from Go
 *     reach main;
 *   - runtime.sigreturn (Go's signal restorer): a signal frame;
 *   - runtime.cgocallback (C calling Go): its pcsp, which it keeps true
 *     across its switch to the goroutine's stack on purpose;
 *   - other SPWRITE functions (stack switches: systemstack, mcall,
 *     morestack, gogo, time.now's switch for the vDSO): UNWIND_CFA_SWITCH,
 *     so the walk takes the frame pointer, which they keep (and which the
 *     rows of the frames above restored), and may step down to another
 *     stack there (everywhere else a step moves up).
 */
#ifndef BPFPROF_UNWIND_GO_TABLE_H
#define BPFPROF_UNWIND_GO_TABLE_H

#include <libelf.h>
#include <stddef.h>
#include <stdint.h>

#include "cfi_table.h"

struct go_table_stats {
	size_t funcs;		 /* Go functions with rows */
	size_t roots;		 /* TOPFRAME functions */
	size_t stack_switches;	 /* SPWRITE functions left to the frame pointer */
	size_t prologues_read;	 /* functions whose prologue was read */
	size_t saves_bp;	 /* of them, those whose rows restore the caller's BP */
	size_t prologues_lost;	 /* of them, not read: past ELF_CODE_MAX_WINDOWS of code */
	size_t bad_funcs;	 /* records or value tables that could not be read */
	const char *over_budget; /* -E2BIG: which budget the table went over */
};

struct go_pclntab;

/*
 * The rows of `elf`'s Go functions into `out` (sorted), which cover
 * [*lo, *hi), within `budget` (its rows, its instructions as value-table
 * steps, its CPU time and stop flag): 0, -ENOENT (no Go table), -EINVAL,
 * -ENOMEM, -E2BIG (stats->over_budget says which), -ECANCELED.
 */
int go_table_build(Elf *elf, const struct cfi_budget *budget, struct cfi_table *out, uint64_t *lo,
		   uint64_t *hi, struct go_table_stats *stats);

/* The file's code, a few bytes at a time: len bytes at ELF address vaddr, 0 or -errno. */
struct go_code {
	int (*read)(void *ctx, uint64_t vaddr, void *buf, size_t len);
	void *ctx;
};

/* The same from a table already read; `code` NULL: BP is never restored. */
int go_table_from_pclntab(const struct go_pclntab *t, const struct go_code *code,
			  const struct cfi_budget *budget, struct cfi_table *out, uint64_t *lo,
			  uint64_t *hi, struct go_table_stats *stats);

/*
 * `base` (a file's CFI rows, possibly none) with [lo, hi) replaced by
 * `over`'s rows; after hi, the row base had there holds again. `base`
 * is rebuilt in place: 0 or -ENOMEM (base unchanged).
 */
int go_table_overlay(struct cfi_table *base, const struct cfi_table *over, uint64_t lo,
		     uint64_t hi);

#endif
