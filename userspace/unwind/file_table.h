/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * One executable file's unwind table, built from its ELF image alone (no
 * store, no BPF): its CFI (cfi_table) under Go's rows (go_table) and the
 * load bias of its text. Pure, so that it can run on a thread of its own
 * (capture/table_worker) while the store stays the draining thread's.
 */
#ifndef BPFPROF_UNWIND_FILE_TABLE_H
#define BPFPROF_UNWIND_FILE_TABLE_H

#include <libelf.h>
#include <stdint.h>

#include "cfi_table.h"

enum unwind_file_status {
	UNWIND_FILE_LOADED = 0,	 /* its rows are in the store */
	UNWIND_FILE_NO_CFI = 1,	 /* no .eh_frame_hdr, or no FDE in it */
	UNWIND_FILE_FULL = 2,	 /* its rows did not fit in the capacity (or its owner's share) */
	UNWIND_FILE_INVALID = 3, /* not an ELF file, or CFI or segments the unwinder cannot use */
	UNWIND_FILE_OVER_BUDGET = 4, /* its table would cost more than cfi_budget allows */
	UNWIND_FILE_PENDING = 5,     /* being built on the worker thread */
	UNWIND_FILE_STATUSES
};

/*
 * The version of what unwind_file_build makes: bumped whenever cfi_table,
 * go_table, cfi_clone, cfi_entry or this file change the rows a file gets, so that
 * tables kept from an older bpfprof (table_cache.h) are built again.
 * test_table_cache hashes the rows of a fixture and fails when they
 * change without a bump.
 */
#define UNWIND_TABLE_GENERATOR 2

struct unwind_built {
	int status;		 /* enum unwind_file_status: LOADED means "has rows" here */
	struct cfi_table t;	 /* LOADED only */
	int64_t bias;		 /* ELF vaddr - file offset of the text */
	uint64_t build_ns;	 /* CPU time it took */
	const char *over_budget; /* OVER_BUDGET: which budget (cfi_table_stats) */
};

/*
 * Build the table of `elf` (ended here; NULL: not an ELF file) within
 * `budget`. 0, -ENOMEM or -ECANCELED (the budget's stop flag was set);
 * out->status says what came of it.
 */
int unwind_file_build(Elf *elf, const struct cfi_budget *budget, struct unwind_built *out);

void unwind_built_free(struct unwind_built *b);

#endif
