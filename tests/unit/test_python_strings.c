// SPDX-License-Identifier: BSD-2-Clause
/*
 * A CPython str as another process's memory holds it, made UTF-8
 * (lang/python_strings.h): 2.7's byte strings checked as UTF-8, 3.x's
 * compact unicode of each kind, and what a hostile process can put there
 * (NULs, surrogates, code points past U+10FFFF, lengths past the cap, a
 * legacy or kindless str) named wrongly at worst, never read past.
 */
#include <stdlib.h>
#include <string.h>

#include "lang/python_strings.h"
#include "test.h"

#define STATE(kind, compact, ascii) ((kind) << 2 | (compact) << 5 | (ascii) << 6)

/* A 3.x str object of layout `l`: header then `raw`, into obj. */
static size_t make_str(const struct python_code_layout *l, uint8_t *obj, int64_t len,
		       uint32_t state, const void *raw, size_t raw_len)
{
	size_t data = (state & (1u << 6)) ? l->str_ascii_data : l->str_compact_data;

	memset(obj, 0, 512);
	memcpy(obj + l->str_length, &len, 8);
	memcpy(obj + l->str_state, &state, 4);
	memcpy(obj + data, raw, raw_len);
	return data;
}

/* What py_str_* make of obj, or NULL when refused. */
static char *decode(const struct python_code_layout *l, const uint8_t *obj, size_t cap)
{
	struct py_str_shape s;

	if (!py_str_shape_of(l, obj, cap, &s))
		return NULL;
	return py_str_to_utf8(&s, obj + s.data);
}

static void unicode_kinds(void)
{
	static const uint32_t versions[] = { 0x03060000, 0x030b0000, 0x030c0000, 0x030d0000 };
	uint8_t obj[512];

	for (size_t v = 0; v < sizeof(versions) / sizeof(versions[0]); v++) {
		const struct python_code_layout *l = python_code_layout_for(versions[v]);
		const uint16_t cjk[] = { 0x51fd, 0x6570 };
		const uint32_t wide[] = { 0x1f600, 0xd800, 0x110000, 0 };
		char *s;

		make_str(l, obj, 3, STATE(1, 1, 1), "run", 3);
		s = decode(l, obj, 64);
		CHECK_EQ_STR(s ? s : "(null)", "run");
		free(s);
		make_str(l, obj, 2, STATE(1, 1, 0), "\xfc\xdf", 2); /* latin-1 "üß" */
		s = decode(l, obj, 64);
		CHECK_EQ_STR(s ? s : "(null)", "\xc3\xbc\xc3\x9f");
		free(s);
		make_str(l, obj, 2, STATE(2, 1, 0), cjk, sizeof(cjk));
		s = decode(l, obj, 64);
		CHECK_EQ_STR(s ? s : "(null)", "\xe5\x87\xbd\xe6\x95\xb0");
		free(s);
		/* A surrogate, past U+10FFFF and NUL: each U+FFFD, the name not cut. */
		make_str(l, obj, 4, STATE(4, 1, 0), wide, sizeof(wide));
		s = decode(l, obj, 64);
		CHECK_EQ_STR(s ? s : "(null)",
			     "\xf0\x9f\x98\x80\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
		free(s);
		/* Refused: past the cap, negative, not compact (legacy), a kind that is none. */
		make_str(l, obj, 65, STATE(1, 1, 1), "x", 1);
		CHECK(decode(l, obj, 64) == NULL);
		make_str(l, obj, -1, STATE(1, 1, 1), "x", 1);
		CHECK(decode(l, obj, 64) == NULL);
		make_str(l, obj, 1, STATE(1, 0, 1), "x", 1);
		CHECK(decode(l, obj, 64) == NULL);
		make_str(l, obj, 1, STATE(3, 1, 0), "x", 1);
		CHECK(decode(l, obj, 64) == NULL);
	}
}

static void byte_strings_27(void)
{
	const struct python_code_layout *l = python_code_layout_for(0x02071200);
	uint8_t obj[512];
	int64_t len;
	char *s;

	CHECK_EQ_INT(py_str_header_size(l), 36);
	memset(obj, 0, sizeof(obj));
	/* UTF-8 kept; a lone continuation byte, a cut sequence, an overlong NUL and a NUL: U+FFFD.
	 */
	memcpy(obj + 36, "gr\xc3\xbc\x80\xc0\x80\x00\xe5\x87", 10);
	len = 10;
	memcpy(obj + l->bytes_size, &len, 8);
	s = decode(l, obj, 64);
	CHECK_EQ_STR(s ? s : "(null)",
		     "gr\xc3\xbc\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	free(s);
	/* Megabytes claimed: not read. */
	len = 1 << 30;
	memcpy(obj + l->bytes_size, &len, 8);
	CHECK(decode(l, obj, 4096) == NULL);
}

int main(void)
{
	RUN(unicode_kinds);
	RUN(byte_strings_27);
	return test_summary();
}
