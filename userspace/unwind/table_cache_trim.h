/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The table cache's bounds (table_cache.h: at most max_bytes, a user's
 * class a quarter), kept by deleting the least recently used entries;
 * table_cache.c's own, not for its users.
 */
#ifndef BPFPROF_UNWIND_TABLE_CACHE_TRIM_H
#define BPFPROF_UNWIND_TABLE_CACHE_TRIM_H

#include <stdbool.h>

#include "table_cache.h"

/* "BUILDID-SIZE-DEV-INO.ut": the build-id in hex, 3 numbers of 16 hex digits at most. */
#define TC_NAME_MAX (2 * ELF_BUILD_ID_MAX + 3 * 17 + 4)

/* Down to eighths/8 of each bound passed, the least recently used first. */
void table_cache_trim_to(struct table_cache *c, unsigned eighths);

/* A user's class ("u<uid>") as a key of user_kib; false for the system's. */
bool table_cache_user_class(const char *cls, struct hmap_key *key);

#endif
