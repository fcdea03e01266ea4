// SPDX-License-Identifier: BSD-2-Clause
/*
 * The unwind slots' allocator (unwind/slot_alloc.c): first fit, free runs
 * merged, and extents freed held back 200 ms (a fake clock) before they
 * are handed out again. No BPF, no root.
 */
#include <errno.h>
#include <stdint.h>

#include "test.h"
#include "unwind/slot_alloc.h"

#define MS 1000000ull

static uint32_t get(struct slot_alloc *a, uint32_t n, uint64_t now)
{
	uint32_t start = UINT32_MAX;

	CHECK_EQ_INT(slot_alloc_get(a, n, a->total, now, &start), 0);
	return start;
}

/* The lowest run that holds it, whatever runs come after; a run used up goes. */
static void first_fit(void)
{
	struct slot_alloc a;

	CHECK_EQ_INT(slot_alloc_init(&a, 100), 0);
	CHECK_EQ_INT(get(&a, 10, 0), 0);
	CHECK_EQ_INT(get(&a, 20, 0), 10);
	CHECK_EQ_INT(get(&a, 30, 0), 30);
	/* Free [0, 10) and [30, 60): 25 fits only in the second. */
	CHECK_EQ_INT(slot_alloc_unget(&a, 0, 10), 0);
	CHECK_EQ_INT(slot_alloc_unget(&a, 30, 30), 0);
	CHECK_EQ_INT(get(&a, 25, 0), 30);
	CHECK_EQ_INT(get(&a, 10, 0), 0);
	/* [30, 60) joined [60, 100) when freed: [55, 100) is left. */
	CHECK_EQ_INT(a.free_slots, 45);
	/* Below the limit only: 45 fit under 100, not under 90. */
	{
		uint32_t start;

		CHECK_EQ_INT(slot_alloc_get(&a, 45, 90, 0, &start), -ENOSPC);
		CHECK_EQ_INT(slot_alloc_get(&a, 35, 90, 0, &start), 0);
		CHECK_EQ_INT(start, 55);
	}
	slot_alloc_free(&a);
}

/* Runs that touch are one: freed in any order, the whole array is one run again. */
static void free_runs_merge(void)
{
	struct slot_alloc a;

	CHECK_EQ_INT(slot_alloc_init(&a, 60), 0);
	for (int i = 0; i < 6; i++)
		CHECK_EQ_INT(get(&a, 10, 0), (uint32_t)i * 10);
	CHECK_EQ_INT(a.free.len, 0);
	CHECK_EQ_INT(slot_alloc_unget(&a, 20, 10), 0);
	CHECK_EQ_INT(slot_alloc_unget(&a, 40, 10), 0);
	CHECK_EQ_INT(a.free.len, 2);
	CHECK_EQ_INT(slot_alloc_unget(&a, 30, 10), 0); /* joins both */
	CHECK_EQ_INT(a.free.len, 1);
	CHECK_EQ_INT(slot_alloc_unget(&a, 0, 10), 0);
	CHECK_EQ_INT(slot_alloc_unget(&a, 50, 10), 0); /* joins the one before */
	CHECK_EQ_INT(slot_alloc_unget(&a, 10, 10), 0); /* joins both */
	CHECK_EQ_INT(a.free.len, 1);
	CHECK(a.free.data[0].start == 0 && a.free.data[0].len == 60);
	CHECK_EQ_INT(get(&a, 60, 0), 0);
	slot_alloc_free(&a);
}

/*
 * An extent freed at t is not handed out before t + 200 ms (a walk may
 * still read it), and is after; fits_later counts it already.
 */
static void freed_extents_wait_in_quarantine(void)
{
	struct slot_alloc a;
	uint32_t start;
	uint64_t t = 1000 * MS;

	CHECK_EQ_INT(slot_alloc_init(&a, 30), 0);
	CHECK_EQ_INT(get(&a, 10, t), 0);
	CHECK_EQ_INT(get(&a, 20, t), 10);
	CHECK_EQ_INT(slot_alloc_put(&a, 0, 10, t), 0);
	CHECK_EQ_INT(slot_alloc_put(&a, 10, 20, t + 50 * MS), 0);
	CHECK_EQ_INT(a.held_slots, 30);
	CHECK_EQ_INT(slot_alloc_next_release(&a), t + 200 * MS);
	CHECK(slot_alloc_fits_later(&a, 30, 30));
	CHECK(!slot_alloc_fits_later(&a, 31, 30));
	CHECK_EQ_INT(slot_alloc_get(&a, 10, 30, t + 199 * MS, &start), -ENOSPC);
	CHECK_EQ_INT(slot_alloc_get(&a, 10, 30, t + 200 * MS, &start), 0);
	CHECK_EQ_INT(start, 0);
	/* The second, freed 50 ms later, still waits. */
	CHECK_EQ_INT(slot_alloc_get(&a, 20, 30, t + 249 * MS, &start), -ENOSPC);
	CHECK_EQ_INT(slot_alloc_get(&a, 20, 30, t + 250 * MS, &start), 0);
	CHECK_EQ_INT(start, 10);
	CHECK_EQ_INT(a.held_slots, 0);
	CHECK_EQ_INT(slot_alloc_next_release(&a), 0);
	slot_alloc_free(&a);
}

int main(void)
{
	RUN(first_fit);
	RUN(free_runs_merge);
	RUN(freed_extents_wait_in_quarantine);
	return test_summary();
}
