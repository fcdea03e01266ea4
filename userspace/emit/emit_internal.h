/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the emitter's files (emitter.c, profile_meta.c, sched_markers.c)
 * share and nobody outside userspace/emit/ needs: the plan made before
 * writing, and the few conversions every part of the profile writes the
 * same way. Small enough to be inline; kept in one place so that times and
 * names cannot come out differently in different sections.
 */
#ifndef BPFPROF_EMIT_INTERNAL_H
#define BPFPROF_EMIT_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "../model/model.h"
#include "cgroup_meta.h"
#include "json_writer.h"
#include "marker_schema.h"

struct thread_key;
struct marker_row;

/* Decisions made before writing, so the writing itself cannot fail half-way on bad input. */
struct emit_plan {
	struct thread_key *order; /* m->threads.len, sorted */
	uint32_t *main_thread;	  /* per process: its one isMainThread */
	uint32_t *pid_dup; /* per process: 0, or n for the n-th reuse of its pid (pid "P.n") */
	uint64_t end_ns;   /* relative to start: covers end_ts, every sample and marker */
	uint64_t clamped_samples; /* out of order or before start; moved, not dropped */
	bool sched_schemas;	  /* write the scheduling marker schemas */
	bool syscall_schemas;	  /* write the syscall marker schemas */
	bool syscall_totals;	  /* ... and the totals' one (counted in the kernel) */
	bool lost_schema;	  /* records were lost: the "Lost events" schema */
	struct marker_row *rows;  /* scratch for one thread's markers: the most any has */
	/* meta.initialVisibleThreads (output indexes, in output order) and the one selected */
	uint32_t *visible;
	size_t nr_visible;
	uint32_t selected; /* UINT32_MAX: none */
	/* Process labels and per-cgroup meta entries. */
	struct cgroup_meta cgroups;
};

/* The Process marker's schema (emitter.c), listed in meta.markerSchema by profile_meta.c. */
extern const struct marker_schema process_schema;

/* Profile time: nanoseconds since the profile start, never negative. */
static inline uint64_t rel_ns(const struct model *m, uint64_t ts)
{
	return ts > m->start_ts ? ts - m->start_ts : 0;
}

/* Milliseconds from nanoseconds, exactly. */
static inline void jw_ms(struct json_writer *w, uint64_t ns)
{
	jw_decimal(w, (int64_t)ns, 6);
}

static inline void jw_kv_ms(struct json_writer *w, const char *key, uint64_t ns)
{
	jw_key(w, key);
	jw_ms(w, ns);
}

/* A comm is a fixed 16-byte array that may lack its NUL. */
static inline size_t comm_len(const char *comm)
{
	return strnlen(comm, BPFPROF_COMM_LEN);
}

#endif
