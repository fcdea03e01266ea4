// SPDX-License-Identifier: BSD-2-Clause
/* See go_table.h. */
#include "go_table.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../lang/go_pclntab.h"
#include "../util/elf_section.h"
#include "../util/log.h"

static int push(struct cfi_row_vec *v, struct cfi_row r)
{
	return cfi_row_push(v, &r);
}

/*
 * What the build has cost: many function entries may share one long pcsp
 * stream, each read again up to its size in steps, so a 2 MB table can
 * name billions of rows. Steps count against the budget's instructions,
 * rows against its rows; the clock and the stop flag every 4096 steps.
 */
struct go_cost {
	const struct cfi_budget *b;
	uint64_t cpu_start, steps;
	size_t rows;
	const char *over;
};

static int charge(struct go_cost *c, uint64_t steps, size_t rows)
{
	uint64_t before = c->steps;

	c->steps += steps;
	c->rows += rows;
	if (c->rows > c->b->file_rows) {
		c->over = "rows in the file";
		return -E2BIG;
	}
	if (c->steps > c->b->file_ops) {
		c->over = "Go value table steps in the file";
		return -E2BIG;
	}
	if ((c->steps >> 12) != (before >> 12))
		return cfi_budget_check(c->b, c->cpu_start, &c->over);
	return 0;
}

static int push_charged(struct go_cost *c, struct cfi_row_vec *v, struct cfi_row r)
{
	int err = charge(c, 0, 1);

	return err ? err : push(v, r);
}

/* A Go name, with or without the ABI wrapper's suffix the ELF symbol table adds. */
static bool is_func(const char *name, const char *want)
{
	size_t n = strlen(want);

	return !strncmp(name, want, n) && (!name[n] || !strcmp(name + n, ".abi0"));
}

/* What reading a prologue costs in the budget's steps: a section search and a read. */
#define GO_CODE_READ_STEPS 16

/*
 * The first PC at which a Go function has saved its caller's BP at CFA - 16
 * (just below the return address), from its instructions where SP first
 * goes below the entry's (at `a`, by `sp`); 0 when it does not there.
 * The prologue the Go toolchain writes for a frame (cmd/internal/obj/x86):
 *   Go 1.21 on:        PUSHQ BP (55) | a: MOVQ SP, BP (48 89 e5): saved at a,
 *                      with SP 8 below the entry's;
 *   Go 1.20 and older: SUBQ $sp, SP | a: MOVQ BP, sp-8(SP), then LEAQ into BP:
 *                      saved after the MOVQ (48 89 2c 24, 48 89 6c 24 d8 or
 *                      48 89 ac 24 d32, by the offset's size).
 * Anything else (assembly marked NOFRAME that pushes other registers, a
 * hostile file) leaves BP as it is, which is what every row did before.
 */
static uint64_t bp_saved_from(const struct go_code *code, uint64_t a, int32_t sp,
			      struct go_table_stats *st)
{
	uint8_t c[9]; /* c[0] is at a - 1 */
	int32_t off = sp - 8, disp32;
	int err = a ? code->read(code->ctx, a - 1, c, sizeof(c)) : -ENOENT;

	st->prologues_lost += err == -E2BIG;
	if (err || c[1] != 0x48 || c[2] != 0x89)
		return 0;
	if (sp == 8 && c[0] == 0x55 && c[3] == 0xe5)
		return a;
	if (c[3] == 0x2c && c[4] == 0x24 && off == 0)
		return a + 4;
	if (c[3] == 0x6c && c[4] == 0x24 && off >= 0 && off < 128 && c[5] == off)
		return a + 5;
	memcpy(&disp32, c + 5, sizeof(disp32));
	if (c[3] == 0xac && c[4] == 0x24 && disp32 == off)
		return a + 8;
	return 0;
}

/*
 * The row for [a, b) with SP `sp` below the entry's, BP saved from
 * `saved_from` on (0: never), pushed split in two where BP is saved
 * within it.
 */
static int push_sp_rows(struct go_cost *c, struct cfi_row_vec *out, uint64_t a, uint64_t b,
			int32_t sp, uint64_t saved_from)
{
	struct cfi_row r = { .pc = a, .cfa = UNWIND_CFA_SP, .fp = UNWIND_FP_SAME };
	int err;

	if (sp < 0 || sp > (1 << 30)) {
		r.cfa = UNWIND_CFA_NONE;
		return push_charged(c, out, r);
	}
	r.cfa_offset = sp + 8;
	/* Only a frame holds the slot: SP at or below CFA - 16. */
	if (!saved_from || sp < 8 || b <= saved_from)
		return push_charged(c, out, r);
	if (a < saved_from && (err = push_charged(c, out, r)))
		return err;
	r.pc = a < saved_from ? saved_from : a;
	r.fp = UNWIND_FP_SAVED;
	r.fp_offset = -16;
	return push_charged(c, out, r);
}

static int function_rows(const struct go_pclntab *t, const struct go_func *f,
			 const struct go_code *code, struct cfi_row_vec *out,
			 struct go_table_stats *st, struct go_cost *c)
{
	struct go_pcvalue_iter it;
	uint64_t a, b, saved_from = 0;
	int32_t sp;
	bool any = false, at_entry = false, prologue_read = false;
	int err;

	/*
	 * The signal handler's entry is a TOPFRAME for Go's traceback, which
	 * runs on the signal stack; its return address is the restorer, and
	 * through that signal frame the interrupted code is unwound too.
	 */
	if ((f->flag & GO_FUNC_FLAG_TOPFRAME) && !is_func(f->name, "runtime.sigtramp") &&
	    !is_func(f->name, "runtime.cgoSigtramp")) {
		st->roots++;
		return push_charged(c, out,
				    (struct cfi_row){ .pc = f->entry, .cfa = UNWIND_CFA_ROOT });
	}
	/* CFA = BP + 16, BP saved at CFA - 16: a switch from the system stack back to Go's. */
	if (is_func(f->name, "runtime.asmcgocall"))
		return push_charged(c, out,
				    (struct cfi_row){ .pc = f->entry, .cfa = UNWIND_CFA_SWITCH });
	if (is_func(f->name, "runtime.sigreturn") ||
	    is_func(f->name, "runtime.sigreturn__sigaction"))
		return push_charged(c, out,
				    (struct cfi_row){ .pc = f->entry, .cfa = UNWIND_CFA_SIGNAL });
	/*
	 * cgocallback switches from the system stack to the goroutine's and
	 * plants the goroutine's saved PC where its pcsp says the return
	 * address is, so that tracebacks "seamlessly trace back into the
	 * earlier calls" (asm_amd64.s): its own table is right there.
	 */
	if ((f->flag & GO_FUNC_FLAG_SPWRITE) && !is_func(f->name, "runtime.cgocallback")) {
		st->stack_switches++;
		return push_charged(c, out,
				    (struct cfi_row){ .pc = f->entry, .cfa = UNWIND_CFA_SWITCH });
	}
	/*
	 * asmcgocall saves the goroutine's state with systemstack_switch's
	 * entry as its PC (gosave_systemstack_switch), which cgocallback then
	 * plants as a return address. A return address is looked up one byte
	 * back, in the function before: that byte (padding) gets this
	 * function's frame, so that C calling Go reaches the Go caller of C.
	 */
	if (is_func(f->name, "runtime.systemstack_switch") && f->entry &&
	    (err = push_charged(c, out,
				(struct cfi_row){ .pc = f->entry - 1,
						  .cfa = UNWIND_CFA_SP,
						  .cfa_offset = 8 })))
		return err;
	/*
	 * cgocallback's frame on the goroutine's stack is made, not pushed: a
	 * planted return address and no saved BP below it.
	 */
	if (is_func(f->name, "runtime.cgocallback"))
		code = NULL;
	go_pcvalue_begin(&it, t, f->pcsp, f->entry, f->end);
	while (go_pcvalue_next(&it, &a, &b, &sp)) {
		if ((err = charge(c, 1, 0)))
			return err;
		if (a == b)
			continue;
		/* push() drops a row equal to the one before: count ranges here, not rows. */
		if (!any)
			at_entry = a == f->entry;
		any = true;
		/* The prologue: the first range below the entry's SP, read once. */
		if (sp > 0 && !prologue_read && code) {
			prologue_read = true;
			st->prologues_read++;
			if ((err = charge(c, GO_CODE_READ_STEPS, 0)))
				return err;
			saved_from = bp_saved_from(code, a, sp, st);
			st->saves_bp += saved_from != 0;
		}
		if ((err = push_sp_rows(c, out, a, b, sp, saved_from)))
			return err;
	}
	if (!any || !at_entry) {
		/* No table, or one that does not start at the entry: leave it to the FP. */
		st->bad_funcs++;
		if (!any)
			return push_charged(
				c, out, (struct cfi_row){ .pc = f->entry, .cfa = UNWIND_CFA_NONE });
	}
	st->funcs++;
	return 0;
}

int go_table_from_pclntab(const struct go_pclntab *t, const struct go_code *code,
			  const struct cfi_budget *budget, struct cfi_table *out, uint64_t *lo,
			  uint64_t *hi, struct go_table_stats *stats)
{
	struct go_table_stats st = { 0 };
	struct go_cost c = { .b = budget, .cpu_start = cfi_thread_cpu_ns() };
	struct cfi_row_vec rows = { 0 };
	uint64_t first = 0, last = 0;
	int err = 0;

	memset(out, 0, sizeof(*out));
	for (uint32_t i = 0; i < t->nfunc && !err; i++) {
		struct go_func f;

		/* A function entry costs a step even when it gives no row. */
		if ((err = charge(&c, 1, 0)))
			break;
		if (!go_pclntab_func(t, i, &f) || f.entry < last) {
			st.bad_funcs++;
			continue;
		}
		if (!rows.len)
			first = f.entry;
		last = f.end;
		err = function_rows(t, &f, code, &rows, &st, &c);
	}
	if (!err)
		err = cfi_budget_check(budget, c.cpu_start, &c.over);
	st.over_budget = c.over;
	/* Once per file: its rows are right, but these functions' callers lose their BP. */
	if (st.prologues_lost)
		log_debug("a Go file's code past what a reader keeps (%u MiB): %zu functions' "
			  "prologues not read, their callers' BP not restored by their rows",
			  ELF_CODE_MAX_WINDOWS * (ELF_CODE_WINDOW >> 10) >> 10, st.prologues_lost);
	if (stats)
		*stats = st;
	if (err) {
		free(rows.data);
		return err;
	}
	if (!rows.len)
		return -ENOENT;
	out->rows = rows.data;
	out->len = rows.len;
	*lo = first;
	*hi = last;
	return 0;
}

static int read_elf_code(void *reader, uint64_t vaddr, void *buf, size_t len)
{
	return elf_code_reader_read(reader, vaddr, buf, len);
}

int go_table_build(Elf *elf, const struct cfi_budget *budget, struct cfi_table *out, uint64_t *lo,
		   uint64_t *hi, struct go_table_stats *stats)
{
	struct elf_code_reader reader = { .elf = elf };
	const struct go_code code = { read_elf_code, &reader };
	struct go_pclntab t;
	int err = go_pclntab_open(elf, &t);

	if (err) {
		memset(out, 0, sizeof(*out));
		if (stats)
			memset(stats, 0, sizeof(*stats));
		if (stats && err == -E2BIG)
			stats->over_budget = "the size of .gopclntab";
		return err;
	}
	err = go_table_from_pclntab(&t, &code, budget, out, lo, hi, stats);
	go_pclntab_close(&t);
	return err;
}

int go_table_overlay(struct cfi_table *base, const struct cfi_table *over, uint64_t lo, uint64_t hi)
{
	const struct cfi_row *after = cfi_table_lookup(base, hi);
	struct cfi_row_vec rows = { 0 };
	struct cfi_row resume = { .pc = hi, .cfa = UNWIND_CFA_NONE };
	int err = 0;

	if (after)
		resume = (struct cfi_row){ .pc = hi,
					   .cfa = after->cfa,
					   .cfa_offset = after->cfa_offset,
					   .fp = after->fp,
					   .fp_offset = after->fp_offset,
					   .plt_threshold = after->plt_threshold };
	for (size_t i = 0; i < base->len && base->rows[i].pc < lo && !err; i++)
		err = push(&rows, base->rows[i]);
	for (size_t i = 0; i < over->len && !err; i++)
		err = push(&rows, over->rows[i]);
	if (!err)
		err = push(&rows, resume);
	for (size_t i = 0; i < base->len && !err; i++)
		if (base->rows[i].pc > hi)
			err = push(&rows, base->rows[i]);
	if (err) {
		free(rows.data);
		return err;
	}
	free(base->rows);
	base->rows = rows.data;
	base->len = rows.len;
	return 0;
}
