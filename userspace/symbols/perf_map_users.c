// SPDX-License-Identifier: BSD-2-Clause
/* See perf_map_users.h. */
#include "perf_map_users.h"

#include <stdlib.h>
#include <time.h>

#include "../util/clock.h"
#include "../util/vec.h"

/* Accounts kept for good: few users have maps, and one that forgot its account would refill it. */
#define PM_MAX_USERS 4096

static VEC(struct pm_user *) users;
static struct pm_user shared = { .uid = UINT32_MAX, .refill_ns = 0 };
static bool shared_init;
/* The budget of all users together. */
static uint64_t all_tokens, all_refill_ns;
static bool all_init;

struct pm_user *pm_user_of(uint32_t uid)
{
	const struct perf_map_limits *l;
	struct perf_map_limits cur;
	struct pm_user *u;

	for (size_t i = 0; i < users.len; i++)
		if (users.data[i]->uid == uid)
			return users.data[i];
	perf_map_set_limits(NULL, &cur);
	l = &cur;
	if (users.len >= PM_MAX_USERS || !(u = calloc(1, sizeof(*u))) || vec_push(&users, u)) {
		if (users.len < PM_MAX_USERS)
			free(u);
		if (!shared_init) {
			shared.tokens = l->user_bytes_burst;
			shared.refill_ns = clock_ns(CLOCK_MONOTONIC);
			shared_init = true;
		}
		return &shared;
	}
	u->uid = uid;
	u->tokens = l->user_bytes_burst;
	u->refill_ns = clock_ns(CLOCK_MONOTONIC);
	return u;
}

static void refill(uint64_t *tokens, uint64_t *at, uint64_t now, uint64_t rate, uint64_t burst)
{
	uint64_t elapsed = now > *at ? now - *at : 0, ms = elapsed / 1000000, per_ms = rate / 1000;

	if (!ms)
		return; /* not a millisecond yet: kept for the next refill */
	*at = now;
	if (*tokens >= burst || (per_ms && ms > (burst - *tokens) / per_ms))
		*tokens = burst;
	else
		*tokens += per_ms * ms;
}

bool pm_user_take_bytes(struct pm_user *u, uint64_t n, const struct perf_map_limits *l)
{
	uint64_t now = clock_ns(CLOCK_MONOTONIC);

	if (!all_init) {
		all_tokens = l->total_bytes_burst;
		all_refill_ns = now;
		all_init = true;
	}
	refill(&u->tokens, &u->refill_ns, now, l->user_bytes_per_s, l->user_bytes_burst);
	refill(&all_tokens, &all_refill_ns, now, l->total_bytes_per_s, l->total_bytes_burst);
	if (u->tokens < n || all_tokens < n)
		return false;
	u->tokens -= n;
	all_tokens -= n;
	return true;
}

void pm_users_refill(void)
{
	struct perf_map_limits l;

	perf_map_set_limits(NULL, &l);
	for (size_t i = 0; i < users.len; i++)
		users.data[i]->tokens = l.user_bytes_burst;
	shared.tokens = l.user_bytes_burst;
	all_init = false;
}
