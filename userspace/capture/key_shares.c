// SPDX-License-Identifier: BSD-2-Clause
/* See key_shares.h. */
#include "key_shares.h"

#include <string.h>

void key_shares_init(struct key_shares *k, size_t capacity)
{
	memset(k, 0, sizeof(*k));
	k->capacity = capacity;
}

void key_shares_free(struct key_shares *k)
{
	hmap_free(&k->keys);
	hmap_free(&k->users);
	memset(k, 0, sizeof(*k));
}

static uint32_t held_by(const struct key_shares *k, uint32_t uid)
{
	uint32_t n = 0;

	hmap_get(&k->users, (struct hmap_key){ uid, 0 }, &n);
	return n;
}

bool key_shares_take(struct key_shares *k, struct hmap_key key, uint32_t uid)
{
	uint32_t had = held_by(k, uid);

	if (hmap_get(&k->keys, key, &(uint32_t){ 0 }) || k->held >= k->capacity ||
	    (uid && had + 1 > k->capacity / 4))
		return false;
	if (hmap_put(&k->users, (struct hmap_key){ uid, 0 }, had + 1))
		return false;
	if (hmap_put(&k->keys, key, uid)) {
		/* Cannot fail: the key was just put. */
		(void)hmap_put(&k->users, (struct hmap_key){ uid, 0 }, had);
		return false;
	}
	k->held++;
	return true;
}

bool key_shares_give(struct key_shares *k, struct hmap_key key)
{
	uint32_t uid, had;

	if (!hmap_get(&k->keys, key, &uid))
		return false;
	hmap_del(&k->keys, key);
	had = held_by(k, uid);
	/* Cannot fail: the user's count is there. */
	(void)hmap_put(&k->users, (struct hmap_key){ uid, 0 }, had ? had - 1 : 0);
	if (k->held)
		k->held--;
	return true;
}
