// SPDX-License-Identifier: BSD-2-Clause
/* See python_strings.h. */
#include "python_strings.h"

#include <stdlib.h>
#include <string.h>

/* PyASCIIObject.state's bits (each version's headers, test_python_code_layouts). */
#define STATE_KIND(s) (((s) >> 2) & 7)
#define STATE_COMPACT (1u << 5)
#define STATE_ASCII   (1u << 6)
#define REPLACEMENT   0xfffd

size_t py_str_header_size(const struct python_code_layout *l)
{
	return l->str_kind == PY_STR_BYTES ? l->bytes_data : l->str_compact_data;
}

bool py_str_shape_of(const struct python_code_layout *l, const uint8_t *head, size_t max_chars,
		     struct py_str_shape *out)
{
	int64_t len;
	uint32_t state, kind;

	memset(out, 0, sizeof(*out));
	if (l->str_kind == PY_STR_BYTES) {
		memcpy(&len, head + l->bytes_size, 8);
		if (len < 0 || (uint64_t)len > max_chars)
			return false;
		out->data = l->bytes_data;
		out->unit = 1;
		out->bytes = true;
		out->chars = (size_t)len;
		return true;
	}
	memcpy(&len, head + l->str_length, 8);
	memcpy(&state, head + l->str_state, 4);
	kind = STATE_KIND(state);
	if (len < 0 || (uint64_t)len > max_chars || !(state & STATE_COMPACT))
		return false;
	if (state & STATE_ASCII) {
		out->data = l->str_ascii_data;
		out->unit = 1;
	} else if (kind == 1 || kind == 2 || kind == 4) {
		out->data = l->str_compact_data;
		out->unit = (uint8_t)kind;
	} else {
		return false;
	}
	out->chars = (size_t)len;
	return true;
}

/* Appends code point `c` as UTF-8. */
static size_t put_utf8(char *out, uint32_t c)
{
	if (!c || (c >= 0xd800 && c < 0xe000) || c > 0x10ffff)
		c = REPLACEMENT; /* a NUL would end the name early */
	if (c < 0x80) {
		out[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		out[0] = (char)(0xc0 | (c >> 6));
		out[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c < 0x10000) {
		out[0] = (char)(0xe0 | (c >> 12));
		out[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		out[2] = (char)(0x80 | (c & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | (c >> 18));
	out[1] = (char)(0x80 | ((c >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((c >> 6) & 0x3f));
	out[3] = (char)(0x80 | (c & 0x3f));
	return 4;
}

/*
 * The code point of the UTF-8 sequence at b[*i] (n bytes in all), *i moved
 * past it; a byte that starts no well-formed sequence is U+FFFD alone.
 */
static uint32_t next_utf8(const uint8_t *b, size_t n, size_t *i)
{
	uint8_t c = b[(*i)++];
	size_t more;
	uint32_t v, min;

	if (c < 0x80)
		return c;
	if ((c & 0xe0) == 0xc0)
		more = 1, v = c & 0x1f, min = 0x80;
	else if ((c & 0xf0) == 0xe0)
		more = 2, v = c & 0x0f, min = 0x800;
	else if ((c & 0xf8) == 0xf0)
		more = 3, v = c & 0x07, min = 0x10000;
	else
		return REPLACEMENT;
	if (n - *i < more)
		return REPLACEMENT;
	for (size_t k = 0; k < more; k++)
		if ((b[*i + k] & 0xc0) != 0x80)
			return REPLACEMENT;
	for (size_t k = 0; k < more; k++)
		v = v << 6 | (b[(*i)++] & 0x3f);
	/* Overlong forms are not what a filename encoder writes. */
	return v < min ? REPLACEMENT : v;
}

char *py_str_to_utf8(const struct py_str_shape *s, const uint8_t *raw)
{
	/* At most 4 bytes a character (a byte of 2.7 becomes U+FFFD at worst: 3). */
	char *out = malloc(s->chars * 4 + 1);
	size_t o = 0;

	if (!out)
		return NULL;
	if (s->bytes) {
		for (size_t i = 0; i < s->chars;)
			o += put_utf8(out + o, next_utf8(raw, s->chars, &i));
	} else {
		for (size_t i = 0; i < s->chars; i++) {
			const uint8_t *c = raw + i * s->unit;
			uint32_t v = s->unit == 1 ? c[0]
				     : s->unit == 2
					     ? (uint32_t)c[0] | (uint32_t)c[1] << 8
					     : (uint32_t)c[0] | (uint32_t)c[1] << 8 |
						       (uint32_t)c[2] << 16 | (uint32_t)c[3] << 24;

			o += put_utf8(out + o, v);
		}
	}
	out[o] = '\0';
	return out;
}
