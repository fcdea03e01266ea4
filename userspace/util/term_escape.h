/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Text that other users control (process and thread names, function names,
 * file names), made safe to write to a terminal: a name such as
 * "\x1b[2J" must not clear the admin's screen, move the cursor or retitle
 * the window. Control characters (C0, DEL, C1 as U+0080..U+009F), the
 * bidirectional overrides that make text display in another order than it
 * reads, and bytes that are not valid UTF-8 are shown as escapes: \xHH for
 * a byte, \uHHHH for a character. Valid UTF-8 otherwise passes unchanged,
 * so non-ASCII names stay readable.
 */
#ifndef BPFPROF_TERM_ESCAPE_H
#define BPFPROF_TERM_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Whether any of the `n` bytes at `s` would be escaped. */
bool term_escape_needed(const char *s, size_t n);

/*
 * The `n` bytes at `s`, escaped, into `dst` of `size` bytes (always
 * terminated when size > 0, cut at a whole escape). Returns the length the
 * whole escaped text has, as snprintf() does: >= size means it was cut.
 */
size_t term_escape(char *dst, size_t size, const char *s, size_t n);

/* The string `s`, escaped, newly allocated (free() it); NULL when out of memory. */
char *term_escape_dup(const char *s);

/* Write the `n` bytes at `s` to `f`, escaped. */
void term_escape_write(FILE *f, const char *s, size_t n);

#endif
