/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the unwind store's files share (table_store.c: the entries and the
 * slots written; table_admit.c: admission and the users' counts;
 * table_evict.c: which tables go; table_compact.c: the tables kept moved
 * down). Not for other callers.
 */
#ifndef BPFPROF_UNWIND_TABLE_STORE_IMPL_H
#define BPFPROF_UNWIND_TABLE_STORE_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "table_store.h"

/* table_store.c */
struct hmap_key store_file_key(uint64_t dev, uint64_t ino);
bool store_same_id(const struct unwind_file_id *a, const struct unwind_file_id *b);

/* table_admit.c: each is described where it is defined. */
uint32_t store_slots_of_owner(const struct unwind_store *s, uint32_t uid);
uint32_t store_tables_of_owner(const struct unwind_store *s, uint32_t uid);
bool store_entry_free(const struct unwind_store *s);
uint32_t store_payer(const struct unwind_store *s, uint32_t uid, bool system, size_t n);
int store_admit(const struct unwind_store *s, uint32_t uid, bool system, size_t n);
int store_charge(struct unwind_store *s, uint32_t uid, size_t n, bool table);
void store_uncharge(struct unwind_store *s, uint32_t uid, size_t n);
bool store_past_share(const struct unwind_store *s, uint32_t uid, size_t n);
size_t store_rules_room(const struct unwind_store *s, uint32_t uid);
bool store_rules_fit(const struct unwind_store *s, const struct unwind_store_file *e, uint32_t uid);
bool store_readmit(const struct unwind_store *s, const struct unwind_store_file *e, uint32_t uid);
int store_charge_rules(struct unwind_store *s, uint32_t uid, size_t n);
int store_open_counts(struct unwind_store *s, uint32_t uid);

/* table_evict.c */
bool store_room_by_eviction(const struct unwind_store *s, const struct unwind_store_file *e,
			    uint32_t uid, uint64_t now);

/* table_compact.c */
void store_evict(struct unwind_store *s, struct unwind_store_file *e, uint64_t now);
/*
 * Entry `e`'s slots (LOADED) are no entry's any more (unpublished at
 * `now`): in quarantine, uncharged from its payer.
 */
void store_dead(struct unwind_store *s, const struct unwind_store_file *e, uint64_t now);

#endif
