// SPDX-License-Identifier: BSD-2-Clause
/*
 * The processed profile, top to bottom, in one pass over the tables and the
 * model's samples. Everything goes through the streaming JSON writer, the
 * small object-shaped parts too: process names, command lines and host names
 * are arbitrary bytes, and the writer is the one place that turns them into
 * valid UTF-8 (jansson would reject such strings instead).
 *
 * This file writes the threads with their samples; the plan made before
 * (thread order, main threads, pids, the initial view) is emit_plan.c's,
 * each thread's marker table is thread_markers.c's, `meta` and `libs` are
 * profile_meta.c's, `shared` is shared_tables.c's, and each kind of
 * marker's schema and data are in its own file (sched_markers.c,
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
#include "shared_tables.h"
#include "wait_breaks.h"

/* ---- threads --------------------------------------------------------------- */

static bool thread_has_runs(const struct thread *th)
{
	for (size_t i = 0; i < th->samples.len; i++)
		if (th->samples.data[i].repeats)
			return true;
	return false;
}

/* The samples table: the model's, with a null sample where a wait ended (wait_breaks.c). */
static void write_samples(struct json_writer *w, const struct model *m,
			  const struct profile_tables *t, const struct thread *th,
			  struct emit_plan *p)
{
	struct sample_cursor c;
	struct thread_sample s;
	uint64_t prev;

	jw_begin_table(w, "samples", sample_cursor_count(th));
	jw_key_array(w, "stack");
	for (c = sample_cursor_start(th); sample_cursor_next(&c, &s);) {
		uint32_t st = profile_stack_of(t, s.stack);

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
	for (c = sample_cursor_start(th); sample_cursor_next(&c, &s);) {
		if (s.ts < prev) {
			p->clamped_samples++;
			s.ts = prev;
		}
		jw_ms(w, s.ts - prev);
		prev = s.ts;
	}
	jw_end_array(w);
	/*
	 * An off-CPU row stands for a run of samples (thread_sample.repeats):
	 * its weight, in samples like every other row's 1, so the call tree
	 * counts off-CPU time per interval as before. Null when all are 1.
	 */
	if (thread_has_runs(th)) {
		jw_key_array(w, "weight");
		for (c = sample_cursor_start(th); sample_cursor_next(&c, &s);)
			jw_uint(w, sample_weight(&s));
		jw_end_array(w);
	} else {
		jw_kv_null(w, "weight");
	}
	jw_kv_string(w, "weightType", "samples");
	/* Integer µs, rounded: the unit declared in meta.sampleUnits. */
	jw_key_array(w, "threadCPUDelta");
	for (c = sample_cursor_start(th); sample_cursor_next(&c, &s);)
		jw_uint(w, (s.cpu_delta_ns + 500) / 1000);
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
 * ("default", "tab", "plugin") meanings of its own, so bpfprof's are none of
 * them, but for one: the launched command (-- COMMAND) is "default", Gecko's
 * parent process, the only thing the front-end keeps above the other
 * process tracks (it orders them by CPU, whatever the file's order:
 * tracks.ts _getDefaultGlobalTrackOrder), which is where a person looks for
 * what they ran.
 */
static const char *process_type(const struct profile_meta *meta, const struct process *proc)
{
	if (meta->selected_pid && proc->pid == meta->selected_pid && !proc->kernel_thread &&
	    !proc->is_idle)
		return "default";
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
	thread_markers_write(w, m, t, p, meta, th, proc, pid, is_main && !proc->is_idle);
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

	err = emit_plan_build(&plan, m, t, meta);
	if (err)
		return err;
	if (meta->view_out)
		*meta->view_out = (struct emit_view_summary){ m->threads.len, plan.nr_visible,
							      plan.hidden_short_procs };
	if (!m->threads.len)
		log_warn("the profile has no threads; the Firefox Profiler will refuse to load it");
	err = jw_open(&w, fd, gzip);
	if (err) {
		emit_plan_free(&plan);
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
	emit_plan_free(&plan);
	return err;
}
