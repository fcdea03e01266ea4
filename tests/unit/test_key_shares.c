// SPDX-License-Identifier: BSD-2-Clause
/*
 * Who holds the entries of the BPF map of files without a table
 * (capture/key_shares.c): a quarter each, root's exempt. No BPF, no root.
 */
#include "capture/key_shares.h"
#include "test.h"

static struct hmap_key key(uint64_t n)
{
	return (struct hmap_key){ 8, n };
}

/*
 * S2 review, finding 3: unwind_no_table (4096 entries) had no share: one
 * user's files without CFI took them all, and every other user's such
 * files were copied at every sample. A user holds at most a quarter;
 * another user, and root, still get entries; one given back is free again;
 * a full map takes no more, whoever asks.
 */
static void a_user_holds_at_most_a_quarter(void)
{
	struct key_shares k;
	uint64_t n = 0;

	key_shares_init(&k, 16);
	for (int i = 0; i < 4; i++)
		CHECK(key_shares_take(&k, key(n++), 1000));
	CHECK(!key_shares_take(&k, key(n++), 1000));
	/* Held already: not twice. */
	CHECK(!key_shares_take(&k, key(0), 1001));
	CHECK(key_shares_take(&k, key(n++), 1001));
	/* One given back: room for another of the user's. */
	CHECK(key_shares_give(&k, key(1)));
	CHECK(!key_shares_give(&k, key(1)));
	CHECK(key_shares_take(&k, key(n++), 1000));
	/* Root's: past a quarter, up to the map's size. */
	while (k.held < k.capacity)
		CHECK(key_shares_take(&k, key(n++), 0));
	CHECK_EQ_INT(k.held, 16);
	CHECK(!key_shares_take(&k, key(n++), 0));
	CHECK(!key_shares_take(&k, key(n++), 1002));
	key_shares_free(&k);
}

int main(void)
{
	RUN(a_user_holds_at_most_a_quarter);
	return test_summary();
}
