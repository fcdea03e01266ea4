/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Well-formed UTF-8. Names in profiles come from other users (thread
 * names, paths, symbols of their binaries) and may hold any bytes; the
 * formats we write (JSON, protobuf strings) must carry valid UTF-8, or a
 * reader refuses the whole profile.
 */
#ifndef BPFPROF_UTIL_UTF8_H
#define BPFPROF_UTIL_UTF8_H

#include <stddef.h>

/*
 * Length of the well-formed multi-byte sequence at `s` (2 to 4 bytes, of at
 * most `n`), or 0. Follows the Unicode table of well-formed byte sequences,
 * so overlong forms, surrogates and code points above U+10FFFF are all
 * rejected.
 */
size_t utf8_seq_len(const unsigned char *s, size_t n);

/*
 * NULL when `s` is valid UTF-8 already (use it as it is); else a malloc'd
 * copy with each byte that starts no well-formed sequence replaced by
 * U+FFFD, or NULL with *err = -ENOMEM.
 */
char *utf8_sanitized(const char *s, int *err);

#endif
