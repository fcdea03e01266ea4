// SPDX-License-Identifier: BSD-2-Clause
/*
 * See cfi_program.h. The instructions are DWARF 5's, table 7.29, plus the
 * GNU ones GCC and binutils still write (DW_CFA_GNU_args_size,
 * DW_CFA_GNU_negative_offset_extended). Where an instruction's meaning
 * depends on the reader, libdw's (elfutils 0.188, libdw/cfi.c) is
 * followed: a CFA offset or register set while the CFA is an expression
 * makes it invalid, DW_CFA_restore is refused in a CIE, an unknown opcode
 * ends the program.
 */
#include "cfi_program.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#define DW_CFA_advance_loc	  0x40
#define DW_CFA_offset		  0x80
#define DW_CFA_restore		  0xc0
#define DW_CFA_nop		  0x00
#define DW_CFA_set_loc		  0x01
#define DW_CFA_advance_loc1	  0x02
#define DW_CFA_advance_loc2	  0x03
#define DW_CFA_advance_loc4	  0x04
#define DW_CFA_offset_extended	  0x05
#define DW_CFA_restore_extended	  0x06
#define DW_CFA_undefined	  0x07
#define DW_CFA_same_value	  0x08
#define DW_CFA_register		  0x09
#define DW_CFA_remember_state	  0x0a
#define DW_CFA_restore_state	  0x0b
#define DW_CFA_def_cfa		  0x0c
#define DW_CFA_def_cfa_register	  0x0d
#define DW_CFA_def_cfa_offset	  0x0e
#define DW_CFA_def_cfa_expression 0x0f
#define DW_CFA_expression	  0x10
#define DW_CFA_offset_extended_sf 0x11
#define DW_CFA_def_cfa_sf	  0x12
#define DW_CFA_def_cfa_offset_sf  0x13
#define DW_CFA_val_offset	  0x14
#define DW_CFA_val_offset_sf	  0x15
#define DW_CFA_val_expression	  0x16
#define DW_CFA_MIPS_advance_loc8  0x1d
#define DW_CFA_GNU_window_save	  0x2d
#define DW_CFA_GNU_args_size	  0x2e
#define DW_CFA_GNU_neg_offset_ext 0x2f

void cfi_rules_init(struct cfi_rules *r)
{
	memset(r, 0, sizeof(*r));
	r->cfa_kind = CFI_CFA_UNDEF;
	/* libdw's x86_64 backend (backends/x86_64_cfi.c): call-saved, and %rip. */
	r->ra.kind = CFI_REG_SAME;
	r->fp.kind = CFI_REG_SAME;
}

/* The rule of register `reg` when we keep it; NULL for the others. */
static struct cfi_reg_rule *rule_of(struct cfi_rules *r, uint64_t reg)
{
	return reg == CFI_REG_RA ? &r->ra : reg == CFI_REG_RBP ? &r->fp : NULL;
}

static void set_rule(struct cfi_rules *r, uint64_t reg, uint8_t kind, int64_t value)
{
	struct cfi_reg_rule *rr = rule_of(r, reg);

	if (rr)
		*rr = (struct cfi_reg_rule){ .kind = kind, .value = value };
}

/* A block (ULEB128 length, then the bytes) at the cursor. */
static bool block(struct eh_cursor *c, const uint8_t **data, uint64_t *len)
{
	if (!eh_uleb(c, len) || *len > (uint64_t)(c->end - c->p))
		return false;
	*data = c->p;
	c->p += *len;
	return true;
}

static bool un(struct eh_cursor *c, size_t n, uint64_t *v)
{
	if ((size_t)(c->end - c->p) < n)
		return false;
	*v = 0;
	memcpy(v, c->p, n); /* little endian: x86_64 only (cfi_table.h) */
	c->p += n;
	return true;
}

struct run {
	const struct cfi_program *p;
	const struct cfi_rules *initial; /* NULL while running the CIE */
	struct cfi_rules *r;
	struct cfi_rules stack[CFI_STATE_STACK_MAX];
	size_t depth;
	uint64_t loc;
};

/*
 * One instruction at the cursor. Returns 1 when it moved the location
 * (run->loc holds the new one), 0 for the others, -EINVAL, -E2BIG.
 */
static int step(struct run *run, struct eh_cursor *c)
{
	const struct eh_cie *cie = run->p->cie;
	struct cfi_rules *r = run->r;
	uint64_t op, reg = 0, u = 0, len;
	const uint8_t *expr;
	int64_t s = 0;
	struct cfi_reg_rule *rr;

	if (!*run->p->ops_left)
		return -E2BIG;
	--*run->p->ops_left;
	op = *c->p++;
	switch (op & 0xc0) {
	case DW_CFA_advance_loc:
		u = op & 0x3f;
		goto advance;
	case DW_CFA_offset:
		reg = op & 0x3f;
		if (!eh_uleb(c, &u))
			return -EINVAL;
		set_rule(r, reg, CFI_REG_OFFSET, (int64_t)(u * (uint64_t)cie->data_align));
		return 0;
	case DW_CFA_restore:
		reg = op & 0x3f;
		goto restore;
	}
	switch (op) {
	case DW_CFA_nop:
		return 0;
	case DW_CFA_set_loc:
		if (!run->initial ||
		    eh_read_pointer(c, cie->fde_encoding,
				    run->p->vaddr + (uint64_t)(c->p - run->p->section), &run->loc))
			return -EINVAL;
		return 1;
	case DW_CFA_advance_loc1:
		if (!un(c, 1, &u))
			return -EINVAL;
		goto advance;
	case DW_CFA_advance_loc2:
		if (!un(c, 2, &u))
			return -EINVAL;
		goto advance;
	case DW_CFA_advance_loc4:
		if (!un(c, 4, &u))
			return -EINVAL;
		goto advance;
	case DW_CFA_MIPS_advance_loc8:
		if (!un(c, 8, &u))
			return -EINVAL;
		goto advance;
	case DW_CFA_offset_extended:
		if (!eh_uleb(c, &reg) || !eh_uleb(c, &u))
			return -EINVAL;
		set_rule(r, reg, CFI_REG_OFFSET, (int64_t)(u * (uint64_t)cie->data_align));
		return 0;
	case DW_CFA_offset_extended_sf:
		if (!eh_uleb(c, &reg) || !eh_sleb(c, &s))
			return -EINVAL;
		set_rule(r, reg, CFI_REG_OFFSET,
			 (int64_t)((uint64_t)s * (uint64_t)cie->data_align));
		return 0;
	case DW_CFA_GNU_neg_offset_ext:
		if (!eh_uleb(c, &reg) || !eh_uleb(c, &u))
			return -EINVAL;
		set_rule(r, reg, CFI_REG_OFFSET, (int64_t)(-u * (uint64_t)cie->data_align));
		return 0;
	case DW_CFA_val_offset:
		if (!eh_uleb(c, &reg) || !eh_uleb(c, &u))
			return -EINVAL;
		set_rule(r, reg, CFI_REG_VAL_OFFSET, (int64_t)(u * (uint64_t)cie->data_align));
		return 0;
	case DW_CFA_val_offset_sf:
		if (!eh_uleb(c, &reg) || !eh_sleb(c, &s))
			return -EINVAL;
		set_rule(r, reg, CFI_REG_VAL_OFFSET,
			 (int64_t)((uint64_t)s * (uint64_t)cie->data_align));
		return 0;
	case DW_CFA_restore_extended:
		if (!eh_uleb(c, &reg))
			return -EINVAL;
		goto restore;
	case DW_CFA_undefined:
		if (!eh_uleb(c, &reg))
			return -EINVAL;
		set_rule(r, reg, CFI_REG_UNDEF, 0);
		return 0;
	case DW_CFA_same_value:
		if (!eh_uleb(c, &reg))
			return -EINVAL;
		set_rule(r, reg, CFI_REG_SAME, 0);
		return 0;
	case DW_CFA_register:
		if (!eh_uleb(c, &reg) || !eh_uleb(c, &u))
			return -EINVAL;
		set_rule(r, reg, CFI_REG_REGISTER, (int64_t)u);
		return 0;
	case DW_CFA_expression:
	case DW_CFA_val_expression:
		if (!eh_uleb(c, &reg) || !block(c, &expr, &len))
			return -EINVAL;
		if ((rr = rule_of(r, reg)))
			*rr = (struct cfi_reg_rule){
				.kind = op == DW_CFA_expression ? CFI_REG_EXPR : CFI_REG_VAL_EXPR,
				.expr = expr,
				.expr_len = len,
			};
		return 0;
	case DW_CFA_remember_state:
		if (run->depth == CFI_STATE_STACK_MAX)
			return -EINVAL;
		run->stack[run->depth++] = *r;
		return 0;
	case DW_CFA_restore_state:
		if (!run->depth)
			return -EINVAL;
		*r = run->stack[--run->depth];
		return 0;
	case DW_CFA_def_cfa:
		if (!eh_uleb(c, &reg) || !eh_uleb(c, &u))
			return -EINVAL;
		s = (int64_t)u;
		goto def_cfa;
	case DW_CFA_def_cfa_sf:
		if (!eh_uleb(c, &reg) || !eh_sleb(c, &s))
			return -EINVAL;
		s = (int64_t)((uint64_t)s * (uint64_t)cie->data_align);
		goto def_cfa;
	case DW_CFA_def_cfa_register:
		if (!eh_uleb(c, &reg))
			return -EINVAL;
		if (r->cfa_kind != CFI_CFA_OFFSET)
			r->cfa_kind = CFI_CFA_INVALID;
		r->cfa_reg = reg;
		return 0;
	case DW_CFA_def_cfa_offset:
		if (!eh_uleb(c, &u))
			return -EINVAL;
		s = (int64_t)u;
		goto def_cfa_offset;
	case DW_CFA_def_cfa_offset_sf:
		if (!eh_sleb(c, &s))
			return -EINVAL;
		s = (int64_t)((uint64_t)s * (uint64_t)cie->data_align);
		goto def_cfa_offset;
	case DW_CFA_def_cfa_expression:
		if (!block(c, &expr, &len))
			return -EINVAL;
		r->cfa_kind = CFI_CFA_EXPR;
		r->cfa_expr = expr;
		r->cfa_expr_len = len;
		return 0;
	case DW_CFA_GNU_args_size:
		return eh_uleb(c, &u) ? 0 : -EINVAL;
	case DW_CFA_GNU_window_save:
		/* SPARC's shorthand, as libdw reads it anywhere: %i0-%i7 (16-31) saved at CFA + 8n.
		 */
		r->ra = (struct cfi_reg_rule){ .kind = CFI_REG_OFFSET, .value = 0 };
		return 0;
	default:
		return -EINVAL;
	}

advance:
	if (!run->initial)
		return -EINVAL; /* a CIE has no rows */
	run->loc += u * run->p->cie->code_align;
	return 1;

restore:
	if (!run->initial)
		return -EINVAL;
	if ((rr = rule_of(r, reg)))
		*rr = reg == CFI_REG_RA ? run->initial->ra : run->initial->fp;
	return 0;

def_cfa:
	r->cfa_kind = CFI_CFA_OFFSET;
	r->cfa_reg = reg;
	r->cfa_offset = s;
	return 0;

def_cfa_offset:
	if (r->cfa_kind != CFI_CFA_OFFSET)
		r->cfa_kind = CFI_CFA_INVALID;
	r->cfa_offset = s;
	return 0;
}

int cfi_program_cie(const struct cfi_program *p, struct cfi_rules *r)
{
	struct run run = { .p = p, .r = r };
	struct eh_cursor c = { p->cie->insns, p->cie->insns_end };

	while (c.p < c.end) {
		int err = step(&run, &c);

		if (err < 0)
			return err;
	}
	return 0;
}

int cfi_program_fde(const struct cfi_program *p, const struct eh_fde *fde,
		    const struct cfi_rules *initial, cfi_row_fn row, void *ctx, uint64_t *bad_pc)
{
	struct cfi_rules rules = *initial;
	struct run run = { .p = p, .initial = initial, .r = &rules, .loc = fde->start };
	struct eh_cursor c = { fde->insns, fde->insns_end };
	/* The row being built starts here; a location at or before it starts none. */
	uint64_t row_pc = fde->start;
	int err;

	while (c.p < c.end) {
		err = step(&run, &c);
		if (err == -EINVAL)
			*bad_pc = row_pc;
		if (err < 0)
			return err;
		if (err == 0 || run.loc <= row_pc)
			continue;
		if ((err = row(ctx, row_pc, &rules)))
			return err;
		row_pc = run.loc;
		if (row_pc >= fde->end)
			return 0; /* the rest describes no address of the FDE */
	}
	return row(ctx, row_pc, &rules);
}
