// SPDX-License-Identifier: BSD-2-Clause
/*
 * JS frames named from a fake node 20 heap as V8 lays it out: an
 * interpreted frame by its bytecode offset, optimized code with a function
 * inlined (innermost first), typed frames by their marker, anonymous
 * functions, and slots that hold no JS function.
 */
#include <errno.h>
#include <stdlib.h>

#include "lang/v8_names.h"
#include "test.h"
#include "v8_heap.h"
#include "v8_node20.h"

#define CODE_START 0x5000000ull

static struct v8_meta meta;

/* "function outer() {\n  inner();\n}\nfunction inner() {\n  x();\n}\n" */
static const char src[] = "function outer() {\n  inner();\n}\nfunction inner() {\n  x();\n}\n";
#define OUTER_CALL 21 /* "inner();" on line 2 */
#define INNER_CALL 53 /* "x();" on line 5 */

static uint64_t raw_pos(int32_t offset, uint32_t inlining)
{
	return ((uint64_t)inlining << 31) | ((uint64_t)(offset + 1) << 1);
}

static size_t put_vlq(uint8_t *p, int64_t v)
{
	uint64_t z = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
	size_t n = 0;

	do {
		p[n] = (uint8_t)(z & 0x7f) | (z > 0x7f ? 0x80 : 0);
		z >>= 7;
		n++;
	} while (p[n - 1] & 0x80);
	return n;
}

/* A ByteArray holding a position table of (code offset, position) entries. */
static uint64_t table(struct fake_heap *f, const int64_t (*e)[2], int n)
{
	uint8_t t[64];
	size_t len = 0;
	int64_t code = -1, pos = 0;
	uint64_t arr;

	for (int i = 0; i < n; i++) {
		len += put_vlq(t + len, e[i][0] - code);
		len += put_vlq(t + len, e[i][1] - pos);
		code = e[i][0];
		pos = e[i][1];
	}
	arr = fake_object(f, 190, 16 + len);
	fake_word(f, arr, 8, smi((int32_t)len));
	fake_put(f, arr, 16, t, len);
	return arr;
}

static uint64_t function(struct fake_heap *f, uint64_t sfi, uint64_t code)
{
	uint64_t fn = fake_object(f, 2066, 64);

	fake_word(f, fn, 24, sfi);
	fake_word(f, fn, 48, code);
	return fn;
}

static uint64_t sfi_named(struct fake_heap *f, uint64_t script, const char *name)
{
	uint64_t sfi = fake_object(f, 262, 48);

	fake_word(f, sfi, 16, name ? fake_string(f, name) : smi(0));
	fake_word(f, sfi, 32, script);
	return sfi;
}

static uint64_t script_of(struct fake_heap *f)
{
	uint64_t s = fake_object(f, 167, 104);

	fake_word(f, s, 8, fake_string(f, src));
	fake_word(f, s, 16, fake_string(f, "/srv/app/hot.js"));
	fake_word(f, s, 56, smi(0)); /* line ends not computed yet */
	return s;
}

static void test_interpreted(void)
{
	struct fake_heap *f = calloc(1, sizeof(*f));
	struct v8_name_cache *c = calloc(1, sizeof(*c));
	struct v8_heap h = { &meta, fake_read, f };
	const int64_t e[][2] = { { 0, (int64_t)raw_pos(0, 0) },
				 { 7, (int64_t)raw_pos(INNER_CALL, 0) } };
	uint64_t script = script_of(f), sfi = sfi_named(f, script, "inner");
	uint64_t ba = fake_object(f, 191, 64), builtin = fake_object(f, 245, 64), words[V8_WORDS];
	struct hotspot_frame out[4];

	fake_word(f, ba, 32, table(f, e, 2));
	/* The interpreter's code is a builtin: pc is not in it. */
	fake_word(f, builtin, 40, CODE_START + 0x100000);
	fake_put(f, builtin, 56, &(int32_t){ 64 }, 4);
	words[V8_W_CONTEXT] = fake_object(f, 100, 16);
	words[V8_W_FUNCTION] = function(f, sfi, builtin);
	words[V8_W_BYTECODE_OFFSET] = smi(53 + 9); /* bytecode offset 9 */
	words[V8_W_BYTECODE_ARRAY] = ba;
	CHECK_EQ_INT(v8_name_js_frame(&h, c, 0x1234, true, words, out, 4), 1);
	CHECK_EQ_STR(out[0].name, "inner");
	CHECK_EQ_STR(out[0].file, "/srv/app/hot.js");
	CHECK_EQ_INT(out[0].line, 5);
	/* Offset 3: the entry at 0. */
	words[V8_W_BYTECODE_OFFSET] = smi(53 + 3);
	CHECK_EQ_INT(v8_name_js_frame(&h, c, 0x1234, true, words, out, 4), 1);
	CHECK_EQ_INT(out[0].line, 1);
	/* No JSFunction in the slot (moved by the GC, or a fake): no frame. */
	words[V8_W_FUNCTION] = sfi;
	CHECK_EQ_INT(v8_name_js_frame(&h, c, 0x1234, true, words, out, 4), -ENOENT);
	words[V8_W_FUNCTION] = smi(5);
	CHECK_EQ_INT(v8_name_js_frame(&h, c, 0x1234, true, words, out, 4), -ENOENT);
	free(c);
	free(f);
}

static void test_optimized_inlined(void)
{
	struct fake_heap *f = calloc(1, sizeof(*f));
	struct v8_name_cache *c = calloc(1, sizeof(*c));
	struct v8_heap h = { &meta, fake_read, f };
	const int64_t e[][2] = { { 0, (int64_t)raw_pos(OUTER_CALL, 0) },
				 { 16, (int64_t)raw_pos(INNER_CALL, 1) } };
	uint64_t script = script_of(f), outer = sfi_named(f, script, "outer");
	uint64_t inner = sfi_named(f, script, "inner"), code = fake_object(f, 245, 64);
	uint64_t lits = fake_fixed_array(f, (uint64_t[]){ inner | 2 }, 1), inl, deopt;
	uint64_t slots[8] = { 0 }, words[V8_WORDS] = { 0 };
	uint8_t positions[16] = { 0 };
	uint64_t caller = raw_pos(OUTER_CALL, 0);
	struct hotspot_frame out[4];

	memcpy(positions, &caller, 8); /* entry 1: called from outer, function 0 */
	inl = fake_object(f, 190, 32);
	fake_word(f, inl, 8, smi(16));
	fake_put(f, inl, 16, positions, 16);
	slots[2] = lits;
	slots[6] = outer;
	slots[7] = inl;
	deopt = fake_fixed_array(f, slots, 8);
	fake_word(f, code, 16, deopt);
	fake_word(f, code, 24, table(f, e, 2));
	fake_word(f, code, 40, CODE_START);
	fake_put(f, code, 48, &(uint32_t){ 13 }, 4); /* Turbofan */
	fake_put(f, code, 56, &(int32_t){ 64 }, 4);
	words[V8_W_CONTEXT] = fake_object(f, 100, 16);
	words[V8_W_FUNCTION] = function(f, outer, code);
	/* pc at offset 20 (a leaf): in inner, inlined at outer's call. */
	CHECK_EQ_INT(v8_name_js_frame(&h, c, CODE_START + 20, false, words, out, 4), 2);
	CHECK_EQ_STR(out[0].name, "inner");
	CHECK_EQ_INT(out[0].line, 5);
	CHECK_EQ_STR(out[1].name, "outer");
	CHECK_EQ_INT(out[1].line, 2);
	/* Named again from the cache: one read, that the function still holds that code. */
	f->reads = 0;
	CHECK_EQ_INT(v8_name_js_frame(&h, c, CODE_START + 20, false, words, out, 4), 2);
	CHECK_EQ_STR(out[1].name, "outer");
	CHECK_EQ_INT(f->reads, 1);
	/* Its code replaced (deoptimized, or the GC moved another function there): read again. */
	fake_word(f, words[V8_W_FUNCTION], 48, smi(0));
	CHECK_EQ_INT(v8_name_js_frame(&h, c, CODE_START + 20, false, words, out, 4), 1);
	CHECK_EQ_STR(out[0].name, "outer");
	fake_word(f, words[V8_W_FUNCTION], 48, code);
	/* Room for one: the innermost. */
	CHECK_EQ_INT(v8_name_js_frame(&h, c, CODE_START + 20, false, words, out, 1), 1);
	CHECK_EQ_STR(out[0].name, "inner");
	/* A return address at offset 16 is looked up at 15: outer itself. */
	CHECK_EQ_INT(v8_name_js_frame(&h, c, CODE_START + 16, true, words, out, 4), 1);
	CHECK_EQ_STR(out[0].name, "outer");
	CHECK_EQ_INT(out[0].line, 2);
	/* An inlining entry that is not there: the outer function, no more. */
	fake_word(f, inl, 8, smi(0));
	CHECK(v8_name_js_frame(&h, c, CODE_START + 20, false, words, out, 4) >= 1);
	free(c);
	free(f);
}

static void test_anonymous_and_typed(void)
{
	struct fake_heap *f = calloc(1, sizeof(*f));
	struct v8_name_cache *c = calloc(1, sizeof(*c));
	struct v8_heap h = { &meta, fake_read, f };
	uint64_t script = script_of(f), words[V8_WORDS] = { 0 };
	struct hotspot_frame out[2];
	const char *type;

	words[V8_W_CONTEXT] = fake_object(f, 100, 16);
	words[V8_W_FUNCTION] = function(f, sfi_named(f, script, NULL), smi(0));
	CHECK_EQ_INT(v8_name_js_frame(&h, c, 0x1234, true, words, out, 2), 1);
	CHECK_EQ_STR(out[0].name, "<anonymous>");
	CHECK_EQ_STR(out[0].file, "/srv/app/hot.js");
	/* A typed frame's marker: the type shifted by one, not a context. */
	CHECK(v8_frame_type(&meta, 1 << 1, &type));
	CHECK_EQ_STR(type, "EntryFrame");
	CHECK(!v8_frame_type(&meta, 99 << 1, &type));
	CHECK(!v8_frame_type(&meta, words[V8_W_CONTEXT], &type));
	words[V8_W_CONTEXT] = 1 << 1;
	CHECK_EQ_INT(v8_name_js_frame(&h, c, 0x1234, true, words, out, 2), -ENOENT);
	free(c);
	free(f);
}

int main(void)
{
	char why[128];

	if (v8_meta_from_syms(node20, NODE20_N, &meta, why, sizeof(why))) {
		fprintf(stderr, "node 20's metadata: %s\n", why);
		return 1;
	}
	RUN(test_interpreted);
	RUN(test_optimized_inlined);
	RUN(test_anonymous_and_typed);
	return test_summary();
}
