/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The profile's `shared` object: the string, source, resource, func, frame
 * and stack tables every thread indexes into, written column by column
 * from profile_tables. Columns bpfprof has no data for are still written
 * (all null, false or 0), because the front-end expects each of them.
 */
#ifndef BPFPROF_SHARED_TABLES_H
#define BPFPROF_SHARED_TABLES_H

#include <stddef.h>

#include "json_writer.h"
#include "profile_tables.h"

void shared_tables_write(struct json_writer *w, const struct profile_tables *t);

/* A column whose every entry is the same literal (null, false, 0, ...). */
enum const_value { CONST_NULL, CONST_FALSE, CONST_ZERO, CONST_ONE };

/* `n` copies of `v` under `key`; n = 0 writes an empty array. */
void const_column(struct json_writer *w, const char *key, enum const_value v, size_t n);

#endif
