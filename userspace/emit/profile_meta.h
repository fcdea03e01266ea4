/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the profile says about itself rather than about its threads: `meta`
 * (times, units, categories, marker schemas, and the "more info" panel in
 * meta.extra, from struct profile_meta and the model's counters) and
 * `libs` (the binaries the frames point into, with their build-ids).
 * Written once per profile, before `shared` and `threads`.
 */
#ifndef BPFPROF_PROFILE_META_H
#define BPFPROF_PROFILE_META_H

#include "../model/model.h"
#include "emitter.h"
#include "json_writer.h"
#include "profile_tables.h"

struct emit_plan;

/* The "meta" object; the plan gives the profile's end, its schemas and its cgroup entries. */
void profile_meta_write(struct json_writer *w, const struct model *m,
			const struct profile_tables *t, const struct profile_meta *meta,
			const struct emit_plan *p);
/* The "libs" array, one entry per profile_tables lib (emit_breakpad_id is in emitter.h). */
void profile_libs_write(struct json_writer *w, const struct profile_tables *t,
			const struct profile_meta *meta);

#endif
