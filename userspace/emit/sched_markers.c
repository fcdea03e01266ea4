// SPDX-License-Identifier: BSD-2-Clause
#include "sched_markers.h"

#include <errno.h>
#include <stdio.h>

#include "../util/log.h"
#include "emit_internal.h"

#define OFFCPU_SCHEMA	     "bpfprof.OffCPU"
#define RUNNABLE_SCHEMA	     "bpfprof.Runnable"
#define WAKEUP_SCHEMA	     "bpfprof.Wakeup"
#define SCHED_SUMMARY_SCHEMA "bpfprof.SchedSummary"

/*
 * The other task of a wait: who woke the thread (a thread, or a timer, an
 * interrupt, a softirq), or who got its CPU when it was preempted or
 * yielded. A label template leaves out a missing key, so the same template
 * serves markers with and without either. The Runnable reason is already
 * "woken" or "new thread", hence its shorter " by ".
 *
 * Tooltips lead with the facts, once each: the title says the reason and
 * the other task, so those fields are hidden (kept for the labels, for
 * search and for tools), and no schema has a description, which the
 * front-end shows before every field.
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
	{ "reason", "Reason", "string", true },
	{ "waker", "Woken by", "string", true },
	{ "wakerTid", "Waker TID", "tid", true },
	{ "wakerPid", "Waker PID", "pid", true },
	{ "preemptedBy", "CPU went to", "string", true },
	{ NULL },
};
/* clang-format on */

const struct marker_schema offcpu_schema = {
	.name = OFFCPU_SCHEMA,
	.display = display_chart_table,
	.color = "blue",
	.chart_label = "{marker.data.reason}",
	.tooltip_label = "Off-CPU: {marker.data.reason}" OFFCPU_OTHER_LABEL,
	.table_label = "{marker.data.reason}" OFFCPU_OTHER_LABEL,
	.fields = wait_fields,
};

const struct marker_schema runnable_schema = {
	.name = RUNNABLE_SCHEMA,
	.display = display_chart_table,
	.color = "orange",
	.chart_label = "{marker.data.reason}",
	.tooltip_label = "Runnable, waiting for a CPU: {marker.data.reason}" RUNNABLE_OTHER_LABEL,
	.table_label = "{marker.data.reason}" RUNNABLE_OTHER_LABEL,
	.fields = wait_fields,
};

const struct marker_schema wakeup_schema = {
	.name = WAKEUP_SCHEMA,
	.display = display_chart_table,
	.color = "green",
	.chart_label = "{marker.data.wakee}",
	.tooltip_label = "Woke {marker.data.wakee}",
	.table_label = "woke {marker.data.wakee}",
	.fields = (const struct schema_field[]){ { "wakee", "Woke", "string", true },
						 { "wakeeTid", "Wakee TID", "tid", true },
						 { "wakeePid", "Wakee PID", "pid", true },
						 { NULL } },
};

const struct marker_schema sched_summary_schema = {
	.name = SCHED_SUMMARY_SCHEMA,
	.display = display_table,
	.color = "grey",
	.tooltip_label = "Scheduling: {marker.data.onCpu} on-CPU",
	.table_label = "on-CPU {marker.data.onCpu}, off-CPU {marker.data.offCpuTime} in "
		       "{marker.data.offCpuCount} waits, runnable {marker.data.runnableTime}",
	.fields =
		(const struct schema_field[]){
			{ "onCpu", "On-CPU time", "duration", true },
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
			{ "preemptedRunnableCount",
			  "Runnable waits shown as Off-CPU (preempted, yielded)", "integer" },
			{ "wakeupsSent", "Wakeups of other threads", "integer" },
			{ "thresholdMs", "Marker threshold", "milliseconds" },
			{ NULL } },
};

/*
 * Run by plan_build before anything is written, so that the writers below
 * may index the marker names by kind and look the stack up unchecked.
 */
int sched_markers_check(const struct thread *th, const struct profile_tables *t, uint64_t *end)
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

/*
 * "comm (tid)", the way the front-end names a thread of the profile; a task
 * outside the profile says so, with its process, since no track shows it.
 */
static void jw_kv_task(struct json_writer *w, const char *key, const struct sched_marker *mk)
{
	char buf[BPFPROF_COMM_LEN + 96];
	size_t n = comm_len(mk->other_comm);

	if (mk->other_in_model)
		snprintf(buf, sizeof(buf), "%.*s (%u)", (int)n, mk->other_comm, mk->other_tid);
	else
		snprintf(buf, sizeof(buf), "%.*s%sthread %u of pid %u, not in this profile", (int)n,
			 mk->other_comm, n ? ", " : "a ", mk->other_tid, mk->other_pid);
	jw_kv_string(w, key, buf);
}

/* What woke a thread when no thread did (enum waker_kind). */
static const char *const waker_kind_names[] = {
	[WAKER_TIMER] = "timer",
	[WAKER_INTERRUPT] = "interrupt",
	[WAKER_SOFTIRQ] = "softirq",
};

static enum offcpu_reason marker_reason(const struct sched_marker *mk)
{
	return mk->reason < OFFCPU_REASON_MAX ? (enum offcpu_reason)mk->reason : OFFCPU_OTHER;
}

/* A pid as the threads spell theirs (a string), so the "pid" format names the process. */
static void write_pid(struct json_writer *w, const char *key, uint32_t pid)
{
	char buf[16];

	snprintf(buf, sizeof(buf), "%u", pid);
	jw_kv_string(w, key, buf);
}

/* After a preemption or a yield, `other` got the CPU; otherwise it is the waker. */
static void write_wait_other(struct json_writer *w, const struct sched_marker *mk)
{
	enum offcpu_reason r = marker_reason(mk);

	if (!mk->other_known)
		return;
	if (r == OFFCPU_PREEMPTED || r == OFFCPU_YIELDED) {
		jw_kv_task(w, "preemptedBy", mk);
		return;
	}
	if (mk->waker_kind != WAKER_THREAD) {
		jw_kv_string(w, "waker", waker_kind_names[mk->waker_kind & 3]);
		return;
	}
	jw_kv_task(w, "waker", mk);
	jw_kv_uint(w, "wakerTid", mk->other_tid);
	write_pid(w, "wakerPid", mk->other_pid);
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

void sched_marker_data_write(struct json_writer *w, const struct profile_tables *t,
			     const struct sched_marker *mk)
{
	switch (mk->kind) {
	case SCHED_MARKER_OFFCPU:
		marker_data_begin(w, &offcpu_schema);
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
		marker_data_begin(w, &runnable_schema);
		jw_kv_string(w, "reason", runnable_reason(mk));
		write_wait_other(w, mk);
		break;
	default: /* SCHED_MARKER_WAKEUP; sched_markers_check rejected anything else */
		marker_data_begin(w, &wakeup_schema);
		if (mk->other_known) {
			jw_kv_task(w, "wakee", mk);
			jw_kv_uint(w, "wakeeTid", mk->other_tid);
			write_pid(w, "wakeePid", mk->other_pid);
		}
		break;
	}
	jw_end_object(w);
}

void sched_summary_data_write(struct json_writer *w, const struct thread *th,
			      const struct profile_meta *meta)
{
	const struct sched_summary *s = &th->sched;

	marker_data_begin(w, &sched_summary_schema);
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
	jw_kv_uint(w, "preemptedRunnableCount", s->runnable_as_offcpu_count);
	jw_kv_ms(w, "hiddenRunnableTime", s->runnable_hidden_ns);
	jw_kv_uint(w, "wakeupsSent", s->wakeups_sent);
	jw_kv_ms(w, "thresholdMs", meta->sched_min_ns);
	jw_end_object(w);
}
