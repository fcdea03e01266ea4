// SPDX-License-Identifier: BSD-2-Clause
#include "term_escape.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The longest escape: "\uHHHH". */
#define ESC_MAX 6

/*
 * The length of the valid UTF-8 sequence of 2 to 4 bytes at s (n bytes
 * left) and its code point, or 0 when it is not one (overlong forms,
 * surrogates and code points past U+10FFFF are not valid).
 */
static size_t utf8_seq(const unsigned char *s, size_t n, uint32_t *cp)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t len;

	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4;
	else
		return 0;
	if (n < len)
		return 0;
	/* The second byte's range is what rules out overlong forms, surrogates and > U+10FFFF. */
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	*cp = s[0] & (0xff >> (len + 1));
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		*cp = (*cp << 6) | (s[i] & 0x3f);
	}
	return len;
}

/*
 * Characters that are valid but act on the terminal or on how the line
 * reads: C1 controls (CSI is U+009B) and the bidirectional embeddings,
 * overrides and isolates, which can make a name display reversed.
 */
static bool unsafe_char(uint32_t cp)
{
	return (cp >= 0x80 && cp <= 0x9f) || (cp >= 0x202a && cp <= 0x202e) ||
	       (cp >= 0x2066 && cp <= 0x2069);
}

/*
 * The next piece of the n (> 0) bytes at s: returns how many bytes it
 * takes; *esc_len is 0 when they pass as they are, or the length of their
 * escape, written into esc.
 */
static size_t next_piece(const unsigned char *s, size_t n, char esc[ESC_MAX + 1], size_t *esc_len)
{
	static const char hex[] = "0123456789abcdef";
	uint32_t cp;
	size_t len;

	*esc_len = 0;
	if (s[0] < 0x80) {
		if (s[0] >= 0x20 && s[0] != 0x7f)
			return 1;
	} else {
		len = utf8_seq(s, n, &cp);
		if (len && !unsafe_char(cp))
			return len;
		if (len) {
			esc[0] = '\\';
			esc[1] = 'u';
			for (int i = 0; i < 4; i++)
				esc[2 + i] = hex[(cp >> (12 - 4 * i)) & 0xf];
			*esc_len = 6;
			return len;
		}
	}
	/* A control character, or a byte that starts no valid sequence: that byte alone. */
	esc[0] = '\\';
	esc[1] = 'x';
	esc[2] = hex[s[0] >> 4];
	esc[3] = hex[s[0] & 0xf];
	*esc_len = 4;
	return 1;
}

bool term_escape_needed(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	char esc[ESC_MAX + 1];
	size_t esc_len, k;

	for (size_t i = 0; i < n; i += k) {
		k = next_piece(p + i, n - i, esc, &esc_len);
		if (esc_len)
			return true;
	}
	return false;
}

size_t term_escape(char *dst, size_t size, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	char esc[ESC_MAX + 1];
	size_t esc_len, k, out = 0, kept = 0;

	for (size_t i = 0; i < n; i += k) {
		size_t len;

		k = next_piece(p + i, n - i, esc, &esc_len);
		len = esc_len ? esc_len : k;
		/* Whole pieces only: half an escape or half a character would mislead. */
		if (kept == out && out + len < size) {
			memcpy(dst + out, esc_len ? esc : s + i, len);
			kept += len;
		}
		out += len;
	}
	if (size)
		dst[kept] = '\0';
	return out;
}

char *term_escape_dup(const char *s)
{
	size_t n = strlen(s), len = term_escape(NULL, 0, s, n);
	char *dst = malloc(len + 1);

	if (dst)
		term_escape(dst, len + 1, s, n);
	return dst;
}

void term_escape_write(FILE *f, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	char esc[ESC_MAX + 1];
	size_t esc_len, k, run = 0;

	/* Runs of bytes that pass go out in one fwrite. */
	for (size_t i = 0; i < n; i += k) {
		k = next_piece(p + i, n - i, esc, &esc_len);
		if (!esc_len) {
			run += k;
			continue;
		}
		fwrite(s + i - run, 1, run, f);
		run = 0;
		fwrite(esc, 1, esc_len, f);
	}
	fwrite(s + n - run, 1, run, f);
}
