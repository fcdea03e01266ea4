// SPDX-License-Identifier: BSD-2-Clause
/*
 * The processed profile, top to bottom, in one pass over the tables and the
 * model's samples. Everything goes through the streaming JSON writer, the
 * small object-shaped parts too: process names, command lines and host names
 * are arbitrary bytes, and the writer is the one place that turns them into
 * valid UTF-8 (jansson would reject such strings instead).
 */
#include "emitter.h"
#include "cgroup_meta.h"
#include "marker_schema.h"
#include "syscall_markers.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/log.h"
#include "json_writer.h"
#include "../util/hex.h"

#define PROCESSED_PROFILE_VERSION 66
/* Gecko format version; ignored for processed profiles, samply writes 24. */
#define GECKO_PROFILE_VERSION	  24

/* Where a thread goes in threads[]: process order first, main thread first within it. */
struct thread_key {
	uint32_t proc_rank;
	uint32_t not_main;
	uint64_t first_ts;
	uint32_t tid;
	uint32_t index;
};

/* One row of a thread's marker table, before sorting by time. */
enum marker_row_kind {
	ROW_PROCESS,	    /* the process's info marker, on its main thread */
	ROW_SCHED_SUMMARY,  /* the thread's "Scheduling" totals */
	ROW_SCHED,	    /* thread.sched_markers[index] */
	ROW_SYSCALL_TOTALS, /* thread.syscall_counts[index] */
	ROW_SYSCALL,	    /* thread.syscall_markers[index] */
};

struct marker_row {
	uint64_t start; /* CLOCK_MONOTONIC ns */
	uint32_t seq;	/* tie-break: process, summary, then sched markers in model order */
	uint8_t kind;
	uint32_t index;
};

/* Decisions made before writing, so the writing itself cannot fail half-way on bad input. */
struct emit_plan {
	struct thread_key *order; /* m->threads.len, sorted */
	uint32_t *main_thread;	  /* per process: its one isMainThread */
	uint32_t *pid_dup; /* per process: 0, or n for the n-th reuse of its pid (pid "P.n") */
	uint64_t end_ns;   /* relative to start: covers end_ts, every sample and marker */
	uint64_t clamped_samples; /* out of order or before start; moved, not dropped */
	bool sched_schemas;	  /* write the scheduling marker schemas */
	bool syscall_schemas;	  /* write the syscall marker schemas */
	struct marker_row *rows;  /* scratch for one thread's markers: the most any has */
	/* Process labels and per-cgroup meta entries. */
	struct cgroup_meta cgroups;
};

static uint64_t rel_ns(const struct model *m, uint64_t ts)
{
	return ts > m->start_ts ? ts - m->start_ts : 0;
}

/* Milliseconds from nanoseconds, exactly. */
static void jw_ms(struct json_writer *w, uint64_t ns)
{
	jw_decimal(w, (int64_t)ns, 6);
}

static void jw_kv_ms(struct json_writer *w, const char *key, uint64_t ns)
{
	jw_key(w, key);
	jw_ms(w, ns);
}

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
	for (size_t i = 0; i < m->processes.len; i++) {
		uint32_t mt = m->processes.data[i].main_thread;
		bool valid = mt < m->threads.len && m->threads.data[mt].process == i;

		p->main_thread[i] = valid ? mt : NO_INDEX;
	}
	for (size_t i = 0; i < m->threads.len; i++) {
		const struct thread *th = &m->threads.data[i];
		uint32_t cur = p->main_thread[th->process];

		/* The model's own (valid) choice stands. */
		if (cur != NO_INDEX && m->processes.data[th->process].main_thread == cur)
			continue;
		if (cur == NO_INDEX || cmp2(th->first_ts, th->tid, m->threads.data[cur].first_ts,
					    m->threads.data[cur].tid) < 0)
			p->main_thread[th->process] = (uint32_t)i;
	}
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

/*
 * A thread's scheduling markers must name a known stack and kind, and the
 * tables must hold their names; returns 0 or -EINVAL. Extends *end to the
 * last marker end.
 */
static int check_sched_markers(const struct thread *th, const struct profile_tables *t,
			       uint64_t *end)
{
	for (size_t k = 0; k < th->sched_markers.len; k++) {
		const struct sched_marker *mk = &th->sched_markers.data[k];

		if (mk->kind > SCHED_MARKER_WAKEUP || t->sched_marker_names[mk->kind] == NO_INDEX) {
			log_error("internal error: thread %u has a sched marker of kind %u without "
				  "a name",
				  th->tid, mk->kind);
			return -EINVAL;
		}
		if (mk->stack != NO_INDEX && mk->stack >= t->raw_stack_map.len) {
			log_error("internal error: sched marker of thread %u has unknown stack %u",
				  th->tid, mk->stack);
			return -EINVAL;
		}
		if (mk->end > *end)
			*end = mk->end;
		if (mk->start > *end)
			*end = mk->start;
	}
	return 0;
}

/* Syscall markers: each ends no earlier than it starts; the profile must reach their ends. */
static int check_syscall_markers(const struct thread *th, uint64_t *end)
{
	for (size_t k = 0; k < th->syscall_markers.len; k++) {
		const struct syscall_marker *mk = &th->syscall_markers.data[k];

		if (mk->end < mk->start) {
			log_error("internal error: syscall marker of thread %u ends before it "
				  "starts",
				  th->tid);
			return -EINVAL;
		}
		if (mk->end > *end)
			*end = mk->end;
	}
	return 0;
}

static int plan_build(struct emit_plan *p, const struct model *m, const struct profile_tables *t,
		      const struct profile_meta *meta)
{
	size_t np = m->processes.len, nt = m->threads.len, max_markers = 0;
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
	p->syscall_schemas = meta->syscalls_enabled;
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
		err = check_sched_markers(th, t, &end);
		if (err)
			return err;
		err = check_syscall_markers(th, &end);
		if (err)
			return err;
		if (th->sched_markers.len + th->syscall_markers.len + th->syscall_counts.len >
		    max_markers)
			max_markers = th->sched_markers.len + th->syscall_markers.len +
				      th->syscall_counts.len;
	}
	err = -ENOMEM;
	p->end_ns = rel_ns(m, end);

	procs = calloc(np ? np : 1, sizeof(*procs));
	rank = calloc(np ? np : 1, sizeof(*rank));
	p->order = calloc(nt ? nt : 1, sizeof(*p->order));
	p->main_thread = calloc(np ? np : 1, sizeof(*p->main_thread));
	p->pid_dup = calloc(np ? np : 1, sizeof(*p->pid_dup));
	/* Room for the Process and Scheduling rows besides the sched markers. */
	p->rows = calloc(max_markers + 2, sizeof(*p->rows));
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
	err = cgroup_meta_build(&p->cgroups, m);
out:
	free(procs);
	free(rank);
	if (err)
		plan_free(p);
	return err;
}

/* ---- meta ----------------------------------------------------------------- */

static void write_categories(struct json_writer *w)
{
	/* Index = enum profile_category; "Other" is the grey default the front-end requires. */
	static const struct {
		const char *name, *color;
	} cats[CAT_COUNT] = {
		[CAT_OTHER] = { "Other", "grey" },
		[CAT_KERNEL] = { "Kernel", "orange" },
		[CAT_USER] = { "User", "yellow" },
		[CAT_OFFCPU] = { "Off-CPU", "lightblue" },
	};

	jw_key(w, "categories");
	jw_begin_array(w);
	for (int i = 0; i < CAT_COUNT; i++) {
		jw_begin_object(w);
		jw_kv_string(w, "name", cats[i].name);
		jw_kv_string(w, "color", cats[i].color);
		jw_key(w, "subcategories");
		jw_begin_array(w);
		jw_string(w, "Other");
		jw_end_array(w);
		jw_end_object(w);
	}
	jw_end_array(w);
}

static void extra_entry_string(struct json_writer *w, const char *label, const char *value)
{
	if (!value)
		return;
	jw_begin_object(w);
	jw_kv_string(w, "label", label);
	jw_kv_string(w, "format", "string");
	jw_kv_string(w, "value", value);
	jw_end_object(w);
}

static void extra_entry_int(struct json_writer *w, const char *label, uint64_t value)
{
	jw_begin_object(w);
	jw_kv_string(w, "label", label);
	jw_kv_string(w, "format", "integer");
	jw_kv_uint(w, "value", value);
	jw_end_object(w);
}

static void extra_entry_duration(struct json_writer *w, const char *label, uint64_t ns)
{
	jw_begin_object(w);
	jw_kv_string(w, "label", label);
	jw_kv_string(w, "format", "duration");
	jw_kv_ms(w, "value", ns);
	jw_end_object(w);
}

/* How scheduling was captured; counts only when it was. */
static void write_extra_sched(struct json_writer *w, const struct model *m,
			      const struct profile_meta *meta)
{
	extra_entry_string(w, "Scheduler capture", meta->sched_enabled ? "on" : "off");
	extra_entry_string(w, "Off-CPU samples",
			   meta->sched_enabled && meta->offcpu_samples ? "on" : "off");
	extra_entry_duration(w, "Scheduling marker threshold", meta->sched_min_ns);
	if (!meta->sched_enabled)
		return;
	extra_entry_int(w, "Lost switch events", meta->lost_switches);
	extra_entry_int(w, "Lost wakeup events", meta->lost_wakeups);
	extra_entry_int(w, "Context switches", m->stats.switches);
	extra_entry_int(w, "Wakeups", m->stats.wakeups);
	extra_entry_int(w, "Off-CPU samples written", m->stats.offcpu_samples);
	extra_entry_int(w, "Scheduler events that arrived too late", m->stats.sched_late_events);
}

/* The "more info" panel: how this recording was made and what it lost. */
/*
 * How whole the user stacks are: a call tree built from cut stacks looks
 * right and is not, so the panel says how much of it to trust.
 */
static void write_extra_frame_quality(struct json_writer *w, const struct frame_quality *q,
				      const struct profile_meta *meta)
{
	char label[128];

	if (meta->unwinder)
		extra_entry_string(w, "User stack unwinding", meta->unwinder);
	extra_entry_int(w, "User stacks (on-CPU samples)", q->user_stacks);
	extra_entry_int(w, "User stacks reaching a thread root", q->reached_root);
	for (int r = 0; r < FRAME_QUALITY_REASONS; r++) {
		if (!q->stopped[r])
			continue;
		snprintf(label, sizeof(label), "User stacks stopped early: %s",
			 frame_quality_reason((enum ustack_end)r));
		extra_entry_int(w, label, q->stopped[r]);
	}
}

static void write_extra(struct json_writer *w, const struct model *m,
			const struct profile_tables *t, const struct profile_meta *meta,
			const struct emit_plan *p)
{
	jw_key(w, "extra");
	jw_begin_array(w);
	jw_begin_object(w);
	jw_kv_string(w, "label", "bpfprof");
	jw_key(w, "entries");
	jw_begin_array(w);
	extra_entry_string(w, "Command line", meta->command_line);
	extra_entry_string(w, "Target", meta->target);
	for (size_t i = 0; i < meta->nr_cgroup_filters; i++)
		extra_entry_string(w, "Cgroup filter", meta->cgroup_filters[i]);
	extra_entry_string(w, "Sample event", meta->sample_event);
	extra_entry_int(w, "Sampling frequency (Hz)", meta->sample_freq_hz);
	extra_entry_string(w, "Idle threads", meta->include_idle ? "included" : "excluded");
	extra_entry_int(w, "Samples", m->stats.samples);
	extra_entry_int(w, "Lost samples", meta->lost_samples);
	extra_entry_int(w, "Lost other events", meta->lost_other);
	write_extra_sched(w, m, meta);
	extra_entry_int(w, "Truncated stacks", m->stats.truncated_stacks);
	write_extra_frame_quality(w, &t->frame_quality, meta);
	extra_entry_int(w, "User frames outside file mappings (JIT, anonymous)",
			m->stats.unknown_user_addrs);
	extra_entry_int(w, "Malformed events", m->stats.events_malformed);
	extra_entry_string(w, "Host", meta->hostname);
	extra_entry_string(w, "Kernel", meta->kernel_release);
	extra_entry_string(w, "Architecture", meta->arch);
	extra_entry_string(w, "bpfprof version", meta->product_version);
	/* Last: with --cgroup there may be many of them. */
	for (size_t i = 0; i < p->cgroups.nr_entries; i++)
		extra_entry_string(w, p->cgroups.entries[i].label, p->cgroups.entries[i].value);
	if (p->cgroups.other_cgroups)
		extra_entry_int(w, "Other cgroups", p->cgroups.other_cgroups);
	jw_end_array(w);
	jw_end_object(w);
	jw_end_array(w);
}

#define PROCESS_SCHEMA	     "bpfprof.Process"
#define OFFCPU_SCHEMA	     "bpfprof.OffCPU"
#define RUNNABLE_SCHEMA	     "bpfprof.Runnable"
#define WAKEUP_SCHEMA	     "bpfprof.Wakeup"
#define SCHED_SUMMARY_SCHEMA "bpfprof.SchedSummary"

/* One field a line; the last three only when the process's cgroup is known. */
/* clang-format off */
static const struct schema_field process_fields[] = {
	{ "name", "Name", "string" },
	{ "pid", "PID", "string" },
	{ "commandLine", "Command line", "string" },
	{ "cgroup", "Cgroup", "string" },
	{ "containerId", "Container ID", "string" },
	{ "containerRuntime", "Container runtime", "string" },
	{ NULL },
};
/* clang-format on */

/* One instant marker per process, on its main thread: what it ran. */
static const struct marker_schema process_schema = {
	.name = PROCESS_SCHEMA,
	.display = display_chart_table,
	.chart_label = "{marker.data.commandLine}",
	.tooltip_label = "{marker.data.name} ({marker.data.pid})",
	.table_label = "{marker.data.name} ({marker.data.pid}): {marker.data.commandLine}",
	.description = "The process as bpfprof first saw it: its name, pid and command line, and "
		       "its cgroup and container when known.",
	.fields = process_fields,
};

/*
 * The other task of a wait: who woke the thread, or who got its CPU when it
 * was preempted or yielded. A label template leaves out a missing key, so
 * the same template serves markers with and without either. The Runnable
 * reason is already "woken" or "new thread", hence its shorter " by ".
 */
#define PREEMPTED_BY_LABEL \
	"{marker.data.preemptedBy ? ', CPU went to ' : ''}{marker.data.preemptedBy}"
#define OFFCPU_OTHER_LABEL \
	"{marker.data.waker ? ', woken by ' : ''}{marker.data.waker}" PREEMPTED_BY_LABEL
#define RUNNABLE_OTHER_LABEL \
	"{marker.data.waker ? ' by ' : ''}{marker.data.waker}" PREEMPTED_BY_LABEL

/* One field a line. */
/* clang-format off */
static const struct schema_field wait_fields[] = {
	{ "reason", "Reason", "string" },
	{ "waker", "Woken by", "string" },
	{ "wakerTid", "Waker TID", "integer" },
	{ "wakerPid", "Waker PID", "integer" },
	{ "preemptedBy", "CPU went to", "string" },
	{ NULL },
};
/* clang-format on */

static const struct marker_schema offcpu_schema = {
	.name = OFFCPU_SCHEMA,
	.display = display_chart_table_timeline,
	.chart_label = "{marker.data.reason}",
	.tooltip_label = "Off-CPU: {marker.data.reason}",
	.table_label = "{marker.data.reason}" OFFCPU_OTHER_LABEL,
	.description = "The thread was off the CPU, from its switch-out until it ran again. "
		       "The reason comes from its task state at the switch-out (sleeping: an "
		       "interruptible wait; blocked (D): uninterruptible, usually I/O; "
		       "preempted or yielded: it was still runnable). The stack is where it "
		       "left the CPU.",
	.fields = wait_fields,
};

static const struct marker_schema runnable_schema = {
	.name = RUNNABLE_SCHEMA,
	.display = display_chart_table_timeline,
	.chart_label = "{marker.data.reason}",
	.tooltip_label = "Runnable ({marker.data.reason}), waiting for a CPU",
	.table_label = "{marker.data.reason}" RUNNABLE_OTHER_LABEL,
	.description = "The thread could run but waited for a CPU: from its wakeup (or from "
		       "being preempted, or from its creation) until it was switched in. Long "
		       "runnable time means CPU contention.",
	.fields = wait_fields,
};

static const struct marker_schema wakeup_schema = {
	.name = WAKEUP_SCHEMA,
	.display = display_chart_table,
	.chart_label = "{marker.data.wakee}",
	.tooltip_label = "Woke {marker.data.wakee}",
	.table_label = "woke {marker.data.wakee}",
	.description = "This thread woke another one, ending a wait of it at least as long as the "
		       "scheduling marker threshold.",
	.fields = (const struct schema_field[]){ { "wakee", "Woke", "string" },
						 { "wakeeTid", "Wakee TID", "integer" },
						 { "wakeePid", "Wakee PID", "integer" },
						 { NULL } },
};

static const struct marker_schema sched_summary_schema = {
	.name = SCHED_SUMMARY_SCHEMA,
	.display = display_table,
	.tooltip_label = "Scheduling: {marker.data.onCpu} on-CPU",
	.table_label = "on-CPU {marker.data.onCpu}, off-CPU {marker.data.offCpuTime} in "
		       "{marker.data.offCpuCount} waits, runnable {marker.data.runnableTime}",
	.description = "The thread's scheduling over the whole recording, including the waits "
		       "shorter than the marker threshold, which have no marker of their own.",
	.fields =
		(const struct schema_field[]){
			{ "onCpu", "On-CPU time", "duration" },
			{ "voluntarySwitches", "Voluntary switches", "integer" },
			{ "preemptions", "Preemptions", "integer" },
			{ "offCpuCount", "Off-CPU intervals", "integer" },
			{ "offCpuTime", "Off-CPU time", "duration" },
			{ "hiddenOffCpuCount", "Off-CPU intervals under the threshold", "integer" },
			{ "hiddenOffCpuTime", "Off-CPU time under the threshold", "duration" },
			{ "runnableCount", "Runnable waits", "integer" },
			{ "runnableTime", "Runnable time", "duration" },
			{ "hiddenRunnableCount", "Runnable waits under the threshold", "integer" },
			{ "hiddenRunnableTime", "Runnable time under the threshold", "duration" },
			{ "wakeupsSent", "Wakeups of other threads", "integer" },
			{ "thresholdMs", "Marker threshold", "milliseconds" },
			{ NULL } },
};

static void write_marker_schemas(struct json_writer *w, const struct emit_plan *p)
{
	jw_key(w, "markerSchema");
	jw_begin_array(w);
	marker_schema_write(w, &process_schema);
	if (p->sched_schemas) {
		marker_schema_write(w, &offcpu_schema);
		marker_schema_write(w, &runnable_schema);
		marker_schema_write(w, &wakeup_schema);
		marker_schema_write(w, &sched_summary_schema);
	}
	if (p->syscall_schemas) {
		marker_schema_write(w, &syscall_schema);
		marker_schema_write(w, &syscall_totals_schema);
	}
	jw_end_array(w);
}

static void write_meta(struct json_writer *w, const struct model *m, const struct profile_tables *t,
		       const struct profile_meta *meta, const struct emit_plan *p)
{
	char oscpu[256];
	/* 1000 / Hz ms; a zero rate would divide by zero, and 1 ms is a harmless default. */
	double interval = meta->sample_freq_hz ? 1000.0 / meta->sample_freq_hz : 1.0;

	snprintf(oscpu, sizeof(oscpu), "Linux%s%s%s%s", meta->kernel_release ? " " : "",
		 meta->kernel_release ? meta->kernel_release : "", meta->arch ? " " : "",
		 meta->arch ? meta->arch : "");

	jw_key(w, "meta");
	jw_begin_object(w);
	jw_kv_double(w, "interval", interval);
	jw_kv_double(w, "startTime", meta->start_wall_ms);
	jw_kv_uint(w, "startTimeAsClockMonotonicNanosecondsSinceBoot", m->start_ts);
	jw_kv_ms(w, "profilingStartTime", 0);
	jw_kv_ms(w, "profilingEndTime", p->end_ns);
	jw_key(w, "endTime");
	jw_double(w, meta->start_wall_ms + (double)p->end_ns / 1e6);
	jw_kv_int(w, "processType", 0);
	jw_kv_string(w, "product", "bpfprof");
	jw_kv_int(w, "stackwalk", 1);
	jw_kv_bool(w, "debug", false);
	jw_kv_int(w, "version", GECKO_PROFILE_VERSION);
	jw_kv_int(w, "preprocessedProfileVersion", PROCESSED_PROFILE_VERSION);
	jw_kv_bool(w, "symbolicated", true);
	jw_kv_bool(w, "usesOnlyOneStackType", true);
	jw_kv_bool(w, "sourceCodeIsNotOnSearchfox", true);
	jw_kv_string(w, "platform", "X11");
	jw_kv_string(w, "oscpu", oscpu);
	if (meta->logical_cpus)
		jw_kv_uint(w, "logicalCPUs", meta->logical_cpus);
	if (meta->command_line)
		jw_kv_string(w, "arguments", meta->command_line);
	write_categories(w);
	jw_key(w, "sampleUnits");
	jw_begin_object(w);
	jw_kv_string(w, "time", "ms");
	jw_kv_string(w, "eventDelay", "ms");
	/* U+00B5 MICRO SIGN as UTF-8; Greek mu (U+03BC) makes the front-end reject the file. */
	jw_kv_string(w, "threadCPUDelta", "\xc2\xb5s");
	jw_end_object(w);
	write_marker_schemas(w, p);
	write_extra(w, m, t, meta, p);
	jw_end_object(w);
}

/* ---- libs ------------------------------------------------------------------ */

/* A GNU build-id must be non-empty, even-length hex to be worth citing. */
static bool build_id_valid(const char *id)
{
	size_t n = 0;

	if (!id)
		return false;
	for (; id[n]; n++)
		if (hex_digit(id[n]) < 0)
			return false;
	return n && n % 2 == 0;
}

/*
 * breakpadId as samply derives it for ELF: the first 16 build-id bytes
 * (zero-padded) read as a little-endian GUID, so the 4-, 2- and 2-byte
 * fields are byte-reversed, then uppercase hex and the age "0". Without a
 * build-id: 33 zeros.
 */
void emit_breakpad_id(const char *build_id, char out[34])
{
	/* GUID byte i comes from build-id byte guid_order[i]. */
	static const unsigned char guid_order[16] = {
		3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15,
	};
	static const char hex[] = "0123456789ABCDEF";
	unsigned char bytes[16] = { 0 };

	if (build_id_valid(build_id)) {
		size_t n = strlen(build_id) / 2;

		for (size_t i = 0; i < n && i < 16; i++)
			bytes[i] = (unsigned char)(hex_digit(build_id[2 * i]) << 4 |
						   hex_digit(build_id[2 * i + 1]));
	}
	for (int i = 0; i < 16; i++) {
		unsigned char b = bytes[guid_order[i]];

		out[2 * i] = hex[b >> 4];
		out[2 * i + 1] = hex[b & 0xf];
	}
	out[32] = '0';
	out[33] = '\0';
}

/* codeId: the build-id as lowercase hex, or null when there is none. */
static void write_code_id(struct json_writer *w, const char *build_id)
{
	char lower[256];
	size_t n;

	if (!build_id_valid(build_id) || (n = strlen(build_id)) >= sizeof(lower)) {
		jw_null(w);
		return;
	}
	for (size_t i = 0; i < n; i++)
		lower[i] = (char)(build_id[i] >= 'A' && build_id[i] <= 'F' ? build_id[i] - 'A' + 'a'
									   : build_id[i]);
	jw_string_len(w, lower, n);
}

static void write_libs(struct json_writer *w, const struct profile_tables *t,
		       const struct profile_meta *meta)
{
	jw_key(w, "libs");
	jw_begin_array(w);
	for (size_t i = 0; i < t->libs.len; i++) {
		const struct object_info *obj = t->libs.data[i].obj;
		const char *name = obj->name ? obj->name : "";
		const char *path = obj->path ? obj->path : name;
		char breakpad[34];

		emit_breakpad_id(obj->build_id, breakpad);
		jw_begin_object(w);
		jw_kv_string(w, "name", name);
		jw_kv_string(w, "path", path);
		jw_kv_string(w, "debugName", name);
		jw_kv_string(w, "debugPath", path);
		jw_kv_string(w, "breakpadId", breakpad);
		jw_key(w, "codeId");
		write_code_id(w, obj->build_id);
		jw_kv_string(w, "arch", meta->arch);
		jw_end_object(w);
	}
	jw_end_array(w);
}

/* ---- shared ---------------------------------------------------------------- */

/* A column whose every entry is the same literal (null, false, 0, ...). */
enum const_value { CONST_NULL, CONST_FALSE, CONST_ZERO, CONST_ONE };

static void const_column(struct json_writer *w, const char *key, enum const_value v, size_t n)
{
	jw_key(w, key);
	jw_begin_array(w);
	for (size_t i = 0; i < n; i++) {
		switch (v) {
		case CONST_NULL:
			jw_null(w);
			break;
		case CONST_FALSE:
			jw_bool(w, false);
			break;
		case CONST_ZERO:
			jw_int(w, 0);
			break;
		case CONST_ONE:
			jw_int(w, 1);
			break;
		}
	}
	jw_end_array(w);
}

static void empty_column(struct json_writer *w, const char *key)
{
	const_column(w, key, CONST_NULL, 0);
}

/* An int column where 0 or a negative number (per `none_below`) means null. */
static void jw_int_or_null(struct json_writer *w, int64_t v, int64_t none_below)
{
	if (v < none_below)
		jw_null(w);
	else
		jw_int(w, v);
}

static void write_strings(struct json_writer *w, const struct profile_tables *t)
{
	jw_key(w, "stringArray");
	jw_begin_array(w);
	for (size_t i = 0; i < strtab_len(&t->strings); i++)
		jw_string(w, strtab_get(&t->strings, (uint32_t)i));
	jw_end_array(w);
}

static void write_sources(struct json_writer *w, const struct profile_tables *t)
{
	size_t n = t->sources.len;

	jw_key(w, "sources");
	jw_begin_object(w);
	jw_kv_uint(w, "length", n);
	const_column(w, "id", CONST_NULL, n);
	jw_key(w, "filename");
	jw_begin_array(w);
	for (size_t i = 0; i < n; i++)
		jw_uint(w, t->sources.data[i]);
	jw_end_array(w);
	const_column(w, "startLine", CONST_ONE, n);
	const_column(w, "startColumn", CONST_ONE, n);
	const_column(w, "sourceMapURL", CONST_NULL, n);
	const_column(w, "content", CONST_NULL, n);
	jw_end_object(w);

	jw_key(w, "sourceLocationTable");
	jw_begin_object(w);
	jw_kv_uint(w, "length", 0);
	empty_column(w, "source");
	empty_column(w, "line");
	empty_column(w, "column");
	jw_end_object(w);
}

static void write_resources(struct json_writer *w, const struct profile_tables *t)
{
	size_t n = t->resources.len;

	jw_key(w, "resourceTable");
	jw_begin_object(w);
	jw_kv_uint(w, "length", n);
	jw_key(w, "lib");
	jw_begin_array(w);
	for (size_t i = 0; i < n; i++)
		jw_int_or_null(w, t->resources.data[i].lib, 0);
	jw_end_array(w);
	jw_key(w, "name");
	jw_begin_array(w);
	for (size_t i = 0; i < n; i++)
		jw_uint(w, t->resources.data[i].name);
	jw_end_array(w);
	const_column(w, "host", CONST_NULL, n);
	/* Type 1 = library: every resource bpfprof makes is a binary or the kernel. */
	const_column(w, "type", CONST_ONE, n);
	jw_end_object(w);

	jw_key(w, "nativeSymbols");
	jw_begin_object(w);
	jw_kv_uint(w, "length", 0);
	empty_column(w, "libIndex");
	empty_column(w, "address");
	empty_column(w, "name");
	empty_column(w, "functionSize");
	jw_end_object(w);
}

static void write_funcs(struct json_writer *w, const struct profile_tables *t)
{
	size_t n = t->funcs.len;

	jw_key(w, "funcTable");
	jw_begin_object(w);
	jw_kv_uint(w, "length", n);
	jw_key(w, "name");
	jw_begin_array(w);
	for (size_t i = 0; i < n; i++)
		jw_uint(w, t->funcs.data[i].name);
	jw_end_array(w);
	const_column(w, "isJS", CONST_FALSE, n);
	const_column(w, "relevantForJS", CONST_FALSE, n);
	jw_key(w, "resource");
	jw_begin_array(w);
	for (size_t i = 0; i < n; i++)
		jw_int(w, t->funcs.data[i].resource < 0 ? -1 : t->funcs.data[i].resource);
	jw_end_array(w);
	jw_key(w, "source");
	jw_begin_array(w);
	for (size_t i = 0; i < n; i++)
		jw_int_or_null(w, t->funcs.data[i].source, 0);
	jw_end_array(w);
	jw_key(w, "lineNumber");
	jw_begin_array(w);
	for (size_t i = 0; i < n; i++)
		jw_int_or_null(w, t->funcs.data[i].line, 1);
	jw_end_array(w);
	const_column(w, "columnNumber", CONST_NULL, n);
	const_column(w, "originalLocation", CONST_NULL, n);
	jw_end_object(w);
}

static void write_frames(struct json_writer *w, const struct profile_tables *t)
{
	size_t n = t->frames.len;

	jw_key(w, "frameTable");
	jw_begin_object(w);
	jw_kv_uint(w, "length", n);
	jw_key(w, "address");
	jw_begin_array(w);
	for (size_t i = 0; i < n; i++)
		jw_int(w, t->frames.data[i].address < 0 ? -1 : t->frames.data[i].address);
	jw_end_array(w);
	jw_key(w, "inlineDepth");
	jw_begin_array(w);
	for (size_t i = 0; i < n; i++)
		jw_uint(w, t->frames.data[i].inline_depth);
	jw_end_array(w);
	jw_key(w, "category");
	jw_begin_array(w);
	for (size_t i = 0; i < n; i++)
		jw_uint(w, t->frames.data[i].category);
	jw_end_array(w);
	/* Every category has subcategory 0 ("Other"); null here would break the category. */
	const_column(w, "subcategory", CONST_ZERO, n);
	jw_key(w, "func");
	jw_begin_array(w);
	for (size_t i = 0; i < n; i++)
		jw_uint(w, t->frames.data[i].func);
	jw_end_array(w);
	const_column(w, "nativeSymbol", CONST_NULL, n);
	const_column(w, "innerWindowID", CONST_ZERO, n);
	jw_key(w, "line");
	jw_begin_array(w);
	for (size_t i = 0; i < n; i++)
		jw_int_or_null(w, t->frames.data[i].line, 1);
	jw_end_array(w);
	const_column(w, "column", CONST_NULL, n);
	const_column(w, "originalLocation", CONST_NULL, n);
	jw_end_object(w);
}

static void write_stacks(struct json_writer *w, const struct profile_tables *t)
{
	size_t n = t->stacks.len;

	jw_key(w, "stackTable");
	jw_begin_object(w);
	jw_kv_uint(w, "length", n);
	jw_key(w, "frame");
	jw_begin_array(w);
	for (size_t i = 0; i < n; i++)
		jw_uint(w, t->stacks.data[i].frame);
	jw_end_array(w);
	/* v66: distance back to the parent, 0 for a root; parents always precede children. */
	jw_key(w, "prefixOffset");
	jw_begin_array(w);
	for (size_t i = 0; i < n; i++) {
		uint32_t prefix = t->stacks.data[i].prefix;

		jw_uint(w, prefix == NO_INDEX ? 0 : i - prefix);
	}
	jw_end_array(w);
	jw_end_object(w);
}

static void write_shared(struct json_writer *w, const struct profile_tables *t)
{
	jw_key(w, "shared");
	jw_begin_object(w);
	write_strings(w, t);
	write_sources(w, t);
	write_resources(w, t);
	write_funcs(w, t);
	write_frames(w, t);
	write_stacks(w, t);
	jw_end_object(w);
}

/* ---- threads --------------------------------------------------------------- */

static void write_samples(struct json_writer *w, const struct model *m,
			  const struct profile_tables *t, const struct thread *th,
			  struct emit_plan *p)
{
	size_t n = th->samples.len;
	uint64_t prev;

	jw_key(w, "samples");
	jw_begin_object(w);
	jw_kv_uint(w, "length", n);
	jw_key(w, "stack");
	jw_begin_array(w);
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
	jw_key(w, "timeDeltas");
	jw_begin_array(w);
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
	jw_key(w, "threadCPUDelta");
	jw_begin_array(w);
	for (size_t i = 0; i < n; i++)
		jw_uint(w, (th->samples.data[i].cpu_delta_ns + 500) / 1000);
	jw_end_array(w);
	jw_end_object(w);
}

/* A comm is a fixed 16-byte array that may lack its NUL. */
static size_t comm_len(const char *comm)
{
	return strnlen(comm, BPFPROF_COMM_LEN);
}

static void write_process_comm(struct json_writer *w, const struct process *proc);

/* ---- markers --------------------------------------------------------------- */

/* The main thread of a process carries its Process marker; idle has none. */
static void write_process_marker_data(struct json_writer *w, const struct process *proc,
				      const char *pid)
{
	const char *cmdline = proc->cmdline ? proc->cmdline
					    : "(unknown: the process exited before it was read, "
					      "or is a kernel thread)";
	char container[CONTAINER_ID_MAX];
	const char *runtime;

	jw_begin_object(w);
	jw_kv_string(w, "type", PROCESS_SCHEMA);
	/* The plain comm: the cgroup and container have fields of their own. */
	jw_key(w, "name");
	write_process_comm(w, proc);
	jw_kv_string(w, "pid", pid);
	jw_kv_string(w, "commandLine", cmdline);
	if (proc->cgroup)
		jw_kv_string(w, "cgroup", proc->cgroup);
	if (process_container(proc, container, &runtime)) {
		jw_kv_string(w, "containerId", container);
		jw_kv_string(w, "containerRuntime", runtime);
	}
	jw_end_object(w);
}

/* "comm (tid)", the way the marker fields name another task. */
static void jw_kv_task(struct json_writer *w, const char *key, const char *comm, uint32_t tid)
{
	char buf[BPFPROF_COMM_LEN + 32];
	size_t n = comm_len(comm);

	if (n)
		snprintf(buf, sizeof(buf), "%.*s (%u)", (int)n, comm, tid);
	else
		snprintf(buf, sizeof(buf), "unknown (%u)", tid);
	jw_kv_string(w, key, buf);
}

static enum offcpu_reason marker_reason(const struct sched_marker *mk)
{
	return mk->reason < OFFCPU_REASON_MAX ? (enum offcpu_reason)mk->reason : OFFCPU_OTHER;
}

/* After a preemption or a yield, `other` got the CPU; otherwise it is the waker. */
static void write_wait_other(struct json_writer *w, const struct sched_marker *mk)
{
	enum offcpu_reason r = marker_reason(mk);

	if (!mk->other_known)
		return;
	if (r == OFFCPU_PREEMPTED || r == OFFCPU_YIELDED) {
		jw_kv_task(w, "preemptedBy", mk->other_comm, mk->other_tid);
		return;
	}
	jw_kv_task(w, "waker", mk->other_comm, mk->other_tid);
	jw_kv_uint(w, "wakerTid", mk->other_tid);
	jw_kv_uint(w, "wakerPid", mk->other_pid);
}

static const char *runnable_reason(const struct sched_marker *mk)
{
	if (mk->woken_new)
		return "new thread";
	switch (marker_reason(mk)) {
	case OFFCPU_PREEMPTED:
		return "preempted";
	case OFFCPU_YIELDED:
		return "yielded";
	default:
		return "woken";
	}
}

static void write_sched_marker_data(struct json_writer *w, const struct profile_tables *t,
				    const struct sched_marker *mk)
{
	jw_begin_object(w);
	switch (mk->kind) {
	case SCHED_MARKER_OFFCPU:
		jw_kv_string(w, "type", OFFCPU_SCHEMA);
		jw_kv_string(w, "reason", offcpu_reason_name(marker_reason(mk)));
		write_wait_other(w, mk);
		/* The switch-out stack, shown as the marker's backtrace. */
		if (profile_stack_of(t, mk->stack) != NO_INDEX) {
			jw_key(w, "cause");
			jw_begin_object(w);
			jw_kv_uint(w, "stack", profile_stack_of(t, mk->stack));
			jw_end_object(w);
		}
		break;
	case SCHED_MARKER_RUNNABLE:
		jw_kv_string(w, "type", RUNNABLE_SCHEMA);
		jw_kv_string(w, "reason", runnable_reason(mk));
		write_wait_other(w, mk);
		break;
	default: /* SCHED_MARKER_WAKEUP; plan_build rejected anything else */
		jw_kv_string(w, "type", WAKEUP_SCHEMA);
		if (mk->other_known) {
			jw_kv_task(w, "wakee", mk->other_comm, mk->other_tid);
			jw_kv_uint(w, "wakeeTid", mk->other_tid);
			jw_kv_uint(w, "wakeePid", mk->other_pid);
		}
		break;
	}
	jw_end_object(w);
}

static void write_sched_summary_data(struct json_writer *w, const struct thread *th,
				     const struct profile_meta *meta)
{
	const struct sched_summary *s = &th->sched;

	jw_begin_object(w);
	jw_kv_string(w, "type", SCHED_SUMMARY_SCHEMA);
	jw_kv_ms(w, "onCpu", s->on_cpu_ns);
	jw_kv_uint(w, "voluntarySwitches", s->switches_voluntary);
	jw_kv_uint(w, "preemptions", s->switches_preempted);
	jw_kv_uint(w, "offCpuCount", s->offcpu_count);
	jw_kv_ms(w, "offCpuTime", s->offcpu_ns);
	jw_kv_uint(w, "hiddenOffCpuCount", s->offcpu_hidden_count);
	jw_kv_ms(w, "hiddenOffCpuTime", s->offcpu_hidden_ns);
	jw_kv_uint(w, "runnableCount", s->runnable_count);
	jw_kv_ms(w, "runnableTime", s->runnable_ns);
	jw_kv_uint(w, "hiddenRunnableCount", s->runnable_hidden_count);
	jw_kv_ms(w, "hiddenRunnableTime", s->runnable_hidden_ns);
	jw_kv_uint(w, "wakeupsSent", s->wakeups_sent);
	jw_kv_ms(w, "thresholdMs", meta->sched_min_ns);
	jw_end_object(w);
}

/*
 * The "Scheduling" summary spans the thread's life in the profile: its first
 * to its last event, stretched over its samples and markers in case those
 * were recorded outside first_ts..last_ts; an empty span becomes the rest of
 * the profile.
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

static int cmp_marker_row(const void *a, const void *b)
{
	const struct marker_row *x = a, *y = b;

	return cmp2(x->start, x->seq, y->start, y->seq);
}

/* The thread's marker rows in time order, into p->rows; returns how many. */
static size_t collect_marker_rows(struct emit_plan *p, const struct thread *th,
				  const struct process *proc, bool with_process,
				  uint64_t summary_start)
{
	size_t n = 0;

	if (with_process)
		p->rows[n++] = (struct marker_row){ proc->first_ts, 0, ROW_PROCESS, 0 };
	if (profile_thread_has_sched(th))
		p->rows[n++] = (struct marker_row){ summary_start, 1, ROW_SCHED_SUMMARY, 0 };
	for (size_t k = 0; k < th->sched_markers.len; k++)
		p->rows[n++] = (struct marker_row){ th->sched_markers.data[k].start,
						    (uint32_t)k + 2, ROW_SCHED, (uint32_t)k };
	/* Syscall totals span the thread's life, like the Scheduling summary. */
	for (size_t k = 0; k < th->syscall_counts.len; k++)
		p->rows[n++] =
			(struct marker_row){ summary_start, 1, ROW_SYSCALL_TOTALS, (uint32_t)k };
	for (size_t k = 0; k < th->syscall_markers.len; k++)
		p->rows[n++] = (struct marker_row){ th->syscall_markers.data[k].start,
						    (uint32_t)k + 2, ROW_SYSCALL, (uint32_t)k };
	/* Each kind is in time order already; the sort interleaves them. */
	qsort(p->rows, n, sizeof(*p->rows), cmp_marker_row);
	return n;
}

static void write_markers(struct json_writer *w, const struct model *m,
			  const struct profile_tables *t, struct emit_plan *p,
			  const struct profile_meta *meta, const struct thread *th,
			  const struct process *proc, const char *pid, bool with_process)
{
	uint64_t sum_start, sum_end;
	size_t n;

	summary_span(m, p, th, &sum_start, &sum_end);
	n = collect_marker_rows(p, th, proc, with_process, sum_start);

	jw_key(w, "markers");
	jw_begin_object(w);
	jw_kv_uint(w, "length", n);
	jw_key(w, "name");
	jw_begin_array(w);
	for (size_t i = 0; i < n; i++) {
		const struct marker_row *r = &p->rows[i];

		if (r->kind == ROW_PROCESS)
			jw_uint(w, t->process_marker_name);
		else if (r->kind == ROW_SCHED_SUMMARY)
			jw_uint(w, t->sched_summary_marker_name);
		else if (r->kind == ROW_SYSCALL_TOTALS)
			jw_uint(w, t->syscall_totals_marker_name);
		else if (r->kind == ROW_SYSCALL)
			jw_uint(w, profile_syscall_name(t, th->syscall_markers.data[r->index].nr));
		else
			jw_uint(w, t->sched_marker_names[th->sched_markers.data[r->index].kind]);
	}
	jw_end_array(w);
	jw_key(w, "startTime");
	jw_begin_array(w);
	for (size_t i = 0; i < n; i++)
		jw_ms(w, rel_ns(m, p->rows[i].start));
	jw_end_array(w);
	/* Instants (Process, Wakeup) have no end; an interval never ends before it starts. */
	jw_key(w, "endTime");
	jw_begin_array(w);
	for (size_t i = 0; i < n; i++) {
		const struct marker_row *r = &p->rows[i];
		const struct sched_marker *mk =
			r->kind == ROW_SCHED ? &th->sched_markers.data[r->index] : NULL;
		uint64_t end = mk ? mk->end : sum_end;

		if (r->kind == ROW_SYSCALL)
			end = th->syscall_markers.data[r->index].end;

		if (r->kind == ROW_PROCESS || (mk && mk->kind == SCHED_MARKER_WAKEUP))
			jw_null(w);
		else
			jw_ms(w, rel_ns(m, end > r->start ? end : r->start));
	}
	jw_end_array(w);
	jw_key(w, "phase");
	jw_begin_array(w);
	for (size_t i = 0; i < n; i++) {
		const struct marker_row *r = &p->rows[i];
		bool instant = r->kind == ROW_PROCESS ||
			       (r->kind == ROW_SCHED &&
				th->sched_markers.data[r->index].kind == SCHED_MARKER_WAKEUP);

		jw_uint(w, instant ? 0 : 1);
	}
	jw_end_array(w);
	jw_key(w, "category");
	jw_begin_array(w);
	for (size_t i = 0; i < n; i++)
		jw_uint(w, p->rows[i].kind == ROW_SCHED	    ? CAT_OFFCPU
			   : p->rows[i].kind == ROW_SYSCALL ? CAT_KERNEL
							    : CAT_OTHER);
	jw_end_array(w);
	jw_key(w, "data");
	jw_begin_array(w);
	for (size_t i = 0; i < n; i++) {
		const struct marker_row *r = &p->rows[i];

		if (r->kind == ROW_PROCESS)
			write_process_marker_data(w, proc, pid);
		else if (r->kind == ROW_SCHED_SUMMARY)
			write_sched_summary_data(w, th, meta);
		else if (r->kind == ROW_SYSCALL_TOTALS)
			syscall_totals_data_write(w, &th->syscall_counts.data[r->index],
						  meta->syscall_min_ns);
		else if (r->kind == ROW_SYSCALL)
			syscall_marker_data_write(w, &th->syscall_markers.data[r->index]);
		else
			write_sched_marker_data(w, t, &th->sched_markers.data[r->index]);
	}
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
 * per-CPU idle threads are all "swapper" in comm, so they get their CPU.
 */
static void write_thread_name(struct json_writer *w, const struct model *m,
			      const struct emit_plan *p, const struct process *proc,
			      const struct thread *th, bool is_main)
{
	char buf[48];

	if (proc->is_idle) {
		if (th->cpu >= 0)
			snprintf(buf, sizeof(buf), "swapper/%d", th->cpu);
		else
			snprintf(buf, sizeof(buf), "swapper");
		jw_string(w, buf);
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
	jw_kv_string(w, "processType", "default");
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
	jw_key(w, "pausedRanges");
	jw_begin_array(w);
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
	jw_key(w, "threads");
	jw_begin_array(w);
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
	write_meta(&w, m, t, meta, &plan);
	write_libs(&w, t, meta);
	const_column(&w, "pages", CONST_NULL, 0);
	const_column(&w, "counters", CONST_NULL, 0);
	const_column(&w, "profilerOverhead", CONST_NULL, 0);
	write_shared(&w, t);
	write_threads(&w, m, t, &plan, meta);
	jw_end_object(&w);
	err = jw_close(&w);
	if (plan.clamped_samples)
		log_debug("%" PRIu64 " samples were out of time order and were moved",
			  plan.clamped_samples);
	plan_free(&plan);
	return err;
}
