/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A binary's call frame information (.eh_frame) as a compact table for
 * unwinding user stacks without frame pointers, in the kernel, from a
 * sampling program: one row per address range, sorted, telling how to find
 * the caller's frame there. Only the rules compilers emit for ordinary code
 * are kept: the CFA (the stack pointer before the call) is the stack or the
 * frame pointer plus an offset, or the PLT's one expression; the return
 * address and the caller's frame pointer are saved at fixed offsets from
 * the CFA. Anything else becomes a row that says "no usable CFI here", where
 * the unwinder stops (or falls back to the frame pointer).
 *
 * x86_64 only for now: the return address is always at CFA - 8 there.
 */
#ifndef BPFPROF_UNWIND_CFI_TABLE_H
#define BPFPROF_UNWIND_CFI_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include <libelf.h>

#include "../../bpf/bpfprof_abi.h" /* enum unwind_cfa, unwind_fp */

struct cfi_row {
	uint64_t pc; /* the first address (ELF virtual address of the file) the row holds for */
	int32_t cfa_offset;
	int16_t fp_offset;
	uint8_t cfa; /* enum unwind_cfa */
	uint8_t fp;  /* enum unwind_fp */
	uint8_t plt_threshold;
};

/* Rows being built, sorted by pc (cfi_table and Go's go_table). */
struct cfi_row_vec {
	struct cfi_row *data;
	size_t len, cap;
};

/*
 * Append `r` (pc at or after the last row's): a row at the last one's pc
 * replaces it (an empty range), a row equal to the last but for its pc is
 * dropped. 0 or -ENOMEM.
 */
int cfi_row_push(struct cfi_row_vec *v, const struct cfi_row *r);

/* Why rows are UNWIND_CFA_NONE, for the frame-quality figures. */
struct cfi_table_stats {
	size_t fdes;		 /* FDEs in .eh_frame_hdr */
	size_t rows_read;	 /* rows read, before merging equal neighbours */
	size_t unsupported_cfa;	 /* rows whose CFA rule the table cannot hold */
	size_t unsupported_ra;	 /* rows whose return address is not at CFA - 8 */
	size_t unsupported_fp;	 /* rows whose FP rule the table cannot hold */
	size_t broken_fdes;	 /* FDEs that could not be read */
	size_t largest_fde;	 /* rows of its longest FDE */
	size_t clone_returns;	 /* gaps after a clone syscall made UNWIND_CFA_CLONE rows */
	bool entry_root;	 /* the entry point's gap made a root row (cfi_entry.h) */
	const char *over_budget; /* -E2BIG: which budget the file went over */
};

struct cfi_table {
	struct cfi_row *rows; /* sorted by pc, no two neighbours equal but for pc */
	size_t len;
	struct cfi_table_stats stats;
};

/*
 * What one file's table may cost: a hostile binary can hold millions of
 * rows in a megabyte. Over any, the build stops with -E2BIG and the file is
 * unwound with frame pointers. The defaults are far above real binaries':
 * the largest file of a Debian 12 machine with LLVM 14-16 (libclang-cpp.so.16,
 * 92k FDEs) reads 1.07M rows, its longest FDE 2,788, in 51 ms of CPU; a
 * libxul or Chromium, a few times larger, stays well within them.
 */
struct cfi_budget {
	size_t fde_rows;      /* rows of one FDE */
	size_t file_rows;     /* rows of the file, before merging */
	uint64_t file_ops;    /* CFI instructions run, CIEs' included */
	uint64_t file_cpu_ns; /* CPU time of the calling thread; 0: none */
	/*
	 * file_rows for a file a user other than root may change (0: the
	 * same): see cfi_budget_for_file.
	 */
	size_t user_file_rows;
	/* Set (by another thread) when the build must end now: -ECANCELED. NULL: never. */
	const bool *stop;
};

/*
 * A file's rows may not exceed 2M, what the store held before its rows were
 * compact (issue 38: its 4M slots hold some 8M rows now; the largest real
 * file, libclang-cpp.so.16, reads 1.15M): more cost their memory while
 * built (24 bytes a row) for a table no real binary needs. A store shared
 * by owner caps a file a user may change at twice a quarter of its slots in
 * rows read (unwind_store_budget, user_file_rows: its build stops there),
 * the system's files at twice its slots: with the recording's 4M slots
 * both are this 2M; only a smaller store (tests) caps them lower. The
 * build time: the largest real file costs 51 ms; issue 27 asks that a
 * hostile one cost at most 1 s.
 */
#define CFI_FDE_MAX_ROWS    (1u << 20)
#define CFI_FILE_MAX_ROWS   (2u << 20)
#define CFI_FILE_MAX_OPS    (256ull << 20)
#define CFI_FILE_MAX_CPU_NS (1ull * 1000000000ull)

/*
 * Whether the file open at `fd` (stat `st`) is the system's: one only root
 * can change (a package's), by the rule that decides which files are
 * mapped (elf_fd_mappable: root's, writable by no one else, not on FUSE,
 * whose server, maybe a user's, says what owner and mode are). No user
 * makes one, so its size is no attack: a system library larger than one
 * user's cap (libLLVM, libclang-cpp: over 1M rows; cc1: 600k) is built
 * whole. fd -1: false.
 */
bool cfi_file_is_system(int fd, const struct stat *st);

/* `b` for a file, the system's or not: user_file_rows caps the rows of one that is not. */
struct cfi_budget cfi_budget_pick(const struct cfi_budget *b, bool system);
/* `b` for the file at `fd` (cfi_budget_pick, cfi_file_is_system). */
struct cfi_budget cfi_budget_for_file(const struct cfi_budget *b, int fd);

/*
 * The budget's clock and stop flag, for builders that count rows and steps
 * themselves (Go's): -E2BIG (*over names the budget) once the thread has
 * spent more than file_cpu_ns since `cpu_start`, -ECANCELED when told to
 * stop, else 0.
 */
int cfi_budget_check(const struct cfi_budget *b, uint64_t cpu_start, const char **over);

/* CPU time of the calling thread, in ns (CLOCK_THREAD_CPUTIME_ID). */
uint64_t cfi_thread_cpu_ns(void);

extern const struct cfi_budget cfi_default_budget;

/*
 * Build the table of `elf` (an ELF file read with libelf) from its
 * .eh_frame, through .eh_frame_hdr's index of FDEs or, when the binary has
 * no index (gcc -static), .eh_frame's own records. Returns 0, -ENOENT when
 * it has neither (no CFI to use), -ENOTSUP for an index encoded in
 * a way it does not read, -EINVAL for a malformed one, -ENOMEM, -E2BIG
 * over the default budget, -ECANCELED when the budget's stop flag was set.
 */
int cfi_table_build(Elf *elf, struct cfi_table *out);

/* The same within `budget`: -E2BIG over it (out->stats.over_budget says which). */
int cfi_table_build_within(Elf *elf, const struct cfi_budget *budget, struct cfi_table *out);

/* The row that holds for `pc`, or NULL before the first row. */
const struct cfi_row *cfi_table_lookup(const struct cfi_table *t, uint64_t pc);

void cfi_table_free(struct cfi_table *t);

#endif
