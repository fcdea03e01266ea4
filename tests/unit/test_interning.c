// SPDX-License-Identifier: BSD-2-Clause
/* Hash map and string interning: the indexes behind every profile table. */
#include <stdlib.h>

#include "test.h"
#include "util/hashmap.h"
#include "util/strtab.h"

static void strtab_dedups_and_keeps_order(void)
{
	struct strtab t = { 0 };

	CHECK_EQ_INT(strtab_intern(&t, "main"), 0);
	CHECK_EQ_INT(strtab_intern(&t, "compute"), 1);
	CHECK_EQ_INT(strtab_intern(&t, "main"), 0);
	CHECK_EQ_INT(strtab_intern(&t, ""), 2);
	CHECK_EQ_INT(strtab_intern_len(&t, "mainly", 4), 0);
	CHECK_EQ_INT(strtab_len(&t), 3);
	CHECK_EQ_STR(strtab_get(&t, 1), "compute");
	strtab_free(&t);
}

static void strtab_many_strings(void)
{
	struct strtab t = { 0 };
	char buf[32];
	int ok = 1;

	for (int i = 0; i < 100000; i++) {
		snprintf(buf, sizeof(buf), "func_%d", i);
		if (strtab_intern(&t, buf) != i)
			ok = 0;
	}
	for (int i = 0; i < 100000; i += 7) {
		snprintf(buf, sizeof(buf), "func_%d", i);
		if (strtab_intern(&t, buf) != i)
			ok = 0;
	}
	CHECK(ok);
	CHECK_EQ_INT(strtab_len(&t), 100000);
	strtab_free(&t);
}

static void hmap_put_get_del(void)
{
	struct hmap m = { 0 };
	uint32_t v = 0;
	int ok = 1;

	for (uint64_t i = 0; i < 50000; i++)
		if (hmap_put(&m, (struct hmap_key){ i, i * 3 }, (uint32_t)i))
			ok = 0;
	CHECK(ok);
	CHECK_EQ_INT(m.len, 50000);
	CHECK(hmap_get(&m, (struct hmap_key){ 1234, 3702 }, &v));
	CHECK_EQ_INT(v, 1234);
	CHECK(!hmap_get(&m, (struct hmap_key){ 1234, 3703 }, &v));
	/* Delete every other key; the rest must stay reachable past the holes. */
	for (uint64_t i = 0; i < 50000; i += 2)
		CHECK(hmap_del(&m, (struct hmap_key){ i, i * 3 }));
	ok = 1;
	for (uint64_t i = 0; i < 50000; i++) {
		bool found = hmap_get(&m, (struct hmap_key){ i, i * 3 }, &v);

		if (found != (i % 2 == 1) || (found && v != i))
			ok = 0;
	}
	CHECK(ok);
	CHECK_EQ_INT(m.len, 25000);
	hmap_free(&m);
}

/*
 * Overwriting a key allocates nothing, even at the load that the next new
 * key grows the map at: the unwind store counts on such a put not failing
 * once its tables' rules are added (issue 38, S1 review finding 5).
 */
static void hmap_overwrite_never_grows(void)
{
	struct hmap m = { 0 };
	uint64_t k = 0;
	size_t cap;

	/* Up to the last key before a new one would grow it. */
	do {
		CHECK_EQ_INT(hmap_put(&m, (struct hmap_key){ k, 0 }, 1), 0);
		k++;
	} while ((m.len + 1) * 10 <= m.cap * 7);
	cap = m.cap;
	for (uint64_t i = 0; i < k; i++)
		CHECK_EQ_INT(hmap_put(&m, (struct hmap_key){ i, 0 }, 2), 0);
	CHECK_EQ_INT(m.cap, cap);
	CHECK_EQ_INT(m.len, k);
	hmap_free(&m);
}

int main(void)
{
	RUN(strtab_dedups_and_keeps_order);
	RUN(strtab_many_strings);
	RUN(hmap_put_get_del);
	RUN(hmap_overwrite_never_grows);
	return test_summary();
}
