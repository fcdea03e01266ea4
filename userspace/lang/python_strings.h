/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A CPython str as read from another process, made UTF-8: 3.x's compact
 * unicode (ASCII, or 1, 2 or 4 bytes a character after a longer header)
 * and 2.7's byte strings (PyStringObject, shown as UTF-8 where they are,
 * with U+FFFD for what is not). The process's own bytes: a string
 * longer than the caller's cap is not read at all (no name beats a
 * megabyte of junk), and every code point is checked.
 */
#ifndef BPFPROF_LANG_PYTHON_STRINGS_H
#define BPFPROF_LANG_PYTHON_STRINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "python_code_layouts.h"

/* What to read of a str after its header. */
struct py_str_shape {
	uint16_t data; /* offset of its characters from the object's address */
	uint8_t unit;  /* bytes a character: 1, 2 or 4 */
	bool bytes;    /* 2.7: UTF-8 to check, not code points */
	size_t chars;  /* characters to read: at most the cap */
};

/* Bytes of the header py_str_shape_of reads: 40 to 72. */
size_t py_str_header_size(const struct python_code_layout *l);
/*
 * The shape of the str whose header is `head` (py_str_header_size bytes),
 * false for what is not a compact str (a legacy one, a negative length, a
 * kind that is none) and for one longer than `max_chars`.
 */
bool py_str_shape_of(const struct python_code_layout *l, const uint8_t *head, size_t max_chars,
		     struct py_str_shape *out);
/* The characters `raw` (s->chars * s->unit bytes) as a malloc'd UTF-8 string, or NULL. */
char *py_str_to_utf8(const struct py_str_shape *s, const uint8_t *raw);

#endif
