// SPDX-License-Identifier: BSD-2-Clause
/* See python_linetable.h. */
#include "python_linetable.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* PEP 657's varints: 6 bits a byte, bit 6 says more follow. */
static bool varint(const uint8_t *t, size_t len, size_t *i, uint32_t *v)
{
	unsigned shift = 0;
	uint8_t b;

	*v = 0;
	do {
		if (*i >= len || shift > 30)
			return false;
		b = t[(*i)++];
		*v |= (uint32_t)(b & 63) << shift;
		shift += 6;
	} while (b & 64);
	return true;
}

struct py_entry {
	int length;	  /* bytes or code units covered */
	int delta;	  /* to the line */
	bool no_line;	  /* the range has no line (3.10's -128, 3.11's code 15) */
	bool delta_after; /* lnotab: the delta is the next range's, not this one's */
};

/*
 * The 3.11+ entry at t[*i], *i moved past it; false on a table we misread
 * (not at an entry's first byte, a varint cut short). Column bytes past
 * the end are not read, only skipped, as CPython's reader does.
 */
static bool next_entry_311(const uint8_t *t, size_t len, size_t *i, struct py_entry *e)
{
	uint8_t b = t[(*i)++];
	uint32_t v;
	int code = (b >> 3) & 15;

	e->length = (b & 7) + 1;
	e->no_line = code == 15;
	if (!(b & 0x80))
		return false;
	switch (code) {
	case 15: /* no location */
		break;
	case 14: /* long form: line delta, end line, column, end column */
	case 13: /* no column */
		if (!varint(t, len, i, &v))
			return false;
		e->delta = (v & 1) ? -(int)(v >> 1) : (int)(v >> 1);
		if (code == 14)
			for (int k = 0; k < 3; k++)
				if (!varint(t, len, i, &v))
					return false;
		break;
	case 10:
	case 11:
	case 12: /* one line: the delta is in the code, two column bytes */
		e->delta = code - 10;
		*i += 2;
		break;
	default: /* short form, same line: one column byte */
		*i += 1;
		break;
	}
	return true;
}

/*
 * The entry at t[*i] in `fmt`, *i moved past it; false at the table's end
 * or on a table we misread. Before 3.11 every entry is two bytes (an odd
 * last byte is not read, as CPython's PyCode_Addr2Line does not):
 * 2.7's co_lnotab (byte delta, unsigned line delta applied after the
 * range), 3.6-3.9's (the line delta signed), 3.10's co_linetable (byte
 * delta, signed line delta applied before it, -128 for no line).
 */
static bool next_entry(enum py_line_format fmt, const uint8_t *t, size_t len, size_t *i,
		       struct py_entry *e)
{
	memset(e, 0, sizeof(*e));
	if (fmt == PY_LINES_311)
		return *i < len && next_entry_311(t, len, i, e);
	if (*i >= len || len - *i < 2)
		return false;
	e->length = t[*i];
	switch (fmt) {
	case PY_LINES_LNOTAB_27:
		e->delta = t[*i + 1];
		e->delta_after = true;
		break;
	case PY_LINES_LNOTAB_36:
		e->delta = (int8_t)t[*i + 1];
		e->delta_after = true;
		break;
	default: /* PY_LINES_310 */
		e->delta = (int8_t)t[*i + 1];
		e->no_line = e->delta == -128;
		if (e->no_line)
			e->delta = 0;
		break;
	}
	*i += 2;
	return true;
}

/* A line as an int, 0 for none (and out of int's range). */
static int line_value(int64_t line)
{
	return line <= 0 || line > INT32_MAX ? 0 : (int)line;
}

/*
 * The line of units past the table's end: an lnotab's last line covers
 * them (CPython's walk runs off its end with it); the later tables end
 * with their code.
 */
static int past_end(enum py_line_format fmt, int64_t line)
{
	return fmt == PY_LINES_LNOTAB_27 || fmt == PY_LINES_LNOTAB_36 ? line_value(line) : 0;
}

/*
 * From state `m`, the line of `unit`, decoding at most `max_entries`
 * entries; -1 when it is further on.
 */
static int walk_from(enum py_line_format fmt, const uint8_t *t, size_t len, struct py_line_mark m,
		     int64_t unit, size_t max_entries)
{
	size_t i = m.offset;
	int64_t addr = m.unit, line = m.line;

	for (size_t n = 0; n < max_entries; n++) {
		struct py_entry e;

		if (!next_entry(fmt, t, len, &i, &e))
			return past_end(fmt, line);
		/* int64_t: a hostile table cannot overflow it in 2^31 entries */
		if (!e.delta_after)
			line += e.delta;
		if (unit < addr + e.length)
			return e.no_line ? 0 : line_value(line);
		addr += e.length;
		if (e.delta_after)
			line += e.delta;
	}
	return -1;
}

int python_line_of_format(enum py_line_format fmt, const uint8_t *t, size_t len, int first_line,
			  int64_t unit)
{
	struct py_line_mark start = { 0, 0, first_line };

	/* Every entry is at least a byte: len entries reach the end. */
	return walk_from(fmt, t, len, start, unit < 0 ? 0 : unit, len + 1);
}

int python_line_of(const uint8_t *t, size_t len, int first_line, int64_t unit)
{
	return python_line_of_format(PY_LINES_311, t, len, first_line, unit);
}

int py_line_index_build_format(struct py_line_index *x, enum py_line_format fmt, const uint8_t *t,
			       size_t len, int first_line)
{
	struct py_line_mark m = { 0, 0, first_line };
	size_t i = 0, n = 0, cap = len / PY_LINE_STRIDE + 1;

	memset(x, 0, sizeof(*x));
	x->format = (uint8_t)fmt;
	x->past_end_line = past_end(fmt, first_line);
	if (!t || !len)
		return 0;
	if (len > PY_LINE_TABLE_MAX)
		return -EINVAL;
	x->marks = malloc(cap * sizeof(*x->marks));
	if (!x->marks)
		return -ENOMEM;
	x->table = t;
	x->len = (uint32_t)len;
	/* At most len entries of at most 8 units: under 2^31 units for PY_LINE_TABLE_MAX. */
	while (i < len) {
		struct py_entry e;
		size_t at = i;

		if (n % PY_LINE_STRIDE == 0) {
			m.offset = (uint32_t)at;
			x->marks[x->n_marks++] = m;
		}
		if (!next_entry(fmt, t, len, &i, &e))
			break;
		m.line += e.delta;
		m.unit += (uint32_t)e.length;
		n++;
	}
	x->end_unit = m.unit;
	x->past_end_line = past_end(fmt, m.line);
	return 0;
}

int py_line_index_build(struct py_line_index *x, const uint8_t *t, size_t len, int first_line)
{
	return py_line_index_build_format(x, PY_LINES_311, t, len, first_line);
}

int py_line_index_lookup(const struct py_line_index *x, int64_t unit)
{
	size_t lo = 0, hi = x->n_marks;
	int line;

	if (unit < 0)
		unit = 0;
	if (unit >= x->end_unit || !x->n_marks)
		return x->past_end_line;
	/* The last mark at or before `unit`: marks[0] is at unit 0. */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (x->marks[mid].unit <= unit)
			lo = mid;
		else
			hi = mid;
	}
	line = walk_from(x->format, x->table, x->len, x->marks[lo], unit, PY_LINE_STRIDE);
	return line < 0 ? 0 : line;
}

size_t py_line_index_bytes(const struct py_line_index *x)
{
	return x->n_marks * sizeof(*x->marks);
}

void py_line_index_free(struct py_line_index *x)
{
	free(x->marks);
	memset(x, 0, sizeof(*x));
}
