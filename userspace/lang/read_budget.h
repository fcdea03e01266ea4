/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What reads of other users' processes may cost the thread that drains
 * the rings: a token bucket per user (the uid its processes run as,
 * folded to its owner: util/uid_owner.h) under one shared by all. A read
 * is charged its bytes, and at least a minimum: what costs the caller is
 * the handoff to a reader thread as much as the bytes, so many small reads
 * spend the budget as a few large ones do. Past it, the user's reads are
 * refused until it refills; one user's budget spent leaves the others
 * theirs, as long as the global one lasts.
 */
#ifndef BPFPROF_LANG_READ_BUDGET_H
#define BPFPROF_LANG_READ_BUDGET_H

#include <stdbool.h>
#include <stdint.h>

/* Users with a bucket of their own; past that, the rest share one. */
#define READ_BUDGET_MAX_USERS 1024

struct read_budget_limits {
	uint64_t user_per_s, user_burst;     /* cost units (bytes) */
	uint64_t global_per_s, global_burst; /* all users together */
	uint64_t min_cost;		     /* what a read costs at least */
};

struct read_budget;

struct read_budget *read_budget_new(const struct read_budget_limits *limits);
void read_budget_free(struct read_budget *b);

/*
 * Whether `user` may spend a read of `len` bytes now (at time now_ns,
 * monotonic); if so it is charged, to the user and to all. -ENOMEM is not
 * possible: a user past READ_BUDGET_MAX_USERS shares the last bucket.
 */
bool read_budget_take(struct read_budget *b, uint32_t user, uint64_t len, uint64_t now_ns);

/* What was charged, and refused, since the start (for what -v says). */
struct read_budget_stats {
	uint64_t reads, cost, refused;
};
void read_budget_stats(const struct read_budget *b, struct read_budget_stats *out);

#endif
