// SPDX-License-Identifier: BSD-2-Clause
/* profile_tables_build: symbolize once, expand inlines, hash-cons, map raw stacks. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "emit/source_namers.h"
#include "emit_fixture.h"
#include "test.h"

static const char *func_name(const struct profile_tables *t, uint32_t frame)
{
	return strtab_get(&t->strings, t->funcs.data[t->frames.data[frame].func].name);
}

/* "root>...>leaf" of a profile stack, by func name. */
static void stack_path(const struct profile_tables *t, uint32_t stack, char *buf, size_t size)
{
	const char *names[64];
	size_t n = 0, off = 0;

	buf[0] = '\0';
	for (uint32_t s = stack; s != NO_INDEX && n < 64; s = t->stacks.data[s].prefix)
		names[n++] = func_name(t, t->stacks.data[s].frame);
	while (n--)
		off += (size_t)snprintf(buf + off, size - off, "%s%s", names[n], n ? ">" : "");
}

static int64_t find_func(const struct profile_tables *t, const char *name)
{
	int64_t found = -1;

	for (size_t i = 0; i < t->funcs.len; i++) {
		if (strcmp(strtab_get(&t->strings, t->funcs.data[i].name), name))
			continue;
		if (found >= 0)
			return -2; /* not deduplicated */
		found = (int64_t)i;
	}
	return found;
}

static const char *resource_name(const struct profile_tables *t, int32_t res)
{
	return res < 0 ? NULL : strtab_get(&t->strings, t->resources.data[res].name);
}

static void test_resolves_each_raw_frame_once(void)
{
	struct fx_resolver r = { 0 };
	struct profile_tables t;
	struct model m;

	CHECK_EQ_INT(fx_model_build(&m), 0);
	r.m = &m;
	CHECK_EQ_INT(profile_tables_build(&t, &m, fx_resolve, &r), 0);
	/*
	 * F0..F9 are referenced by stacks (several of them more than once); F10
	 * by none; F5, the mark of a cut stack, is named by the tables.
	 */
	for (size_t i = 0; i < FX_NFRAMES; i++)
		CHECK_EQ_INT(r.calls[i], i < 10 && i != 5 ? 1 : 0);
	CHECK_EQ_INT(r.total_calls, 9);
	profile_tables_free(&t);
	fx_model_free(&m);
}

static void test_raw_stacks_map_to_root_first_paths(void)
{
	static const char *const expected[FX_NSTACKS] = {
		"main",
		"main>compute>inline_helper",
		"main>compute>inline_helper>write",
		"main>compute>inline_helper>write>do_syscall_64",
		"main>compute>inline_helper>write>do_syscall_64>ksys_write",
		"[stack truncated]",
		"[stack truncated]>worker_loop",
		"main",
		"[stack truncated]>worker_loop>0xdead",
		"idle_loop",
	};
	struct fx_resolver r = { 0 };
	struct profile_tables t;
	struct model m;
	char path[512];

	CHECK_EQ_INT(fx_model_build(&m), 0);
	r.m = &m;
	CHECK_EQ_INT(profile_tables_build(&t, &m, fx_resolve, &r), 0);
	CHECK_EQ_INT(t.raw_stack_map.len, FX_NSTACKS);
	for (size_t i = 0; i < FX_NSTACKS && i < t.raw_stack_map.len; i++) {
		stack_path(&t, profile_stack_of(&t, (uint32_t)i), path, sizeof(path));
		CHECK_EQ_STR(path, expected[i]);
	}
	CHECK_EQ_INT(profile_stack_of(&t, NO_INDEX), NO_INDEX);
	/* S0 and S7 are both "main" but at different lines: distinct frames, one func. */
	CHECK(profile_stack_of(&t, 0) != profile_stack_of(&t, 7));
	CHECK_EQ_INT(t.frames.data[t.stacks.data[profile_stack_of(&t, 0)].frame].func,
		     t.frames.data[t.stacks.data[profile_stack_of(&t, 7)].frame].func);
	/* A child raw stack hangs off its parent's profile stack, not a copy of it. */
	CHECK_EQ_INT(t.stacks.data[profile_stack_of(&t, 2)].prefix, profile_stack_of(&t, 1));
	CHECK_EQ_INT(t.stacks.data[profile_stack_of(&t, 8)].prefix, profile_stack_of(&t, 6));
	/* Parents before children. */
	for (size_t i = 0; i < t.stacks.len; i++)
		CHECK(t.stacks.data[i].prefix == NO_INDEX || t.stacks.data[i].prefix < i);
	profile_tables_free(&t);
	fx_model_free(&m);
}

static void test_inline_expansion(void)
{
	struct fx_resolver r = { 0 };
	const struct pt_frame *inner, *outer;
	struct profile_tables t;
	uint32_t st;
	struct model m;

	CHECK_EQ_INT(fx_model_build(&m), 0);
	r.m = &m;
	CHECK_EQ_INT(profile_tables_build(&t, &m, fx_resolve, &r), 0);
	st = profile_stack_of(&t, 1);
	inner = &t.frames.data[t.stacks.data[st].frame];
	outer = &t.frames.data[t.stacks.data[t.stacks.data[st].prefix].frame];
	CHECK_EQ_STR(func_name(&t, t.stacks.data[st].frame), "inline_helper");
	CHECK_EQ_INT(inner->inline_depth, 1);
	CHECK_EQ_INT(outer->inline_depth, 0);
	CHECK_EQ_STR(func_name(&t, t.stacks.data[t.stacks.data[st].prefix].frame), "compute");
	/* Both come from one return address 0x2000: the resolver looked up 0x1fff. */
	CHECK_EQ_INT(inner->address, 0x1fff);
	CHECK_EQ_INT(outer->address, 0x1fff);
	CHECK_EQ_INT(inner->line, 7);
	CHECK_EQ_INT(outer->line, 40);
	CHECK_EQ_STR(strtab_get(&t.strings, t.sources.data[t.funcs.data[inner->func].source]),
		     "helper.h");
	CHECK_EQ_STR(strtab_get(&t.strings, t.sources.data[t.funcs.data[outer->func].source]),
		     "compute.c");
	/* The function line is not known to the resolver, so funcs carry none. */
	CHECK_EQ_INT(t.funcs.data[inner->func].line, 0);
	profile_tables_free(&t);
	fx_model_free(&m);
}

static void test_categories_resources_libs(void)
{
	static const struct {
		const char *func;
		uint32_t category;
		const char *resource;
		const struct object_info *lib;
	} want[] = {
		{ "main", CAT_USER, "app", &fx_app_obj },
		{ "compute", CAT_USER, "app", &fx_app_obj },
		{ "inline_helper", CAT_USER, "app", &fx_app_obj },
		{ "write", CAT_USER, "libc.so.6", &fx_libc_obj },
		{ "do_syscall_64", CAT_KERNEL, FX_KERNEL_RES, NULL },
		{ "ksys_write", CAT_KERNEL, FX_KERNEL_RES, NULL },
		{ "idle_loop", CAT_KERNEL, FX_KERNEL_RES, NULL },
		{ "[stack truncated]", CAT_USER, NULL, NULL },
		{ "0xdead", CAT_USER, NULL, NULL },
		{ "worker_loop", CAT_USER, "app", &fx_app_obj },
	};
	struct fx_resolver r = { 0 };
	struct profile_tables t;
	struct model m;

	CHECK_EQ_INT(fx_model_build(&m), 0);
	r.m = &m;
	CHECK_EQ_INT(profile_tables_build(&t, &m, fx_resolve, &r), 0);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		int64_t f = find_func(&t, want[i].func);
		int32_t res;

		CHECK(f >= 0);
		if (f < 0)
			continue;
		res = t.funcs.data[f].resource;
		if (want[i].resource) {
			CHECK_EQ_STR(resource_name(&t, res), want[i].resource);
		} else {
			CHECK_EQ_INT(res, -1);
		}
		if (want[i].lib) {
			/* The tables' own copy: the same library, not the same pointer. */
			const struct object_info *got =
				res >= 0 && t.resources.data[res].lib >= 0
					? t.libs.data[t.resources.data[res].lib].obj
					: NULL;

			CHECK(got != NULL && got != want[i].lib &&
			      !strcmp(got->path, want[i].lib->path) &&
			      !strcmp(got->name, want[i].lib->name));
		} else if (res >= 0) {
			CHECK_EQ_INT(t.resources.data[res].lib, -1);
		}
		for (size_t k = 0; k < t.frames.len; k++)
			if (t.frames.data[k].func == (uint32_t)f)
				CHECK_EQ_INT(t.frames.data[k].category, want[i].category);
		/* A kernel function's file is the note the source view shows (issue 28). */
		if (want[i].category == CAT_KERNEL) {
			int32_t src = t.funcs.data[f].source;

			CHECK(src >= 0);
			if (src >= 0)
				CHECK_EQ_STR(strtab_get(&t.strings, t.sources.data[src]),
					     FX_KERNEL_RES KERNEL_SOURCE_SUFFIX);
		}
	}
	/* Deduplicated everything: 10 funcs, "main" twice as a frame, 3 resources, 2 libs. */
	CHECK_EQ_INT(t.funcs.len, 10);
	CHECK_EQ_INT(t.frames.len, 11);
	CHECK_EQ_INT(t.stacks.len, 11);
	CHECK_EQ_INT(t.resources.len, 3);
	CHECK_EQ_INT(t.libs.len, 2);
	CHECK_EQ_INT(t.sources.len, 5); /* 4 files and the kernel's note */
	for (size_t i = 0; i < strtab_len(&t.strings); i++)
		for (size_t k = i + 1; k < strtab_len(&t.strings); k++)
			CHECK(strcmp(strtab_get(&t.strings, (uint32_t)i),
				     strtab_get(&t.strings, (uint32_t)k)));
	profile_tables_free(&t);
	fx_model_free(&m);
}

/*
 * The fixture's resolutions, plus an ELF symbol for each user frame of a
 * library: 256-byte symbols "sym_<start>", the one at 0 of unknown size.
 */
static void symbol_resolve(void *ctx, const struct raw_frame *f, struct resolved_frame *out)
{
	static char names[FX_MAX_RAW_FRAMES][32];
	uint64_t start = f->offset & ~0xffull;
	size_t i = (size_t)(f - ((struct fx_resolver *)ctx)->m->frames.data);

	fx_resolve(ctx, f, out);
	if (!out->lib || out->kernel || i >= FX_MAX_RAW_FRAMES)
		return;
	snprintf(names[i], sizeof(names[i]), "sym_%llx", (unsigned long long)start);
	out->address = (int64_t)f->offset;
	out->symbol_address = (int64_t)start;
	out->symbol_size = start ? 0x100 : 0;
	out->symbol_name = names[i];
}

/* Each user frame of a library cites its symbol, one nativeSymbols row per symbol. */
static void test_native_symbols(void)
{
	struct fx_resolver r = { 0 };
	struct profile_tables t;
	size_t with = 0;
	struct model m;

	CHECK_EQ_INT(fx_model_build(&m), 0);
	r.m = &m;
	CHECK_EQ_INT(profile_tables_build(&t, &m, symbol_resolve, &r), 0);
	CHECK(t.native_symbols.len > 0);
	for (size_t i = 0; i < t.frames.len; i++) {
		const struct pt_frame *fr = &t.frames.data[i];
		const struct pt_native_symbol *ns;
		int32_t res = t.funcs.data[fr->func].resource;
		char want[32];

		if (fr->native_symbol < 0) {
			/* Only frames without a library go without: kernel, unknown, synthetic. */
			CHECK(fr->category != CAT_USER || res < 0 || t.resources.data[res].lib < 0);
			continue;
		}
		with++;
		CHECK((size_t)fr->native_symbol < t.native_symbols.len);
		ns = &t.native_symbols.data[fr->native_symbol];
		CHECK(res >= 0 && t.resources.data[res].lib == (int32_t)ns->lib);
		CHECK_EQ_INT(ns->address, (uint64_t)fr->address & ~0xffull);
		CHECK_EQ_INT(ns->size, ns->address ? 0x100 : 0);
		snprintf(want, sizeof(want), "sym_%llx", (unsigned long long)ns->address);
		CHECK_EQ_STR(strtab_get(&t.strings, ns->name), want);
	}
	CHECK(with > 0);
	/* One row per (library, start). */
	for (size_t i = 0; i < t.native_symbols.len; i++)
		for (size_t k = i + 1; k < t.native_symbols.len; k++)
			CHECK(t.native_symbols.data[i].lib != t.native_symbols.data[k].lib ||
			      t.native_symbols.data[i].address != t.native_symbols.data[k].address);
	profile_tables_free(&t);
	fx_model_free(&m);
}

/* Every raw frame resolves to the same function at the same (unknown) address. */
static void same_resolve(void *ctx, const struct raw_frame *f, struct resolved_frame *out)
{
	(*(unsigned *)ctx)++;
	memset(out, 0, sizeof(*out));
	out->count = 1;
	out->items[0].func = "same";
	out->items[0].line = 3;
	out->address = -1;
	out->resource = "lib.so";
}

static void test_identical_resolutions_share_frames_and_stacks(void)
{
	struct raw_frame frames[] = { { FX_OBJ_APP, 0, 0x10 }, { FX_OBJ_APP, 0, 0x20 } };
	struct raw_stack stacks[] = { { NO_INDEX, 0 }, { NO_INDEX, 1 }, { 0, 1 }, { 1, 0 } };
	struct profile_tables t;
	unsigned calls = 0;
	struct model m;

	memset(&m, 0, sizeof(m));
	for (size_t i = 0; i < 2; i++)
		CHECK_EQ_INT(vec_push(&m.frames, frames[i]), 0);
	for (size_t i = 0; i < 4; i++)
		CHECK_EQ_INT(vec_push(&m.stacks, stacks[i]), 0);
	CHECK_EQ_INT(profile_tables_build(&t, &m, same_resolve, &calls), 0);
	CHECK_EQ_INT(calls, 2);
	CHECK_EQ_INT(t.funcs.len, 1);
	CHECK_EQ_INT(t.frames.len, 1);
	CHECK_EQ_INT(t.stacks.len, 2);
	CHECK_EQ_INT(profile_stack_of(&t, 0), profile_stack_of(&t, 1));
	CHECK_EQ_INT(profile_stack_of(&t, 2), profile_stack_of(&t, 3));
	CHECK_EQ_INT(t.stacks.data[profile_stack_of(&t, 2)].prefix, profile_stack_of(&t, 0));
	profile_tables_free(&t);
	fx_model_free(&m);
}

/* Distinct (address, depth, line) per raw frame: many frames, none wrongly merged. */
static void distinct_resolve(void *ctx, const struct raw_frame *f, struct resolved_frame *out)
{
	memset(out, 0, sizeof(*out));
	out->count = 1 + (unsigned)(f->offset % 3);
	for (unsigned i = 0; i < out->count; i++) {
		out->items[i].func = i ? "inlined" : "fn";
		out->items[i].line = (int)(f->offset % 7);
	}
	out->address = (int64_t)f->offset;
	out->kernel = f->offset % 2;
}

static void test_many_frames_stay_distinct(void)
{
	enum { N = 5000 };
	size_t expected_frames = 0;
	struct profile_tables t;
	struct model m;

	memset(&m, 0, sizeof(m));
	for (uint32_t i = 0; i < N; i++) {
		struct raw_frame f = { FX_OBJ_APP, 0, i };
		struct raw_stack s = { i ? i - 1 : NO_INDEX, i };

		CHECK_EQ_INT(vec_push(&m.frames, f), 0);
		CHECK_EQ_INT(vec_push(&m.stacks, s), 0);
		expected_frames += 1 + i % 3;
	}
	CHECK_EQ_INT(profile_tables_build(&t, &m, distinct_resolve, NULL), 0);
	/* "fn" and "inlined", each in user code and in the kernel (the note as its file). */
	CHECK_EQ_INT(t.funcs.len, 4);
	CHECK_EQ_INT(t.frames.len, expected_frames);
	CHECK_EQ_INT(t.stacks.len, expected_frames);
	for (size_t i = 0; i < t.frames.len; i++) {
		const struct pt_frame *fr = &t.frames.data[i];

		CHECK_EQ_INT(fr->category, fr->address % 2 ? CAT_KERNEL : CAT_USER);
		CHECK_EQ_INT(fr->line, fr->address % 7);
	}
	/* The deepest raw stack's profile stack is a chain through every frame. */
	{
		size_t depth = 0;

		for (uint32_t s = profile_stack_of(&t, N - 1); s != NO_INDEX;
		     s = t.stacks.data[s].prefix)
			depth++;
		CHECK_EQ_INT(depth, expected_frames);
	}
	profile_tables_free(&t);
	fx_model_free(&m);
}

static void null_resolve(void *ctx, const struct raw_frame *f, struct resolved_frame *out)
{
	/* A broken resolver: count 0 and no name. */
	memset(out, 0, sizeof(*out));
	out->address = -1;
}

static void test_broken_resolver_output_still_gives_a_frame(void)
{
	struct raw_frame f = { OBJ_UNKNOWN, 0, 1 };
	struct raw_stack s = { NO_INDEX, 0 };
	struct profile_tables t;
	struct model m;

	memset(&m, 0, sizeof(m));
	CHECK_EQ_INT(vec_push(&m.frames, f), 0);
	CHECK_EQ_INT(vec_push(&m.stacks, s), 0);
	CHECK_EQ_INT(profile_tables_build(&t, &m, null_resolve, NULL), 0);
	CHECK_EQ_INT(t.frames.len, 1);
	CHECK_EQ_STR(func_name(&t, 0), "[unknown]");
	CHECK_EQ_INT(t.funcs.data[0].resource, -1);
	profile_tables_free(&t);
	fx_model_free(&m);
}

static void test_rejects_non_topological_model(void)
{
	struct raw_frame f = { OBJ_UNKNOWN, 0, 1 };
	struct raw_stack forward[] = { { 1, 0 }, { NO_INDEX, 0 } };
	struct raw_stack self = { 0, 0 };
	struct raw_stack bad_frame = { NO_INDEX, 7 };
	struct profile_tables t;
	struct model m;

	memset(&m, 0, sizeof(m));
	CHECK_EQ_INT(vec_push(&m.frames, f), 0);
	CHECK_EQ_INT(vec_push(&m.stacks, forward[0]), 0);
	CHECK_EQ_INT(vec_push(&m.stacks, forward[1]), 0);
	CHECK_EQ_INT(profile_tables_build(&t, &m, null_resolve, NULL), -EINVAL);
	CHECK_EQ_INT(t.stacks.len, 0);

	m.stacks.len = 0;
	CHECK_EQ_INT(vec_push(&m.stacks, self), 0);
	CHECK_EQ_INT(profile_tables_build(&t, &m, null_resolve, NULL), -EINVAL);

	m.stacks.len = 0;
	CHECK_EQ_INT(vec_push(&m.stacks, bad_frame), 0);
	CHECK_EQ_INT(profile_tables_build(&t, &m, null_resolve, NULL), -EINVAL);
	fx_model_free(&m);
}

static void test_empty_model(void)
{
	struct profile_tables t;
	struct model m;

	memset(&m, 0, sizeof(m));
	CHECK_EQ_INT(profile_tables_build(&t, &m, null_resolve, NULL), 0);
	CHECK_EQ_INT(t.stacks.len + t.frames.len + t.funcs.len, 0);
	/* Only the Process marker's name. */
	CHECK_EQ_INT(strtab_len(&t.strings), 1);
	CHECK_EQ_STR(strtab_get(&t.strings, t.process_marker_name), "Process");
	profile_tables_free(&t);
}

/* A resolver that claims a library for off-CPU leaves too: the tables must not believe it. */
static void offcpu_with_resource_resolve(void *ctx, const struct raw_frame *f,
					 struct resolved_frame *out)
{
	fx_resolve(ctx, f, out);
	if (out->offcpu) {
		out->resource = "bogus";
		out->lib = &fx_app_obj;
		out->kernel = true;
	}
}

static int64_t find_string(const struct profile_tables *t, const char *s)
{
	for (size_t i = 0; i < strtab_len(&t->strings); i++)
		if (!strcmp(strtab_get(&t->strings, (uint32_t)i), s))
			return (int64_t)i;
	return -1;
}

static void test_offcpu_frames_and_marker_stacks(void)
{
	static const char *const offcpu_funcs[] = { "off-CPU: sleeping", "off-CPU: preempted" };
	struct fx_resolver r = { 0 };
	struct profile_tables t;
	struct model m;
	char path[512];

	CHECK_EQ_INT(fx_model_build(&m), 0);
	CHECK_EQ_INT(fx_add_sched(&m), 0);
	r.m = &m;
	CHECK_EQ_INT(profile_tables_build(&t, &m, offcpu_with_resource_resolve, &r), 0);
	for (size_t i = 0; i < 2; i++) {
		int64_t f = find_func(&t, offcpu_funcs[i]);
		size_t frames = 0;

		CHECK(f >= 0);
		if (f < 0)
			continue;
		CHECK_EQ_INT(t.funcs.data[f].resource, -1);
		for (size_t k = 0; k < t.frames.len; k++) {
			if (t.frames.data[k].func != (uint32_t)f)
				continue;
			frames++;
			CHECK_EQ_INT(t.frames.data[k].category, CAT_OFFCPU);
		}
		CHECK_EQ_INT(frames, 1);
	}
	CHECK_EQ_INT(find_string(&t, "bogus"), -1);
	CHECK_EQ_INT(t.resources.len, 3);
	CHECK_EQ_INT(t.libs.len, 2);
	/* The kernel frame under the leaf keeps its own category. */
	CHECK_EQ_INT(
		t.frames.data[t.stacks.data[profile_stack_of(&t, FX_S_SCHEDULE)].frame].category,
		CAT_KERNEL);

	/* Every raw stack is mapped, including the one only a marker uses. */
	CHECK_EQ_INT(t.raw_stack_map.len, m.stacks.len);
	stack_path(&t, profile_stack_of(&t, FX_S_FUTEX), path, sizeof(path));
	CHECK_EQ_STR(path, "serve>futex_wait");
	stack_path(&t, profile_stack_of(&t, FX_S_SLEEPING), path, sizeof(path));
	CHECK_EQ_STR(path, "serve>schedule>off-CPU: sleeping");
	stack_path(&t, profile_stack_of(&t, FX_S_PREEMPTED), path, sizeof(path));
	CHECK_EQ_STR(path, "off-CPU: preempted");
	CHECK_EQ_INT(t.stacks.data[profile_stack_of(&t, FX_S_SLEEPING)].prefix,
		     profile_stack_of(&t, FX_S_SCHEDULE));

	/* The scheduling marker names are in the string table. */
	CHECK(profile_model_has_sched(&m));
	CHECK_EQ_STR(strtab_get(&t.strings, t.sched_marker_names[SCHED_MARKER_OFFCPU]), "Off-CPU");
	CHECK_EQ_STR(strtab_get(&t.strings, t.sched_marker_names[SCHED_MARKER_RUNNABLE]),
		     "Runnable");
	CHECK_EQ_STR(strtab_get(&t.strings, t.sched_marker_names[SCHED_MARKER_WAKEUP]), "Wakeup");
	CHECK_EQ_STR(strtab_get(&t.strings, t.sched_summary_marker_name), "Scheduling");
	profile_tables_free(&t);
	fx_model_free(&m);
}

/* No scheduling data, no scheduling strings; a summary alone is scheduling data. */
/*
 * Frames that are no code are named by the tables, never by a frame
 * source: off-CPU leaves by reason (an unknown reason is "other"), in the
 * Off-CPU category and no resource; the mark of a cut stack.
 */
static void test_synthetic_frames_named_by_the_tables(void)
{
	static const char *const names[OFFCPU_REASON_MAX] = {
		[OFFCPU_SLEEPING] = "off-CPU: sleeping",
		[OFFCPU_BLOCKED] = "off-CPU: blocked (D)",
		[OFFCPU_PREEMPTED] = "off-CPU: preempted",
		[OFFCPU_YIELDED] = "off-CPU: yielded",
		[OFFCPU_STOPPED] = "off-CPU: stopped",
		[OFFCPU_EXITING] = "off-CPU: exiting",
		[OFFCPU_OTHER] = "off-CPU: other",
	};
	struct profile_tables t;
	struct model m;
	int64_t stacks[OFFCPU_REASON_MAX + 2];

	model_init(&m, NULL, 0);
	for (unsigned r = 0; r < OFFCPU_REASON_MAX + 1; r++) {
		/* The last one: a reason from a newer kernel. */
		int64_t f =
			model_intern_frame(&m, OBJ_OFFCPU, r < OFFCPU_REASON_MAX ? r : 99, false);

		stacks[r] = f < 0 ? f : model_intern_stack(&m, NO_INDEX, (uint32_t)f);
	}
	stacks[OFFCPU_REASON_MAX + 1] = model_intern_stack(
		&m, NO_INDEX, (uint32_t)model_intern_frame(&m, OBJ_TRUNCATED, 0, false));
	/* null_resolve names nothing: every name below comes from the tables. */
	CHECK_EQ_INT(profile_tables_build(&t, &m, null_resolve, NULL), 0);
	for (unsigned r = 0; r < OFFCPU_REASON_MAX + 2; r++) {
		const struct pt_frame *f;
		const struct pt_func *fn;
		const char *want = r < OFFCPU_REASON_MAX    ? names[r]
				   : r == OFFCPU_REASON_MAX ? "off-CPU: other"
							    : "[stack truncated]";

		CHECK(stacks[r] >= 0);
		if (stacks[r] < 0)
			continue;
		f = &t.frames.data[t.stacks.data[profile_stack_of(&t, (uint32_t)stacks[r])].frame];
		fn = &t.funcs.data[f->func];
		CHECK_EQ_STR(strtab_get(&t.strings, fn->name), want);
		CHECK_EQ_INT(fn->resource, -1);
		CHECK_EQ_INT(f->address, -1);
		CHECK_EQ_INT(f->category, r <= OFFCPU_REASON_MAX ? CAT_OFFCPU : CAT_USER);
	}
	profile_tables_free(&t);
	model_free(&m);
}

static void test_sched_names_only_with_sched_data(void)
{
	struct fx_resolver r = { 0 };
	struct profile_tables t;
	struct model m;

	CHECK_EQ_INT(fx_model_build(&m), 0);
	r.m = &m;
	CHECK(!profile_model_has_sched(&m));
	CHECK_EQ_INT(profile_tables_build(&t, &m, fx_resolve, &r), 0);
	for (size_t i = 0; i <= SCHED_MARKER_WAKEUP; i++)
		CHECK_EQ_INT(t.sched_marker_names[i], NO_INDEX);
	CHECK_EQ_INT(t.sched_summary_marker_name, NO_INDEX);
	CHECK_EQ_INT(find_string(&t, "Off-CPU"), -1);
	CHECK_EQ_INT(find_string(&t, "Scheduling"), -1);
	profile_tables_free(&t);

	m.threads.data[2].sched.wakeups_sent = 1;
	CHECK(profile_model_has_sched(&m));
	CHECK_EQ_INT(profile_tables_build(&t, &m, fx_resolve, &r), 0);
	CHECK(t.sched_summary_marker_name != NO_INDEX);
	CHECK(t.sched_marker_names[SCHED_MARKER_WAKEUP] != NO_INDEX);
	profile_tables_free(&t);
	fx_model_free(&m);
}

/*
 * Each source file's namer is the one uid of the processes whose samples
 * reach it, else none: checked against every sample's whole stack walked
 * here, with tool (uid 1000) and app (uid 2000) sharing some files, and
 * again with app's uid unknown.
 */
static void check_source_namers(uint32_t tool_uid, uint32_t app_uid)
{
	struct fx_resolver r = { 0 };
	struct profile_tables t;
	struct model m;
	size_t single = 0, mixed = 0;

	CHECK_EQ_INT(fx_model_build(&m), 0);
	m.processes.data[0].uid = tool_uid;
	m.processes.data[1].uid = app_uid;
	m.processes.data[2].uid = PROCESS_UID_UNKNOWN;
	r.m = &m;
	CHECK_EQ_INT(profile_tables_build(&t, &m, fx_resolve, &r), 0);
	CHECK_EQ_INT(t.source_namers.len, t.sources.len);
	for (size_t src = 0; src < t.sources.len; src++) {
		uint32_t want = SOURCE_NAMER_NONE;
		bool seen = false;

		for (size_t i = 0; i < m.threads.len; i++) {
			const struct thread *th = &m.threads.data[i];
			uint32_t uid = m.processes.data[th->process].uid;

			for (size_t k = 0; k < th->samples.len; k++) {
				uint32_t raw = th->samples.data[k].stack, st;

				if (raw >= t.raw_stack_map.len)
					continue;
				for (st = t.raw_stack_map.data[raw]; st != NO_INDEX;
				     st = t.stacks.data[st].prefix) {
					const struct pt_frame *f =
						&t.frames.data[t.stacks.data[st].frame];

					if (t.funcs.data[f->func].source != (int32_t)src)
						continue;
					want = !seen || want == uid ? uid : SOURCE_NAMER_NONE;
					seen = true;
				}
			}
		}
		CHECK_EQ_INT(t.source_namers.data[src], want);
		single += want != SOURCE_NAMER_NONE;
		mixed += seen && want == SOURCE_NAMER_NONE;
	}
	fprintf(stderr, "  tool %u, app %u: %zu of %zu files of one uid, %zu of several\n",
		tool_uid, app_uid, single, t.sources.len, mixed);
	/* The fixture has files that only app reaches, and files both reach. */
	CHECK(app_uid == PROCESS_UID_UNKNOWN || single > 0);
	CHECK(tool_uid == app_uid || mixed > 0);
	profile_tables_free(&t);
	fx_model_free(&m);
}

static void test_source_namers(void)
{
	check_source_namers(1000, 2000);
	check_source_namers(1000, PROCESS_UID_UNKNOWN);
	check_source_namers(1000, 1000);
}

int main(void)
{
	RUN(test_resolves_each_raw_frame_once);
	RUN(test_raw_stacks_map_to_root_first_paths);
	RUN(test_inline_expansion);
	RUN(test_categories_resources_libs);
	RUN(test_native_symbols);
	RUN(test_identical_resolutions_share_frames_and_stacks);
	RUN(test_many_frames_stay_distinct);
	RUN(test_broken_resolver_output_still_gives_a_frame);
	RUN(test_rejects_non_topological_model);
	RUN(test_empty_model);
	RUN(test_offcpu_frames_and_marker_stacks);
	RUN(test_sched_names_only_with_sched_data);
	RUN(test_synthetic_frames_named_by_the_tables);
	RUN(test_source_namers);
	return test_summary();
}
