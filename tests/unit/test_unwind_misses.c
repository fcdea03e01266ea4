// SPDX-License-Identifier: BSD-2-Clause
/*
 * capture/unwind_misses.c: the files stacks met without their unwind table,
 * counted per file, named once, ranked most stacks first (earliest first
 * on a tie), and bounded: past UNWIND_MISSES_MAX files the rest are
 * counted, not kept. No BPF, no root.
 */
#include <string.h>

#include "capture/unwind_misses.h"
#include "test.h"

static struct unwind_file_key key(uint64_t ino)
{
	return (struct unwind_file_key){ .dev = (8u << 20) | 1, .ino = ino };
}

static void counted_per_file_named_once_ranked(void)
{
	struct unwind_misses m = { 0 };
	struct unwind_file_key cc1 = key(10), as = key(11), ld = key(12);
	struct unwind_miss top[4];
	size_t n;

	CHECK(unwind_misses_wants_name(&m, &cc1));
	CHECK_EQ_INT(unwind_misses_note(&m, &cc1, 300, "cc1"), 0);
	CHECK(!unwind_misses_wants_name(&m, &cc1));
	/* The name is kept from the first note: later ones pass none. */
	for (int i = 0; i < 4; i++)
		CHECK_EQ_INT(unwind_misses_note(&m, &cc1, 200 + i, NULL), 0);
	CHECK_EQ_INT(unwind_misses_note(&m, &as, 100, "as"), 0);
	CHECK_EQ_INT(unwind_misses_note(&m, &ld, 50, "ld"), 0);
	n = unwind_misses_top(&m, top, 4);
	CHECK_EQ_INT(n, 3);
	CHECK_EQ_STR(top[0].name, "cc1");
	CHECK_EQ_INT(top[0].stacks, 5);
	/* The earliest of its samples, not the first noted. */
	CHECK_EQ_INT(top[0].first_ts, 200);
	/* A tie: the file met first comes first. */
	CHECK_EQ_STR(top[1].name, "ld");
	CHECK_EQ_STR(top[2].name, "as");
	/* The caller's copy: asking for fewer leaves the counts as they are. */
	CHECK_EQ_INT(unwind_misses_top(&m, top, 1), 1);
	CHECK_EQ_INT(m.files.len, 3);
	CHECK_EQ_INT(m.files.data[0].stacks, 5);
	unwind_misses_free(&m);
	CHECK_EQ_INT(unwind_misses_top(&m, top, 4), 0);
}

static void a_long_name_is_cut(void)
{
	struct unwind_misses m = { 0 };
	struct unwind_file_key k = key(1);
	struct unwind_miss top[1];
	char name[200];

	memset(name, 'x', sizeof(name) - 1);
	name[sizeof(name) - 1] = 0;
	CHECK_EQ_INT(unwind_misses_note(&m, &k, 1, name), 0);
	CHECK_EQ_INT(unwind_misses_top(&m, top, 1), 1);
	CHECK_EQ_INT(strlen(top[0].name), UNWIND_MISS_NAME_LEN - 1);
	unwind_misses_free(&m);
}

static void a_name_not_found_is_looked_up_a_few_times(void)
{
	struct unwind_misses m = { 0 };
	struct unwind_file_key k = key(2);
	struct unwind_miss top[1];
	int tries = 0;

	/* Its process gone each time: "" is a lookup that found nothing. */
	while (unwind_misses_wants_name(&m, &k) && tries < 100) {
		CHECK_EQ_INT(unwind_misses_note(&m, &k, 5, ""), 0);
		tries++;
	}
	CHECK_EQ_INT(tries, UNWIND_MISS_NAME_TRIES);
	/* Counted all the same; a later name found is still kept. */
	CHECK_EQ_INT(unwind_misses_note(&m, &k, 6, "late"), 0);
	CHECK_EQ_INT(unwind_misses_top(&m, top, 1), 1);
	CHECK_EQ_INT(top[0].stacks, UNWIND_MISS_NAME_TRIES + 1);
	CHECK_EQ_STR(top[0].name, "late");
	unwind_misses_free(&m);
}

static void files_past_the_bound_are_counted_not_kept(void)
{
	struct unwind_misses m = { 0 };
	struct unwind_file_key k;

	for (uint64_t i = 0; i < UNWIND_MISSES_MAX + 10; i++) {
		k = key(1000 + i);
		CHECK_EQ_INT(unwind_misses_note(&m, &k, i, "f"), 0);
	}
	CHECK_EQ_INT(m.files.len, UNWIND_MISSES_MAX);
	CHECK_EQ_INT(m.others, 10);
	/* A file kept still counts its own. */
	k = key(1000);
	CHECK_EQ_INT(unwind_misses_note(&m, &k, 0, NULL), 0);
	CHECK_EQ_INT(m.files.data[0].stacks, 2);
	CHECK_EQ_INT(m.others, 10);
	unwind_misses_free(&m);
}

int main(void)
{
	RUN(counted_per_file_named_once_ranked);
	RUN(a_long_name_is_cut);
	RUN(a_name_not_found_is_looked_up_a_few_times);
	RUN(files_past_the_bound_are_counted_not_kept);
	return test_summary();
}
