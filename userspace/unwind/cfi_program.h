/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The CFI programs of .eh_frame (DWARF 5, section 6.4.2) run once, front
 * to back: each FDE's rows come out in address order in time linear in the
 * program's length. (libdw's dwarf_cfi_addrframe runs an FDE's program
 * from its start for every address asked, so a table of all the rows cost
 * the square of an FDE's: 300k rows took minutes.)
 *
 * Only the rules the unwind table can use are kept: the CFA's, and those
 * of the return address (DWARF register 16 on x86_64) and the frame
 * pointer (6); every other register's instructions are read and skipped.
 * The rules start as libdw's x86_64 backend has them before a CIE's
 * instructions (both registers "same value", no CFA), so that the tables
 * are libdw's row for row (test_cfi_program compares them on real files).
 */
#ifndef BPFPROF_UNWIND_CFI_PROGRAM_H
#define BPFPROF_UNWIND_CFI_PROGRAM_H

#include <stddef.h>
#include <stdint.h>

#include "eh_frame_index.h"

enum cfi_cfa_kind {
	CFI_CFA_UNDEF,	 /* no rule yet */
	CFI_CFA_INVALID, /* an offset or register changed while the rule was an expression */
	CFI_CFA_OFFSET,	 /* reg + offset */
	CFI_CFA_EXPR,	 /* DW_CFA_def_cfa_expression */
};

enum cfi_reg_kind {
	CFI_REG_UNDEF,
	CFI_REG_SAME,
	CFI_REG_OFFSET,	    /* saved at CFA + value */
	CFI_REG_VAL_OFFSET, /* is CFA + value */
	CFI_REG_REGISTER,   /* in register `value` */
	CFI_REG_EXPR,	    /* saved at the address the expression computes */
	CFI_REG_VAL_EXPR,   /* is what the expression computes */
};

struct cfi_reg_rule {
	uint8_t kind; /* enum cfi_reg_kind */
	int64_t value;
	const uint8_t *expr; /* EXPR, VAL_EXPR: the expression's bytes */
	uint64_t expr_len;
};

struct cfi_rules {
	uint8_t cfa_kind; /* enum cfi_cfa_kind */
	uint64_t cfa_reg;
	int64_t cfa_offset;
	const uint8_t *cfa_expr;
	uint64_t cfa_expr_len;
	struct cfi_reg_rule ra, fp;
};

/* DWARF register numbers of x86_64 (System V psABI, figure 3.36). */
#define CFI_REG_RBP 6
#define CFI_REG_RSP 7
#define CFI_REG_RA  16

/* remember_state nests this deep at most (real code: 1 or 2); deeper is an error. */
#define CFI_STATE_STACK_MAX 64

struct cfi_program {
	const struct eh_cie *cie;
	const uint8_t *section; /* .eh_frame, for DW_CFA_set_loc's PC-relative pointers */
	uint64_t vaddr;		/* its address */
	/* Instructions left to run before the program counts as too long. */
	uint64_t *ops_left;
};

/* The rules before a CIE's instructions. */
void cfi_rules_init(struct cfi_rules *r);

/*
 * Run a CIE's initial instructions over `r` (from cfi_rules_init): its
 * rules at the start of each of its FDEs. 0, -EINVAL (a malformed or
 * unknown instruction, or one a CIE may not hold), -E2BIG (ops_left ran out).
 */
int cfi_program_cie(const struct cfi_program *p, struct cfi_rules *r);

/*
 * Called for each row of an FDE: `rules` hold from `pc` up to the next
 * row's pc (or the FDE's end). A non-zero return stops the program and is
 * returned.
 */
typedef int (*cfi_row_fn)(void *ctx, uint64_t pc, const struct cfi_rules *rules);

/*
 * Run the FDE's instructions from its CIE's rules (`initial`, from
 * cfi_program_cie), calling `row` for each row in [fde->start, fde->end).
 * On a malformed instruction, -EINVAL, after the rows before it; *bad_pc
 * is then where the rows stopped (the rules there are unknown).
 */
int cfi_program_fde(const struct cfi_program *p, const struct eh_fde *fde,
		    const struct cfi_rules *initial, cfi_row_fn row, void *ctx, uint64_t *bad_pc);

#endif
