// SPDX-License-Identifier: BSD-2-Clause
/*
 * A thread's marker table: its Process marker, its whole-life summaries,
 * its scheduling and syscall markers and the lost-record intervals, each
 * kind a row provider in marker_row_kinds, interleaved in time order.
 */
#include <stdio.h>
#include <stdlib.h>

#include "cgroup_meta.h"
#include "emit_internal.h"
#include "emitter.h"
#include "lost_markers.h"
#include "sched_markers.h"
#include "syscall_markers.h"

#define PROCESS_SCHEMA "bpfprof.Process"

/*
 * One field a line; the last four only when the process's cgroup is known
 * (cgroupOwner: when a user owns that part of the hierarchy).
 */
/* clang-format off */
static const struct schema_field process_fields[] = {
	{ "name", "Name", "string", true }, /* in the title */
	{ "pid", "PID", "string", true },
	{ "commandLine", "Command line", "string" },
	{ "cgroup", "Cgroup", "string" },
	{ "containerId", "Container ID", "string" },
	{ "containerRuntime", "Container runtime", "string" },
	{ "cgroupOwner", "Cgroup named by", "string" },
	{ NULL },
};
/* clang-format on */

/* One instant marker per process, on its main thread: what it ran. */
const struct marker_schema process_schema = {
	.name = PROCESS_SCHEMA,
	.display = display_chart_table,
	.color = "teal",
	.chart_label = "{marker.data.commandLine}",
	.tooltip_label = "{marker.data.name} ({marker.data.pid})",
	.table_label = "{marker.data.name} ({marker.data.pid}): {marker.data.commandLine}",
	.fields = process_fields,
};

/*
 * What a marker row kind reads to describe its rows: the thread whose
 * marker table is being written, and the span of its whole-life summaries.
 */
struct marker_ctx {
	const struct model *m;
	const struct profile_tables *t;
	const struct profile_meta *meta;
	const struct thread *th;
	const struct process *proc;
	const char *pid;
	bool with_process;	       /* the thread carries its process's Process marker */
	uint64_t life_start, life_end; /* summary_span() */
};

/* A row as the marker table's columns see it. */
struct marker_row_info {
	uint64_t start, end; /* CLOCK_MONOTONIC ns; `end` is unused for an instant */
	bool instant;	     /* no end: endTime null, phase 0 */
	uint32_t name;	     /* string index */
};

/*
 * A kind of row in a thread's marker table: how many rows of it the thread
 * has, what each row is, and its data object. Every column of the table is
 * written from these, so a new marker kind is one more entry in
 * marker_row_kinds below, and nothing else here changes.
 */
struct marker_row_kind {
	/* Reads only c->th and c->with_process: plan_build sizes p->rows with it. */
	size_t (*count)(const struct marker_ctx *c);
	void (*describe)(const struct marker_ctx *c, uint32_t i, struct marker_row_info *out);
	void (*write_data)(struct json_writer *w, const struct marker_ctx *c, uint32_t i);
	uint8_t category; /* enum profile_category */
	/*
	 * Rows that start at the same time are ordered by seq: whole-life rows
	 * (the Process marker, then the summaries) before the markers, and
	 * markers by seq + their index when seq_by_index.
	 */
	uint32_t seq;
	bool seq_by_index;
};

/* The main thread of a process carries its Process marker; idle has none. */
static size_t process_rows(const struct marker_ctx *c)
{
	return c->with_process ? 1 : 0;
}

static void process_row(const struct marker_ctx *c, uint32_t i, struct marker_row_info *out)
{
	*out = (struct marker_row_info){ .start = c->proc->first_ts,
					 .instant = true,
					 .name = c->t->process_marker_name };
}

static void process_row_data(struct json_writer *w, const struct marker_ctx *c, uint32_t i)
{
	const struct process *proc = c->proc;
	const char *cmdline = proc->cmdline ? proc->cmdline
					    : "(unknown: the process exited before it was read, "
					      "or is a kernel thread)";
	char container[CONTAINER_ID_MAX];
	const char *runtime;

	marker_data_begin(w, &process_schema);
	/* The plain comm: the cgroup and container have fields of their own. */
	jw_key(w, "name");
	write_process_comm(w, proc);
	jw_kv_string(w, "pid", c->pid);
	jw_kv_string(w, "commandLine", cmdline);
	if (proc->cgroup)
		jw_kv_string(w, "cgroup", proc->cgroup);
	if (process_container(proc, container, &runtime)) {
		jw_kv_string(w, "containerId", container);
		jw_kv_string(w, "containerRuntime", runtime);
	}
	/* A delegated subtree: its user chose the names, container-like or not. */
	if (proc->cgroup && process_cgroup_user_owned(proc)) {
		char owner[32];

		snprintf(owner, sizeof(owner), "uid %u", proc->cgroup_owner);
		jw_kv_string(w, "cgroupOwner", owner);
	}
	jw_end_object(w);
}

/* The "Scheduling" summary: one per thread with scheduling data, over its life. */
static size_t sched_summary_rows(const struct marker_ctx *c)
{
	return profile_thread_has_sched(c->th) ? 1 : 0;
}

static void sched_summary_row(const struct marker_ctx *c, uint32_t i, struct marker_row_info *out)
{
	*out = (struct marker_row_info){ .start = c->life_start,
					 .end = c->life_end,
					 .name = c->t->sched_summary_marker_name };
}

static void sched_summary_row_data(struct json_writer *w, const struct marker_ctx *c, uint32_t i)
{
	sched_summary_data_write(w, c->th, c->meta);
}

/* Off-CPU and Runnable intervals, Wakeup instants: thread.sched_markers[i]. */
static size_t sched_rows(const struct marker_ctx *c)
{
	return c->th->sched_markers.len;
}

static void sched_row(const struct marker_ctx *c, uint32_t i, struct marker_row_info *out)
{
	const struct sched_marker *mk = &c->th->sched_markers.data[i];

	*out = (struct marker_row_info){ .start = mk->start,
					 .end = mk->end,
					 .instant = mk->kind == SCHED_MARKER_WAKEUP,
					 .name = c->t->sched_marker_names[mk->kind] };
}

static void sched_row_data(struct json_writer *w, const struct marker_ctx *c, uint32_t i)
{
	sched_marker_data_write(w, c->t, &c->th->sched_markers.data[i]);
}

/* Per-syscall totals, over the thread's life like the summary: thread.syscall_counts[i]. */
static size_t syscall_totals_rows(const struct marker_ctx *c)
{
	return c->th->syscall_counts.len;
}

static void syscall_totals_row(const struct marker_ctx *c, uint32_t i, struct marker_row_info *out)
{
	*out = (struct marker_row_info){ .start = c->life_start,
					 .end = c->life_end,
					 .name = c->t->syscall_totals_marker_name };
}

static void syscall_totals_row_data(struct json_writer *w, const struct marker_ctx *c, uint32_t i)
{
	syscall_totals_data_write(w, &c->th->syscall_counts.data[i], c->meta->syscall_min_ns);
}

/* Syscalls at least the threshold long: thread.syscall_markers[i]. */
static size_t syscall_rows(const struct marker_ctx *c)
{
	return c->th->syscall_markers.len;
}

static void syscall_row(const struct marker_ctx *c, uint32_t i, struct marker_row_info *out)
{
	const struct syscall_marker *mk = &c->th->syscall_markers.data[i];

	*out = (struct marker_row_info){ .start = mk->start,
					 .end = mk->end,
					 .name = profile_syscall_name(c->t, mk->nr) };
}

static void syscall_row_data(struct json_writer *w, const struct marker_ctx *c, uint32_t i)
{
	syscall_marker_data_write(w, &c->th->syscall_markers.data[i]);
}

/* The lost-record intervals that overlap the thread's life: the i-th of them. */
static const struct lost_interval *lost_nth(const struct marker_ctx *c, uint32_t i, size_t *count)
{
	const struct lost_interval *found = NULL;
	size_t n = 0;

	for (size_t k = 0; k < c->m->lost.len; k++) {
		const struct lost_interval *li = &c->m->lost.data[k];

		if (li->end < c->life_start || li->start > c->life_end)
			continue;
		if (n++ == i)
			found = li;
	}
	if (count)
		*count = n;
	return found;
}

/* Records lost while the thread lived: model.lost, where it overlaps its life. */
static size_t lost_rows(const struct marker_ctx *c)
{
	size_t n = 0;

	if (c->m)
		lost_nth(c, UINT32_MAX, &n);
	return n;
}

static void lost_row(const struct marker_ctx *c, uint32_t i, struct marker_row_info *out)
{
	const struct lost_interval *li = lost_nth(c, i, NULL);

	*out = (struct marker_row_info){ .start = li->start,
					 .end = li->end,
					 .name = c->t->lost_marker_name };
}

static void lost_row_data(struct json_writer *w, const struct marker_ctx *c, uint32_t i)
{
	lost_marker_data_write(w, lost_nth(c, i, NULL));
}

/* Every kind of marker row; rows with equal start and seq are written in this order. */
static const struct marker_row_kind marker_row_kinds[] = {
	{ process_rows, process_row, process_row_data, CAT_OTHER, 0, false },
	{ sched_summary_rows, sched_summary_row, sched_summary_row_data, CAT_OTHER, 1, false },
	{ sched_rows, sched_row, sched_row_data, CAT_OFFCPU, 2, true },
	{ syscall_totals_rows, syscall_totals_row, syscall_totals_row_data, CAT_OTHER, 1, false },
	{ syscall_rows, syscall_row, syscall_row_data, CAT_KERNEL, 2, true },
	{ lost_rows, lost_row, lost_row_data, CAT_OTHER, 2, true },
};

#define NR_MARKER_ROW_KINDS (sizeof(marker_row_kinds) / sizeof(marker_row_kinds[0]))

/* How many marker rows `th` can have (its Process marker counted, should it carry one). */
size_t thread_marker_rows_most(const struct model *m, const struct thread *th)
{
	/* Its life as wide as can be: every lost interval counts. */
	const struct marker_ctx c = {
		.m = m, .th = th, .with_process = true, .life_start = 0, .life_end = UINT64_MAX
	};
	size_t n = 0;

	for (size_t k = 0; k < NR_MARKER_ROW_KINDS; k++)
		n += marker_row_kinds[k].count(&c);
	return n;
}

/*
 * The "Scheduling" summary and the syscall totals span the thread's life in
 * the profile: its first to its last event, stretched over its samples and
 * markers in case those were recorded outside first_ts..last_ts; an empty
 * span becomes the rest of the profile.
 */
static void summary_span(const struct model *m, const struct emit_plan *p, const struct thread *th,
			 uint64_t *start, uint64_t *end)
{
	uint64_t s = th->first_ts, e = th->last_ts;

	for (size_t k = 0; k < th->sched_markers.len; k++) {
		const struct sched_marker *mk = &th->sched_markers.data[k];

		if (mk->start < s)
			s = mk->start;
		if (mk->end > e)
			e = mk->end;
	}
	if (th->samples.len) {
		if (th->samples.data[0].ts < s)
			s = th->samples.data[0].ts;
		if (th->samples.data[th->samples.len - 1].ts > e)
			e = th->samples.data[th->samples.len - 1].ts;
	}
	/* Never past the profile's end, which the front-end takes as the root range. */
	if (e <= s || e > m->start_ts + p->end_ns)
		e = m->start_ts + p->end_ns;
	*start = s;
	*end = e > s ? e : s;
}

/*
 * By start, then seq; rows still equal keep the table's order and, within a
 * kind, the model's (the order collect_marker_rows puts them in), as a stable
 * sort would, without relying on qsort being stable.
 */
static int cmp_marker_row(const void *a, const void *b)
{
	const struct marker_row *x = a, *y = b;
	int c = cmp2(x->start, x->seq, y->start, y->seq);

	return c ? c : cmp2(x->kind, x->index, y->kind, y->index);
}

/* The thread's marker rows in time order, into p->rows; returns how many. */
static size_t collect_marker_rows(struct emit_plan *p, const struct marker_ctx *c)
{
	struct marker_row_info info;
	size_t n = 0;

	for (size_t k = 0; k < NR_MARKER_ROW_KINDS; k++) {
		const struct marker_row_kind *kind = &marker_row_kinds[k];
		size_t count = kind->count(c);

		for (uint32_t i = 0; i < count; i++) {
			kind->describe(c, i, &info);
			p->rows[n++] = (struct marker_row){
				info.start, kind->seq + (kind->seq_by_index ? i : 0), (uint8_t)k, i
			};
		}
	}
	/* Each kind is in time order already; the sort interleaves them. */
	qsort(p->rows, n, sizeof(*p->rows), cmp_marker_row);
	return n;
}

static void describe_row(const struct marker_ctx *c, const struct marker_row *r,
			 struct marker_row_info *out)
{
	marker_row_kinds[r->kind].describe(c, r->index, out);
}

void thread_markers_write(struct json_writer *w, const struct model *m,
			  const struct profile_tables *t, struct emit_plan *p,
			  const struct profile_meta *meta, const struct thread *th,
			  const struct process *proc, const char *pid, bool with_process)
{
	struct marker_ctx c = { m, t, meta, th, proc, pid, with_process, 0, 0 };
	struct marker_row_info info;
	size_t n;

	summary_span(m, p, th, &c.life_start, &c.life_end);
	n = collect_marker_rows(p, &c);

	jw_begin_table(w, "markers", n);
	jw_key_array(w, "name");
	for (size_t i = 0; i < n; i++) {
		describe_row(&c, &p->rows[i], &info);
		jw_uint(w, info.name);
	}
	jw_end_array(w);
	jw_key_array(w, "startTime");
	for (size_t i = 0; i < n; i++)
		jw_ms(w, rel_ns(m, p->rows[i].start));
	jw_end_array(w);
	/* Instants (Process, Wakeup) have no end; an interval never ends before it starts. */
	jw_key_array(w, "endTime");
	for (size_t i = 0; i < n; i++) {
		describe_row(&c, &p->rows[i], &info);
		if (info.instant)
			jw_null(w);
		else
			jw_ms(w, rel_ns(m, info.end > info.start ? info.end : info.start));
	}
	jw_end_array(w);
	jw_key_array(w, "phase");
	for (size_t i = 0; i < n; i++) {
		describe_row(&c, &p->rows[i], &info);
		jw_uint(w, info.instant ? 0 : 1);
	}
	jw_end_array(w);
	jw_key_array(w, "category");
	for (size_t i = 0; i < n; i++)
		jw_uint(w, marker_row_kinds[p->rows[i].kind].category);
	jw_end_array(w);
	jw_key_array(w, "data");
	for (size_t i = 0; i < n; i++)
		marker_row_kinds[p->rows[i].kind].write_data(w, &c, p->rows[i].index);
	jw_end_array(w);
	jw_end_object(w);
}
