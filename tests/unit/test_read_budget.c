// SPDX-License-Identifier: BSD-2-Clause
/*
 * The read budget of other users' processes (lang/read_budget.h): many
 * small reads spend it as a few large ones do, one user's spent budget
 * leaves another's, and all users together stay under the global one.
 * Time is the test's: each call says when it is.
 */
#include "lang/read_budget.h"
#include "test.h"

#define S 1000000000ull

static const struct read_budget_limits limits = {
	.user_per_s = 1 << 20,
	.user_burst = 4 << 20,
	.global_per_s = 2 << 20,
	.global_burst = 6 << 20,
	.min_cost = 512,
};

/* Reads of `len` user may take at `now` before one is refused. */
static unsigned long take_all(struct read_budget *b, uint32_t user, uint64_t len, uint64_t now)
{
	unsigned long n = 0;

	while (n < (1ul << 24) && read_budget_take(b, user, len, now))
		n++;
	return n;
}

static void test_small_reads_cost_the_minimum(void)
{
	struct read_budget *b = read_budget_new(&limits);
	struct read_budget_stats st;

	/* One-byte reads: a burst of 4 MiB is 8192 reads of 512, not 4 million. */
	CHECK_EQ_INT(take_all(b, 1000, 1, S), (4 << 20) / 512);
	/* A second later, a second's worth. */
	CHECK_EQ_INT(take_all(b, 1000, 1, 2 * S), (1 << 20) / 512);
	/* Large reads cost their bytes. */
	CHECK_EQ_INT(take_all(b, 1000, 64 << 10, 4 * S), (2 << 20) / (64 << 10));
	read_budget_stats(b, &st);
	CHECK_EQ_INT(st.reads, 8192 + 2048 + 32);
	CHECK_EQ_INT(st.refused, 3);
	read_budget_free(b);
}

static void test_users_apart_under_a_global_cap(void)
{
	struct read_budget *b = read_budget_new(&limits);

	/* User 1 spends its burst; user 2 still has its own. */
	CHECK_EQ_INT(take_all(b, 1, 4096, S), (4 << 20) / 4096);
	CHECK(read_budget_take(b, 2, 4096, S));
	/* User 2's burst meets the global one's end (6 MiB for all). */
	CHECK_EQ_INT(take_all(b, 2, 4096, S), (2 << 20) / 4096 - 1);
	/* And a third user finds none left at that moment. */
	CHECK(!read_budget_take(b, 3, 4096, S));
	read_budget_free(b);
}

int main(void)
{
	RUN(test_small_reads_cost_the_minimum);
	RUN(test_users_apart_under_a_global_cap);
	return test_summary();
}
