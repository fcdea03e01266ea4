// SPDX-License-Identifier: BSD-2-Clause
/*
 * The processed profile, top to bottom, in one pass over the tables and the
 * model's samples. Everything goes through the streaming JSON writer, the
 * small object-shaped parts too: process names, command lines and host names
 * are arbitrary bytes, and the writer is the one place that turns them into
 * valid UTF-8 (jansson would reject such strings instead).
 *
 * This file plans the profile (thread order, main threads, pids, its end)
 * and writes the threads with their samples and marker tables; `meta` and
 * `libs` are profile_meta.c's, `shared` is shared_tables.c's, and each kind
 * of marker's schema and data are in its own file (sched_markers.c,
 * syscall_markers.c).
 */
#include "emitter.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/log.h"
#include "cgroup_meta.h"
#include "emit_internal.h"
#include "json_writer.h"
#include "marker_schema.h"
#include "profile_meta.h"
#include "lost_markers.h"
#include "sched_markers.h"
#include "shared_tables.h"
#include "syscall_markers.h"

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
static int cmp2(uint64_t a1, uint64_t a2, uint64_t b1, uint64_t b2)
{
	if (a1 != b1)
		return a1 < b1 ? -1 : 1;
	if (a2 != b2)
		return a2 < b2 ? -1 : 1;
	return 0;
}

struct proc_key {
	uint64_t first_ts;
	uint32_t pid;
	uint32_t index;
};

static int cmp_proc_key(const void *a, const void *b)
{
	const struct proc_key *x = a, *y = b;
	int c = cmp2(x->first_ts, x->pid, y->first_ts, y->pid);

	return c ? c : cmp2(x->index, 0, y->index, 0);
}

static int cmp_thread_key(const void *a, const void *b)
{
	const struct thread_key *x = a, *y = b;
	int c = cmp2(x->proc_rank, x->not_main, y->proc_rank, y->not_main);

	if (!c)
		c = cmp2(x->first_ts, x->tid, y->first_ts, y->tid);
	return c ? c : cmp2(x->index, 0, y->index, 0);
}

static void plan_free(struct emit_plan *p)
{
	free(p->visible);
	free(p->order);
	free(p->main_thread);
	free(p->pid_dup);
	free(p->rows);
	cgroup_meta_free(&p->cgroups);
}

/*
 * Exactly one main thread per process: the model's choice when it is one of
 * the process's threads, else the earliest thread (model_finish should make
 * the fallback unnecessary, but the front-end drops every other "main"
 * thread of a pid, so this must hold by construction).
 */
static void choose_main_threads(struct emit_plan *p, const struct model *m)
{
	for (size_t i = 0; i < m->processes.len; i++)
		p->main_thread[i] = model_main_thread(m, (uint32_t)i);
}

/* pid strings must be unique per process; a reused pid gets "P.1", "P.2" like samply. */
static int number_reused_pids(struct emit_plan *p, const struct model *m,
			      const struct proc_key *sorted)
{
	struct hmap seen = { 0 };
	int err = 0;

	for (size_t r = 0; r < m->processes.len; r++) {
		struct hmap_key key = { sorted[r].pid, 0 };
		uint32_t n = 0;

		if (hmap_get(&seen, key, &n))
			n++;
		p->pid_dup[sorted[r].index] = n;
		err = hmap_put(&seen, key, n);
		if (err)
			break;
	}
	hmap_free(&seen);
	return err;
}

static size_t marker_rows_most(const struct model *m, const struct thread *th);

/*
 * The app shows only threads with at least 5 % of the busiest one's CPU, so
 * a thread that spent the recording blocked (a reader, a waiter: what the
 * off-CPU and syscall capture is for) started hidden. bpfprof says which to
 * show: with -p, -- COMMAND every target thread (the busiest first when
 * there are more than VISIBLE_TARGETS_MAX); with -a, the VISIBLE_ALL_MAX
 * threads with the most on-CPU plus off-CPU time. A kernel thread's waits
 * are its idle (workers waiting for work), and bpfprof's own are its poll
 * loop: neither is what a person looks for first, so only their CPU counts.
 * The selected thread is the one with the most CPU (the launched command's
 * main thread with -- COMMAND), never bpfprof itself when another ran.
 */
#define VISIBLE_TARGETS_MAX 256
#define VISIBLE_ALL_MAX	    24

struct thread_score {
	uint64_t score; /* CPU and off-CPU ns */
	uint32_t pos;	/* in the output */
};

/* Which thread starts selected: the launched command's main thread, else the most CPU. */
struct selection {
	uint32_t pos; /* in the output; UINT32_MAX: none yet */
	uint64_t rank;
	bool command; /* pos is the launched command's main thread */
};

static void consider_selection(struct selection *sel, uint32_t pos, uint64_t cpu_ns,
			       bool is_command_main, bool is_profiler)
{
	/* After the command: the most CPU, bpfprof last (a rank of 1 still beats none). */
	uint64_t rank = is_profiler ? 1 : cpu_ns + 2;

	if (sel->command && !is_command_main)
		return;
	if (is_command_main && !sel->command) {
		*sel = (struct selection){ pos, rank, true };
		return;
	}
	if (sel->pos == UINT32_MAX || rank > sel->rank)
		*sel = (struct selection){ pos, rank, is_command_main };
}

static int cmp_score_desc(const void *a, const void *b)
{
	const struct thread_score *x = a, *y = b;

	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static int choose_initial_threads(struct emit_plan *p, const struct model *m,
				  const struct profile_meta *meta)
{
	size_t nt = m->threads.len, n = 0, max = m->all_processes ? VISIBLE_ALL_MAX
								  : VISIBLE_TARGETS_MAX;
	struct thread_score *s = calloc(nt ? nt : 1, sizeof(*s));
	struct selection sel = { UINT32_MAX, 0, false };

	p->selected = UINT32_MAX;
	p->visible = calloc(max, sizeof(*p->visible));
	if (!s || !p->visible) {
		free(s);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nt; i++) {
		const struct thread *th = &m->threads.data[p->order[i].index];
		const struct process *proc = &m->processes.data[th->process];
		bool profiler = meta->profiler_pid && proc->pid == meta->profiler_pid;
		uint64_t cpu = 0, score;

		if (proc->is_idle)
			continue;
		for (size_t k = 0; k < th->samples.len; k++)
			cpu += th->samples.data[k].cpu_delta_ns;
		score = cpu + (proc->kernel_thread || profiler ? 0 : th->sched.offcpu_ns);
		/* -a: a thread that neither ran nor waited in view has nothing to show. */
		if (m->all_processes && !score && !th->samples.len)
			continue;
		s[n++] = (struct thread_score){ score + th->samples.len, (uint32_t)i };
		/* -- COMMAND: its main thread (of its busiest image, after an exec). */
		consider_selection(&sel, (uint32_t)i, cpu,
				   meta->selected_pid && proc->pid == meta->selected_pid &&
					   p->main_thread[th->process] == p->order[i].index,
				   profiler);
	}
	qsort(s, n, sizeof(*s), cmp_score_desc);
	if (n > max)
		n = max;
	for (size_t i = 0; i < n; i++)
		p->visible[i] = s[i].pos;
	p->nr_visible = n;
	p->selected = sel.pos;
	/* The selected thread is shown, whatever its rank. */
	if (p->selected != UINT32_MAX) {
		bool shown = false;

		for (size_t i = 0; i < n && !shown; i++)
			shown = p->visible[i] == p->selected;
		if (!shown && n)
			p->visible[n - 1] = p->selected;
	}
	qsort(p->visible, p->nr_visible, sizeof(*p->visible), cmp_u32);
	free(s);
	return 0;
}

static int plan_build(struct emit_plan *p, const struct model *m, const struct profile_tables *t,
		      const struct profile_meta *meta)
{
	size_t np = m->processes.len, nt = m->threads.len, max_rows = 0;
	struct proc_key *procs = NULL;
	uint32_t *rank = NULL;
	uint64_t end = m->end_ts > m->stop_ts ? m->end_ts : m->stop_ts;
	bool has_sched = profile_model_has_sched(m);
	int err = -ENOMEM;

	memset(p, 0, sizeof(*p));
	if (has_sched && t->sched_summary_marker_name == NO_INDEX) {
		log_error("internal error: the profile tables were built without scheduling data");
		return -EINVAL;
	}
	p->sched_schemas = has_sched || meta->sched_enabled;
	p->syscall_schemas = meta->syscalls_enabled || meta->syscalls_from_switch;
	p->syscall_totals = meta->syscalls_enabled;
	p->lost_schema = m->lost.len > 0;
	if (p->lost_schema && t->lost_marker_name == NO_INDEX) {
		log_error("internal error: the profile tables were built without the lost events");
		return -EINVAL;
	}
	for (size_t i = 0; i < nt; i++) {
		const struct thread *th = &m->threads.data[i];

		if (th->process >= np) {
			log_error("internal error: thread %u belongs to no known process", th->tid);
			return -EINVAL;
		}
		for (size_t k = 0; k < th->samples.len; k++) {
			uint32_t st = th->samples.data[k].stack;

			if (st != NO_INDEX && st >= t->raw_stack_map.len) {
				log_error(
					"internal error: sample of thread %u has unknown stack %u",
					th->tid, st);
				return -EINVAL;
			}
			if (th->samples.data[k].ts > end)
				end = th->samples.data[k].ts;
		}
		err = sched_markers_check(th, t, &end);
		if (err)
			return err;
		err = syscall_markers_check(th, &end);
		if (err)
			return err;
		if (marker_rows_most(m, th) > max_rows)
			max_rows = marker_rows_most(m, th);
	}
	err = -ENOMEM;
	p->end_ns = rel_ns(m, end);

	procs = calloc(np ? np : 1, sizeof(*procs));
	rank = calloc(np ? np : 1, sizeof(*rank));
	p->order = calloc(nt ? nt : 1, sizeof(*p->order));
	p->main_thread = calloc(np ? np : 1, sizeof(*p->main_thread));
	p->pid_dup = calloc(np ? np : 1, sizeof(*p->pid_dup));
	p->rows = calloc(max_rows ? max_rows : 1, sizeof(*p->rows));
	if (!procs || !rank || !p->order || !p->main_thread || !p->pid_dup || !p->rows)
		goto out;

	for (size_t i = 0; i < np; i++)
		procs[i] = (struct proc_key){ m->processes.data[i].first_ts,
					      m->processes.data[i].pid, (uint32_t)i };
	qsort(procs, np, sizeof(*procs), cmp_proc_key);
	for (size_t r = 0; r < np; r++)
		rank[procs[r].index] = (uint32_t)r;
	err = number_reused_pids(p, m, procs);
	if (err)
		goto out;

	choose_main_threads(p, m);
	for (size_t i = 0; i < nt; i++) {
		const struct thread *th = &m->threads.data[i];

		p->order[i] =
			(struct thread_key){ rank[th->process], p->main_thread[th->process] != i,
					     th->first_ts, th->tid, (uint32_t)i };
	}
	qsort(p->order, nt, sizeof(*p->order), cmp_thread_key);
	err = choose_initial_threads(p, m, meta);
	if (!err)
		err = cgroup_meta_build(&p->cgroups, m);
out:
	free(procs);
	free(rank);
	if (err)
		plan_free(p);
	return err;
}

/* ---- threads --------------------------------------------------------------- */

static void write_samples(struct json_writer *w, const struct model *m,
			  const struct profile_tables *t, const struct thread *th,
			  struct emit_plan *p)
{
	size_t n = th->samples.len;
	uint64_t prev;

	jw_begin_table(w, "samples", n);
	jw_key_array(w, "stack");
	for (size_t i = 0; i < n; i++) {
		uint32_t st = profile_stack_of(t, th->samples.data[i].stack);

		if (st == NO_INDEX)
			jw_null(w);
		else
			jw_uint(w, st);
	}
	jw_end_array(w);
	/*
	 * timeDeltas[0] is the time since the profile start. model_finish sorts
	 * samples, but the front-end binary-searches them, so a sample out of
	 * order (or before the start) is moved to its predecessor's time rather
	 * than written with a negative delta.
	 */
	jw_key_array(w, "timeDeltas");
	prev = m->start_ts;
	for (size_t i = 0; i < n; i++) {
		uint64_t ts = th->samples.data[i].ts;

		if (ts < prev) {
			p->clamped_samples++;
			ts = prev;
		}
		jw_ms(w, ts - prev);
		prev = ts;
	}
	jw_end_array(w);
	jw_kv_null(w, "weight");
	jw_kv_string(w, "weightType", "samples");
	/* Integer µs, rounded: the unit declared in meta.sampleUnits. */
	jw_key_array(w, "threadCPUDelta");
	for (size_t i = 0; i < n; i++)
		jw_uint(w, (th->samples.data[i].cpu_delta_ns + 500) / 1000);
	jw_end_array(w);
	jw_end_object(w);
}

static void write_process_comm(struct json_writer *w, const struct process *proc)
{
	char fallback[32];

	if (comm_len(proc->name)) {
		jw_string_len(w, proc->name, comm_len(proc->name));
		return;
	}
	snprintf(fallback, sizeof(fallback), "Process %u", proc->pid);
	jw_string(w, fallback);
}

/* ---- markers --------------------------------------------------------------- */

#define PROCESS_SCHEMA "bpfprof.Process"

/*
 * One field a line; the last four only when the process's cgroup is known
 * (cgroupOwner: when a user owns that part of the hierarchy).
 */
/* clang-format off */
static const struct schema_field process_fields[] = {
	{ "name", "Name", "string" },
	{ "pid", "PID", "string" },
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
	.description = "The process as bpfprof first saw it: its name, pid and command line, and "
		       "its cgroup and container when known.",
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
static size_t marker_rows_most(const struct model *m, const struct thread *th)
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

static void write_markers(struct json_writer *w, const struct model *m,
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

/* The process track's label: the comm, with its container or cgroup (cgroup_meta.h). */
static void write_process_name(struct json_writer *w, const struct model *m,
			       const struct emit_plan *p, const struct process *proc)
{
	const char *label = p->cgroups.proc_label[proc - m->processes.data];

	if (label)
		jw_string(w, label);
	else
		write_process_comm(w, proc);
}

/*
 * The main thread carries the process name (it labels the process track);
 * idle threads keep the model's names ("swapper/N" per CPU, registry.c).
 */
static void write_thread_name(struct json_writer *w, const struct model *m,
			      const struct emit_plan *p, const struct process *proc,
			      const struct thread *th, bool is_main)
{
	char buf[48];

	if (proc->is_idle && comm_len(th->name)) {
		jw_string_len(w, th->name, comm_len(th->name));
	} else if (is_main) {
		write_process_name(w, m, p, proc);
	} else if (comm_len(th->name)) {
		jw_string_len(w, th->name, comm_len(th->name));
	} else {
		snprintf(buf, sizeof(buf), "Thread %u", th->tid);
		jw_string(w, buf);
	}
}

/*
 * When a process began: its fork or exec in the recording; else, when
 * lifecycles are known, before the recording (0); else its first event.
 */
static uint64_t process_start(const struct model *m, const struct process *proc)
{
	if (proc->started)
		return proc->start_ts;
	return m->lifecycle ? m->start_ts : proc->first_ts;
}

/* Likewise for a thread: its clone, or before the recording, or its first event. */
static uint64_t thread_start(const struct model *m, const struct process *proc,
			     const struct thread *th)
{
	if (th->registered)
		return th->register_ts;
	return m->lifecycle && !proc->started ? m->start_ts : th->first_ts;
}

/*
 * The track tooltip's `Process: "..."`. The front-end gives Gecko's types
 * ("default", "tab", "plugin") meanings of its own; these are none of them.
 */
static const char *process_type(const struct profile_meta *meta, const struct process *proc)
{
	if (proc->is_idle)
		return "idle";
	if (proc->kernel_thread)
		return "kernel thread";
	if (meta->profiler_pid && proc->pid == meta->profiler_pid)
		return "profiler (bpfprof)";
	return "user";
}

static void write_thread(struct json_writer *w, const struct model *m,
			 const struct profile_tables *t, struct emit_plan *p,
			 const struct profile_meta *meta, uint32_t ti)
{
	const struct thread *th = &m->threads.data[ti];
	const struct process *proc = &m->processes.data[th->process];
	bool is_main = p->main_thread[th->process] == ti;
	uint32_t dup = p->pid_dup[th->process];
	char pid[32];

	if (dup)
		snprintf(pid, sizeof(pid), "%u.%u", proc->pid, dup);
	else
		snprintf(pid, sizeof(pid), "%u", proc->pid);

	jw_begin_object(w);
	jw_key(w, "name");
	write_thread_name(w, m, p, proc, th, is_main);
	jw_kv_bool(w, "isMainThread", is_main);
	jw_kv_string(w, "processType", process_type(meta, proc));
	jw_key(w, "processName");
	write_process_name(w, m, p, proc);
	jw_kv_string(w, "pid", pid);
	jw_kv_uint(w, "tid", th->tid);
	jw_kv_ms(w, "processStartupTime", rel_ns(m, process_start(m, proc)));
	if (proc->ended)
		jw_kv_ms(w, "processShutdownTime", rel_ns(m, proc->end_ts));
	else
		jw_kv_null(w, "processShutdownTime");
	jw_kv_ms(w, "registerTime", rel_ns(m, thread_start(m, proc, th)));
	if (th->exited)
		jw_kv_ms(w, "unregisterTime", rel_ns(m, th->unregister_ts));
	else
		jw_kv_null(w, "unregisterTime");
	jw_key_array(w, "pausedRanges");
	jw_end_array(w);
	jw_kv_bool(w, "showMarkersInTimeline", true);
	write_samples(w, m, t, th, p);
	write_markers(w, m, t, p, meta, th, proc, pid, is_main && !proc->is_idle);
	jw_end_object(w);
}

static void write_threads(struct json_writer *w, const struct model *m,
			  const struct profile_tables *t, struct emit_plan *p,
			  const struct profile_meta *meta)
{
	jw_key_array(w, "threads");
	for (size_t i = 0; i < m->threads.len; i++)
		write_thread(w, m, t, p, meta, p->order[i].index);
	jw_end_array(w);
}

int emit_profile_fd(int fd, bool gzip, const struct model *m, const struct profile_tables *t,
		    const struct profile_meta *meta)
{
	struct json_writer w;
	struct emit_plan plan;
	int err;

	err = plan_build(&plan, m, t, meta);
	if (err)
		return err;
	if (!m->threads.len)
		log_warn("the profile has no threads; the Firefox Profiler will refuse to load it");
	err = jw_open(&w, fd, gzip);
	if (err) {
		plan_free(&plan);
		return err;
	}
	jw_begin_object(&w);
	profile_meta_write(&w, m, t, meta, &plan);
	profile_libs_write(&w, t, meta);
	const_column(&w, "pages", CONST_NULL, 0);
	const_column(&w, "counters", CONST_NULL, 0);
	const_column(&w, "profilerOverhead", CONST_NULL, 0);
	shared_tables_write(&w, t);
	write_threads(&w, m, t, &plan, meta);
	jw_end_object(&w);
	err = jw_close(&w);
	if (plan.clamped_samples)
		log_debug("%" PRIu64 " samples were out of time order and were moved",
			  plan.clamped_samples);
	plan_free(&plan);
	return err;
}
