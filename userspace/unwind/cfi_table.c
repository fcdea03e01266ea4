// SPDX-License-Identifier: BSD-2-Clause
/*
 * .eh_frame to struct cfi_table (see cfi_table.h). cfi_program runs the
 * CFI programs, once each; this file walks every FDE that .eh_frame_hdr
 * indexes (or, without that index, that .eh_frame holds), keeps each row's
 * rules in the table's few shapes, and stops a file over its budget.
 */
#include "cfi_table.h"

#include <errno.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../util/bsearch_u64.h"
#include "../util/elf_open.h"
#include "../util/elf_section.h"
#include "cfi_clone.h"
#include "cfi_entry.h"
#include "cfi_program.h"
#include "eh_frame_index.h"

/* .eh_frame_hdr encodings as every linker writes them (DW_EH_PE_*). */
#define EH_PE_PCREL_SDATA4   0x1b
#define EH_PE_UDATA4	     0x03
#define EH_PE_DATAREL_SDATA4 0x3b

int cfi_row_push(struct cfi_row_vec *v, const struct cfi_row *r)
{
	if (v->len) {
		struct cfi_row *last = &v->data[v->len - 1];

		/* A later row at the same address replaces an earlier one (an empty range). */
		if (last->pc == r->pc) {
			*last = *r;
			return 0;
		}
		if (last->cfa == r->cfa && last->cfa_offset == r->cfa_offset && last->fp == r->fp &&
		    last->fp_offset == r->fp_offset && last->plt_threshold == r->plt_threshold)
			return 0;
	}
	if (v->len == v->cap) {
		size_t cap = v->cap ? 2 * v->cap : 1024;
		struct cfi_row *d = realloc(v->data, cap * sizeof(*d));

		if (!d)
			return -ENOMEM;
		v->data = d;
		v->cap = cap;
	}
	v->data[v->len++] = *r;
	return 0;
}

static int32_t read_s32(const uint8_t *p)
{
	int32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* The operations of a DWARF expression that cfi_table reads (DWARF 5, table 7.9). */
#define DW_OP_consts	  0x11
#define DW_OP_and	  0x1a
#define DW_OP_plus	  0x22
#define DW_OP_plus_uconst 0x23
#define DW_OP_shl	  0x24
#define DW_OP_ge	  0x2a
#define DW_OP_lit0	  0x30
#define DW_OP_lit3	  0x33
#define DW_OP_lit15	  0x3f
#define DW_OP_breg7	  0x77
#define DW_OP_breg16	  0x80

/*
 * A register saved at "CFA + N" by an expression rule: the CFA is on the
 * stack before it runs, then nothing, DW_OP_plus_uconst N or DW_OP_consts N
 * DW_OP_plus.
 */
static bool cfa_relative(const uint8_t *expr, uint64_t len, int64_t *off)
{
	struct eh_cursor c = { expr, expr + len };
	uint64_t u;

	if (!len) {
		*off = 0;
		return true;
	}
	switch (*c.p++) {
	case DW_OP_plus_uconst:
		if (!eh_uleb(&c, &u))
			return false;
		*off = (int64_t)u;
		break;
	case DW_OP_consts:
		if (!eh_sleb(&c, off) || c.p == c.end || *c.p++ != DW_OP_plus)
			return false;
		break;
	default:
		return false;
	}
	return c.p == c.end;
}

/*
 * The PLT's CFA as GCC and binutils write it for 16-byte entries:
 *   DW_OP_breg7 (rsp) 8; DW_OP_breg16 (rip) 0; DW_OP_lit15; DW_OP_and;
 *   DW_OP_litN; DW_OP_ge; DW_OP_lit3; DW_OP_shl; DW_OP_plus
 * i.e. rsp + 8, plus 8 when (rip & 15) >= N.
 */
static bool plt_expression(const uint8_t *expr, uint64_t len, struct cfi_row *row)
{
	static const uint8_t tail[] = { DW_OP_ge, DW_OP_lit3, DW_OP_shl, DW_OP_plus };
	struct eh_cursor c = { expr, expr + len };
	int64_t sp_off, ip_off;
	uint8_t n;

	if (!len || *c.p++ != DW_OP_breg7 || !eh_sleb(&c, &sp_off))
		return false;
	if (c.p == c.end || *c.p++ != DW_OP_breg16 || !eh_sleb(&c, &ip_off) || ip_off)
		return false;
	if ((size_t)(c.end - c.p) != 3 + sizeof(tail) || c.p[0] != DW_OP_lit15 ||
	    c.p[1] != DW_OP_and || c.p[2] < DW_OP_lit0 || c.p[2] > DW_OP_lit15 ||
	    memcmp(c.p + 3, tail, sizeof(tail)))
		return false;
	n = c.p[2];
	row->cfa = UNWIND_CFA_PLT;
	row->cfa_offset = (int32_t)sp_off;
	row->plt_threshold = (uint8_t)(n - DW_OP_lit0);
	return true;
}

static bool fits_s16(int64_t v)
{
	return v >= INT16_MIN && v <= INT16_MAX;
}

/* A saved register's offset from the CFA, when its rule is "saved at CFA + N". */
static bool saved_at(const struct cfi_reg_rule *r, int64_t *off)
{
	if (r->kind == CFI_REG_OFFSET) {
		*off = r->value;
		return true;
	}
	return r->kind == CFI_REG_EXPR && cfa_relative(r->expr, r->expr_len, off);
}

/* One row's rules into the table's shapes; UNWIND_CFA_NONE when they cannot hold it. */
static void classify(const struct cfi_rules *rules, bool signal, struct cfi_row *row,
		     struct cfi_table_stats *st)
{
	int64_t off;

	row->cfa = UNWIND_CFA_NONE;
	if (signal) {
		row->cfa = UNWIND_CFA_SIGNAL;
		return;
	}
	if (rules->cfa_kind == CFI_CFA_OFFSET &&
	    (rules->cfa_reg == CFI_REG_RSP || rules->cfa_reg == CFI_REG_RBP) &&
	    rules->cfa_offset >= INT32_MIN && rules->cfa_offset <= INT32_MAX) {
		row->cfa = rules->cfa_reg == CFI_REG_RSP ? UNWIND_CFA_SP : UNWIND_CFA_FP;
		row->cfa_offset = (int32_t)rules->cfa_offset;
	} else if (rules->cfa_kind != CFI_CFA_EXPR ||
		   !plt_expression(rules->cfa_expr, rules->cfa_expr_len, row)) {
		st->unsupported_cfa++;
		return;
	}

	/* x86_64: the call pushed the return address just below the CFA. */
	if (rules->ra.kind == CFI_REG_UNDEF) {
		row->cfa = UNWIND_CFA_ROOT; /* nothing called this frame */
		return;
	}
	if (!saved_at(&rules->ra, &off) || off != -8) {
		st->unsupported_ra++;
		row->cfa = UNWIND_CFA_NONE;
		return;
	}

	if (rules->fp.kind == CFI_REG_SAME) {
		row->fp = UNWIND_FP_SAME;
	} else if (rules->fp.kind == CFI_REG_UNDEF) {
		row->fp = UNWIND_FP_UNDEF;
	} else if (saved_at(&rules->fp, &off) && fits_s16(off)) {
		row->fp = UNWIND_FP_SAVED;
		row->fp_offset = (int16_t)off;
	} else {
		st->unsupported_fp++;
		row->cfa = UNWIND_CFA_NONE;
	}
}

const struct cfi_budget cfi_default_budget = {
	.fde_rows = CFI_FDE_MAX_ROWS,
	.file_rows = CFI_FILE_MAX_ROWS,
	.file_ops = CFI_FILE_MAX_OPS,
	.file_cpu_ns = CFI_FILE_MAX_CPU_NS,
};

/* A CIE's rules at the start of its FDEs, kept for the next FDEs (a file has a few CIEs). */
#define CIE_CACHE 8

struct cie_entry {
	size_t off; /* SIZE_MAX: empty */
	int err;
	struct eh_cie cie;
	struct cfi_rules initial;
};

struct build {
	const uint8_t *data; /* .eh_frame */
	size_t size;
	uint64_t vaddr;
	const struct cfi_budget *budget;
	uint64_t ops_left;
	uint64_t cpu_start;
	struct cie_entry cies[CIE_CACHE];
	unsigned next_cie;
	struct cfi_row_vec rows;
	struct cfi_table_stats *st;
	/* The FDE being walked. */
	uint64_t limit;
	size_t fde_rows;
	bool signal;
};

uint64_t cfi_thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int cfi_budget_check(const struct cfi_budget *b, uint64_t cpu_start, const char **over)
{
	if (b->stop && __atomic_load_n(b->stop, __ATOMIC_RELAXED))
		return -ECANCELED;
	if (b->file_cpu_ns && cfi_thread_cpu_ns() - cpu_start > b->file_cpu_ns) {
		*over = "build time";
		return -E2BIG;
	}
	return 0;
}

/* -E2BIG, naming the budget, once the file has cost more than its share. */
static int over_budget(struct build *b)
{
	if (b->st->rows_read > b->budget->file_rows) {
		b->st->over_budget = "rows in the file";
		return -E2BIG;
	}
	if (!b->ops_left) {
		b->st->over_budget = "CFI instructions in the file";
		return -E2BIG;
	}
	return cfi_budget_check(b->budget, b->cpu_start, &b->st->over_budget);
}

static int on_row(void *ctx, uint64_t pc, const struct cfi_rules *rules)
{
	struct build *b = ctx;
	struct cfi_row row = { .pc = pc };
	int err;

	if (pc >= b->limit)
		return 1; /* the next FDE's: stop */
	if (++b->fde_rows > b->budget->fde_rows) {
		b->st->over_budget = "rows in one FDE";
		return -E2BIG;
	}
	if (b->fde_rows > b->st->largest_fde)
		b->st->largest_fde = b->fde_rows;
	b->st->rows_read++;
	if (!(b->st->rows_read & 0xffff) && (err = over_budget(b)))
		return err;
	classify(rules, b->signal, &row, b->st);
	return cfi_row_push(&b->rows, &row);
}

static struct cie_entry *cie_at(struct build *b, size_t off)
{
	struct cie_entry *e;
	struct cfi_program p;

	for (unsigned i = 0; i < CIE_CACHE; i++)
		if (b->cies[i].off == off)
			return &b->cies[i];
	e = &b->cies[b->next_cie++ % CIE_CACHE];
	e->off = off;
	e->err = eh_frame_cie(b->data, b->size, b->vaddr, off, &e->cie);
	if (!e->err) {
		p = (struct cfi_program){ &e->cie, b->data, b->vaddr, &b->ops_left };
		cfi_rules_init(&e->initial);
		e->err = cfi_program_cie(&p, &e->initial);
	}
	return e;
}

/*
 * The rows of the FDE at offset `off` whose index entry says it starts at
 * `start`, up to `limit` (the next FDE's start). Rows that cannot be read
 * are one UNWIND_CFA_NONE row, where unwinding stops.
 */
static int walk_fde(struct build *b, uint64_t start, size_t off)
{
	struct cfi_row none = { .pc = start, .cfa = UNWIND_CFA_NONE };
	struct eh_fde fde;
	struct eh_cie cie;
	struct cie_entry *e = NULL;
	size_t cie_off = SIZE_MAX;
	uint64_t bad_pc = start;
	int err;

	b->fde_rows = 0;
	err = eh_frame_fde(b->data, b->size, b->vaddr, off, &fde, &cie, &cie_off);
	if (!err) {
		e = cie_at(b, fde.cie_off);
		err = e->err;
	}
	if (err == -E2BIG) {
		b->st->over_budget = "CFI instructions in the file";
		return err;
	}
	if (err || start < fde.start || start >= fde.end) {
		b->st->broken_fdes++;
		return cfi_row_push(&b->rows, &none);
	}
	{
		struct cfi_program p = { &e->cie, b->data, b->vaddr, &b->ops_left };

		fde.start = start;
		b->signal = e->cie.signal;
		err = cfi_program_fde(&p, &fde, &e->initial, on_row, b, &bad_pc);
	}
	if (err == 1)
		return 0; /* stopped at the next FDE */
	if (err == -E2BIG && !b->ops_left)
		b->st->over_budget = "CFI instructions in the file";
	if (err == -EINVAL) {
		/* Up to the instruction it could not read; nothing to unwind with after. */
		if (bad_pc == start)
			b->st->broken_fdes++;
		none.pc = bad_pc;
		return cfi_row_push(&b->rows, &none);
	}
	if (err)
		return err;
	/* A gap up to the next FDE: nothing to unwind with. */
	if (fde.end < b->limit) {
		none.pc = fde.end;
		return cfi_row_push(&b->rows, &none);
	}
	return 0;
}

static int cmp_ref(const void *a, const void *b)
{
	const struct eh_fde_ref *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;
}

static int cmp_ref_off(const void *a, const void *b)
{
	const struct eh_fde_ref *x = a, *y = b;

	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

/*
 * An FDE is walked once: index entries that point at one already named
 * (at another start) are broken. A hostile index of many entries at one
 * long FDE would otherwise cost that FDE's rows once per entry (32 entries
 * 1M addresses apart: 32M rows from a 3 MB binary). Leaves refs by offset.
 */
static void drop_repeats(struct eh_fde_ref *refs, size_t count)
{
	qsort(refs, count, sizeof(*refs), cmp_ref_off);
	for (size_t i = 1, kept = 0; i < count; i++) {
		if (refs[i].off != refs[kept].off || refs[i].off == SIZE_MAX) {
			kept = i;
			continue;
		}
		/* The same entry twice is skipped by start; a repeat elsewhere is not. */
		if (refs[i].start != refs[kept].start)
			refs[i].off = SIZE_MAX;
	}
}

/*
 * The FDEs from .eh_frame_hdr's index (sorted by the linker), located in
 * .eh_frame (`eh_vaddr`, `eh_size`). 0, -ENOENT without the section,
 * -ENOTSUP, -EINVAL, -ENOMEM, -E2BIG past EH_FRAME_MAX_BYTES or `max` FDEs.
 */
static int fdes_from_hdr(Elf *elf, uint64_t eh_vaddr, size_t eh_size, size_t max,
			 struct eh_fde_ref **out, size_t *count)
{
	struct eh_fde_ref *refs;
	const uint8_t *p;
	GElf_Shdr shdr;
	Elf_Data *data;
	Elf_Scn *scn;
	uint32_t n;

	scn = elf_section_by_name(elf, ".eh_frame_hdr", &shdr);
	if (!scn)
		return -ENOENT;
	if (shdr.sh_size > EH_FRAME_MAX_BYTES)
		return -E2BIG; /* before it is read */
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
	if (n > max)
		return -E2BIG;
	*out = NULL;
	*count = n;
	if (!n)
		return 0;
	refs = malloc((size_t)n * sizeof(*refs));
	if (!refs)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t fde = shdr.sh_addr + (int64_t)read_s32(p + 16 + 8 * (size_t)i);

		refs[i].start = shdr.sh_addr + (int64_t)read_s32(p + 12 + 8 * (size_t)i);
		/* Outside .eh_frame: eh_frame_fde refuses it (SIZE_MAX), the FDE is broken. */
		refs[i].off = fde - eh_vaddr < eh_size ? (size_t)(fde - eh_vaddr) : SIZE_MAX;
	}
	*out = refs;
	return 0;
}

int cfi_table_build_within(Elf *elf, const struct cfi_budget *budget, struct cfi_table *out)
{
	struct build b = { .budget = budget, .st = &out->stats };
	struct eh_fde_ref *refs = NULL;
	GElf_Shdr shdr;
	Elf_Data *data;
	Elf_Scn *scn;
	size_t count = 0;
	int err;

	memset(out, 0, sizeof(*out));
	scn = elf_section_by_name(elf, ".eh_frame", &shdr);
	if (!scn || shdr.sh_type == SHT_NOBITS)
		return -ENOENT;
	if (shdr.sh_size > EH_FRAME_MAX_BYTES) {
		out->stats.over_budget = "the size of .eh_frame";
		return -E2BIG; /* before it is read */
	}
	data = elf_getdata(scn, NULL);
	if (!data || !data->d_buf)
		return -ENOENT;
	b.data = data->d_buf;
	b.size = data->d_size;
	b.vaddr = shdr.sh_addr;
	b.ops_left = budget->file_ops;
	b.cpu_start = cfi_thread_cpu_ns();
	for (unsigned i = 0; i < CIE_CACHE; i++)
		b.cies[i].off = SIZE_MAX;

	/* An FDE is a row at least: a file of more FDEs than rows is over budget already. */
	err = fdes_from_hdr(elf, b.vaddr, b.size, budget->file_rows, &refs, &count);
	if (err == -ENOENT)
		err = eh_frame_fde_refs(b.data, b.size, b.vaddr, budget->file_rows, &refs, &count);
	if (err == -E2BIG)
		out->stats.over_budget = "FDEs in the file";
	if (err)
		return err;
	out->stats.fdes = count;
	if (!count)
		return 0;

	drop_repeats(refs, count);
	/* Sorted again: a table from a hostile file must still be. */
	qsort(refs, count, sizeof(*refs), cmp_ref);

	for (size_t i = 0; i < count && !err; i++) {
		/* Duplicates, and FDEs of code the linker discarded (located at 0). */
		if ((i + 1 < count && refs[i + 1].start == refs[i].start) || !refs[i].start)
			continue;
		b.limit = i + 1 < count ? refs[i + 1].start : UINT64_MAX;
		err = walk_fde(&b, refs[i].start, refs[i].off);
		if (!err && !(i & 1023))
			err = over_budget(&b);
	}
	if (!err)
		err = over_budget(&b);
	free(refs);
	if (err) {
		free(b.rows.data);
		return err;
	}
	out->rows = b.rows.data;
	out->len = b.rows.len;
	out->stats.clone_returns = cfi_mark_clone_returns(elf, out->rows, out->len);
	out->stats.entry_root = cfi_mark_entry_root(elf, out);
	return 0;
}

int cfi_table_build(Elf *elf, struct cfi_table *out)
{
	return cfi_table_build_within(elf, &cfi_default_budget, out);
}

const struct cfi_row *cfi_table_lookup(const struct cfi_table *t, uint64_t pc)
{
	size_t n = COUNT_LE_BY(t->rows, t->len, pc, pc);

	return n ? &t->rows[n - 1] : NULL;
}

void cfi_table_free(struct cfi_table *t)
{
	free(t->rows);
	memset(t, 0, sizeof(*t));
}

bool cfi_file_is_system(int fd, const struct stat *st)
{
	return elf_fd_mappable(fd, st);
}

struct cfi_budget cfi_budget_pick(const struct cfi_budget *b, bool system)
{
	struct cfi_budget out = *b;

	if (!system && b->user_file_rows && b->user_file_rows < b->file_rows)
		out.file_rows = b->user_file_rows;
	return out;
}

struct cfi_budget cfi_budget_for_file(const struct cfi_budget *b, int fd)
{
	struct stat st;

	return cfi_budget_pick(b, fd >= 0 && !fstat(fd, &st) && cfi_file_is_system(fd, &st));
}
