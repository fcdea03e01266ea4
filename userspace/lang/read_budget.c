// SPDX-License-Identifier: BSD-2-Clause
/* See read_budget.h. */
#include "read_budget.h"

#include <stdlib.h>

#include "../util/hashmap.h"

struct bucket {
	uint64_t tokens, refill_ns;
};

struct read_budget {
	struct read_budget_limits lim;
	struct bucket global;
	struct bucket users[READ_BUDGET_MAX_USERS];
	unsigned nusers;
	struct hmap by_user; /* uid -> users index */
	struct read_budget_stats stats;
};

struct read_budget *read_budget_new(const struct read_budget_limits *limits)
{
	struct read_budget *b = calloc(1, sizeof(*b));

	if (b)
		b->lim = *limits;
	return b;
}

void read_budget_free(struct read_budget *b)
{
	if (!b)
		return;
	hmap_free(&b->by_user);
	free(b);
}

/* The bucket's tokens at now: refilled at per_s, up to burst (full when first met). */
static void refill(struct bucket *k, uint64_t per_s, uint64_t burst, uint64_t now)
{
	uint64_t add;

	if (!k->refill_ns) {
		k->refill_ns = now ? now : 1;
		k->tokens = burst;
		return;
	}
	if (now <= k->refill_ns)
		return;
	/* In µs: a rate of bytes a second below 2^44 cannot overflow a 2^64 product here. */
	add = (now - k->refill_ns) / 1000 * per_s / 1000000;
	if (!add)
		return;
	k->tokens = k->tokens + add > burst ? burst : k->tokens + add;
	k->refill_ns = now;
}

static struct bucket *user_bucket(struct read_budget *b, uint32_t user)
{
	uint32_t idx;

	if (hmap_get(&b->by_user, (struct hmap_key){ user, 0 }, &idx))
		return &b->users[idx];
	if (b->nusers == READ_BUDGET_MAX_USERS - 1 ||
	    hmap_put(&b->by_user, (struct hmap_key){ user, 0 }, b->nusers))
		return &b->users[READ_BUDGET_MAX_USERS - 1];
	return &b->users[b->nusers++];
}

bool read_budget_take(struct read_budget *b, uint32_t user, uint64_t len, uint64_t now_ns)
{
	uint64_t cost = len > b->lim.min_cost ? len : b->lim.min_cost;
	struct bucket *u = user_bucket(b, user);

	refill(u, b->lim.user_per_s, b->lim.user_burst, now_ns);
	refill(&b->global, b->lim.global_per_s, b->lim.global_burst, now_ns);
	if (u->tokens < cost || b->global.tokens < cost) {
		b->stats.refused++;
		return false;
	}
	u->tokens -= cost;
	b->global.tokens -= cost;
	b->stats.reads++;
	b->stats.cost += cost;
	return true;
}

void read_budget_stats(const struct read_budget *b, struct read_budget_stats *out)
{
	*out = b->stats;
}
