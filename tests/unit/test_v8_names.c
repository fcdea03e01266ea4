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

static struct v8_meta meta;

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
	/* Within a check period: from the cache with no read at all; past it, checked again. */
	c->check_period_ns = V8_CHECK_PERIOD_NS;
	CHECK_EQ_INT(v8_name_js_frame(&h, c, CODE_START + 20, false, words, out, 4), 2);
	f->reads = 0;
	CHECK_EQ_INT(v8_name_js_frame(&h, c, CODE_START + 20, false, words, out, 4), 2);
	CHECK_EQ_STR(out[0].name, "inner");
	CHECK_EQ_INT(f->reads, 0);
	for (size_t i = 0; i < V8_CACHED_FRAMES; i++)
		c->frames[i].checked_ns -= V8_CHECK_PERIOD_NS;
	CHECK_EQ_INT(v8_name_js_frame(&h, c, CODE_START + 20, false, words, out, 4), 2);
	CHECK_EQ_INT(f->reads, 1);
	c->check_period_ns = 0;
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
