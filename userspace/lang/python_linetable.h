/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * CPython's line tables, which map a code object's instructions to source
 * lines: 2.7's and 3.6-3.9's co_lnotab, 3.10's co_linetable and 3.11+'s
 * location tables (PEP 657's format); python_code_layouts.h says which a
 * version has. A table is a run of entries, each covering a range of
 * bytes (before 3.11) or code units (3.11+) with a line delta, so a line
 * is found by walking it from the start. A hostile process hands us tables of 256 KiB and asks
 * for their last unit from 128 frames of every sample (issue 37): the walk
 * is done once per code object into an index of checkpoints, and each
 * lookup then decodes at most PY_LINE_STRIDE entries.
 */
#ifndef BPFPROF_LANG_PYTHON_LINETABLE_H
#define BPFPROF_LANG_PYTHON_LINETABLE_H

#include <stddef.h>
#include <stdint.h>

#include "python_code_layouts.h"

/* The longest table indexed: its units fit a uint32_t. */
#define PY_LINE_TABLE_MAX (1u << 28)
/* Entries between two checkpoints: what one lookup decodes at most. */
#define PY_LINE_STRIDE	  32

/* The decoder's state before an entry. */
struct py_line_mark {
	uint32_t offset; /* of the entry in the table */
	uint32_t unit;	 /* first code unit it covers */
	int64_t line;	 /* the line before its delta */
};

struct py_line_index {
	const uint8_t *table; /* not owned: the code object's copy of the table */
	uint32_t len;
	uint32_t
		end_unit; /* units at and past it have past_end_line (the table ended or is junk) */
	int past_end_line; /* an lnotab's last line; 0 for the later tables */
	uint8_t format;	   /* enum py_line_format */
	uint32_t n_marks;
	struct py_line_mark *marks; /* every PY_LINE_STRIDE-th entry, units increasing */
};

/*
 * Line of `unit` (a byte offset before 3.11, a code unit after) by walking
 * the whole table of format `fmt`; 0: none.
 */
int python_line_of_format(enum py_line_format fmt, const uint8_t *table, size_t len, int first_line,
			  int64_t unit);
/* The same for a 3.11+ location table. */
int python_line_of(const uint8_t *table, size_t len, int first_line, int64_t unit);

/*
 * Index `table` (kept by the caller, at most PY_LINE_TABLE_MAX bytes) in one
 * walk: 0, -EINVAL or -ENOMEM (then no lines).
 */
int py_line_index_build_format(struct py_line_index *x, enum py_line_format fmt,
			       const uint8_t *table, size_t len, int first_line);
/* The same for a 3.11+ location table. */
int py_line_index_build(struct py_line_index *x, const uint8_t *table, size_t len, int first_line);
/* What python_line_of answers, in at most PY_LINE_STRIDE entries. */
int py_line_index_lookup(const struct py_line_index *x, int64_t unit);
/* Bytes the index holds beside the table. */
size_t py_line_index_bytes(const struct py_line_index *x);
void py_line_index_free(struct py_line_index *x);

#endif
