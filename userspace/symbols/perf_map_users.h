/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the perf maps and jitdumps of one user hold and may read, against
 * that user's share of the limits all maps share (perf_map_limits): one
 * user's maps must not fill the entries and name bytes every other
 * process's map needs, nor keep the reader parsing (any number of
 * processes, each with its own map: hard links to one file of garbage
 * would do). Internal to perf_map.c, which calls it under the lock all
 * its callers hold.
 */
#ifndef BPFPROF_PERF_MAP_USERS_H
#define BPFPROF_PERF_MAP_USERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perf_map.h"

struct pm_user {
	uint32_t uid;
	size_t entries, name_bytes; /* held by its open maps */
	uint64_t tokens;	    /* bytes it may read now */
	uint64_t refill_ns;	    /* when tokens were last refilled */
};

/*
 * The account of `uid`, made with a full budget on first use. Past
 * PM_MAX_USERS accounts (a user with many subuids), later uids share one.
 * Never NULL: out of memory, they share that one too.
 */
struct pm_user *pm_user_of(uint32_t uid);

/*
 * Take `n` bytes from the reading budgets of `u` and of all users
 * (token buckets refilled at l's rates, up to its bursts): false, taking
 * nothing, when either has less.
 */
bool pm_user_take_bytes(struct pm_user *u, uint64_t n, const struct perf_map_limits *l);

/* Refill every user's budget, and that of all, to the current bursts (tests). */
void pm_users_refill(void);

#endif
