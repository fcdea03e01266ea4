// SPDX-License-Identifier: BSD-2-Clause
/*
 * Ruby 3.1's object layouts as bpfprof reads them (lang/ruby_layout.c)
 * against ruby-dev's public headers: RString, RArray and their flags, the
 * value types. The VM's own structures (vm_core.h, iseq.h) are not
 * installed; their offsets come from 3.1's sources, and the Ruby
 * integration test (tests/integration/ruby.sh) checks them in a live ruby.
 */
#include <ruby.h>
#include <ruby/version.h>
#include <stddef.h>

#include "lang/ruby_layout.h"
#include "test.h"

static void test_objects(void)
{
	const struct ruby_code_layout *l;
	struct rb_layout frames;

	CHECK(ruby_layout_for(0x030100 | RUBY_API_VERSION_TEENY, &frames, &l));
	CHECK_EQ_INT(RUBY_API_VERSION_MAJOR << 8 | RUBY_API_VERSION_MINOR, 0x0301);
	CHECK_EQ_INT(l->rstring_heap_len, offsetof(struct RString, as.heap.len));
	CHECK_EQ_INT(l->rstring_heap_ptr, offsetof(struct RString, as.heap.ptr));
	CHECK_EQ_INT(l->rstring_embed, offsetof(struct RString, as.embed.ary));
	CHECK_EQ_INT(l->rarray_embed, offsetof(struct RArray, as.ary));
	CHECK_EQ_INT(l->rarray_heap_len, offsetof(struct RArray, as.heap.len));
	CHECK_EQ_INT(l->rarray_heap_ptr, offsetof(struct RArray, as.heap.ptr));
	CHECK_EQ_INT(l->rstring_noembed, RSTRING_NOEMBED);
	CHECK_EQ_INT(l->rstring_embed_mask, RSTRING_EMBED_LEN_MASK);
	CHECK_EQ_INT(l->rstring_embed_shift, RSTRING_EMBED_LEN_SHIFT);
	CHECK_EQ_INT(l->rarray_embed_flag, RARRAY_EMBED_FLAG);
	CHECK_EQ_INT(l->rarray_embed_mask, RARRAY_EMBED_LEN_MASK);
	CHECK_EQ_INT(l->rarray_embed_shift, RARRAY_EMBED_LEN_SHIFT);
	CHECK_EQ_INT(RUBY_TYPE_STRING, RUBY_T_STRING);
	CHECK_EQ_INT(RUBY_TYPE_ARRAY, RUBY_T_ARRAY);
	CHECK_EQ_INT(RUBY_TYPE_IMEMO, RUBY_T_IMEMO);
	CHECK_EQ_INT(RUBY_TYPE_MASK, RUBY_T_MASK);
	/* A control frame and an iseq's pc count in VALUEs. */
	CHECK_EQ_INT(sizeof(VALUE), 8);
}

int main(void)
{
	RUN(test_objects);
	return test_summary();
}
