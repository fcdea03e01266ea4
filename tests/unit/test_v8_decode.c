// SPDX-License-Identifier: BSD-2-Clause
/*
 * V8's heap objects decoded as JS frames' names need them: position
 * tables, lines, strings of every shape, ScopeInfo names, inlining
 * positions; each walk bounded on a heap made to loop.
 */
#include <errno.h>
#include <stdlib.h>

#include "lang/v8_decode.h"
#include "test.h"
#include "v8_heap.h"
#include "v8_node20.h"

static struct v8_meta meta;

static struct fake_heap *fresh(struct v8_heap *h)
{
	struct fake_heap *f = calloc(1, sizeof(*f));

	*h = (struct v8_heap){ &meta, fake_read, f };
	return f;
}

static void test_position_table(void)
{
	/* Entries (code offset, position): (0, 100) statement, (5, 300) statement, (12, 70000)
	 * expression. */
	uint8_t t[32];
	size_t n = 0;
	uint64_t pos = 0;

	n += put_vlq(t + n, 1); /* -1 -> 0 */
	n += put_vlq(t + n, 100);
	n += put_vlq(t + n, 5);
	n += put_vlq(t + n, 200);
	n += put_vlq(t + n, -(7) - 1); /* +7, an expression */
	n += put_vlq(t + n, 69700);
	CHECK_EQ_INT(v8_spt_position(t, n, -2, &pos), -ENOENT);
	CHECK_EQ_INT(v8_spt_position(t, n, 0, &pos), 0);
	CHECK_EQ_INT(pos, 100);
	CHECK_EQ_INT(v8_spt_position(t, n, 4, &pos), 0);
	CHECK_EQ_INT(pos, 100);
	CHECK_EQ_INT(v8_spt_position(t, n, 5, &pos), 0);
	CHECK_EQ_INT(pos, 300);
	CHECK_EQ_INT(v8_spt_position(t, n, 11, &pos), 0);
	CHECK_EQ_INT(pos, 300);
	CHECK_EQ_INT(v8_spt_position(t, n, 1000, &pos), 0);
	CHECK_EQ_INT(pos, 70000);
	/* Cut in the middle of a number: the entries before it stand. */
	CHECK_EQ_INT(v8_spt_position(t, n - 1, 1000, &pos), 0);
	CHECK_EQ_INT(pos, 300);
	/* Endless continuation bytes: stops. */
	memset(t, 0xff, sizeof(t));
	CHECK_EQ_INT(v8_spt_position(t, sizeof(t), 1000, &pos), -ENOENT);
}

static void test_source_position_fields(void)
{
	/* Script offset 41 (stored +1), inlining id 3, not external. */
	uint64_t pos = ((uint64_t)3 << 31) | ((uint64_t)42 << 1);

	CHECK_EQ_INT(v8_pos_offset(pos), 41);
	CHECK_EQ_INT(v8_pos_inlining(pos), 3);
	CHECK_EQ_INT(v8_pos_offset(0), -1);
}

static void test_line_from_ends(void)
{
	const int32_t ends[] = { 9, 20, 21, 40 };

	CHECK_EQ_INT(v8_line_from_ends(ends, 4, 0), 1);
	CHECK_EQ_INT(v8_line_from_ends(ends, 4, 9), 1);
	CHECK_EQ_INT(v8_line_from_ends(ends, 4, 10), 2);
	CHECK_EQ_INT(v8_line_from_ends(ends, 4, 21), 3);
	CHECK_EQ_INT(v8_line_from_ends(ends, 4, 22), 4);
	CHECK_EQ_INT(v8_line_from_ends(ends, 0, 5), 1);
}

static void test_strings(void)
{
	struct v8_heap h;
	struct fake_heap *f = fresh(&h);
	const uint16_t two[] = { 'h', 0xe9, 'l', 0x20ac };
	uint64_t a = fake_string(f, "foo"), b = fake_string(f, "barbaz"), c, s, t, deep;
	char out[64];

	CHECK_EQ_INT(v8_string(&h, a, out, sizeof(out)), 3);
	CHECK_EQ_STR(out, "foo");
	CHECK_EQ_INT(v8_string(&h, fake_string16(f, two, 4), out, sizeof(out)), 1 + 2 + 1 + 3);
	CHECK_EQ_STR(out, "h\xc3\xa9l\xe2\x82\xac");
	c = fake_cons(f, a, b, 9);
	CHECK_EQ_INT(v8_string(&h, c, out, sizeof(out)), 9);
	CHECK_EQ_STR(out, "foobarbaz");
	/* A sliced string: "rba" of "foobarbaz". */
	s = fake_object(f, 3 | 8, 32);
	fake_put(f, s, 12, &(int32_t){ 3 }, 4);
	fake_word(f, s, 16, c);
	fake_word(f, s, 24, smi(5));
	CHECK_EQ_INT(v8_string(&h, s, out, sizeof(out)), 3);
	CHECK_EQ_STR(out, "rba");
	/* A thin string: its actual one. */
	t = fake_object(f, 5 | 8, 24);
	fake_put(f, t, 12, &(int32_t){ 3 }, 4);
	fake_word(f, t, 16, a);
	CHECK_EQ_INT(v8_string(&h, t, out, sizeof(out)), 3);
	/* Cut to fit. */
	CHECK_EQ_INT(v8_string(&h, c, out, 5), 4);
	CHECK_EQ_STR(out, "foob");
	/* Cons strings deeper than allowed, and one that contains itself: bounded. */
	deep = a;
	for (int i = 0; i < 40; i++)
		deep = fake_cons(f, deep, a, 3 * (i + 2));
	CHECK(v8_string(&h, deep, out, sizeof(out)) < 0);
	fake_word(f, c, 24, c);
	f->reads = 0;
	v8_string(&h, c, out, sizeof(out));
	CHECK(f->reads <= 4 * V8_MAX_STRING_READS);
	/* No string: a Smi, a map of another type. */
	CHECK(v8_string(&h, smi(3), out, sizeof(out)) < 0);
	CHECK(v8_string(&h, fake_object(f, 175, 16), out, sizeof(out)) < 0);
	free(f);
}

static void test_script_lines(void)
{
	struct v8_heap h;
	struct fake_heap *f = fresh(&h);
	const char *src = "function a() {\n  return 1;\n}\nfunction b() {}\n";
	uint64_t ends[4], script = fake_object(f, 167, 104), arr;
	int k = 0;

	for (int i = 0; src[i]; i++)
		if (src[i] == '\n')
			ends[k++] = smi(i);
	/* No line_ends (undefined: a Smi-free odd word here), a source to scan. */
	fake_word(f, script, 56, smi(0));
	fake_word(f, script, 8, fake_string(f, src));
	CHECK_EQ_INT(v8_script_line(&h, script, 0), 1);
	CHECK_EQ_INT(v8_script_line(&h, script, 17), 2);
	CHECK_EQ_INT(v8_script_line(&h, script, 29), 4);
	arr = fake_fixed_array(f, ends, k);
	fake_word(f, script, 56, arr);
	CHECK_EQ_INT(v8_script_line(&h, script, 0), 1);
	CHECK_EQ_INT(v8_script_line(&h, script, 17), 2);
	CHECK_EQ_INT(v8_script_line(&h, script, 29), 4);
	CHECK_EQ_INT(v8_script_line(&h, script, -1), 0);
	/* A line_ends array claiming more lines than any script: no line, few reads. */
	fake_word(f, arr, 8, smi(1 << 30));
	CHECK_EQ_INT(v8_script_line(&h, script, 17), 0);
	free(f);
}

static void test_scope_info(void)
{
	struct v8_heap h;
	struct fake_heap *f = fresh(&h);
	uint64_t w[16] = { 0 };
	char name[64];
	int32_t start;

	/* Flags, 1 parameter, 1 context local (a name and an info), then the function's name. */
	w[0] = smi(0x1234);
	w[1] = smi(1);
	w[2] = smi(1);
	w[3] = fake_string(f, "local");
	w[4] = smi(7);
	w[5] = fake_string(f, "bpfprofMiddle");
	w[6] = smi(120);
	w[7] = smi(240);
	CHECK_EQ_INT(v8_scope_info_name(&h, w, name, sizeof(name), &start), 0);
	CHECK_EQ_STR(name, "bpfprofMiddle");
	CHECK_EQ_INT(start, 120);
	/* A context-local count past the words: no name, no read beyond them. */
	w[2] = smi(1000);
	CHECK_EQ_INT(v8_scope_info_name(&h, w, name, sizeof(name), &start), 0);
	CHECK_EQ_STR(name, "");
	free(f);
}

static void test_inlining(void)
{
	uint8_t d[32] = { 0 };
	uint64_t pos = 1234, got;
	int32_t fid = 2, gid;

	memcpy(d + 16, &pos, 8);
	memcpy(d + 24, &fid, 4);
	CHECK_EQ_INT(v8_inlining_entry(d, sizeof(d), 2, &got, &gid), 0);
	CHECK_EQ_INT(got, 1234);
	CHECK_EQ_INT(gid, 2);
	CHECK_EQ_INT(v8_inlining_entry(d, sizeof(d), 3, &got, &gid), -ERANGE);
	CHECK_EQ_INT(v8_inlining_entry(d, sizeof(d), 0, &got, &gid), -EINVAL);
}

static void test_baseline_offsets(void)
{
	struct v8_meta m = meta;
	/* A prologue of 10 bytes of code, then 4, 6 and 2 for the bytecodes. */
	const uint8_t table[] = { 10, 4, 6, 2 };
	/* Bytecode 5 (3 bytes; 5 wide), 6 (1), Wide 5 (1 + 5), 6. */
	const uint8_t code[] = { 5, 1, 2, 6, 0, 5, 1, 1, 2, 2, 6 };
	int32_t off = 99;

	m.nbytecodes = 198;
	memset(m.bytecode_sizes, 0, sizeof(m.bytecode_sizes));
	m.bytecode_sizes[0][5] = 3;
	m.bytecode_sizes[1][5] = 5;
	m.bytecode_sizes[2][5] = 9;
	m.bytecode_sizes[0][6] = 1;
	CHECK_EQ_INT(v8_baseline_offset(&m, table, 4, code, sizeof(code), 5, &off), 0);
	CHECK_EQ_INT(off, -1);
	CHECK_EQ_INT(v8_baseline_offset(&m, table, 4, code, sizeof(code), 10, &off), 0);
	CHECK_EQ_INT(off, -1);
	CHECK_EQ_INT(v8_baseline_offset(&m, table, 4, code, sizeof(code), 11, &off), 0);
	CHECK_EQ_INT(off, 0);
	CHECK_EQ_INT(v8_baseline_offset(&m, table, 4, code, sizeof(code), 14, &off), 0);
	CHECK_EQ_INT(off, 0);
	CHECK_EQ_INT(v8_baseline_offset(&m, table, 4, code, sizeof(code), 15, &off), 0);
	CHECK_EQ_INT(off, 3);
	CHECK_EQ_INT(v8_baseline_offset(&m, table, 4, code, sizeof(code), 21, &off), 0);
	CHECK_EQ_INT(off, 4);
	/* Past the table, an unknown bytecode, no sizes: no offset. */
	CHECK_EQ_INT(v8_baseline_offset(&m, table, 4, code, sizeof(code), 30, &off), -ENOENT);
	CHECK_EQ_INT(v8_baseline_offset(&m, table, 4, (const uint8_t[]){ 7 }, 1, 11, &off),
		     -EINVAL);
	m.nbytecodes = 0;
	CHECK_EQ_INT(v8_baseline_offset(&m, table, 4, code, sizeof(code), 11, &off), -ENOENT);
}

int main(void)
{
	char why[128];

	if (v8_meta_from_syms(node20, NODE20_N, &meta, why, sizeof(why))) {
		fprintf(stderr, "node 20's metadata: %s\n", why);
		return 1;
	}
	RUN(test_position_table);
	RUN(test_source_position_fields);
	RUN(test_line_from_ends);
	RUN(test_strings);
	RUN(test_script_lines);
	RUN(test_scope_info);
	RUN(test_inlining);
	RUN(test_baseline_offsets);
	return test_summary();
}
