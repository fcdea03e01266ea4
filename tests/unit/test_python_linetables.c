// SPDX-License-Identifier: BSD-2-Clause
/*
 * bpfprof's line table decoders (lang/python_linetable.c) against each
 * installed CPython's own answers: python_lines_fixture.py, run by that
 * interpreter, prints the line tables of code of every shape and what
 * PyCode_Addr2Line says of each instruction offset; both the whole walk
 * and the index must say the same. Then the bounds: tables of megabytes
 * and junk cost a bounded walk and give a line or none, never a crash.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lang/python_linetable.h"
#include "python_interpreters.h"
#include "test.h"

#ifndef FIXTURE_SCRIPT
#define FIXTURE_SCRIPT "python_lines_fixture.py"
#endif

struct table {
	uint8_t *bytes;
	size_t len;
	int format, first;
	struct py_line_index index;
};

static size_t unhex(const char *s, uint8_t *out)
{
	size_t n = 0;

	if (!strcmp(s, "-"))
		return 0;
	for (; s[0] && s[1]; s += 2) {
		unsigned b;

		if (sscanf(s, "%2x", &b) != 1)
			break;
		out[n++] = (uint8_t)b;
	}
	return n;
}

static void check_interpreter(const char *version, const char *path, void *ctx)
{
	char cmd[4096], *line = NULL;
	size_t cap = 0, codes = 0, offsets = 0, wrong = 0, index_wrong = 0;
	struct table t = { 0 };
	FILE *f;

	(void)ctx;
	snprintf(cmd, sizeof(cmd), "'%s' '%s'", path, FIXTURE_SCRIPT);
	f = popen(cmd, "r");
	CHECK(f != NULL);
	if (!f)
		return;
	while (getline(&line, &cap, f) > 0) {
		line[strcspn(line, "\n")] = '\0';
		if (line[0] == 'F') {
			char *hex = malloc(strlen(line));

			py_line_index_free(&t.index);
			free(t.bytes);
			t.bytes = malloc(strlen(line));
			CHECK(hex && t.bytes &&
			      sscanf(line, "F %d %d %s", &t.format, &t.first, hex) == 3);
			t.len = unhex(hex, t.bytes);
			free(hex);
			CHECK_EQ_INT(py_line_index_build_format(&t.index, t.format, t.bytes, t.len,
								t.first),
				     0);
			codes++;
		} else if (line[0] == 'L' && t.bytes) {
			long off;
			int want, unit;

			CHECK(sscanf(line, "L %ld %d", &off, &want) == 2);
			/* Before 3.11 tables count bytes; 3.11's count 2-byte code units. */
			unit = (int)(t.format == PY_LINES_311 ? off / 2 : off);
			if (python_line_of_format(t.format, t.bytes, t.len, t.first, unit) !=
			    want) {
				if (wrong++ < 5)
					printf("  %s: offset %ld of the code at line %d: line %d, "
					       "not %d\n",
					       version, off, t.first,
					       python_line_of_format(t.format, t.bytes, t.len,
								     t.first, unit),
					       want);
			}
			index_wrong += py_line_index_lookup(&t.index, unit) != want;
			offsets++;
		}
	}
	CHECK_EQ_INT(pclose(f), 0);
	printf("  %zu code objects, %zu offsets: %zu wrong, %zu wrong from the index\n", codes,
	       offsets, wrong, index_wrong);
	CHECK(codes >= 10 && offsets >= 1000);
	CHECK_EQ_INT(wrong, 0);
	CHECK_EQ_INT(index_wrong, 0);
	py_line_index_free(&t.index);
	free(t.bytes);
	free(line);
}

static void interpreters_agree(void)
{
	/* At least one: a machine with none tests nothing here. */
	CHECK(python_each_interpreter(check_interpreter, NULL) > 0);
}

/*
 * Megabytes of table, junk and tables that end mid-entry: every format
 * walks them in bounded work, and the index answers what the walk does.
 */
static void hostile_tables_are_bounded(void)
{
	size_t len = 4u << 20;
	uint8_t *big = malloc(len);
	unsigned seed = 40;

	CHECK(big != NULL);
	if (!big)
		return;
	for (int fmt = PY_LINES_LNOTAB_27; fmt <= PY_LINES_311; fmt++) {
		struct py_line_index x;
		size_t differ = 0;

		for (size_t i = 0; i < len; i++)
			big[i] = (uint8_t)rand_r(&seed);
		CHECK_EQ_INT(py_line_index_build_format(&x, fmt, big, len, 1), 0);
		/* A whole walk costs the table; a lookup PY_LINE_STRIDE entries. */
		for (int k = 0; k < 100; k++) {
			int64_t unit = rand_r(&seed) % ((int64_t)x.end_unit + 100);

			differ += python_line_of_format(fmt, big, len, 1, unit) !=
				  py_line_index_lookup(&x, unit);
		}
		for (int k = 0; k < 100000; k++)
			(void)py_line_index_lookup(&x, rand_r(&seed) % ((int64_t)x.end_unit + 100));
		CHECK_EQ_INT(differ, 0);
		/* Far past the end, negative: answered, not walked forever. */
		(void)py_line_index_lookup(&x, INT64_MAX);
		(void)py_line_index_lookup(&x, -5);
		py_line_index_free(&x);
		/* Odd lengths: the last byte of a two-byte entry is never read past. */
		CHECK(python_line_of_format(fmt, big, 1, 7, 1000) >= 0);
		CHECK(python_line_of_format(fmt, big, 0, 7, 0) >= 0);
	}
	/* Above PY_LINE_TABLE_MAX: refused, not indexed. */
	{
		struct py_line_index x;

		CHECK(py_line_index_build_format(&x, PY_LINES_LNOTAB_36, big,
						 (size_t)PY_LINE_TABLE_MAX + 1, 1) < 0);
	}
	free(big);
}

/* Each format's rules, by hand: what CPython's readers do with them. */
static void formats_by_hand(void)
{
	/* 2.7: (bytes, unsigned lines) after the range: 0-5 line 10, 6-9 line 210, on. */
	const uint8_t l27[] = { 6, 200, 4, 1 };
	/* 3.6: the same with a line delta of -2 (0xfe). */
	const uint8_t l36[] = { 6, 0xfe, 4, 1 };
	/* 3.10: (bytes, line) before the range; -128 (0x80) a range with no line. */
	const uint8_t l310[] = { 6, 1, 4, 0x80, 2, 2 };

	CHECK_EQ_INT(python_line_of_format(PY_LINES_LNOTAB_27, l27, 4, 10, 5), 10);
	CHECK_EQ_INT(python_line_of_format(PY_LINES_LNOTAB_27, l27, 4, 10, 6), 210);
	CHECK_EQ_INT(python_line_of_format(PY_LINES_LNOTAB_27, l27, 4, 10, 500), 211);
	CHECK_EQ_INT(python_line_of_format(PY_LINES_LNOTAB_36, l36, 4, 10, 7), 8);
	CHECK_EQ_INT(python_line_of_format(PY_LINES_LNOTAB_36, l36, 4, 10, 10), 9);
	CHECK_EQ_INT(python_line_of_format(PY_LINES_310, l310, 6, 10, 0), 11);
	CHECK_EQ_INT(python_line_of_format(PY_LINES_310, l310, 6, 10, 7), 0);
	CHECK_EQ_INT(python_line_of_format(PY_LINES_310, l310, 6, 10, 10), 13);
	CHECK_EQ_INT(python_line_of_format(PY_LINES_310, l310, 6, 10, 12), 0);
}

int main(void)
{
	RUN(formats_by_hand);
	RUN(interpreters_agree);
	RUN(hostile_tables_are_bounded);
	return test_summary();
}
