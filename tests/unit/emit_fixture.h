/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A small hand-built model for the emit tests, filled through model.h's
 * structs directly (no model_* calls, so these tests do not depend on the
 * aggregator), and a fake frame resolver that stands in for the symbolizer
 * and counts how often each raw frame is resolved.
 *
 * Processes (in model order): "tool" pid 200 (starts 5 ms in), "app" pid 100
 * (present at start, threads "worker" 101 and main 100, worker listed first),
 * and the idle process pid 0 with swapper threads on CPU 0 and 1.
 *
 * Raw stacks, root first:
 *   S0 main                          S5 [stack truncated]
 *   S1 S0 > compute(+inline_helper)  S6 S5 > worker_loop
 *   S2 S1 > write                    S7 main (another line)
 *   S3 S2 > do_syscall_64 (kernel)   S8 S6 > 0xdead (unknown address)
 *   S4 S3 > ksys_write (kernel)      S9 idle_loop (kernel)
 *
 * fx_add_sched() adds scheduling data on top: process "srv" pid 300 (from
 * 6 ms, after "tool", so the threads above keep their places), main thread
 * 300 and "srv-worker" 301, with on- and off-CPU samples, every kind of
 * sched marker and a summary each. Its raw stacks, after S9:
 *   S10 serve                        S13 off-CPU: preempted (leaf alone)
 *   S11 S10 > schedule (kernel)      S14 S10 > futex_wait (kernel; only a marker uses it)
 *   S12 S11 > off-CPU: sleeping
 */
#ifndef BPFPROF_EMIT_FIXTURE_H
#define BPFPROF_EMIT_FIXTURE_H

#include <string.h>

#include "emit/profile_tables.h"
#include "model/model.h"
#include "symbols/symbolizer.h"

#define FX_START_TS 5000000000000ULL /* CLOCK_MONOTONIC ns at profile start */
#define FX_MS	    1000000ULL

#define FX_OBJ_APP  OBJ_FIRST_FILE
#define FX_OBJ_LIBC (OBJ_FIRST_FILE + 1)

#define FX_KADDR_SYSCALL  0xffffffff81000000ULL
#define FX_KADDR_WRITE	  0xffffffff81000100ULL
#define FX_KADDR_IDLE	  0xffffffff81000200ULL
#define FX_KADDR_SCHEDULE 0xffffffff81000300ULL
#define FX_KADDR_FUTEX	  0xffffffff81000400ULL

/* The example build-id of spec section 9 and its expected breakpadId. */
#define FX_APP_BUILD_ID	  "510d0a5c19eadf8043f203b4525be9be3dcb9554"
#define FX_APP_BREAKPAD	  "5C0A0D51EA1980DF43F203B4525BE9BE0"
#define FX_ZERO_BREAKPAD  "000000000000000000000000000000000"
#define FX_KERNEL_RES	  "[kernel.kallsyms]"
#define FX_MAX_RAW_FRAMES 32

static const struct object_info fx_app_obj = { OBJECT_ELF, "app", "/usr/bin/app", FX_APP_BUILD_ID };
static const struct object_info fx_libc_obj = { OBJECT_ELF, "libc.so.6",
						"/lib/x86_64-linux-gnu/libc.so.6", NULL };

struct fx_frame_def {
	uint32_t object;
	uint64_t offset;
	const char *names[2]; /* item 0, optional inlined item 1 */
	const char *files[2];
	int lines[2];
};

/* Raw frames F0..F9, in model order. */
static const struct fx_frame_def fx_frames[] = {
	{ FX_OBJ_APP, 0x1000, { "main" }, { "main.c" }, { 10 } },
	{ FX_OBJ_APP,
	  0x2000,
	  { "compute", "inline_helper" },
	  { "compute.c", "helper.h" },
	  { 40, 7 } },
	{ FX_OBJ_LIBC, 0x500, { "write" }, { NULL }, { 0 } },
	{ OBJ_KERNEL, FX_KADDR_SYSCALL, { "do_syscall_64" }, { NULL }, { 0 } },
	{ OBJ_KERNEL, FX_KADDR_WRITE, { "ksys_write" }, { NULL }, { 0 } },
	{ OBJ_TRUNCATED, 0, { "[stack truncated]" }, { NULL }, { 0 } }, /* named by the tables */
	{ FX_OBJ_APP, 0x3000, { "worker_loop" }, { "worker.c" }, { 5 } },
	{ FX_OBJ_APP, 0x1010, { "main" }, { "main.c" }, { 11 } },
	{ OBJ_UNKNOWN, 0xdead, { "0xdead" }, { NULL }, { 0 } },
	{ OBJ_KERNEL, FX_KADDR_IDLE, { "idle_loop" }, { NULL }, { 0 } },
	/* Never referenced by a stack: must never be resolved. */
	{ FX_OBJ_APP, 0x9000, { "unused" }, { NULL }, { 0 } },
};
#define FX_NFRAMES (sizeof(fx_frames) / sizeof(fx_frames[0]))

/* (prefix, frame) of S0..S9. */
static const struct raw_stack fx_stacks[] = {
	{ NO_INDEX, 0 }, { 0, 1 }, { 1, 2 },	    { 2, 3 }, { 3, 4 },
	{ NO_INDEX, 5 }, { 5, 6 }, { NO_INDEX, 7 }, { 6, 8 }, { NO_INDEX, 9 },
};
#define FX_NSTACKS (sizeof(fx_stacks) / sizeof(fx_stacks[0]))

/* Raw frames of fx_add_sched, after fx_frames: F11.. */
static const struct fx_frame_def fx_sched_frames[] = {
	{ FX_OBJ_APP, 0x4000, { "serve" }, { "serve.c" }, { 3 } },
	{ OBJ_KERNEL, FX_KADDR_SCHEDULE, { "schedule" }, { NULL }, { 0 } },
	{ OBJ_OFFCPU, OFFCPU_SLEEPING, { "off-CPU: sleeping" }, { NULL }, { 0 } },
	{ OBJ_OFFCPU, OFFCPU_PREEMPTED, { "off-CPU: preempted" }, { NULL }, { 0 } },
	{ OBJ_KERNEL, FX_KADDR_FUTEX, { "futex_wait" }, { NULL }, { 0 } },
};
#define FX_NSCHED_FRAMES (sizeof(fx_sched_frames) / sizeof(fx_sched_frames[0]))

/* (prefix, frame) of S10..S14; frame indexes count from F0. */
static const struct raw_stack fx_sched_stacks[] = {
	{ NO_INDEX, FX_NFRAMES + 0 },	    { FX_NSTACKS + 0, FX_NFRAMES + 1 },
	{ FX_NSTACKS + 1, FX_NFRAMES + 2 }, { NO_INDEX, FX_NFRAMES + 3 },
	{ FX_NSTACKS + 0, FX_NFRAMES + 4 },
};
#define FX_S_SERVE     (FX_NSTACKS + 0)
#define FX_S_SCHEDULE  (FX_NSTACKS + 1)
#define FX_S_SLEEPING  (FX_NSTACKS + 2)
#define FX_S_PREEMPTED (FX_NSTACKS + 3)
#define FX_S_FUTEX     (FX_NSTACKS + 4)

struct fx_resolver {
	const struct model *m;
	unsigned calls[FX_MAX_RAW_FRAMES];
	unsigned total_calls;
};

static void fx_resolve(void *ctx, const struct raw_frame *f, struct resolved_frame *out)
{
	struct fx_resolver *r = ctx;
	size_t idx = (size_t)(f - r->m->frames.data);
	const struct fx_frame_def *d =
		idx < FX_NFRAMES ? &fx_frames[idx] : &fx_sched_frames[idx - FX_NFRAMES];

	r->calls[idx]++;
	r->total_calls++;
	memset(out, 0, sizeof(*out));
	out->count = d->names[1] ? 2 : 1;
	for (unsigned i = 0; i < out->count; i++) {
		out->items[i].func = d->names[i];
		out->items[i].file = d->files[i];
		out->items[i].line = d->lines[i];
	}
	out->kernel = d->object == OBJ_KERNEL;
	out->offcpu = d->object == OBJ_OFFCPU;
	out->address = -1;
	if (d->object == FX_OBJ_APP) {
		out->resource = "app";
		out->lib = &fx_app_obj;
		out->address = (int64_t)(f->offset - f->is_return);
	} else if (d->object == FX_OBJ_LIBC) {
		out->resource = "libc.so.6";
		out->lib = &fx_libc_obj;
		out->address = (int64_t)(f->offset - f->is_return);
	} else if (d->object == OBJ_KERNEL) {
		out->resource = FX_KERNEL_RES;
	}
}

struct fx_sample_def {
	uint32_t thread;
	uint64_t ms_x10; /* time since start in 0.1 ms */
	uint32_t stack;
	uint64_t cpu_ns;
};

static const struct fx_sample_def fx_samples[] = {
	/* T0: app/worker 101 */
	{ 0, 15, 8, 700000 },
	{ 0, 30, 6, 1500000 },
	/* T1: app/main 100 */
	{ 1, 10, 1, 0 },
	{ 1, 20, 4, 1000000 },
	{ 1, 25, 0, 500000 },
	{ 1, 40, NO_INDEX, 1234 },
	/* T2: tool/main 200 */
	{ 2, 60, 7, 250000 },
	{ 2, 70, 2, 1000000 },
	/* T3, T4: swapper on CPU 1 and CPU 0 */
	{ 3, 12, 9, 1000000 },
	{ 4, 11, 9, 1000000 },
};
#define FX_NSAMPLES (sizeof(fx_samples) / sizeof(fx_samples[0]))

static void fx_set_name(char *dst, const char *name)
{
	memset(dst, 0, BPFPROF_COMM_LEN);
	strncpy(dst, name, BPFPROF_COMM_LEN - 1);
}

static int fx_add_process(struct model *m, uint32_t pid, const char *name, uint64_t first_ms,
			  bool idle)
{
	struct process p;

	memset(&p, 0, sizeof(p));
	p.pid = pid;
	fx_set_name(p.name, name);
	p.is_idle = idle;
	p.main_thread = NO_INDEX;
	p.first_ts = FX_START_TS + first_ms * FX_MS;
	p.last_ts = FX_START_TS + 10 * FX_MS;
	return vec_push(&m->processes, p);
}

static int fx_add_thread(struct model *m, uint32_t process, uint32_t tid, const char *name, int cpu,
			 uint64_t first_ms, bool main)
{
	struct process *p = &m->processes.data[process];
	uint32_t idx = (uint32_t)m->threads.len;
	struct thread t;

	memset(&t, 0, sizeof(t));
	t.pid = p->pid;
	t.tid = tid;
	t.process = process;
	t.cpu = cpu;
	fx_set_name(t.name, name);
	t.first_ts = FX_START_TS + first_ms * FX_MS;
	t.last_ts = FX_START_TS + 10 * FX_MS;
	if (vec_push(&m->threads, t) || vec_push(&p->threads, idx))
		return -1;
	if (main)
		p->main_thread = idx;
	return 0;
}

static void fx_model_free(struct model *m)
{
	for (size_t i = 0; i < m->threads.len; i++) {
		vec_free(&m->threads.data[i].samples);
		vec_free(&m->threads.data[i].sched_markers);
	}
	for (size_t i = 0; i < m->processes.len; i++) {
		vec_free(&m->processes.data[i].threads);
		vec_free(&m->processes.data[i].mappings);
	}
	vec_free(&m->threads);
	vec_free(&m->processes);
	vec_free(&m->frames);
	vec_free(&m->stacks);
}

/* 0 on success. */
static int fx_model_build(struct model *m)
{
	memset(m, 0, sizeof(*m));
	m->start_ts = FX_START_TS;
	m->end_ts = FX_START_TS + 10 * FX_MS;
	m->stats.samples = FX_NSAMPLES;
	m->stats.truncated_stacks = 1;

	for (size_t i = 0; i < FX_NFRAMES; i++) {
		struct raw_frame f = { fx_frames[i].object, fx_frames[i].object >= OBJ_FIRST_FILE,
				       fx_frames[i].offset };

		if (vec_push(&m->frames, f))
			return -1;
	}
	for (size_t i = 0; i < FX_NSTACKS; i++)
		if (vec_push(&m->stacks, fx_stacks[i]))
			return -1;

	if (fx_add_process(m, 200, "tool", 5, false) || fx_add_process(m, 100, "app", 0, false) ||
	    fx_add_process(m, 0, "swapper", 0, true))
		return -1;
	/* T0 worker, T1 app main, T2 tool main, T3 swapper/1, T4 swapper/0 (main). */
	if (fx_add_thread(m, 1, 101, "worker", -1, 1, false) ||
	    fx_add_thread(m, 1, 100, "app-renamed", -1, 0, true) ||
	    fx_add_thread(m, 0, 200, "tool", -1, 5, true) ||
	    fx_add_thread(m, 2, 0, "swapper/1", 1, 0, false) ||
	    fx_add_thread(m, 2, 0, "swapper/0", 0, 0, true))
		return -1;

	for (size_t i = 0; i < FX_NSAMPLES; i++) {
		const struct fx_sample_def *d = &fx_samples[i];
		struct thread_sample s = { FX_START_TS + d->ms_x10 * FX_MS / 10, d->cpu_ns,
					   d->stack, SAMPLE_ON_CPU };

		if (vec_push(&m->threads.data[d->thread].samples, s))
			return -1;
	}
	return 0;
}

/* ---- scheduling data (fx_add_sched) ---- */

#define FX_SRV_PROCESS	3 /* model index of process "srv" */
#define FX_T_SRV	5 /* model index of thread srv 300 (its main thread) */
#define FX_T_SRV_WORKER 6 /* model index of thread srv-worker 301 */

struct fx_sched_sample_def {
	uint32_t thread;
	uint64_t us; /* since start */
	uint32_t stack;
	uint64_t cpu_ns;
	uint8_t kind;
};

static const struct fx_sched_sample_def fx_sched_samples[] = {
	{ FX_T_SRV, 6100, FX_S_SERVE, 100000, SAMPLE_ON_CPU },
	{ FX_T_SRV, 7000, FX_S_SLEEPING, 300000, SAMPLE_OFF_CPU },
	{ FX_T_SRV, 7250, FX_S_SLEEPING, 0, SAMPLE_OFF_CPU },
	{ FX_T_SRV, 7500, FX_S_SLEEPING, 0, SAMPLE_OFF_CPU },
	{ FX_T_SRV, 8100, FX_S_PREEMPTED, 200000, SAMPLE_OFF_CPU },
	{ FX_T_SRV, 8500, FX_S_SERVE, 100000, SAMPLE_ON_CPU },
	{ FX_T_SRV_WORKER, 6300, FX_S_SERVE, 50000, SAMPLE_ON_CPU },
	{ FX_T_SRV_WORKER, 7600, FX_S_SERVE, 300000, SAMPLE_ON_CPU },
};
#define FX_NSCHED_SAMPLES (sizeof(fx_sched_samples) / sizeof(fx_sched_samples[0]))

struct fx_sched_marker_def {
	uint32_t thread;
	uint8_t kind;
	uint64_t start_us, end_us;
	uint8_t reason;
	uint32_t stack;
	const char *other; /* NULL: unknown */
	uint32_t other_tid, other_pid;
	bool woken_new;
	uint8_t waker_kind; /* enum waker_kind: a timer, an interrupt, a softirq */
};

/* In time order per thread, as the model keeps them. */
static const struct fx_sched_marker_def fx_sched_markers[] = {
	/* srv 300: slept in schedule, woken by srv-worker */
	{ FX_T_SRV, SCHED_MARKER_OFFCPU, 6900, 7800, OFFCPU_SLEEPING, FX_S_SCHEDULE, "srv-worker",
	  301, 300 },
	{ FX_T_SRV, SCHED_MARKER_RUNNABLE, 7500, 7800, OFFCPU_SLEEPING, NO_INDEX, "srv-worker", 301,
	  300 },
	/* preempted by "stress" 999, no switch-out stack */
	{ FX_T_SRV, SCHED_MARKER_OFFCPU, 8000, 8400, OFFCPU_PREEMPTED, NO_INDEX, "stress", 999,
	  999 },
	{ FX_T_SRV, SCHED_MARKER_RUNNABLE, 8000, 8400, OFFCPU_PREEMPTED, NO_INDEX, "stress", 999,
	  999 },
	/* slept in futex_wait (a stack no sample has), woken by a timer: no thread */
	{ FX_T_SRV, SCHED_MARKER_OFFCPU, 8600, 9200, OFFCPU_SLEEPING, FX_S_FUTEX, "", 0, 0, false,
	  WAKER_TIMER },
	{ FX_T_SRV, SCHED_MARKER_RUNNABLE, 9100, 9200, OFFCPU_SLEEPING, NO_INDEX, "", 0, 0, false,
	  WAKER_TIMER },
	/* blocked, nobody known woke it */
	{ FX_T_SRV, SCHED_MARKER_OFFCPU, 9500, 9900, OFFCPU_BLOCKED, FX_S_SCHEDULE, NULL, 0, 0 },
	/* srv-worker 301: its first run, then it wakes srv */
	{ FX_T_SRV_WORKER, SCHED_MARKER_RUNNABLE, 6200, 6300, OFFCPU_SLEEPING, NO_INDEX, "srv", 300,
	  300, true },
	{ FX_T_SRV_WORKER, SCHED_MARKER_WAKEUP, 7500, 7500, 0, NO_INDEX, "srv", 300, 300 },
};
#define FX_NSCHED_MARKERS (sizeof(fx_sched_markers) / sizeof(fx_sched_markers[0]))

static const struct sched_summary fx_srv_summary = {
	.on_cpu_ns = 700000,
	.switches_voluntary = 3,
	.switches_preempted = 1,
	.offcpu_count = 5,
	.offcpu_ns = 3000000,
	.offcpu_hidden_count = 1,
	.offcpu_hidden_ns = 100000,
	.runnable_count = 4,
	.runnable_ns = 850000,
	.runnable_hidden_count = 1,
	.runnable_hidden_ns = 50000,
};

static const struct sched_summary fx_worker_summary = {
	.on_cpu_ns = 350000,
	.runnable_count = 1,
	.runnable_ns = 100000,
	.wakeups_sent = 1,
};

#define FX_SCHED_MIN_NS 100000ULL

/* Add the scheduling part to a model from fx_model_build; 0 on success. */
static int fx_add_sched(struct model *m)
{
	for (size_t i = 0; i < FX_NSCHED_FRAMES; i++) {
		struct raw_frame f = { fx_sched_frames[i].object,
				       fx_sched_frames[i].object >= OBJ_FIRST_FILE,
				       fx_sched_frames[i].offset };

		if (vec_push(&m->frames, f))
			return -1;
	}
	for (size_t i = 0; i < sizeof(fx_sched_stacks) / sizeof(fx_sched_stacks[0]); i++)
		if (vec_push(&m->stacks, fx_sched_stacks[i]))
			return -1;
	if (fx_add_process(m, 300, "srv", 6, false) ||
	    fx_add_thread(m, FX_SRV_PROCESS, 300, "srv", -1, 6, true) ||
	    fx_add_thread(m, FX_SRV_PROCESS, 301, "srv-worker", -1, 6, false))
		return -1;
	for (size_t i = 0; i < FX_NSCHED_SAMPLES; i++) {
		const struct fx_sched_sample_def *d = &fx_sched_samples[i];
		struct thread_sample s = { FX_START_TS + d->us * 1000, d->cpu_ns, d->stack,
					   d->kind };

		if (vec_push(&m->threads.data[d->thread].samples, s))
			return -1;
	}
	for (size_t i = 0; i < FX_NSCHED_MARKERS; i++) {
		const struct fx_sched_marker_def *d = &fx_sched_markers[i];
		struct sched_marker mk;

		memset(&mk, 0, sizeof(mk));
		mk.start = FX_START_TS + d->start_us * 1000;
		mk.end = FX_START_TS + d->end_us * 1000;
		mk.stack = d->stack;
		mk.kind = d->kind;
		mk.reason = d->reason;
		mk.woken_new = d->woken_new;
		mk.other_known = d->other != NULL;
		mk.waker_kind = d->waker_kind;
		if (d->other) {
			fx_set_name(mk.other_comm, d->other);
			mk.other_tid = d->other_tid;
			mk.other_pid = d->other_pid;
			/* As sched_name_others finds them: srv and srv-worker are threads here. */
			mk.other_in_model = d->other_pid == 300;
		}
		if (vec_push(&m->threads.data[d->thread].sched_markers, mk))
			return -1;
	}
	/* srv-worker's last event is before the end: its Scheduling marker ends there. */
	m->threads.data[FX_T_SRV_WORKER].last_ts = FX_START_TS + 9 * FX_MS;
	m->threads.data[FX_T_SRV].sched = fx_srv_summary;
	m->threads.data[FX_T_SRV_WORKER].sched = fx_worker_summary;
	m->sched_enabled = true;
	m->offcpu_samples = true;
	m->sched_min_ns = FX_SCHED_MIN_NS;
	m->stats.samples += FX_NSCHED_SAMPLES;
	m->stats.offcpu_samples = 4;
	m->stats.switches = 5;
	m->stats.wakeups = 4;
	return 0;
}

#endif
