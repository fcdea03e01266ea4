// SPDX-License-Identifier: BSD-2-Clause
/* See file_table.h. */
#include "file_table.h"

#include <errno.h>
#include <gelf.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>

#include "go_table.h"
#include "../util/elf_section.h"

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* What is left of `budget` for Go's rows once the CFI's took their share. */
static struct cfi_budget go_share(const struct cfi_budget *budget, const struct cfi_table *cfi,
				  uint64_t spent_ns)
{
	struct cfi_budget b = *budget;
	size_t used = cfi->stats.rows_read;

	b.file_rows = used < b.file_rows ? b.file_rows - used : 0;
	if (b.file_cpu_ns)
		b.file_cpu_ns = spent_ns < b.file_cpu_ns ? b.file_cpu_ns - spent_ns : 1;
	return b;
}

static int build(Elf *elf, const struct cfi_budget *budget, struct unwind_built *out)
{
	struct go_table_stats go_st;
	struct cfi_budget go_budget;
	struct cfi_table go;
	uint64_t go_lo, go_hi, t0 = cpu_ns();
	int err, go_err;

	if (!elf || elf_kind(elf) != ELF_K_ELF || elf_exec_bias(elf, &out->bias))
		return UNWIND_FILE_INVALID;
	err = cfi_table_build_within(elf, budget, &out->t);
	if (err == -E2BIG) {
		out->over_budget = out->t.stats.over_budget;
		return UNWIND_FILE_OVER_BUDGET;
	}
	if (err == -ECANCELED)
		return err;
	/* Go code has no CFI: its rows come from .gopclntab, over any C code's CFI (cgo). */
	go_budget = go_share(budget, &out->t, cpu_ns() - t0);
	go_err = go_table_build(elf, &go_budget, &go, &go_lo, &go_hi, &go_st);
	if (go_err == -E2BIG || go_err == -ECANCELED) {
		if (!err)
			cfi_table_free(&out->t);
		out->over_budget = go_st.over_budget;
		return go_err == -E2BIG ? UNWIND_FILE_OVER_BUDGET : go_err;
	}
	if (err == -ENOMEM || go_err == -ENOMEM) {
		if (!err)
			cfi_table_free(&out->t);
		if (!go_err)
			cfi_table_free(&go);
		return -ENOMEM;
	}
	if (!go_err) {
		if (err)
			memset(&out->t, 0, sizeof(out->t)); /* Go's rows alone */
		err = go_table_overlay(&out->t, &go, go_lo, go_hi);
		cfi_table_free(&go);
		if (err) {
			cfi_table_free(&out->t);
			return err;
		}
	}
	if (err == -ENOENT || (!err && !out->t.len)) {
		if (!err)
			cfi_table_free(&out->t);
		return UNWIND_FILE_NO_CFI;
	}
	return err ? UNWIND_FILE_INVALID : UNWIND_FILE_LOADED;
}

int unwind_file_build(Elf *elf, const struct cfi_budget *budget, struct unwind_built *out)
{
	uint64_t t0 = cpu_ns();
	int status;

	memset(out, 0, sizeof(*out));
	status = build(elf, budget, out);
	if (elf)
		elf_end(elf);
	out->build_ns = cpu_ns() - t0;
	if (status < 0)
		return status;
	out->status = status;
	return 0;
}

void unwind_built_free(struct unwind_built *b)
{
	if (b->status == UNWIND_FILE_LOADED)
		cfi_table_free(&b->t);
	memset(b, 0, sizeof(*b));
}
