/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the emitter's files (emitter.c, emit_plan.c, thread_markers.c,
 * profile_meta.c, sched_markers.c) share and nobody outside userspace/emit/ needs: the plan made
 * before writing, and the few conversions every part of the profile writes the same way. Small
 * enough to be inline; kept in one place so that times and names cannot come out differently in
 * different sections.
 */
#ifndef BPFPROF_EMIT_INTERNAL_H
#define BPFPROF_EMIT_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../model/model.h"
#include "cgroup_meta.h"
#include "json_writer.h"
#include "marker_schema.h"

/* Where a thread goes in threads[]: process order first, main thread first within it. */
struct thread_key {
	uint32_t proc_rank;
	uint32_t not_main;
	uint64_t first_ts;
	uint32_t tid;
	uint32_t index;
};

/*
 * One row of a thread's marker table, before sorting by time: row `index`
 * of marker_row_kinds[kind].
 */
struct marker_row {
	uint64_t start; /* CLOCK_MONOTONIC ns */
	uint32_t seq;	/* tie-break at equal start (marker_row_kind.seq) */
	uint8_t kind;
	uint32_t index;
};

/* Lexicographic order of two (first, second) pairs. */
static inline int cmp2(uint64_t a1, uint64_t a2, uint64_t b1, uint64_t b2)
{
	if (a1 != b1)
		return a1 < b1 ? -1 : 1;
	if (a2 != b2)
		return a2 < b2 ? -1 : 1;
	return 0;
}

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
	uint32_t selected;	   /* UINT32_MAX: none */
	size_t hidden_short_procs; /* short-lived children left out of the view (still listed) */
	/* Process labels and per-cgroup meta entries. */
	struct cgroup_meta cgroups;
};

struct profile_meta;
struct profile_tables;

/* The plan (emit_plan.c): 0, or -errno with the reason logged. */
int emit_plan_build(struct emit_plan *p, const struct model *m, const struct profile_tables *t,
		    const struct profile_meta *meta);
void emit_plan_free(struct emit_plan *p);

/* How many marker rows `th` can have (thread_markers.c): emit_plan_build sizes p->rows with it. */
size_t thread_marker_rows_most(const struct model *m, const struct thread *th);

/* Thread `th`'s "markers" table; with_process: it carries its process's Process marker. */
void thread_markers_write(struct json_writer *w, const struct model *m,
			  const struct profile_tables *t, struct emit_plan *p,
			  const struct profile_meta *meta, const struct thread *th,
			  const struct process *proc, const char *pid, bool with_process);

/* The Process marker's schema (thread_markers.c), listed in meta.markerSchema by profile_meta.c. */
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

/* A process's comm, or "Process PID" when it has none. */
static inline void write_process_comm(struct json_writer *w, const struct process *proc)
{
	char fallback[32];

	if (comm_len(proc->name)) {
		jw_string_len(w, proc->name, comm_len(proc->name));
		return;
	}
	snprintf(fallback, sizeof(fallback), "Process %u", proc->pid);
	jw_string(w, fallback);
}

#endif
