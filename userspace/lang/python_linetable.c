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
	int code;   /* 15: no location */
	int length; /* code units covered, 1..8 */
	int delta;  /* to the line */
};

/*
 * The entry at t[*i], *i moved past it; false on a table we misread (not
 * at an entry's first byte, a varint cut short). Column bytes past the end
 * are not read, only skipped, as CPython's reader does.
 */
static bool next_entry(const uint8_t *t, size_t len, size_t *i, struct py_entry *e)
{
	uint8_t b = t[(*i)++];
	uint32_t v;

	e->code = (b >> 3) & 15;
	e->length = (b & 7) + 1;
	e->delta = 0;
	if (!(b & 0x80))
		return false;
	switch (e->code) {
	case 15: /* no location */
		break;
	case 14: /* long form: line delta, end line, column, end column */
	case 13: /* no column */
		if (!varint(t, len, i, &v))
			return false;
		e->delta = (v & 1) ? -(int)(v >> 1) : (int)(v >> 1);
		if (e->code == 14)
			for (int k = 0; k < 3; k++)
				if (!varint(t, len, i, &v))
					return false;
		break;
	case 10:
	case 11:
	case 12: /* one line: the delta is in the code, two column bytes */
		e->delta = e->code - 10;
		*i += 2;
		break;
	default: /* short form, same line: one column byte */
		*i += 1;
		break;
	}
	return true;
}

/* The line an entry gives, 0 for none (no location, or out of int's range). */
static int line_value(const struct py_entry *e, int64_t line)
{
	return e->code == 15 || line <= 0 || line > INT32_MAX ? 0 : (int)line;
}

/*
 * From state `m`, the line of `unit`, decoding at most `max_entries`
 * entries; -1 when it is further on.
 */
static int walk_from(const uint8_t *t, size_t len, struct py_line_mark m, int64_t unit,
		     size_t max_entries)
{
	size_t i = m.offset;
	int64_t addr = m.unit, line = m.line;

	for (size_t n = 0; n < max_entries; n++) {
		struct py_entry e;

		if (i >= len || !next_entry(t, len, &i, &e))
			return 0;
		line += e.delta; /* int64_t: a hostile table cannot overflow it in 2^31 entries */
		if (unit < addr + e.length)
			return line_value(&e, line);
		addr += e.length;
	}
	return -1;
}

int python_line_of(const uint8_t *t, size_t len, int first_line, int64_t unit)
{
	struct py_line_mark start = { 0, 0, first_line };

	/* Every entry is at least a byte: len entries reach the end. */
	return walk_from(t, len, start, unit < 0 ? 0 : unit, len + 1);
}

int py_line_index_build(struct py_line_index *x, const uint8_t *t, size_t len, int first_line)
{
	struct py_line_mark m = { 0, 0, first_line };
	size_t i = 0, n = 0, cap = len / PY_LINE_STRIDE + 1;

	memset(x, 0, sizeof(*x));
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
		if (!next_entry(t, len, &i, &e))
			break;
		m.line += e.delta;
		m.unit += (uint32_t)e.length;
		n++;
	}
	x->end_unit = m.unit;
	return 0;
}

int py_line_index_lookup(const struct py_line_index *x, int64_t unit)
{
	size_t lo = 0, hi = x->n_marks;
	int line;

	if (unit < 0)
		unit = 0;
	if (!x->n_marks || unit >= x->end_unit)
		return 0;
	/* The last mark at or before `unit`: marks[0] is at unit 0. */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (x->marks[mid].unit <= unit)
			lo = mid;
		else
			hi = mid;
	}
	line = walk_from(x->table, x->len, x->marks[lo], unit, PY_LINE_STRIDE);
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
