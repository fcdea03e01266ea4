// SPDX-License-Identifier: BSD-2-Clause
/*
 * Java frames named from a JVM built in memory (hotspot_image.h), read
 * through a callback as bpfprof reads a live one: an nmethod's inlining
 * chain with its lines, a return address with no debug information of its
 * own, a stale compilation, an answer read only in part.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hotspot_image.h"
#include "lang/hotspot_names.h"
#include "test.h"

static struct hs_image img;
static struct hotspot_jvm jvm;

static int setup(void)
{
	uint64_t exports[HS_EXPORT_COUNT];
	struct hotspot_vmstructs *vm = NULL;
	struct hotspot_layout l;
	char missing[128] = "";
	int err;

	if ((err = hs_image_build(&img)))
		return err;
	memcpy(exports, img.exports, sizeof(exports));
	err = hotspot_vmstructs_read(exports, hs_image_read, &img, &vm);
	if (!err)
		err = hotspot_layout_derive(vm, hs_image_read, &img, &l, missing, sizeof(missing));
	hotspot_vmstructs_free(vm);
	if (err)
		fprintf(stderr, "derive: %d %s\n", err, missing);
	else
		hotspot_jvm_init(&jvm, &l, hs_image_read, &img);
	/* HOTSPOT_IMAGE_SEED=FILE: the image as fuzz_hotspot_vmstructs's seed. */
	if (!err && getenv("HOTSPOT_IMAGE_SEED")) {
		FILE *f = fopen(getenv("HOTSPOT_IMAGE_SEED"), "wb");

		if (f) {
			fwrite(img.mem, 1, img.used, f);
			fclose(f);
		}
	}
	return err;
}

/*
 * An interpreted method read once names each of its bytecode indexes
 * (bpfprof keeps it: a method in a loop runs at many) as a read per index
 * would, with no further read.
 */
static void test_method_lines(void)
{
	struct hotspot_method_lines lines;
	struct hotspot_frame f, g;
	unsigned long reads;

	CHECK_EQ_INT(hotspot_name_method_lines(&jvm, img.inner, &f, &lines), 0);
	CHECK_EQ_STR(f.name, "pkg.Outer.work");
	CHECK_EQ_STR(f.file, "Outer.java");
	CHECK_EQ_INT(f.line, 0);
	CHECK(lines.has_table && lines.table_len > 0);
	CHECK_EQ_INT(lines.code_size, 8);
	reads = img.reads;
	CHECK_EQ_INT(hotspot_method_line(&jvm, &lines, 0), 20);
	CHECK_EQ_INT(hotspot_method_line(&jvm, &lines, 5), 21);
	CHECK_EQ_INT(hotspot_method_line(&jvm, &lines, 7), 21);
	CHECK_EQ_INT(hotspot_method_line(&jvm, &lines, -1), 0);
	CHECK_EQ_INT(img.reads, reads);
	for (int32_t bci = 0; bci < 8; bci++) {
		CHECK_EQ_INT(hotspot_name_method(&jvm, img.inner, bci, &g), 0);
		CHECK_EQ_INT(hotspot_method_line(&jvm, &lines, bci), g.line);
	}
	free(lines.table);
	/* Its line table unreadable: named, with nothing to name an index by. */
	img.fail_lo = lines.code + lines.code_size;
	img.fail_hi = img.fail_lo + 1;
	CHECK_EQ_INT(hotspot_name_method_lines(&jvm, img.inner, &f, &lines), 0);
	CHECK_EQ_STR(f.name, "pkg.Outer.work");
	CHECK(lines.has_table && !lines.table_len && !lines.table);
	CHECK_EQ_INT(hotspot_method_line(&jvm, &lines, 5), 0);
	img.fail_lo = img.fail_hi = 0;
}

static void test_inlined_chain(void)
{
	struct hotspot_frame f[16];
	struct hotspot_named named;
	int n;

	/* The return address at code offset 16: Inner.work (bci 5) inlined into Outer.run. */
	n = hotspot_name_nmethod(&jvm, img.nm, 16, true, -1, f, 16, &named);
	CHECK_EQ_INT(n, 2);
	CHECK_EQ_STR(f[0].name, "pkg.Outer.work");
	CHECK_EQ_INT(f[0].line, 21);
	CHECK_EQ_STR(f[0].file, "Outer.java");
	CHECK_EQ_STR(f[1].name, "pkg.Outer.run");
	CHECK_EQ_INT(f[1].line, 10);
	CHECK(named.complete);
	CHECK_EQ_INT(named.compile_id, 7);
	/* A leaf before it: the debug information nearest after, the same chain. */
	CHECK_EQ_INT(hotspot_name_nmethod(&jvm, img.nm, 10, false, -1, f, 16, NULL), 2);
	/* Only room for one: the outermost, the method its caller called. */
	CHECK_EQ_INT(hotspot_name_nmethod(&jvm, img.nm, 16, true, -1, f, 1, NULL), 1);
	CHECK_EQ_STR(f[0].name, "pkg.Outer.run");
	/* Another compilation than the one asked for. */
	CHECK_EQ_INT(hotspot_name_nmethod(&jvm, img.nm, 16, true, 8, f, 16, NULL), -ESTALE);
}

/*
 * A return address with no PcDesc of its own (HotSpot looks one up
 * exactly): the nmethod's method, not the chain of an earlier call.
 */
static void test_return_without_debug_info(void)
{
	struct hotspot_frame f[16];
	struct hotspot_named named;

	CHECK_EQ_INT(hotspot_name_nmethod(&jvm, img.nm, 20, true, -1, f, 16, &named), 1);
	CHECK_EQ_STR(f[0].name, "pkg.Outer.run");
	CHECK_EQ_INT(f[0].line, 0);
	CHECK(named.complete);
}

/*
 * The outer method of the chain cannot be read (its ConstMethod's page is
 * gone, or the budget ran out on the way): never the inner method alone
 * hanging under the caller, and said to be partial.
 */
static void test_partial_chain(void)
{
	struct hotspot_frame f[16];
	struct hotspot_named named;
	uint64_t cm;
	int n;

	memcpy(&cm, hs_at(&img, img.outer + 8), 8);
	img.fail_lo = cm;
	img.fail_hi = cm + 48;
	n = hotspot_name_nmethod(&jvm, img.nm, 16, true, -1, f, 16, &named);
	/* The nmethod's own method is Outer.run too: unreadable, no answer at all. */
	CHECK(n < 0 || !named.complete);
	CHECK(n != 1 || strcmp(f[0].name, "pkg.Outer.work"));
	/* The PcDescs unreadable: the nmethod's method, said to be partial. */
	img.fail_lo = img.pcs;
	img.fail_hi = img.pcs + 32;
	n = hotspot_name_nmethod(&jvm, img.nm, 16, true, -1, f, 16, &named);
	CHECK_EQ_INT(n, 1);
	CHECK_EQ_STR(f[0].name, "pkg.Outer.run");
	CHECK(!named.complete);
	img.fail_hi = 0;
}

/* Many pcs of one nmethod: its PcDescs and scopes read once, while it stays that compilation. */
static void test_debug_info_read_once(void)
{
	struct hotspot_frame f[16];
	struct hotspot_jvm cached = jvm;

	cached.debug_cache = hotspot_debug_cache_new();
	img.watch_lo = img.pcs;
	img.watch_hi = img.pcs + 32;
	img.watched = 0;
	CHECK_EQ_INT(hotspot_name_nmethod(&cached, img.nm, 16, true, -1, f, 16, NULL), 2);
	CHECK_EQ_INT(hotspot_name_nmethod(&cached, img.nm, 48, true, -1, f, 16, NULL), 1);
	CHECK_EQ_INT(hotspot_name_nmethod(&cached, img.nm, 10, false, -1, f, 16, NULL), 2);
	CHECK_EQ_INT(img.watched, 1);
	/* Another compilation in its place: read anew. */
	hs_put32(&img, img.nm + 304, 8);
	CHECK_EQ_INT(hotspot_name_nmethod(&cached, img.nm, 16, true, -1, f, 16, NULL), 2);
	CHECK_EQ_INT(img.watched, 2);
	hs_put32(&img, img.nm + 304, 7);
	img.watch_hi = 0;
	hotspot_debug_cache_free(cached.debug_cache);
}

int main(void)
{
	if (setup()) {
		fprintf(stderr, "the JVM image did not derive\n");
		return 1;
	}
	RUN(test_method_lines);
	RUN(test_inlined_chain);
	RUN(test_return_without_debug_info);
	RUN(test_partial_chain);
	RUN(test_debug_info_read_once);
	hs_image_free(&img);
	return test_summary();
}
