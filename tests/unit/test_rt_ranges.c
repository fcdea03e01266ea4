// SPDX-License-Identifier: BSD-2-Clause
/* lang/rt_ranges.c: a runtime's anonymous code as the few ranges BPF checks. */
#include <string.h>

#include "lang/rt_ranges.h"
#include "test.h"

static void add(map_entries_t *maps, uint64_t start, uint64_t end, bool exec, const char *path)
{
	struct map_entry e = { .start = start, .end = end, .executable = exec };

	e.path = (char *)path;
	e.inode = path[0] == '/' ? 7 : 0;
	CHECK_EQ_INT(vec_push(maps, e), 0);
}

/* Adjacent mappings are one range; files, [vdso] and non-executable ones are none. */
static void anon_exec_mappings_only(void)
{
	map_entries_t maps = { 0 };
	struct rt_range r[RT_MAX_RANGES];

	add(&maps, 0x1000, 0x2000, true, "/usr/bin/node");
	add(&maps, 0x10000, 0x11000, true, "");
	add(&maps, 0x11000, 0x13000, true, "");
	add(&maps, 0x13000, 0x14000, false, "");
	add(&maps, 0x20000, 0x21000, true, "[vdso]");
	add(&maps, 0x30000, 0x31000, true, "");
	add(&maps, 0x30800, 0x32000, true, ""); /* out of order: skipped */
	CHECK_EQ_INT(rt_anon_exec_ranges(&maps, r, RT_MAX_RANGES), 2);
	CHECK(r[0].lo == 0x10000 && r[0].hi == 0x13000);
	CHECK(r[1].lo == 0x30000 && r[1].hi == 0x31000);
	CHECK_EQ_INT(rt_anon_exec_ranges(&maps, r, 0), 0);
	vec_free(&maps);
}

/* More mappings than ranges: the smallest gaps are filled first; every mapping stays covered. */
static void smallest_gaps_merged_first(void)
{
	map_entries_t maps = { 0 };
	struct rt_range r[RT_MAX_RANGES];
	uint64_t at = 0x100000;

	for (int i = 0; i < 100; i++) {
		add(&maps, at, at + 0x1000, true, "");
		at += 0x1000 + (i % 10 == 9 ? 0x100000 : 0x2000);
	}
	CHECK_EQ_INT(rt_anon_exec_ranges(&maps, r, 3), 3);
	for (int i = 0; i < 2; i++)
		CHECK(r[i].hi < r[i + 1].lo);
	for (size_t i = 0; i < maps.len; i++) {
		bool in = false;

		for (int k = 0; k < 3; k++)
			in |= maps.data[i].start >= r[k].lo && maps.data[i].end <= r[k].hi;
		CHECK(in);
	}
	/*
	 * Ten clusters of ten, 1 MiB apart: eight ranges (no more, whatever is
	 * asked) keep seven of the big gaps open, so no range ends inside a
	 * cluster: each ends 1 MiB before the next one starts.
	 */
	CHECK_EQ_INT(rt_anon_exec_ranges(&maps, r, RT_MAX_RANGES + 4), RT_MAX_RANGES);
	CHECK(r[0].lo == 0x100000 && r[RT_MAX_RANGES - 1].hi == vec_last(&maps).end);
	for (int i = 0; i + 1 < RT_MAX_RANGES; i++)
		CHECK(r[i + 1].lo - r[i].hi == 0x100000);
	vec_free(&maps);
}

int main(void)
{
	RUN(anon_exec_mappings_only);
	RUN(smallest_gaps_merged_first);
	return test_summary();
}
