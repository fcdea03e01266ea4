/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The answers kept for a JVM's code addresses (lang/hotspot_procs.h): per
 * JVM, by the caller's key (the address, bit 63 for a leaf), each with
 * what tells later whether the code there is still the code that was
 * named (4 bytes at blob + check_off: an nmethod's compile id, another
 * blob's name pointer), and shared out: at most max_jvm a JVM, max_user a
 * user's JVMs together (its owner, util/uid_owner.h), max_total all. Past
 * a cap a JVM's new answer takes the place of one of its own (a clock:
 * one asked since the hand last passed is spared once), so a user's many
 * JVMs crowd out only each other.
 */
#ifndef BPFPROF_LANG_HOTSPOT_ANSWERS_H
#define BPFPROF_LANG_HOTSPOT_ANSWERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../util/hashmap.h"
#include "../util/vec.h"

struct hotspot_answer {
	uint64_t key; /* its key in the JVM's answers */
	uint64_t blob;
	uint64_t checked_ns; /* when the check last held */
	uint64_t expires_ns; /* 0: kept (a complete answer) */
	uint32_t check_off, check;
	uint32_t value;
	bool asked; /* asked again since the clock's hand passed */
};

/* One JVM's. Zeroed is empty; `owner` set before the first put. */
struct hotspot_answers {
	struct hmap index; /* key -> slots index */
	VEC(struct hotspot_answer) slots;
	VEC(uint32_t) free; /* slots dropped, reused */
	uint32_t hand;	    /* the clock's, over slots */
	uint32_t owner;	    /* whose share they count against */
};

/* All JVMs'. */
struct hotspot_answer_shares {
	size_t cached;	     /* kept, all JVMs together */
	struct hmap by_user; /* owner -> kept by its JVMs */
	size_t max_jvm, max_user, max_total;
};

void hotspot_answer_shares_free(struct hotspot_answer_shares *s);

/* The answer kept for key (the caller may mark it asked, check it), or NULL. */
struct hotspot_answer *hotspot_answers_get(struct hotspot_answers *a, uint64_t key);
void hotspot_answers_drop(struct hotspot_answer_shares *s, struct hotspot_answers *a, uint64_t key);
/* Keep `ans` (under ans->key), making room past a cap; nothing kept when no room can be made. */
void hotspot_answers_put(struct hotspot_answer_shares *s, struct hotspot_answers *a,
			 const struct hotspot_answer *ans);
/* All of a JVM's go (its owner's share given back). */
void hotspot_answers_free(struct hotspot_answer_shares *s, struct hotspot_answers *a);

#endif
