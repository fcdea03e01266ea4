/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Files and lines of a Go binary's addresses for the symbolizer, from its
 * .gopclntab (go_pclntab.h), within a budget per binary. A function's file
 * and line tables are streams read from its entry: walked for every
 * address, a hostile table (2^20 steps that cover no code, the most a
 * walk takes) cost ~1.7 ms per distinct sampled address, 9 s of root's CPU
 * for 5,000 samples (issue 37). Here each table is decoded once into its
 * ranges and kept, and decoding has a budget of steps per binary and
 * profile: once it is spent, the binary's frames keep their names and lose
 * their lines until the next profile (go_lines_new_profile).
 * One user at a time (the symbolizer's thread).
 */
#ifndef BPFPROF_LANG_GO_LINES_H
#define BPFPROF_LANG_GO_LINES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "go_pclntab.h"

/*
 * Steps (value changes) decoded per binary: 2^24, ~60 ms of CPU at ~3.5 ns
 * a step. Every file and line table of the go command (golang-go 1.19,
 * 10,851 functions) is 315k steps, so a real binary fifty times its size
 * still has every function decoded, some twice; a hostile one gets 16 of
 * its longest tables (2^20 steps each).
 */
#define GO_LINES_STEPS	    (1u << 24)
/* Ranges kept per binary, 16 bytes each (4 MiB); past it, all are dropped and decoded again. */
#define GO_LINES_MAX_RANGES (1u << 18)
/* Decoded tables kept per binary: a slot per (table, function), the last one decoded there. */
#define GO_LINES_SLOTS	    1024

struct go_lines;

/* NULL without memory. */
struct go_lines *go_lines_new(void);
void go_lines_free(struct go_lines *l);

/*
 * The source file and line of `pc` in `f` (a function of `t`), as
 * go_pclntab_line gives them, each of f's tables decoded once. False when
 * the tables do not say, or when the budget is spent before they are read.
 */
bool go_lines_at(struct go_lines *l, const struct go_pclntab *t, const struct go_func *f,
		 uint64_t pc, const char **file, int *line);

/*
 * A new profile (a continuous snapshot) gets the whole budget again, its
 * decoded tables kept: a service whose hot functions outnumber the slots
 * decodes some again each window, and would otherwise lose its lines for
 * good once the budget of its first windows was spent.
 */
void go_lines_new_profile(struct go_lines *l);

/* Bytes held, for the symbolizer's accounting. */
size_t go_lines_bytes(const struct go_lines *l);

/* Steps decoded so far (at most GO_LINES_STEPS). */
uint64_t go_lines_steps(const struct go_lines *l);

#endif
