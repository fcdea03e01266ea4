// SPDX-License-Identifier: BSD-2-Clause
#include "utf8.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

size_t utf8_seq_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	size_t need;

	if (c >= 0xc2 && c <= 0xdf) {
		need = 1;
	} else if (c >= 0xe0 && c <= 0xef) {
		need = 2;
		if (c == 0xe0)
			lo = 0xa0;
		else if (c == 0xed)
			hi = 0x9f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		need = 3;
		if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f;
	} else {
		return 0;
	}
	if (n < need + 1 || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i <= need; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return need + 1;
}

/* The bytes of `s` that start no well-formed sequence; 0: valid UTF-8. */
static size_t invalid_bytes(const unsigned char *s, size_t n)
{
	size_t bad = 0, seq;

	for (size_t i = 0; i < n;) {
		if (s[i] < 0x80) {
			i++;
		} else if ((seq = utf8_seq_len(s + i, n - i))) {
			i += seq;
		} else {
			bad++;
			i++;
		}
	}
	return bad;
}

char *utf8_sanitized(const char *str, int *err)
{
	static const char replacement[] = "\xef\xbf\xbd"; /* U+FFFD */
	const unsigned char *s = (const unsigned char *)str;
	size_t n = strlen(str), bad = invalid_bytes(s, n), seq;
	char *out, *p;

	*err = 0;
	if (!bad)
		return NULL;
	out = p = malloc(n + bad * 2 + 1);
	if (!out) {
		*err = -ENOMEM;
		return NULL;
	}
	for (size_t i = 0; i < n;) {
		if (s[i] < 0x80) {
			*p++ = (char)s[i++];
		} else if ((seq = utf8_seq_len(s + i, n - i))) {
			memcpy(p, s + i, seq);
			p += seq;
			i += seq;
		} else {
			memcpy(p, replacement, 3);
			p += 3;
			i++;
		}
	}
	*p = '\0';
	return out;
}
