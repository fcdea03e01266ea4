// SPDX-License-Identifier: BSD-2-Clause
/*
 * util/term_escape.c: what a name looks like on the admin's terminal. Every
 * control byte, C1 character, bidi override and invalid UTF-8 byte is an
 * escape; valid UTF-8 (accents, CJK, emoji) passes unchanged; the output
 * never holds a byte a terminal acts on.
 */
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "util/term_escape.h"

/*
 * `s` escaped. Each result stays valid for the next 15 calls (a CHECK may
 * compare two), then is freed: LeakSanitizer runs these tests.
 */
static char *esc(const char *s)
{
	static char *kept[16];
	static unsigned next;
	unsigned i = next++ % 16;

	free(kept[i]);
	kept[i] = term_escape_dup(s);
	return kept[i];
}

static void test_plain_and_utf8_pass(void)
{
	CHECK_EQ_STR(esc(""), "");
	CHECK_EQ_STR(esc("main"), "main");
	CHECK_EQ_STR(esc("std::vector<int>::push_back(int const&) [clone .cold]"),
		     "std::vector<int>::push_back(int const&) [clone .cold]");
	/* é, 漢字, U+00A0 (the first character after C1), 😀 (four bytes), U+10FFFF. */
	CHECK_EQ_STR(
		esc("caf\xc3\xa9 \xe6\xbc\xa2\xe5\xad\x97 \xc2\xa0 \xf0\x9f\x98\x80 "
		    "\xf4\x8f\xbf\xbf"),
		"caf\xc3\xa9 \xe6\xbc\xa2\xe5\xad\x97 \xc2\xa0 \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf");
	CHECK(!term_escape_needed("caf\xc3\xa9", 5));
	CHECK(!term_escape_needed("", 0));
}

static void test_controls_escaped(void)
{
	CHECK_EQ_STR(esc("\x1b[2Jevil"), "\\x1b[2Jevil");
	CHECK_EQ_STR(esc("a\tb\nc\rd\x07"), "a\\x09b\\x0ac\\x0dd\\x07");
	CHECK_EQ_STR(esc("del\x7f"), "del\\x7f");
	CHECK_EQ_STR(esc("\x01\x1f"), "\\x01\\x1f");
	/* C1 as characters (CSI is U+009B) and as bare bytes. */
	CHECK_EQ_STR(esc("\xc2\x9b"
			 "2J"),
		     "\\u009b2J");
	CHECK_EQ_STR(esc("\xc2\x80\xc2\x9f"), "\\u0080\\u009f");
	CHECK_EQ_STR(esc("\x9b"
			 "2J"),
		     "\\x9b2J");
	/* A right-to-left override (U+202E) and an isolate (U+2066). */
	CHECK_EQ_STR(esc("a\xe2\x80\xae"
			 "b\xe2\x81\xa6"),
		     "a\\u202eb\\u2066");
	CHECK(term_escape_needed("x\x1b", 2));
	/* A NUL inside the given length is escaped too. */
	CHECK(term_escape_needed("a\0b", 3));
}

static void test_invalid_utf8_escaped(void)
{
	/* Overlong "/", a surrogate, past U+10FFFF, a lone continuation, a cut sequence. */
	CHECK_EQ_STR(esc("\xc0\xaf"), "\\xc0\\xaf");
	CHECK_EQ_STR(esc("\xed\xa0\x80"), "\\xed\\xa0\\x80");
	CHECK_EQ_STR(esc("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");
	CHECK_EQ_STR(esc("\xbf"), "\\xbf");
	CHECK_EQ_STR(esc("ab\xe6\xbc"), "ab\\xe6\\xbc");
	/* A bad byte does not swallow the valid character after it. */
	CHECK_EQ_STR(esc("\xff\xc3\xa9"), "\\xff\xc3\xa9");
	CHECK_EQ_STR(esc("\xe6\xbc"
			 "a"),
		     "\\xe6\\xbca");
}

/* Every byte value alone and after a lead byte: nothing a terminal acts on comes out. */
static void test_no_control_byte_survives(void)
{
	for (int a = 0; a < 256; a++) {
		for (int b = 0; b < 256; b++) {
			char in[3] = { (char)a, (char)b, 0 }, out[32];
			size_t len = term_escape(out, sizeof(out), in, 2);

			CHECK(len < sizeof(out));
			for (size_t i = 0; i < len; i++) {
				unsigned char c = (unsigned char)out[i];

				if (c < 0x20 || c == 0x7f ||
				    (c == 0xc2 && (unsigned char)out[i + 1] < 0xa0)) {
					fprintf(stderr, "  %02x %02x -> byte %02x at %zu\n", a, b,
						c, i);
					CHECK(0);
					return;
				}
			}
		}
	}
}

static void test_buffer_bounds(void)
{
	char buf[8];

	/* Like snprintf: the whole length comes back, the buffer holds whole pieces only. */
	memset(buf, 'Z', sizeof(buf));
	CHECK_EQ_INT(term_escape(buf, sizeof(buf), "ab\x1b\x1b", 4), 10);
	CHECK_EQ_STR(buf, "ab\\x1b");
	CHECK_EQ_INT(term_escape(buf, 3, "\xe6\xbc\xa2\xe6\xbc\xa2", 6), 6);
	CHECK_EQ_STR(buf, "");
	CHECK_EQ_INT(term_escape(buf, 4, "\xe6\xbc\xa2\xe6\xbc\xa2", 6), 6);
	CHECK_EQ_STR(buf, "\xe6\xbc\xa2");
	CHECK_EQ_INT(term_escape(NULL, 0, "\x1b", 1), 4);
	buf[0] = 'Z';
	CHECK_EQ_INT(term_escape(buf, 1, "x", 1), 1);
	CHECK_EQ_STR(buf, "");
}

static void test_write(void)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	CHECK(f != NULL);
	if (!f)
		return;
	term_escape_write(f,
			  "a\x1b[2Jb\xc3\xa9"
			  "c\x9b",
			  10);
	fclose(f);
	CHECK_EQ_STR(text, "a\\x1b[2Jb\xc3\xa9"
			   "c\\x9b");
	free(text);
}

int main(void)
{
	RUN(test_plain_and_utf8_pass);
	RUN(test_controls_escaped);
	RUN(test_invalid_utf8_escaped);
	RUN(test_no_control_byte_survives);
	RUN(test_buffer_bounds);
	RUN(test_write);
	return test_summary();
}
