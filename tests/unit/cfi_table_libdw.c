// SPDX-License-Identifier: BSD-2-Clause
/*
 * The unwind table as bpfprof built it before issue 27, through libdw's
 * dwarf_cfi_addrframe (quadratic in an FDE's rows): the reference
 * test_cfi_program compares cfi_table_build with, row for row, on real
 * binaries. Tests only.
 */
#include "cfi_table_libdw.h"
#include "unwind/cfi_clone.h"
#include "unwind/cfi_entry.h"
#include "unwind/cfi_table.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/elf_section.h"
#include "unwind/eh_frame_index.h"

/* DWARF register numbers of x86_64 (System V psABI, figure 3.36). */
#define DWARF_REG_RBP 6
#define DWARF_REG_RSP 7
#define DWARF_REG_RA  16

/* .eh_frame_hdr encodings as every linker writes them (DW_EH_PE_*). */
#define EH_PE_PCREL_SDATA4   0x1b
#define EH_PE_UDATA4	     0x03
#define EH_PE_DATAREL_SDATA4 0x3b

static int32_t read_s32(const uint8_t *p)
{
	int32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/*
 * A location "CFA + N" from dwarf_frame_register: DW_OP_call_frame_cfa,
 * then nothing, DW_OP_plus_uconst N or DW_OP_consts N DW_OP_plus.
 */
static bool cfa_relative(const Dwarf_Op *ops, size_t nops, int64_t *off)
{
	if (nops < 1 || ops[0].atom != DW_OP_call_frame_cfa)
		return false;
	if (nops == 1) {
		*off = 0;
		return true;
	}
	if (nops == 2 && ops[1].atom == DW_OP_plus_uconst) {
		*off = (int64_t)ops[1].number;
		return true;
	}
	if (nops == 3 && ops[1].atom == DW_OP_consts && ops[2].atom == DW_OP_plus) {
		*off = (int64_t)ops[1].number;
		return true;
	}
	return false;
}

/*
 * The PLT's CFA as GCC and binutils write it for 16-byte entries:
 *   DW_OP_breg7 (rsp) 8; DW_OP_breg16 (rip) 0; DW_OP_lit15; DW_OP_and;
 *   DW_OP_litN; DW_OP_ge; DW_OP_lit3; DW_OP_shl; DW_OP_plus
 * i.e. rsp + 8, plus 8 when (rip & 15) >= N.
 */
static bool plt_expression(const Dwarf_Op *ops, size_t nops, struct cfi_row *row)
{
	static const uint8_t shape[] = { DW_OP_breg7, DW_OP_breg16, DW_OP_lit15, DW_OP_and, 0,
					 DW_OP_ge,    DW_OP_lit3,   DW_OP_shl,	 DW_OP_plus };

	if (nops != sizeof(shape))
		return false;
	for (size_t i = 0; i < nops; i++)
		if (shape[i] && ops[i].atom != shape[i])
			return false;
	if (ops[4].atom < DW_OP_lit0 || ops[4].atom > DW_OP_lit15 || ops[1].number != 0)
		return false;
	row->cfa = UNWIND_CFA_PLT;
	row->cfa_offset = (int32_t)ops[0].number;
	row->plt_threshold = (uint8_t)(ops[4].atom - DW_OP_lit0);
	return true;
}

static bool fits_s16(int64_t v)
{
	return v >= INT16_MIN && v <= INT16_MAX;
}

/* One row of libdw's into the table's shapes; UNWIND_CFA_NONE when they cannot hold it. */
static void classify(Dwarf_Frame *frame, bool signal, struct cfi_row *row,
		     struct cfi_table_stats *st)
{
	Dwarf_Op ops_mem[3], *ops;
	size_t nops;
	int64_t off;

	row->cfa = UNWIND_CFA_NONE;
	if (signal) {
		row->cfa = UNWIND_CFA_SIGNAL;
		return;
	}
	if (dwarf_frame_cfa(frame, &ops, &nops) || nops == 0) {
		st->unsupported_cfa++;
		return;
	}
	if (nops == 1 && ops[0].atom == DW_OP_bregx &&
	    (ops[0].number == DWARF_REG_RSP || ops[0].number == DWARF_REG_RBP) &&
	    (int64_t)ops[0].number2 >= INT32_MIN && (int64_t)ops[0].number2 <= INT32_MAX) {
		row->cfa = ops[0].number == DWARF_REG_RSP ? UNWIND_CFA_SP : UNWIND_CFA_FP;
		row->cfa_offset = (int32_t)ops[0].number2;
	} else if (!plt_expression(ops, nops, row)) {
		st->unsupported_cfa++;
		return;
	}

	/* x86_64: the call pushed the return address just below the CFA. */
	if (dwarf_frame_register(frame, DWARF_REG_RA, ops_mem, &ops, &nops) == 0 && nops == 0 &&
	    ops == ops_mem) {
		row->cfa = UNWIND_CFA_ROOT; /* undefined: nothing called this frame */
		return;
	}
	if (!(dwarf_frame_register(frame, DWARF_REG_RA, ops_mem, &ops, &nops) == 0 &&
	      cfa_relative(ops, nops, &off) && off == -8)) {
		st->unsupported_ra++;
		row->cfa = UNWIND_CFA_NONE;
		return;
	}

	if (dwarf_frame_register(frame, DWARF_REG_RBP, ops_mem, &ops, &nops)) {
		st->unsupported_fp++;
		row->cfa = UNWIND_CFA_NONE;
	} else if (nops == 0) {
		/* ops == NULL: same value; ops == ops_mem: undefined. */
		row->fp = ops ? UNWIND_FP_UNDEF : UNWIND_FP_SAME;
	} else if (cfa_relative(ops, nops, &off) && fits_s16(off)) {
		row->fp = UNWIND_FP_SAVED;
		row->fp_offset = (int16_t)off;
	} else {
		st->unsupported_fp++;
		row->cfa = UNWIND_CFA_NONE;
	}
}

/* The rows of the FDE starting at `start`, up to `limit` (the next FDE's start). */
static int walk_fde(Dwarf_CFI *cfi, uint64_t start, uint64_t limit, struct cfi_row_vec *rows,
		    struct cfi_table_stats *st)
{
	uint64_t pc = start;
	int err;

	while (pc < limit) {
		struct cfi_row row = { .pc = pc };
		Dwarf_Frame *frame;
		Dwarf_Addr lo, hi;
		bool signal;

		if (dwarf_cfi_addrframe(cfi, pc, &frame)) {
			if (pc == start)
				st->broken_fdes++;
			/* A gap up to the next FDE (or an unreadable one): nothing to unwind with.
			 */
			return cfi_row_push(rows, &row);
		}
		if (dwarf_frame_info(frame, &lo, &hi, &signal) < 0 || hi <= pc) {
			free(frame);
			st->broken_fdes++;
			return cfi_row_push(rows, &row);
		}
		st->rows_read++;
		classify(frame, signal, &row, st);
		free(frame);
		if ((err = cfi_row_push(rows, &row)))
			return err;
		pc = hi;
	}
	return 0;
}

static int cmp_loc(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * The FDEs' start addresses from .eh_frame_hdr's index (sorted by the
 * linker). 0, -ENOENT without the section, -ENOTSUP, -EINVAL, -ENOMEM.
 */
static int fde_starts_from_hdr(Elf *elf, uint64_t **out, size_t *count)
{
	const uint8_t *p;
	uint64_t *starts;
	GElf_Shdr shdr;
	Elf_Data *data;
	Elf_Scn *scn;
	uint32_t n;

	scn = elf_section_by_name(elf, ".eh_frame_hdr", &shdr);
	if (!scn)
		return -ENOENT;
	data = elf_getdata(scn, NULL);
	if (!data || !data->d_buf || data->d_size < 12)
		return -EINVAL;
	p = data->d_buf;
	if (p[0] != 1)
		return -EINVAL;
	if (p[1] != EH_PE_PCREL_SDATA4 || p[2] != EH_PE_UDATA4 || p[3] != EH_PE_DATAREL_SDATA4)
		return -ENOTSUP;
	memcpy(&n, p + 8, sizeof(n));
	if (n > (data->d_size - 12) / 8)
		return -EINVAL;
	*out = NULL;
	*count = n;
	if (!n)
		return 0;
	starts = malloc((size_t)n * sizeof(*starts));
	if (!starts)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++)
		starts[i] = shdr.sh_addr + (int64_t)read_s32(p + 12 + 8 * (size_t)i);
	*out = starts;
	return 0;
}

/*
 * Without the index (gcc -static links without --eh-frame-hdr): the FDEs
 * found by walking .eh_frame itself. -ENOENT when it has none either.
 */
static int fde_starts_from_eh_frame(Elf *elf, uint64_t **out, size_t *count)
{
	GElf_Shdr shdr;
	Elf_Data *data;
	Elf_Scn *scn;

	scn = elf_section_by_name(elf, ".eh_frame", &shdr);
	if (!scn || shdr.sh_type == SHT_NOBITS)
		return -ENOENT;
	data = elf_getdata(scn, NULL);
	if (!data || !data->d_buf)
		return -ENOENT;
	return eh_frame_fde_starts(data->d_buf, data->d_size, shdr.sh_addr, out, count);
}

int cfi_table_build_libdw(Elf *elf, struct cfi_table *out)
{
	struct cfi_row_vec rows = { 0 };
	uint64_t *starts = NULL;
	Dwarf_CFI *cfi = NULL;
	size_t count = 0;
	int err;

	memset(out, 0, sizeof(*out));
	err = fde_starts_from_hdr(elf, &starts, &count);
	if (err == -ENOENT)
		err = fde_starts_from_eh_frame(elf, &starts, &count);
	if (err)
		return err;
	out->stats.fdes = count;
	if (!count)
		return 0;

	/* Sorted again: a table from a hostile file must still be. */
	qsort(starts, count, sizeof(*starts), cmp_loc);

	cfi = dwarf_getcfi_elf(elf);
	if (!cfi) {
		err = -EINVAL;
		goto out;
	}
	for (size_t i = 0; i < count && !err; i++) {
		/* Duplicates, and FDEs of code the linker discarded (located at 0). */
		if ((i + 1 < count && starts[i + 1] == starts[i]) || !starts[i])
			continue;
		err = walk_fde(cfi, starts[i], i + 1 < count ? starts[i + 1] : UINT64_MAX, &rows,
			       &out->stats);
	}
out:
	if (cfi)
		dwarf_cfi_end(cfi);
	free(starts);
	if (err) {
		free(rows.data);
		return err;
	}
	out->rows = rows.data;
	out->len = rows.len;
	/* Not CFI, the code after a clone syscall and the entry point's gap: cfi_table_build's passes. */
	out->stats.clone_returns = cfi_mark_clone_returns(elf, out->rows, out->len);
	out->stats.entry_root = cfi_mark_entry_root(elf, out);
	return 0;
}
