// SPDX-License-Identifier: BSD-2-Clause
/*
 * The scheduler replay fed with synthetic sample, switch and wakeup records
 * (the BPF ABI structs, through model_add_record): exact CPU deltas,
 * off-CPU samples, markers and totals, out-of-order and lost records. No
 * BPF, no root.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "model/model.h"
#include "model/sched.h"
#include "test.h"

#include "offcpu_rows.h"
#include "sched_records.h"

static void setup(struct model *m)
{
	model_init(m, NULL, T0);
	m->sched_enabled = true;
	m->offcpu_samples = true;
	m->offcpu_interval_ns = 1 * MS;
	m->sched_min_ns = 0;
}

static bool samples_sorted(const struct thread *t)
{
	for (size_t i = 1; i < t->samples.len; i++)
		if (t->samples.data[i].ts < t->samples.data[i - 1].ts)
			return false;
	return true;
}

static const struct raw_frame *leaf_frame(const struct model *m, uint32_t stack)
{
	return &m->frames.data[m->stacks.data[stack].frame];
}

/* The switch-out stack KIP <- UIP: kernel leaf, user root. */
static void check_switch_stack(const struct model *m, uint32_t stack)
{
	const struct raw_stack *s;

	CHECK(stack != NO_INDEX);
	if (stack == NO_INDEX)
		return;
	s = &m->stacks.data[stack];
	CHECK_EQ_INT(leaf_frame(m, stack)->object, OBJ_KERNEL);
	CHECK_EQ_INT(leaf_frame(m, stack)->offset, KIP);
	CHECK(s->prefix != NO_INDEX);
	if (s->prefix == NO_INDEX)
		return;
	CHECK_EQ_INT(leaf_frame(m, s->prefix)->offset, UIP);
	CHECK_EQ_INT(m->stacks.data[s->prefix].prefix, NO_INDEX);
}

/* An off-CPU sample's stack: `prefix` plus the OBJ_OFFCPU leaf naming `reason`. */
static void check_offcpu_stack(const struct model *m, uint32_t stack, uint32_t prefix,
			       enum offcpu_reason reason)
{
	CHECK(stack != NO_INDEX);
	if (stack == NO_INDEX)
		return;
	CHECK_EQ_INT(leaf_frame(m, stack)->object, OBJ_OFFCPU);
	CHECK_EQ_INT(leaf_frame(m, stack)->offset, reason);
	CHECK_EQ_INT(leaf_frame(m, stack)->is_return, 0);
	CHECK_EQ_INT(m->stacks.data[stack].prefix, prefix);
}

static void check_sample(const struct thread_sample *s, uint64_t ts, uint64_t delta, int kind)
{
	CHECK_EQ_INT(s->ts, ts);
	CHECK_EQ_INT(s->cpu_delta_ns, delta);
	CHECK_EQ_INT(s->kind, kind);
}

static void check_marker(const struct sched_marker *mk, int kind, uint64_t start, uint64_t end,
			 int reason)
{
	CHECK_EQ_INT(mk->kind, kind);
	CHECK_EQ_INT(mk->start, start);
	CHECK_EQ_INT(mk->end, end);
	if (kind != SCHED_MARKER_WAKEUP)
		CHECK_EQ_INT(mk->reason, reason);
}

static void check_other(const struct sched_marker *mk, uint32_t pid, uint32_t tid, const char *comm)
{
	CHECK(mk->other_known);
	CHECK_EQ_INT(mk->other_pid, pid);
	CHECK_EQ_INT(mk->other_tid, tid);
	CHECK_EQ_STR(mk->other_comm, comm);
}

/*
 * Thread 101 runs 1 ms out of every 10: slice k starts at in_k = T0 + 2 ms
 * + 10k ms on CPU k % 2, has samples at +0.25 and +0.75 ms, sleeps at +1 ms.
 * The recording stops 9 ms after the last sleep began.
 */
#define PERIODS 5
static int periodic_records(union record *out)
{
	int n = 0;

	for (int k = 0; k < PERIODS; k++) {
		uint64_t in = T0 + 2 * MS + k * 10 * MS;
		uint32_t cpu = (uint32_t)k % 2;

		out[n++] = mk_sample(100, 101, cpu, in + 250 * US, in);
		out[n++] = mk_sample(100, 101, cpu, in + 750 * US, in);
		out[n++] = mk_switch((struct sw_args){ .pid = 100,
						       .tid = 101,
						       .cpu = cpu,
						       .ts = in + 1 * MS,
						       .since = in,
						       .state = KTASK_INTERRUPTIBLE,
						       .stack = true });
	}
	return n;
}

static void run_1ms_sleep_9ms_exact_deltas_and_offcpu_samples(void)
{
	union record recs[3 * PERIODS];
	int n = periodic_records(recs);
	struct model m;
	const struct thread *t;
	uint32_t sw_stack;

	setup(&m);
	m.stop_ts = T0 + 2 * MS + (PERIODS - 1) * 10 * MS + 10 * MS;
	for (int i = 0; i < n; i++)
		feed(&m, recs[i]);
	CHECK_EQ_INT(model_finish_expanded(&m), 0);
	t = thread_of(&m, 101);
	CHECK(t != NULL);
	if (!t)
		goto out;
	/* Per period: 2 on-CPU samples and 9 off-CPU ones (9 ms at 1 ms). */
	CHECK_EQ_INT(t->samples.len, PERIODS * 11);
	CHECK_EQ_INT(m.stats.offcpu_samples, PERIODS * 9);
	CHECK_EQ_INT(m.stats.samples, PERIODS * 2);
	if (t->samples.len != PERIODS * 11)
		goto out;
	sw_stack = t->sched_markers.data[0].stack;
	check_switch_stack(&m, sw_stack);
	for (int k = 0; k < PERIODS; k++) {
		const struct thread_sample *s = &t->samples.data[k * 11];
		uint64_t in = T0 + 2 * MS + k * 10 * MS, out = in + 1 * MS;

		/* The first sample of the thread starts at its first known switch-in. */
		check_sample(&s[0], in + 250 * US, 250 * US, SAMPLE_ON_CPU);
		check_sample(&s[1], in + 750 * US, 500 * US, SAMPLE_ON_CPU);
		/* The first off-CPU sample carries the run up to the switch-out. */
		check_sample(&s[2], out, 250 * US, SAMPLE_OFF_CPU);
		check_offcpu_stack(&m, s[2].stack, sw_stack, OFFCPU_SLEEPING);
		for (int j = 1; j < 9; j++) {
			check_sample(&s[2 + j], out + j * MS, 0, SAMPLE_OFF_CPU);
			CHECK_EQ_INT(s[2 + j].stack, s[2].stack);
		}
		check_marker(&t->sched_markers.data[k], SCHED_MARKER_OFFCPU, out, out + 9 * MS,
			     OFFCPU_SLEEPING);
		CHECK(!t->sched_markers.data[k].other_known);
	}
	CHECK(samples_sorted(t));
	CHECK_EQ_INT(sum_deltas(t), PERIODS * MS);
	CHECK_EQ_INT(t->sched.on_cpu_ns, PERIODS * MS);
	CHECK_EQ_INT(t->sched.offcpu_count, PERIODS);
	CHECK_EQ_INT(t->sched.offcpu_ns, PERIODS * 9 * MS);
	CHECK_EQ_INT(t->sched.switches_voluntary, PERIODS);
	CHECK_EQ_INT(t->sched.switches_preempted, 0);
	/* Sleeps nobody was seen to end: no runnable wait. */
	CHECK_EQ_INT(t->sched.runnable_count, 0);
	CHECK_EQ_INT(t->sched_markers.len, PERIODS);
	CHECK_EQ_INT(t->first_ts, T0 + 2 * MS + 250 * US);
out:
	model_free(&m);
}

/* The same stream, each CPU's ring drained as a block: the replay sorts per thread. */
static void migrating_thread_out_of_order_gives_same_result(void)
{
	union record recs[3 * PERIODS];
	int n = periodic_records(recs);
	struct model a, b;
	const struct thread *ta, *tb;

	setup(&a);
	setup(&b);
	a.stop_ts = b.stop_ts = T0 + 2 * MS + (PERIODS - 1) * 10 * MS + 10 * MS;
	for (int i = 0; i < n; i++)
		feed(&a, recs[i]);
	for (uint32_t cpu = 2; cpu-- > 0;)
		for (int i = 0; i < n; i++)
			if (recs[i].hdr.cpu == cpu)
				feed(&b, recs[i]);
	CHECK_EQ_INT(model_finish_expanded(&a), 0);
	CHECK_EQ_INT(model_finish_expanded(&b), 0);
	ta = thread_of(&a, 101);
	tb = thread_of(&b, 101);
	CHECK(ta && tb);
	if (!ta || !tb)
		goto out;
	CHECK_EQ_INT(b.stats.sched_late_events, 0);
	CHECK_EQ_INT(tb->samples.len, ta->samples.len);
	for (size_t i = 0; i < ta->samples.len && i < tb->samples.len; i++) {
		CHECK_EQ_INT(tb->samples.data[i].ts, ta->samples.data[i].ts);
		CHECK_EQ_INT(tb->samples.data[i].cpu_delta_ns, ta->samples.data[i].cpu_delta_ns);
		CHECK_EQ_INT(tb->samples.data[i].kind, ta->samples.data[i].kind);
	}
	CHECK_EQ_INT(tb->sched_markers.len, ta->sched_markers.len);
	CHECK_EQ_INT(tb->sched.on_cpu_ns, PERIODS * MS);
	CHECK_EQ_INT(sum_deltas(tb), PERIODS * MS);
out:
	model_free(&a);
	model_free(&b);
}

static void no_offcpu_samples_keeps_markers_and_deltas(void)
{
	union record recs[3 * PERIODS];
	int n = periodic_records(recs);
	struct model m;
	const struct thread *t;

	setup(&m);
	m.offcpu_samples = false;
	m.stop_ts = T0 + 2 * MS + (PERIODS - 1) * 10 * MS + 10 * MS;
	for (int i = 0; i < n; i++)
		feed(&m, recs[i]);
	CHECK_EQ_INT(model_finish_expanded(&m), 0);
	t = thread_of(&m, 101);
	CHECK(t != NULL);
	if (!t)
		goto out;
	CHECK_EQ_INT(m.stats.offcpu_samples, 0);
	CHECK_EQ_INT(t->samples.len, PERIODS * 2);
	CHECK_EQ_INT(t->sched_markers.len, PERIODS);
	for (size_t i = 0; i < t->samples.len; i++)
		CHECK_EQ_INT(t->samples.data[i].kind, SAMPLE_ON_CPU);
	if (t->samples.len != PERIODS * 2)
		goto out;
	/* The run after the last sample of a slice goes to the next slice's first sample. */
	CHECK_EQ_INT(t->samples.data[0].cpu_delta_ns, 250 * US);
	CHECK_EQ_INT(t->samples.data[1].cpu_delta_ns, 500 * US);
	CHECK_EQ_INT(t->samples.data[2].cpu_delta_ns, 500 * US);
	CHECK_EQ_INT(t->samples.data[3].cpu_delta_ns, 500 * US);
	/* The last slice's tail is CPU time of no sample, but of the thread. */
	CHECK_EQ_INT(sum_deltas(t), PERIODS * MS - 250 * US);
	CHECK_EQ_INT(t->sched.on_cpu_ns, PERIODS * MS);
out:
	model_free(&m);
}

/* Ten 0.3 ms sleeps, 0.2 ms runs between, 1 ms interval: samples at 1.2, 2.1 and 3.0 ms of sleep.
 */
static void offcpu_time_carries_across_short_sleeps(void)
{
	struct model m;
	const struct thread *t;
	uint64_t in = T0 + 1 * MS;
	uint64_t outs[10];

	setup(&m);
	for (int i = 0; i < 10; i++) {
		outs[i] = in + 200 * US;
		feed(&m, mk_switch((struct sw_args){ .pid = 100,
						     .tid = 101,
						     .ts = outs[i],
						     .since = in,
						     .state = KTASK_INTERRUPTIBLE }));
		in = outs[i] + 300 * US;
	}
	sample(&m, 100, 101, in + 100 * US, in);
	CHECK_EQ_INT(model_finish_expanded(&m), 0);
	t = thread_of(&m, 101);
	CHECK(t != NULL);
	if (!t)
		goto out;
	CHECK_EQ_INT(m.stats.offcpu_samples, 3);
	CHECK_EQ_INT(t->samples.len, 4);
	if (t->samples.len != 4)
		goto out;
	/* The 4th, 7th and 10th sleeps cross a multiple of 1 ms; each sample at its switch-out. */
	check_sample(&t->samples.data[0], outs[3], 800 * US, SAMPLE_OFF_CPU);
	check_sample(&t->samples.data[1], outs[6], 600 * US, SAMPLE_OFF_CPU);
	check_sample(&t->samples.data[2], outs[9], 600 * US, SAMPLE_OFF_CPU);
	check_sample(&t->samples.data[3], in + 100 * US, 100 * US, SAMPLE_ON_CPU);
	/* No switch-out stack: the off-CPU leaf alone. */
	check_offcpu_stack(&m, t->samples.data[0].stack, NO_INDEX, OFFCPU_SLEEPING);
	CHECK_EQ_INT(t->sched.offcpu_count, 10);
	CHECK_EQ_INT(t->sched.offcpu_ns, 3 * MS);
	CHECK_EQ_INT(t->sched.on_cpu_ns, 2100 * US);
	CHECK_EQ_INT(sum_deltas(t), 2100 * US);
out:
	model_free(&m);
}

/*
 * Reader 201 sleeps in read() and is woken by writer 202 (a target), then
 * by the idle task (an interrupt), then by a task that is no target.
 */
/*
 * --syscalls=blocking: a sleeping switch-out inside a syscall becomes that
 * syscall's marker when the wait reaches --syscall-min, from the switch-out
 * to the switch-in, with the arguments the switch carried; no counts. A
 * wait too short, a preemption inside a syscall, or a sleep outside one
 * (a page fault) is none. Off, the same records give no marker at all.
 */
static void blocking_syscall_markers(void)
{
	for (int on = 0; on <= 1; on++) {
		struct model m;
		const struct thread *t;
		const struct syscall_marker *mk;

		setup(&m);
		m.syscalls_from_switch = on;
		m.syscall_min_ns = 1 * MS;
		sample(&m, 300, 301, T0 + 1 * MS, T0 + 500 * US);
		/* read(3, buf, 4096) sleeps 20 ms. */
		feed(&m, mk_switch((struct sw_args){ .pid = 300,
						     .tid = 301,
						     .ts = T0 + 10 * MS,
						     .since = T0 + 500 * US,
						     .state = KTASK_INTERRUPTIBLE,
						     .in_syscall = true,
						     .sys_nr = 0,
						     .fd = 3,
						     .count = 4096 }));
		sample(&m, 300, 301, T0 + 30500 * US, T0 + 30 * MS);
		/* A futex wait of 0.5 ms: under the threshold. */
		feed(&m, mk_switch((struct sw_args){ .pid = 300,
						     .tid = 301,
						     .ts = T0 + 31 * MS,
						     .since = T0 + 30 * MS,
						     .state = KTASK_INTERRUPTIBLE,
						     .in_syscall = true,
						     .sys_nr = 202 }));
		sample(&m, 300, 301, T0 + 31700 * US, T0 + 31500 * US);
		/* Preempted inside a syscall, off for 5 ms: runnable, not waiting in it. */
		feed(&m, mk_switch((struct sw_args){ .pid = 300,
						     .tid = 301,
						     .ts = T0 + 32 * MS,
						     .since = T0 + 31500 * US,
						     .preempt = true,
						     .in_syscall = true,
						     .sys_nr = 1 }));
		sample(&m, 300, 301, T0 + 37500 * US, T0 + 37 * MS);
		/* Asleep 5 ms outside any syscall (a page fault's I/O). */
		feed(&m, mk_switch((struct sw_args){ .pid = 300,
						     .tid = 301,
						     .ts = T0 + 38 * MS,
						     .since = T0 + 37 * MS,
						     .state = KTASK_UNINTERRUPTIBLE }));
		sample(&m, 300, 301, T0 + 43500 * US, T0 + 43 * MS);
		CHECK_EQ_INT(model_finish_expanded(&m), 0);
		t = model_find_thread(&m, 301);
		CHECK(t != NULL);
		if (!t)
			goto next;
		CHECK_EQ_INT(t->syscall_markers.len, on ? 1 : 0);
		CHECK_EQ_INT(t->syscall_counts.len, 0);
		CHECK_EQ_INT(m.stats.syscall_markers, on ? 1 : 0);
		if (!on || t->syscall_markers.len != 1)
			goto next;
		mk = &t->syscall_markers.data[0];
		CHECK(mk->blocked_wait);
		CHECK_EQ_INT(mk->nr, 0);
		CHECK_EQ_INT(mk->start, T0 + 10 * MS);
		CHECK_EQ_INT(mk->end, T0 + 30 * MS);
		CHECK_EQ_INT(mk->args[0], 3);
		CHECK_EQ_INT(mk->args[2], 4096);
	next:
		model_free(&m);
	}
}

static void sleep_wakeup_markers(void)
{
	struct model m;
	const struct thread *r, *w;
	const struct sched_marker *mk;
	uint32_t sw_stack;

	setup(&m);
	sample(&m, 200, 202, T0 + 1 * MS, T0 + 500 * US);
	sample(&m, 200, 201, T0 + 1500 * US, T0 + 1 * MS);
	feed(&m, mk_switch((struct sw_args){ .pid = 200,
					     .tid = 201,
					     .ts = T0 + 2 * MS,
					     .since = T0 + 1 * MS,
					     .state = KTASK_INTERRUPTIBLE,
					     .stack = true,
					     .next_comm = "swapper/0" }));
	wakeup(&m, 200, 201, T0 + 5 * MS, 200, 202, "t202", WAKEUP_WAKER_TARGET);
	sample(&m, 200, 201, T0 + 5500 * US, T0 + 5200 * US);
	/* Second sleep, no stack: woken from an interrupt, then again by 202 (ignored). */
	feed(&m, mk_switch((struct sw_args){ .pid = 200,
					     .tid = 201,
					     .ts = T0 + 6 * MS,
					     .since = T0 + 5200 * US,
					     .state = KTASK_INTERRUPTIBLE }));
	wakeup(&m, 200, 201, T0 + 8 * MS, 0, 0, "swapper/1", 0);
	wakeup(&m, 200, 201, T0 + 8500 * US, 200, 202, "t202", WAKEUP_WAKER_TARGET);
	/* Third sleep: woken by pid 999, which is not a target. */
	feed(&m, mk_switch((struct sw_args){ .pid = 200,
					     .tid = 201,
					     .ts = T0 + 9500 * US,
					     .since = T0 + 9 * MS,
					     .state = KTASK_INTERRUPTIBLE,
					     .stack = true }));
	wakeup(&m, 200, 201, T0 + 10 * MS, 999, 999, "stranger", 0);
	sample(&m, 200, 201, T0 + 10500 * US, T0 + 10200 * US);
	CHECK_EQ_INT(model_sched_flush(&m, UINT64_MAX), 0);
	/* No thread was created for a waker that is no target. */
	CHECK_EQ_INT(m.threads.len, 2);
	CHECK_EQ_INT(model_finish_expanded(&m), 0);

	r = thread_of(&m, 201);
	w = thread_of(&m, 202);
	CHECK(r && w);
	if (!r || !w)
		goto out;
	CHECK_EQ_INT(r->sched_markers.len, 6);
	if (r->sched_markers.len != 6)
		goto out;
	mk = r->sched_markers.data;
	sw_stack = mk[0].stack;
	check_switch_stack(&m, sw_stack);
	check_marker(&mk[0], SCHED_MARKER_OFFCPU, T0 + 2 * MS, T0 + 5200 * US, OFFCPU_SLEEPING);
	check_other(&mk[0], 200, 202, "t202");
	check_marker(&mk[1], SCHED_MARKER_RUNNABLE, T0 + 5 * MS, T0 + 5200 * US, OFFCPU_SLEEPING);
	check_other(&mk[1], 200, 202, "t202");
	CHECK(!mk[1].woken_new);
	CHECK_EQ_INT(mk[1].stack, NO_INDEX);
	/* The first wakeup wins; the idle task is a waker like any other. */
	check_marker(&mk[2], SCHED_MARKER_OFFCPU, T0 + 6 * MS, T0 + 9 * MS, OFFCPU_SLEEPING);
	check_other(&mk[2], 0, 0, "swapper/1");
	CHECK_EQ_INT(mk[2].stack, NO_INDEX);
	check_marker(&mk[3], SCHED_MARKER_RUNNABLE, T0 + 8 * MS, T0 + 9 * MS, OFFCPU_SLEEPING);
	check_other(&mk[3], 0, 0, "swapper/1");
	check_marker(&mk[4], SCHED_MARKER_OFFCPU, T0 + 9500 * US, T0 + 10200 * US, OFFCPU_SLEEPING);
	CHECK_EQ_INT(mk[4].stack, sw_stack);
	check_other(&mk[4], 999, 999, "stranger");
	check_marker(&mk[5], SCHED_MARKER_RUNNABLE, T0 + 10 * MS, T0 + 10200 * US, OFFCPU_SLEEPING);

	/* Only the wakeup by a thread of the model shows on the waker. */
	CHECK_EQ_INT(w->sched_markers.len, 1);
	if (w->sched_markers.len == 1) {
		check_marker(&w->sched_markers.data[0], SCHED_MARKER_WAKEUP, T0 + 5 * MS,
			     T0 + 5 * MS, 0);
		check_other(&w->sched_markers.data[0], 200, 201, "t201");
	}
	CHECK_EQ_INT(w->sched.wakeups_sent, 1);
	CHECK_EQ_INT(r->sched.runnable_count, 3);
	CHECK_EQ_INT(r->sched.runnable_ns, 200 * US + 1 * MS + 200 * US);
	CHECK_EQ_INT(r->sched.offcpu_count, 3);
	CHECK_EQ_INT(r->sched.offcpu_ns, 3200 * US + 3 * MS + 700 * US);

	/* Off-CPU samples: 3.2 ms -> 3 with the stack; 0.2 + 3 ms -> 3 without; 0.2 + 0.7 -> 0. */
	CHECK_EQ_INT(m.stats.offcpu_samples, 6);
	CHECK_EQ_INT(r->samples.len, 1 + 3 + 1 + 3 + 1);
	if (r->samples.len == 9) {
		const struct thread_sample *s = r->samples.data;

		check_sample(&s[0], T0 + 1500 * US, 500 * US, SAMPLE_ON_CPU);
		check_sample(&s[1], T0 + 2 * MS, 500 * US, SAMPLE_OFF_CPU);
		check_offcpu_stack(&m, s[1].stack, sw_stack, OFFCPU_SLEEPING);
		check_sample(&s[2], T0 + 3 * MS, 0, SAMPLE_OFF_CPU);
		check_sample(&s[3], T0 + 4 * MS, 0, SAMPLE_OFF_CPU);
		check_sample(&s[4], T0 + 5500 * US, 300 * US, SAMPLE_ON_CPU);
		check_sample(&s[5], T0 + 6 * MS, 500 * US, SAMPLE_OFF_CPU);
		check_offcpu_stack(&m, s[5].stack, NO_INDEX, OFFCPU_SLEEPING);
		check_sample(&s[6], T0 + 7 * MS, 0, SAMPLE_OFF_CPU);
		check_sample(&s[7], T0 + 8 * MS, 0, SAMPLE_OFF_CPU);
		/* 0.5 ms (9 -> 9.5) before the third sleep, 0.3 ms after it. */
		check_sample(&s[8], T0 + 10500 * US, 800 * US, SAMPLE_ON_CPU);
	}
out:
	model_free(&m);
}

/* Preempted by a hog, then a yield: runnable from the switch-out, `other` = next. */
/* Preempted (flag) and runnable at a plain schedule() (return to user): both involuntary. */
static void preempted_and_runnable_switch(void)
{
	struct model m;
	const struct thread *t;
	const struct sched_marker *mk;

	setup(&m);
	sample(&m, 300, 301, T0 + 1 * MS, T0 + 500 * US);
	/* Preempted while preparing to sleep: the preemption wins over the state. */
	feed(&m, mk_switch((struct sw_args){ .pid = 300,
					     .tid = 301,
					     .ts = T0 + 2 * MS,
					     .since = T0 + 500 * US,
					     .state = KTASK_INTERRUPTIBLE,
					     .preempt = true,
					     .next_pid = 400,
					     .next_tid = 401,
					     .next_comm = "hog" }));
	/* A wakeup of a thread that is runnable already changes nothing. */
	wakeup(&m, 300, 301, T0 + 2500 * US, 500, 500, "other", 0);
	sample(&m, 300, 301, T0 + 3 * MS, T0 + 2600 * US);
	feed(&m, mk_switch((struct sw_args){ .pid = 300,
					     .tid = 301,
					     .ts = T0 + 4 * MS,
					     .since = T0 + 2600 * US,
					     .state = 0,
					     .next_pid = 400,
					     .next_tid = 401,
					     .next_comm = "hog" }));
	sample(&m, 300, 301, T0 + 4200 * US, T0 + 4100 * US);
	CHECK_EQ_INT(model_finish_expanded(&m), 0);
	t = thread_of(&m, 301);
	CHECK(t != NULL);
	if (!t)
		goto out;
	/*
	 * One marker per preemption: the Off-CPU one, with its stack and the
	 * task that got the CPU. A Runnable one over the same span with the same
	 * text only doubled the table (issue 21); the summary still counts the
	 * runnable time.
	 */
	CHECK_EQ_INT(t->sched_markers.len, 2);
	if (t->sched_markers.len != 2)
		goto out;
	mk = t->sched_markers.data;
	check_marker(&mk[0], SCHED_MARKER_OFFCPU, T0 + 2 * MS, T0 + 2600 * US, OFFCPU_PREEMPTED);
	check_other(&mk[0], 400, 401, "hog");
	check_marker(&mk[1], SCHED_MARKER_OFFCPU, T0 + 4 * MS, T0 + 4100 * US, OFFCPU_PREEMPTED);
	check_other(&mk[1], 400, 401, "hog");
	CHECK_EQ_INT(t->sched.switches_preempted, 2);
	CHECK_EQ_INT(t->sched.switches_voluntary, 0);
	CHECK_EQ_INT(t->sched.runnable_count, 2);
	CHECK_EQ_INT(t->sched.runnable_ns, 700 * US);
	/* 0.6 + 0.1 ms off-CPU: under one interval, no off-CPU sample. */
	CHECK_EQ_INT(m.stats.offcpu_samples, 0);
	CHECK_EQ_INT(t->samples.len, 3);
	if (t->samples.len == 3) {
		check_sample(&t->samples.data[0], T0 + 1 * MS, 500 * US, SAMPLE_ON_CPU);
		check_sample(&t->samples.data[1], T0 + 3 * MS, 1400 * US, SAMPLE_ON_CPU);
		check_sample(&t->samples.data[2], T0 + 4200 * US, 1100 * US, SAMPLE_ON_CPU);
	}
	CHECK_EQ_INT(t->sched.on_cpu_ns, 3 * MS);
out:
	model_free(&m);
}

/*
 * "CPU went to X" names X as its track does (issue 21): a thread the model
 * knows by its last name, not the comm the switch record carried before it
 * renamed itself; one the model never saw keeps the record's comm.
 */
static void preempt_301(struct model *m, uint64_t ts, uint64_t since, uint32_t next_pid,
			uint32_t next_tid, const char *next_comm)
{
	feed(m, mk_switch((struct sw_args){ .pid = 300,
					    .tid = 301,
					    .ts = ts,
					    .since = since,
					    .preempt = true,
					    .next_pid = next_pid,
					    .next_tid = next_tid,
					    .next_comm = next_comm }));
}

static void other_threads_by_their_track_names(void)
{
	struct model m;
	const struct thread *t;

	setup(&m);
	sample(&m, 300, 301, T0 + 1 * MS, T0 + 500 * US);
	preempt_301(&m, T0 + 2 * MS, T0 + 500 * US, 400, 401, "fork-parent");
	sample(&m, 400, 401, T0 + 2500 * US, T0 + 2 * MS);
	CHECK_EQ_INT(model_comm(&m, 400, 401, "renamed", false, T0 + 2700 * US), 0);
	sample(&m, 300, 301, T0 + 4 * MS, T0 + 3500 * US);
	preempt_301(&m, T0 + 5 * MS, T0 + 3500 * US, 500, 502, "stranger");
	sample(&m, 300, 301, T0 + 7 * MS, T0 + 6500 * US);
	CHECK_EQ_INT(model_finish_expanded(&m), 0);
	t = thread_of(&m, 301);
	CHECK(t && t->sched_markers.len == 2);
	if (t && t->sched_markers.len == 2) {
		check_other(&t->sched_markers.data[0], 400, 401, "renamed");
		check_other(&t->sched_markers.data[1], 500, 502, "stranger");
	}
	model_free(&m);
}

/*
 * Threshold 1 ms; thread 602 runs, thread 601 runs from 0.5 ms and sleeps
 * at 2 ms. Both short-wait tests go on from here.
 */
static void short_waits_start(struct model *m)
{
	setup(m);
	m->sched_min_ns = 1 * MS;
	sample(m, 600, 602, T0 + 500 * US, T0 + 100 * US);
	sample(m, 600, 601, T0 + 1 * MS, T0 + 500 * US);
	feed(m, mk_switch((struct sw_args){ .pid = 600,
					    .tid = 601,
					    .ts = T0 + 2 * MS,
					    .since = T0 + 500 * US,
					    .state = KTASK_INTERRUPTIBLE }));
}

/* Under sched_min_ns: counted in hidden_*, no marker; the waker's instant follows the sleep. */
static void short_intervals_are_counted_not_marked(void)
{
	struct model m;
	const struct thread *t, *w;

	short_waits_start(&m);
	wakeup(&m, 600, 601, T0 + 2400 * US, 600, 602, "t602", WAKEUP_WAKER_TARGET);
	sample(&m, 600, 601, T0 + 2600 * US, T0 + 2500 * US);
	feed(&m, mk_switch((struct sw_args){ .pid = 600,
					     .tid = 601,
					     .ts = T0 + 3 * MS,
					     .since = T0 + 2500 * US,
					     .state = KTASK_INTERRUPTIBLE }));
	wakeup(&m, 600, 601, T0 + 4950 * US, 600, 602, "t602", WAKEUP_WAKER_TARGET);
	sample(&m, 600, 601, T0 + 5100 * US, T0 + 5 * MS);
	CHECK_EQ_INT(model_finish_expanded(&m), 0);
	t = thread_of(&m, 601);
	w = thread_of(&m, 602);
	CHECK(t && w);
	if (!t || !w)
		goto out;
	CHECK_EQ_INT(t->sched_markers.len, 1);
	if (t->sched_markers.len == 1)
		check_marker(&t->sched_markers.data[0], SCHED_MARKER_OFFCPU, T0 + 3 * MS,
			     T0 + 5 * MS, OFFCPU_SLEEPING);
	CHECK_EQ_INT(t->sched.offcpu_count, 2);
	CHECK_EQ_INT(t->sched.offcpu_ns, 2500 * US);
	CHECK_EQ_INT(t->sched.offcpu_hidden_count, 1);
	CHECK_EQ_INT(t->sched.offcpu_hidden_ns, 500 * US);
	CHECK_EQ_INT(t->sched.runnable_count, 2);
	CHECK_EQ_INT(t->sched.runnable_ns, 150 * US);
	CHECK_EQ_INT(t->sched.runnable_hidden_count, 2);
	CHECK_EQ_INT(t->sched.runnable_hidden_ns, 150 * US);
	/* Both wakeups counted; the instant only for the 2 ms sleep. */
	CHECK_EQ_INT(w->sched.wakeups_sent, 2);
	CHECK_EQ_INT(w->sched_markers.len, 1);
	if (w->sched_markers.len == 1)
		check_marker(&w->sched_markers.data[0], SCHED_MARKER_WAKEUP, T0 + 4950 * US,
			     T0 + 4950 * US, 0);
out:
	model_free(&m);
}

/*
 * The same kind of short waits, but their wakeups folded by the kernel into
 * the thread's next record (a sample, then a switch-out): the replay must
 * give the totals the wakeup records would have given.
 */
static void folded_wakeups_count_like_records(void)
{
	struct model m;
	const struct thread *t, *w;
	union record r;

	short_waits_start(&m);
	/* Woken at 2.4 ms by 602, on a CPU at 2.5 ms: the sample carries it. */
	r = mk_sample(600, 601, 0, T0 + 2600 * US, T0 + 2500 * US);
	r.sample.woken = (struct folded_wakeup){ T0 + 2400 * US, 600, 602 };
	feed(&m, r);
	feed(&m, mk_switch((struct sw_args){ .pid = 600,
					     .tid = 601,
					     .ts = T0 + 3 * MS,
					     .since = T0 + 2500 * US,
					     .state = KTASK_INTERRUPTIBLE }));
	/* Woken at 3.6 ms, on a CPU at 3.7 ms, no sample: its switch-out carries it. */
	r = mk_switch((struct sw_args){ .pid = 600,
					.tid = 601,
					.ts = T0 + 3900 * US,
					.since = T0 + 3700 * US,
					.state = KTASK_INTERRUPTIBLE });
	r.sw.woken = (struct folded_wakeup){ T0 + 3600 * US, 600, 602 };
	feed(&m, r);
	wakeup(&m, 600, 601, T0 + 5950 * US, 600, 602, "t602", WAKEUP_WAKER_TARGET);
	sample(&m, 600, 601, T0 + 6100 * US, T0 + 6 * MS);
	CHECK_EQ_INT(model_finish_expanded(&m), 0);
	t = thread_of(&m, 601);
	w = thread_of(&m, 602);
	CHECK(t && w);
	if (!t || !w)
		goto out;
	CHECK_EQ_INT(t->sched_markers.len, 1);
	if (t->sched_markers.len == 1)
		check_marker(&t->sched_markers.data[0], SCHED_MARKER_OFFCPU, T0 + 3900 * US,
			     T0 + 6 * MS, OFFCPU_SLEEPING);
	CHECK_EQ_INT(t->sched.offcpu_count, 3);
	CHECK_EQ_INT(t->sched.offcpu_ns, 500 * US + 700 * US + 2100 * US);
	CHECK_EQ_INT(t->sched.offcpu_hidden_count, 2);
	CHECK_EQ_INT(t->sched.offcpu_hidden_ns, 1200 * US);
	CHECK_EQ_INT(t->sched.runnable_count, 3);
	CHECK_EQ_INT(t->sched.runnable_ns, 100 * US + 100 * US + 50 * US);
	CHECK_EQ_INT(t->sched.runnable_hidden_count, 3);
	CHECK_EQ_INT(t->sched.runnable_hidden_ns, 250 * US);
	CHECK_EQ_INT(t->sched.on_cpu_ns, 1500 * US + 500 * US + 200 * US + 100 * US);
	CHECK_EQ_INT(m.stats.wakeups, 3);
	CHECK_EQ_INT(m.stats.wakeups_folded, 2); /* the long sleep's came as a record */
	/* All three wakeups counted for the waker; an instant only for the long sleep. */
	CHECK_EQ_INT(w->sched.wakeups_sent, 3);
	CHECK_EQ_INT(w->sched_markers.len, 1);
	if (w->sched_markers.len == 1)
		check_marker(&w->sched_markers.data[0], SCHED_MARKER_WAKEUP, T0 + 5950 * US,
			     T0 + 5950 * US, 0);
out:
	model_free(&m);
}

static void reasons_from_task_state(void)
{
	CHECK_EQ_INT(offcpu_reason_from_state(KTASK_INTERRUPTIBLE, false), OFFCPU_SLEEPING);
	CHECK_EQ_INT(offcpu_reason_from_state(KTASK_UNINTERRUPTIBLE, false), OFFCPU_BLOCKED);
	/* TASK_KILLABLE is still a D wait. */
	CHECK_EQ_INT(offcpu_reason_from_state(KTASK_UNINTERRUPTIBLE | KTASK_WAKEKILL, false),
		     OFFCPU_BLOCKED);
	/* TASK_IDLE: an idle kernel wait, not I/O. */
	CHECK_EQ_INT(offcpu_reason_from_state(KTASK_UNINTERRUPTIBLE | KTASK_NOLOAD, false),
		     OFFCPU_SLEEPING);
	/* TASK_FREEZABLE (0x2000) with an interruptible sleep. */
	CHECK_EQ_INT(offcpu_reason_from_state(0x2000 | KTASK_INTERRUPTIBLE, false),
		     OFFCPU_SLEEPING);
	CHECK_EQ_INT(offcpu_reason_from_state(0x40 /* TASK_PARKED */, false), OFFCPU_SLEEPING);
	CHECK_EQ_INT(offcpu_reason_from_state(0x4 | KTASK_WAKEKILL /* TASK_STOPPED */, false),
		     OFFCPU_STOPPED);
	CHECK_EQ_INT(offcpu_reason_from_state(0x8 /* TASK_TRACED */, false), OFFCPU_STOPPED);
	CHECK_EQ_INT(offcpu_reason_from_state(KTASK_DEAD, false), OFFCPU_EXITING);
	CHECK_EQ_INT(offcpu_reason_from_state(0, false), OFFCPU_PREEMPTED);
	CHECK_EQ_INT(offcpu_reason_from_state(0, true), OFFCPU_PREEMPTED);
	CHECK_EQ_INT(offcpu_reason_from_state(KTASK_UNINTERRUPTIBLE, true), OFFCPU_PREEMPTED);
	CHECK_EQ_INT(offcpu_reason_from_state(0x800 /* TASK_NEW */, false), OFFCPU_OTHER);
	CHECK_EQ_STR(offcpu_reason_name(OFFCPU_SLEEPING), "sleeping");
	CHECK_EQ_STR(offcpu_reason_name(OFFCPU_BLOCKED), "blocked (D)");
	CHECK_EQ_STR(offcpu_reason_name(OFFCPU_PREEMPTED), "preempted");
	CHECK_EQ_STR(offcpu_reason_name(OFFCPU_YIELDED), "yielded");
	CHECK_EQ_STR(offcpu_reason_name(OFFCPU_STOPPED), "stopped");
	CHECK_EQ_STR(offcpu_reason_name(OFFCPU_EXITING), "exiting");
	CHECK_EQ_STR(offcpu_reason_name(OFFCPU_OTHER), "other");
	CHECK_EQ_STR(offcpu_reason_name(OFFCPU_REASON_MAX), "other");
}

/* A D-state sleep is "blocked" in the marker and in the off-CPU leaf; TASK_IDLE is sleeping. */
static void blocked_and_idle_waits_end_to_end(void)
{
	struct model m;
	const struct thread *t;

	setup(&m);
	feed(&m, mk_switch((struct sw_args){ .pid = 100,
					     .tid = 101,
					     .ts = T0 + 1 * MS,
					     .since = T0 + 500 * US,
					     .state = KTASK_UNINTERRUPTIBLE,
					     .stack = true }));
	feed(&m, mk_switch((struct sw_args){ .pid = 100,
					     .tid = 101,
					     .ts = T0 + 3 * MS,
					     .since = T0 + 2 * MS,
					     .state = KTASK_UNINTERRUPTIBLE | KTASK_NOLOAD,
					     .stack = true }));
	sample(&m, 100, 101, T0 + 4500 * US, T0 + 4 * MS);
	CHECK_EQ_INT(model_finish_expanded(&m), 0);
	t = thread_of(&m, 101);
	CHECK(t != NULL);
	if (!t)
		goto out;
	CHECK_EQ_INT(t->sched_markers.len, 2);
	if (t->sched_markers.len == 2) {
		check_marker(&t->sched_markers.data[0], SCHED_MARKER_OFFCPU, T0 + 1 * MS,
			     T0 + 2 * MS, OFFCPU_BLOCKED);
		check_marker(&t->sched_markers.data[1], SCHED_MARKER_OFFCPU, T0 + 3 * MS,
			     T0 + 4 * MS, OFFCPU_SLEEPING);
	}
	CHECK_EQ_INT(t->samples.len, 3);
	if (t->samples.len == 3) {
		uint32_t sw = t->sched_markers.data[0].stack;

		/* A switch-out first seen from an unknown thread: on-CPU since its `since`. */
		check_sample(&t->samples.data[0], T0 + 1 * MS, 500 * US, SAMPLE_OFF_CPU);
		check_offcpu_stack(&m, t->samples.data[0].stack, sw, OFFCPU_BLOCKED);
		check_sample(&t->samples.data[1], T0 + 3 * MS, 1 * MS, SAMPLE_OFF_CPU);
		check_offcpu_stack(&m, t->samples.data[1].stack, sw, OFFCPU_SLEEPING);
		check_sample(&t->samples.data[2], T0 + 4500 * US, 500 * US, SAMPLE_ON_CPU);
	}
out:
	model_free(&m);
}

/*
 * At the stop: a sleeper's interval closes there (samples up to it, no
 * waker); a runner's CPU counts up to it; a woken thread still waiting is
 * runnable up to it.
 */
static void stop_closes_open_intervals(void)
{
	struct model m;
	const struct thread *s, *r, *wk;
	size_t nsamples, nmarkers;

	setup(&m);
	m.stop_ts = T0 + 5500 * US;
	sample(&m, 700, 701, T0 + 1 * MS, T0 + 500 * US);
	feed(&m, mk_switch((struct sw_args){ .pid = 700,
					     .tid = 701,
					     .ts = T0 + 2 * MS,
					     .since = T0 + 500 * US,
					     .state = KTASK_INTERRUPTIBLE,
					     .stack = true }));
	sample(&m, 700, 702, T0 + 1 * MS, T0 + 800 * US);
	feed(&m, mk_switch((struct sw_args){ .pid = 700,
					     .tid = 703,
					     .ts = T0 + 2 * MS,
					     .since = T0 + 1 * MS,
					     .state = KTASK_INTERRUPTIBLE }));
	wakeup(&m, 700, 703, T0 + 5 * MS, 700, 702, "t702", WAKEUP_WAKER_TARGET);
	CHECK_EQ_INT(model_finish_expanded(&m), 0);
	s = thread_of(&m, 701);
	r = thread_of(&m, 702);
	wk = thread_of(&m, 703);
	CHECK(s && r && wk);
	if (!s || !r || !wk)
		goto out;
	CHECK_EQ_INT(s->samples.len, 4);
	if (s->samples.len == 4) {
		check_sample(&s->samples.data[1], T0 + 2 * MS, 1 * MS, SAMPLE_OFF_CPU);
		check_sample(&s->samples.data[2], T0 + 3 * MS, 0, SAMPLE_OFF_CPU);
		check_sample(&s->samples.data[3], T0 + 4 * MS, 0, SAMPLE_OFF_CPU);
	}
	CHECK_EQ_INT(s->sched_markers.len, 1);
	if (s->sched_markers.len == 1) {
		check_marker(&s->sched_markers.data[0], SCHED_MARKER_OFFCPU, T0 + 2 * MS,
			     T0 + 5500 * US, OFFCPU_SLEEPING);
		CHECK(!s->sched_markers.data[0].other_known);
	}
	CHECK_EQ_INT(s->sched.runnable_count, 0);
	/* Running at the stop: CPU up to the stop, in the totals only. */
	CHECK_EQ_INT(r->samples.len, 1);
	CHECK_EQ_INT(r->samples.data[0].cpu_delta_ns, 200 * US);
	CHECK_EQ_INT(r->sched.on_cpu_ns, 4700 * US);
	CHECK_EQ_INT(wk->sched_markers.len, 2);
	if (wk->sched_markers.len == 2) {
		check_marker(&wk->sched_markers.data[0], SCHED_MARKER_OFFCPU, T0 + 2 * MS,
			     T0 + 5500 * US, OFFCPU_SLEEPING);
		check_other(&wk->sched_markers.data[0], 700, 702, "t702");
		check_marker(&wk->sched_markers.data[1], SCHED_MARKER_RUNNABLE, T0 + 5 * MS,
			     T0 + 5500 * US, OFFCPU_SLEEPING);
	}
	CHECK_EQ_INT(r->sched_markers.len, 1);
	CHECK_EQ_INT(r->sched.wakeups_sent, 1);

	/* Finishing again changes nothing. */
	nsamples = s->samples.len;
	nmarkers = s->sched_markers.len;
	CHECK_EQ_INT(model_finish_expanded(&m), 0);
	s = thread_of(&m, 701);
	r = thread_of(&m, 702);
	CHECK_EQ_INT(s->samples.len, nsamples);
	CHECK_EQ_INT(s->sched_markers.len, nmarkers);
	CHECK_EQ_INT(r->sched.on_cpu_ns, 4700 * US);
	CHECK_EQ_INT(s->sched.offcpu_count, 1);
out:
	model_free(&m);
}

static union record mk_leave(uint32_t pid, uint32_t tid, uint64_t ts, uint64_t since)
{
	union record r;

	memset(&r, 0, sizeof(r));
	r.hdr.kind = EV_SWITCH;
	r.hdr.ts = ts;
	r.hdr.pid = pid;
	r.hdr.tid = tid;
	r.sw.oncpu_since = since;
	r.sw.flags = SWITCH_LEFT_TARGETS;
	r.hdr.size = (uint16_t)offsetof(struct switch_event, ips);
	return r;
}

/*
 * --cgroup: a thread moved out of the targets while asleep got a CPU outside
 * at 3 ms; its wait ends there, not at the stop, and nothing follows it
 * until it comes back (a sample inside at 6 ms, in a slice from 5.5 ms).
 */
static void leaving_the_targets_ends_the_wait(void)
{
	struct model m;
	const struct thread *t;

	setup(&m);
	m.stop_ts = T0 + 8 * MS;
	sample(&m, 800, 801, T0 + 1 * MS, T0 + 500 * US);
	feed(&m, mk_switch((struct sw_args){ .pid = 800,
					     .tid = 801,
					     .ts = T0 + 1500 * US,
					     .since = T0 + 500 * US,
					     .state = KTASK_INTERRUPTIBLE,
					     .stack = true }));
	feed(&m, mk_leave(800, 801, T0 + 3 * MS, T0 + 3 * MS));
	sample(&m, 800, 801, T0 + 6 * MS, T0 + 5500 * US);
	CHECK_EQ_INT(model_finish_expanded(&m), 0);
	t = thread_of(&m, 801);
	CHECK(t != NULL);
	if (!t)
		goto out;
	/* Not counted as a switch: it is no switch-out of a target. */
	CHECK_EQ_INT(m.stats.switches, 1);
	CHECK_EQ_INT(t->sched_markers.len, 1);
	if (t->sched_markers.len == 1)
		check_marker(&t->sched_markers.data[0], SCHED_MARKER_OFFCPU, T0 + 1500 * US,
			     T0 + 3 * MS, OFFCPU_SLEEPING);
	CHECK_EQ_INT(t->sched.offcpu_ns, 1500 * US);
	/* On-CPU: 0.5..1.5 ms, then 5.5 ms to the stop at 8 ms; the time outside is no CPU. */
	CHECK_EQ_INT(t->sched.on_cpu_ns, 1 * MS + 2500 * US);
out:
	model_free(&m);
}

/* Records of one thread from a ring drained after a flush already replayed past them. */
static void late_event_across_flushes(void)
{
	struct model m;
	const struct thread *t;

	setup(&m);
	sample(&m, 100, 101, T0 + 2 * MS, T0 + 1 * MS);
	sample(&m, 100, 101, T0 + 3 * MS, T0 + 1 * MS);
	sample(&m, 100, 101, T0 + 5 * MS, T0 + 1 * MS);
	CHECK_EQ_INT(model_sched_flush(&m, T0 + 3 * MS), 0);
	t = thread_of(&m, 101);
	CHECK(t != NULL);
	if (!t)
		goto out;
	CHECK_EQ_INT(t->samples.len, 2);
	CHECK_EQ_INT(t->replay ? t->replay->pending.len : 0, 1);
	feed(&m, mk_sample(100, 101, 1, T0 + 2500 * US, T0 + 1 * MS));
	CHECK_EQ_INT(model_sched_flush(&m, T0 + 6 * MS), 0);
	CHECK_EQ_INT(model_finish_expanded(&m), 0);
	t = thread_of(&m, 101);
	CHECK_EQ_INT(m.stats.sched_late_events, 1);
	CHECK_EQ_INT(t->samples.len, 4);
	CHECK(samples_sorted(t));
	if (t->samples.len == 4) {
		check_sample(&t->samples.data[0], T0 + 2 * MS, 1 * MS, SAMPLE_ON_CPU);
		check_sample(&t->samples.data[1], T0 + 3 * MS, 1 * MS, SAMPLE_ON_CPU);
		/* Clamped to the replayed time: no CPU counted twice. */
		check_sample(&t->samples.data[2], T0 + 3 * MS, 0, SAMPLE_ON_CPU);
		check_sample(&t->samples.data[3], T0 + 5 * MS, 2 * MS, SAMPLE_ON_CPU);
	}
	CHECK_EQ_INT(sum_deltas(t), 4 * MS);
	CHECK_EQ_INT(t->sched.on_cpu_ns, 4 * MS);
out:
	model_free(&m);
}

/*
 * A new thread's first wakeup gives a runnable wait (no off-CPU interval:
 * its start is unknown); a wakeup that found an unknown thread running
 * gives nothing.
 */
static void new_thread_and_wakeup_of_running_thread(void)
{
	struct model m;
	const struct thread *parent, *child, *runner;

	setup(&m);
	sample(&m, 800, 800, T0 + 2 * MS, T0 + 1 * MS);
	wakeup(&m, 800, 801, T0 + 3 * MS, 800, 800, "t800", WAKEUP_NEW | WAKEUP_WAKER_TARGET);
	sample(&m, 800, 801, T0 + 4 * MS, T0 + 3500 * US);
	wakeup(&m, 800, 802, T0 + 3 * MS, 800, 800, "t800", WAKEUP_WAKER_TARGET);
	sample(&m, 800, 802, T0 + 4 * MS, T0 + 2 * MS);
	CHECK_EQ_INT(model_finish_expanded(&m), 0);
	parent = thread_of(&m, 800);
	child = thread_of(&m, 801);
	runner = thread_of(&m, 802);
	CHECK(parent && child && runner);
	if (!parent || !child || !runner)
		goto out;
	CHECK_EQ_INT(child->sched_markers.len, 1);
	if (child->sched_markers.len == 1) {
		check_marker(&child->sched_markers.data[0], SCHED_MARKER_RUNNABLE, T0 + 3 * MS,
			     T0 + 3500 * US, OFFCPU_OTHER);
		CHECK(child->sched_markers.data[0].woken_new);
		check_other(&child->sched_markers.data[0], 800, 800, "t800");
	}
	CHECK_EQ_INT(child->sched.offcpu_count, 0);
	CHECK_EQ_INT(child->sched.runnable_count, 1);
	CHECK_EQ_INT(child->samples.len, 1);
	CHECK_EQ_INT(child->samples.data[0].cpu_delta_ns, 500 * US);
	CHECK_EQ_STR(child->name, "t801");
	CHECK_EQ_INT(child->first_ts, T0 + 3 * MS);

	CHECK_EQ_INT(runner->sched_markers.len, 0);
	CHECK_EQ_INT(runner->sched.runnable_count, 0);
	CHECK_EQ_INT(runner->samples.len, 1);
	CHECK_EQ_INT(runner->samples.data[0].cpu_delta_ns, 2 * MS);

	CHECK_EQ_INT(parent->sched.wakeups_sent, 1);
	CHECK_EQ_INT(parent->sched_markers.len, 1);
	if (parent->sched_markers.len == 1)
		check_other(&parent->sched_markers.data[0], 800, 801, "t801");
out:
	model_free(&m);
}

/* The waker's try_to_wake_up ran just before the wakee's switch-out (a real race). */
static void wakeup_racing_with_switch_out(void)
{
	struct model m;
	const struct thread *t, *w;

	setup(&m);
	sample(&m, 1000, 1002, T0 + 500 * US, T0 + 100 * US);
	sample(&m, 1000, 1001, T0 + 1 * MS, T0 + 500 * US);
	wakeup(&m, 1000, 1001, T0 + 1900 * US, 1000, 1002, "t1002", WAKEUP_WAKER_TARGET);
	feed(&m, mk_switch((struct sw_args){ .pid = 1000,
					     .tid = 1001,
					     .ts = T0 + 2 * MS,
					     .since = T0 + 500 * US,
					     .state = KTASK_INTERRUPTIBLE }));
	sample(&m, 1000, 1001, T0 + 3 * MS, T0 + 2500 * US);
	/* A wakeup followed by more running is not this sleep's: no waker. */
	wakeup(&m, 1000, 1001, T0 + 3200 * US, 1000, 1002, "t1002", WAKEUP_WAKER_TARGET);
	sample(&m, 1000, 1001, T0 + 3400 * US, T0 + 2500 * US);
	feed(&m, mk_switch((struct sw_args){ .pid = 1000,
					     .tid = 1001,
					     .ts = T0 + 4 * MS,
					     .since = T0 + 2500 * US,
					     .state = KTASK_INTERRUPTIBLE }));
	sample(&m, 1000, 1001, T0 + 5 * MS, T0 + 4500 * US);
	CHECK_EQ_INT(model_finish_expanded(&m), 0);
	t = thread_of(&m, 1001);
	w = thread_of(&m, 1002);
	CHECK(t && w);
	if (!t || !w)
		goto out;
	CHECK_EQ_INT(t->sched_markers.len, 3);
	if (t->sched_markers.len == 3) {
		check_marker(&t->sched_markers.data[0], SCHED_MARKER_OFFCPU, T0 + 2 * MS,
			     T0 + 2500 * US, OFFCPU_SLEEPING);
		check_other(&t->sched_markers.data[0], 1000, 1002, "t1002");
		check_marker(&t->sched_markers.data[1], SCHED_MARKER_RUNNABLE, T0 + 2 * MS,
			     T0 + 2500 * US, OFFCPU_SLEEPING);
		check_marker(&t->sched_markers.data[2], SCHED_MARKER_OFFCPU, T0 + 4 * MS,
			     T0 + 4500 * US, OFFCPU_SLEEPING);
		CHECK(!t->sched_markers.data[2].other_known);
	}
	CHECK_EQ_INT(w->sched.wakeups_sent, 1);
	CHECK_EQ_INT(w->sched_markers.len, 1);
	if (w->sched_markers.len == 1)
		check_marker(&w->sched_markers.data[0], SCHED_MARKER_WAKEUP, T0 + 1900 * US,
			     T0 + 1900 * US, 0);
out:
	model_free(&m);
}

/* Lost records must never give negative or made-up CPU time. */
static void lost_records_are_clamped(void)
{
	struct model m;
	const struct thread *t;

	setup(&m);
	m.stop_ts = T0 + 8 * MS;
	/* First seen leaving a CPU it had since before the recording: on since the start. */
	feed(&m, mk_switch((struct sw_args){ .pid = 900,
					     .tid = 901,
					     .ts = T0 + 2 * MS,
					     .since = 0,
					     .state = KTASK_INTERRUPTIBLE }));
	/* Running again, switch-in unknown: off-CPU until seen, no CPU assumed. */
	sample(&m, 900, 901, T0 + 5 * MS, 0);
	/* A slice whose switch-out was lost: only its own time counts. */
	sample(&m, 900, 901, T0 + 6 * MS, T0 + 5500 * US);
	/* A stale `since`: the same slice. */
	feed(&m, mk_switch((struct sw_args){ .pid = 900,
					     .tid = 901,
					     .ts = T0 + 7 * MS,
					     .since = T0 + 1 * MS,
					     .state = KTASK_INTERRUPTIBLE }));
	/* Two switch-outs in a row: the switch-in between comes from `since`. */
	feed(&m, mk_switch((struct sw_args){ .pid = 900,
					     .tid = 901,
					     .ts = T0 + 8 * MS,
					     .since = T0 + 7500 * US,
					     .state = KTASK_INTERRUPTIBLE }));
	CHECK_EQ_INT(model_finish_expanded(&m), 0);
	t = thread_of(&m, 901);
	CHECK(t != NULL);
	if (!t)
		goto out;
	CHECK(samples_sorted(t));
	CHECK_EQ_INT(t->samples.len, 5);
	if (t->samples.len == 5) {
		check_sample(&t->samples.data[0], T0 + 2 * MS, 2 * MS, SAMPLE_OFF_CPU);
		check_sample(&t->samples.data[1], T0 + 3 * MS, 0, SAMPLE_OFF_CPU);
		check_sample(&t->samples.data[2], T0 + 4 * MS, 0, SAMPLE_OFF_CPU);
		check_sample(&t->samples.data[3], T0 + 5 * MS, 0, SAMPLE_ON_CPU);
		check_sample(&t->samples.data[4], T0 + 6 * MS, 500 * US, SAMPLE_ON_CPU);
	}
	CHECK_EQ_INT(t->sched.on_cpu_ns, 2 * MS + 500 * US + 1 * MS + 500 * US);
	CHECK_EQ_INT(t->sched.offcpu_count, 3);
	CHECK_EQ_INT(t->sched.offcpu_ns, 3 * MS + 500 * US);
	for (size_t i = 0; i < t->sched_markers.len; i++)
		CHECK(t->sched_markers.data[i].end >= t->sched_markers.data[i].start);
out:
	model_free(&m);
}

/* Thread `tid` of pid 200 goes to sleep at `ts`; the kernel says it ran `runtime` so far. */
static void sleep_out(struct model *m, uint32_t tid, uint64_t ts, uint64_t since, uint64_t runtime)
{
	feed(m, mk_switch((struct sw_args){ .pid = 200,
					    .tid = tid,
					    .ts = ts,
					    .since = since,
					    .state = KTASK_INTERRUPTIBLE,
					    .runtime = runtime }));
}

/*
 * The kernel's CPU time at each switch-out decides: the slices by switch
 * times are 900 us, 1000 us and 1000 us, the kernel says 950 us (it counts
 * from the wakeup), 800 us and 1000 us; the 150 us given to samples beyond
 * its figure are taken from the next ones.
 */
static void kernel_runtime_trues_up_deltas(void)
{
	struct model m;
	const struct thread *t;

	setup(&m);
	m.stop_ts = T0 + 10 * MS;
	/* A new thread: its kernel CPU time starts at 0. */
	wakeup(&m, 200, 201, T0 + 1 * MS, 200, 200, "t200", WAKEUP_NEW | WAKEUP_WAKER_TARGET);
	sample(&m, 200, 201, T0 + 1500 * US, T0 + 1100 * US);
	sleep_out(&m, 201, T0 + 2 * MS, T0 + 1100 * US, 950 * US);
	sample(&m, 200, 201, T0 + 5900 * US, T0 + 5 * MS);
	sleep_out(&m, 201, T0 + 6 * MS, T0 + 5 * MS, 1750 * US);
	sleep_out(&m, 201, T0 + 9 * MS, T0 + 8 * MS, 2750 * US);
	CHECK_EQ_INT(model_finish_expanded(&m), 0);
	t = thread_of(&m, 201);
	CHECK(t != NULL);
	if (!t)
		goto out;
	CHECK(samples_sorted(t));
	CHECK_EQ_INT(t->samples.len, 8);
	if (t->samples.len == 8) {
		check_sample(&t->samples.data[0], T0 + 1500 * US, 400 * US, SAMPLE_ON_CPU);
		/* The run to the switch-out and the kernel's 50 us more. */
		check_sample(&t->samples.data[1], T0 + 2 * MS, 550 * US, SAMPLE_OFF_CPU);
		check_sample(&t->samples.data[4], T0 + 5900 * US, 900 * US, SAMPLE_ON_CPU);
		/* 100 us run, 200 us too many: none here, 100 us owed. */
		check_sample(&t->samples.data[5], T0 + 6 * MS, 0, SAMPLE_OFF_CPU);
		check_sample(&t->samples.data[7], T0 + 9 * MS, 900 * US, SAMPLE_OFF_CPU);
	}
	CHECK_EQ_INT(sum_deltas(t), 2750 * US);
	CHECK_EQ_INT(t->sched.on_cpu_ns, 2750 * US);
out:
	model_free(&m);
}

/*
 * A lost switch-out hides a slice from the replay, not from the kernel's
 * figure; a figure that grew more than the time that passed (a bad record)
 * counts no more than that time; an unknown one (0) leaves the switch times.
 */
static void kernel_runtime_across_lost_and_bad_records(void)
{
	struct model m;
	const struct thread *t;

	setup(&m);
	m.stop_ts = T0 + 20 * MS;
	sleep_out(&m, 202, T0 + 2 * MS, T0 + 1 * MS, 10 * MS);
	/* Slice 4..5 ms: its switch-out was lost. */
	sample(&m, 200, 202, T0 + 4500 * US, T0 + 4 * MS);
	sleep_out(&m, 202, T0 + 7 * MS, T0 + 6 * MS, 12 * MS);
	/* 1 ms by switch times, 100 ms by the record: at most the 3 ms since the last one. */
	sleep_out(&m, 202, T0 + 10 * MS, T0 + 9 * MS, 112 * MS);
	/* No figure: 1 ms by switch times, and the next true-up starts afresh. */
	sleep_out(&m, 202, T0 + 13 * MS, T0 + 12 * MS, 0);
	sleep_out(&m, 202, T0 + 16 * MS, T0 + 15 * MS, 200 * MS);
	CHECK_EQ_INT(model_finish_expanded(&m), 0);
	t = thread_of(&m, 202);
	CHECK(t != NULL);
	if (!t)
		goto out;
	/* 1 ms (first slice, from its switch-in) + 2 ms + 3 ms + 1 ms + 1 ms. */
	CHECK_EQ_INT(sum_deltas(t), 8 * MS);
	CHECK_EQ_INT(t->sched.on_cpu_ns, 8 * MS);
out:
	model_free(&m);
}

/* A sample of `tid` (pid 200) in a slice since `since`, when the kernel had counted `runtime`. */
static void sample_rt(struct model *m, uint32_t tid, uint64_t ts, uint64_t since, uint64_t runtime)
{
	union record r = mk_sample(200, tid, 0, ts, since);

	r.sample.oncpu_runtime_ns = runtime;
	feed(m, r);
}

/*
 * Samples carry the kernel's CPU time at their slice's switch-in: a slice
 * whose switch-outs were never seen (lost, or kept in the kernel) gives its
 * CPU time to the first sample after it, not to whatever follows the next
 * switch-out. Slices 1..2 ms (its switch-out lost) and 3..3.5 ms (not seen
 * at all), then 4..5 ms.
 */
static void sample_runtime_places_unseen_slices(void)
{
	struct model m;
	const struct thread *t;

	setup(&m);
	m.stop_ts = T0 + 10 * MS;
	sample_rt(&m, 203, T0 + 1500 * US, T0 + 1 * MS, 5 * MS);
	sample_rt(&m, 203, T0 + 4500 * US, T0 + 4 * MS, 6500 * US);
	sleep_out(&m, 203, T0 + 5 * MS, T0 + 4 * MS, 7500 * US);
	CHECK_EQ_INT(model_finish_expanded(&m), 0);
	t = thread_of(&m, 203);
	CHECK(t != NULL);
	if (!t)
		goto out;
	CHECK(t->samples.len >= 3);
	if (t->samples.len >= 3) {
		check_sample(&t->samples.data[0], T0 + 1500 * US, 500 * US, SAMPLE_ON_CPU);
		/* 1 ms of unseen slices, then its own 0.5 ms. */
		check_sample(&t->samples.data[1], T0 + 4500 * US, 1500 * US, SAMPLE_ON_CPU);
		check_sample(&t->samples.data[2], T0 + 5 * MS, 500 * US, SAMPLE_OFF_CPU);
	}
	CHECK_EQ_INT(sum_deltas(t), 2500 * US);
	CHECK_EQ_INT(t->sched.on_cpu_ns, 2500 * US);
out:
	model_free(&m);
}

/*
 * fold_waits: a switch-out held until its switch-in (back_ts) ends its own
 * wait there, whatever the next record says; the short waits the kernel
 * only counted before it add to the totals and the waker's count, and
 * their off-CPU time to the off-CPU samples, which stay inside the wait.
 */
static void held_switch_out_and_folded_waits(void)
{
	struct model m;
	const struct thread *t, *w;
	union record r;

	setup(&m);
	m.sched_min_ns = 1 * MS;
	m.stop_ts = T0 + 10 * MS;
	sample_rt(&m, 205, T0 + 100 * US, T0 + 50 * US, 1 * MS); /* the waker, seen */
	sample_rt(&m, 204, T0 + 1500 * US, T0 + 1 * MS, 5 * MS);
	r = mk_switch((struct sw_args){ .pid = 200,
					.tid = 204,
					.ts = T0 + 2 * MS,
					.since = T0 + 1 * MS,
					.state = KTASK_INTERRUPTIBLE,
					.runtime = 6 * MS });
	r.sw.back_ts = T0 + 5 * MS;
	r.sw.folded = (struct folded_waits){ .off_ns = 2500 * US,
					     .runnable_ns = 100 * US,
					     .waits = 10,
					     .preempted = 4,
					     .runnable = 6,
					     .wakeups = 6,
					     .waker_pid = 200,
					     .waker_tid = 205,
					     .waker_wakeups = 5 };
	feed(&m, r);
	/* Its wakeup comes after it, as the kernel sends them. */
	wakeup(&m, 200, 204, T0 + 4900 * US, 200, 205, "t205", WAKEUP_WAKER_TARGET);
	/* A later slice whose switch-in the replay did not see: it must not reopen the wait. */
	sample_rt(&m, 204, T0 + 8500 * US, T0 + 8 * MS, 6500 * US);
	/* Waits counted at the end of the recording. */
	r = mk_switch((struct sw_args){ .pid = 200, .tid = 204, .ts = T0 + 9 * MS });
	r.sw.flags = SWITCH_FOLD_ONLY;
	r.sw.folded = (struct folded_waits){ .off_ns = 30 * US, .waits = 3 };
	feed(&m, r);
	CHECK_EQ_INT(model_finish_expanded(&m), 0);
	t = thread_of(&m, 204);
	w = thread_of(&m, 205);
	CHECK(t && w);
	if (!t || !w)
		goto out;
	/* Off-CPU 2..5 ms; its runnable part (4.9..5 ms) is under the threshold. */
	CHECK_EQ_INT(t->sched_markers.len, 1);
	if (t->sched_markers.len >= 1)
		check_marker(&t->sched_markers.data[0], SCHED_MARKER_OFFCPU, T0 + 2 * MS,
			     T0 + 5 * MS, OFFCPU_SLEEPING);
	CHECK_EQ_INT(t->sched.switches_voluntary, 1 + 6 + 3);
	CHECK_EQ_INT(t->sched.switches_preempted, 4);
	CHECK_EQ_INT(t->sched.offcpu_count, 1 + 10 + 3);
	CHECK_EQ_INT(t->sched.offcpu_ns, 3 * MS + 2500 * US + 30 * US);
	CHECK_EQ_INT(t->sched.offcpu_hidden_count, 13);
	CHECK_EQ_INT(t->sched.runnable_hidden_count, 6 + 1);
	CHECK_EQ_INT(t->sched.runnable_hidden_ns, 100 * US + 100 * US);
	CHECK_EQ_INT(w->sched.wakeups_sent, 5 + 1);
	CHECK_EQ_INT(m.stats.switches, 1 + 10 + 3);
	CHECK_EQ_INT(m.stats.switches_folded, 13);
	CHECK_EQ_INT(m.stats.wakeups_folded, 6);
	/*
	 * 2.5 ms folded + the 3 ms wait: 5 off-CPU samples, all inside 2..5 ms:
	 * the 2 the wait's grid has no room for at the switch-out, then one
	 * per interval from it (model/offcpu_samples.c).
	 */
	CHECK(samples_sorted(t));
	CHECK_EQ_INT(t->samples.len, 1 + 5 + 1);
	if (t->samples.len == 7) {
		for (int k = 0; k < 5; k++)
			check_sample(&t->samples.data[1 + k],
				     T0 + 2 * MS + (k < 2 ? 0 : (k - 2) * MS), k ? 0 : 500 * US,
				     SAMPLE_OFF_CPU);
		/* Unseen slices in 5..8 ms (0.5 ms by the kernel), and its own 0.5 ms. */
		check_sample(&t->samples.data[6], T0 + 8500 * US, 1 * MS, SAMPLE_ON_CPU);
	}
out:
	model_free(&m);
}

static void exiting_thread_has_no_offcpu_tail(void)
{
	struct model m;
	const struct thread *t;

	setup(&m);
	m.stop_ts = T0 + 10 * MS;
	sample(&m, 1100, 1101, T0 + 1 * MS, T0 + 500 * US);
	feed(&m, mk_switch((struct sw_args){ .pid = 1100,
					     .tid = 1101,
					     .ts = T0 + 2 * MS,
					     .since = T0 + 500 * US,
					     .state = KTASK_DEAD,
					     .stack = true }));
	CHECK_EQ_INT(model_finish_expanded(&m), 0);
	t = thread_of(&m, 1101);
	CHECK(t != NULL);
	if (!t)
		goto out;
	CHECK_EQ_INT(t->samples.len, 1);
	CHECK_EQ_INT(t->sched_markers.len, 0);
	CHECK_EQ_INT(t->sched.offcpu_count, 0);
	CHECK_EQ_INT(t->sched.switches_voluntary, 1);
	CHECK_EQ_INT(t->sched.on_cpu_ns, 1500 * US);
	CHECK_EQ_INT(m.stats.offcpu_samples, 0);
out:
	model_free(&m);
}

/* Idle samples, and every sample without sched_enabled, keep the period as CPU delta. */
static void period_deltas_without_replay(void)
{
	struct model m;
	union record idle = mk_sample(0, 0, 1, T0 + 1 * MS, T0 + 500 * US);
	const struct thread *t;

	setup(&m);
	feed(&m, idle);
	CHECK_EQ_INT(m.threads.data[0].samples.len, 1);
	CHECK_EQ_INT(m.threads.data[0].samples.data[0].cpu_delta_ns, 1001001);
	CHECK_EQ_INT(m.threads.data[0].replay ? m.threads.data[0].replay->pending.len : 0, 0);
	model_free(&m);

	setup(&m);
	m.sched_enabled = false;
	sample(&m, 100, 101, T0 + 1 * MS, T0 + 500 * US);
	feed(&m, mk_switch((struct sw_args){ .pid = 100,
					     .tid = 101,
					     .ts = T0 + 2 * MS,
					     .since = T0 + 500 * US,
					     .state = KTASK_INTERRUPTIBLE }));
	wakeup(&m, 100, 101, T0 + 3 * MS, 0, 0, "swapper/0", 0);
	sample(&m, 100, 101, T0 + 4 * MS, T0 + 3500 * US);
	CHECK_EQ_INT(model_finish_expanded(&m), 0);
	t = thread_of(&m, 101);
	CHECK(t != NULL);
	if (t) {
		CHECK_EQ_INT(t->samples.len, 2);
		CHECK_EQ_INT(t->samples.data[0].cpu_delta_ns, 1001001);
		CHECK_EQ_INT(t->samples.data[1].cpu_delta_ns, 1001001);
		CHECK_EQ_INT(t->sched_markers.len, 0);
		CHECK_EQ_INT(t->sched.on_cpu_ns, 0);
	}
	CHECK_EQ_INT(m.stats.switches, 1);
	CHECK_EQ_INT(m.stats.wakeups, 1);
	model_free(&m);
}

static void malformed_sched_records(void)
{
	struct model m;
	union record sw = mk_switch(
		(struct sw_args){ .pid = 100, .tid = 101, .ts = T0 + 1 * MS, .stack = true });
	union record wk = mk_wakeup(100, 101, T0 + 1 * MS, 0, 0, "swapper/0", 0);

	setup(&m);
	/* Shorter than the fixed part. */
	CHECK_EQ_INT(model_add_switch(&m, &sw.sw, offsetof(struct switch_event, ips) - 1), 0);
	/* More frames announced than the record holds. */
	sw.sw.kstack_len = 200;
	CHECK_EQ_INT(model_add_record(&m, &sw, sw.hdr.size), 0);
	sw.sw.kstack_len = 2;
	CHECK_EQ_INT(model_add_record(&m, &sw, sw.hdr.size), 0);
	CHECK_EQ_INT(model_add_wakeup(&m, &wk.wakeup, sizeof(wk.wakeup) - 1), 0);
	CHECK_EQ_INT(m.stats.events_malformed, 4);
	/* Python frames at switch-out: more than the record holds, than any may, or beside records. */
	sw.sw.kstack_len = 1;
	sw.sw.py_len = 1;
	CHECK_EQ_INT(model_add_record(&m, &sw, sw.hdr.size), 0);
	sw.sw.py_len = BPFPROF_MAX_PYFRAMES + 1;
	CHECK_EQ_INT(model_add_record(&m, &sw, sizeof(sw.sw)), 0);
	sw.sw.py_len = 1;
	sw.sw.rt_len = 1;
	CHECK_EQ_INT(model_add_record(&m, &sw, sizeof(sw.sw)), 0);
	CHECK_EQ_INT(m.stats.events_malformed, 7);
	sw.sw.py_len = 0;
	sw.sw.rt_len = 0;
	CHECK_EQ_INT(m.stats.switches, 0);
	CHECK_EQ_INT(m.stats.wakeups, 0);
	/* A switch whose prev is no target (a newer BPF side may send them): counted only. */
	sw.sw.kstack_len = 1;
	sw.sw.flags &= ~SWITCH_PREV_TARGET;
	CHECK_EQ_INT(model_add_record(&m, &sw, sw.hdr.size), 0);
	CHECK_EQ_INT(m.stats.switches, 1);
	CHECK_EQ_INT(m.threads.len, 0);
	CHECK_EQ_INT(model_finish_expanded(&m), 0);
	model_free(&m);
}

/*
 * The kernel takes one switch-out stack per thread per sampling interval and
 * flags the switch-outs in between SWITCH_STACK_REUSED: they stand on the
 * thread's last stack in time order, even when the records arrive out of
 * order; a reuse with no stack before it has only the reason leaf.
 */
static void reused_switch_stacks(void)
{
	struct model m;
	const struct thread *t;
	union record first, with_stack, reuse;

	setup(&m);
	m.stop_ts = T0 + 40 * MS;
	/* 201: a reuse before any stack, then a stack, then a reuse. */
	first = mk_switch((struct sw_args){ .pid = 200,
					    .tid = 201,
					    .ts = T0 + 2 * MS,
					    .since = T0 + 1 * MS,
					    .state = KTASK_INTERRUPTIBLE });
	first.sw.flags |= SWITCH_STACK_REUSED;
	with_stack = mk_switch((struct sw_args){ .pid = 200,
						 .tid = 201,
						 .cpu = 1,
						 .ts = T0 + 10 * MS,
						 .since = T0 + 9 * MS,
						 .state = KTASK_INTERRUPTIBLE,
						 .stack = true });
	reuse = mk_switch((struct sw_args){ .pid = 200,
					    .tid = 201,
					    .ts = T0 + 20 * MS,
					    .since = T0 + 19 * MS,
					    .state = KTASK_UNINTERRUPTIBLE });
	reuse.sw.flags |= SWITCH_STACK_REUSED;
	/* The reuse arrives first (another CPU's ring), the replay orders them. */
	feed(&m, reuse);
	feed(&m, first);
	feed(&m, with_stack);
	CHECK_EQ_INT(model_finish_expanded(&m), 0);
	t = thread_of(&m, 201);
	CHECK(t != NULL);
	if (!t)
		goto out;
	CHECK_EQ_INT(t->sched_markers.len, 3);
	if (t->sched_markers.len != 3)
		goto out;
	CHECK_EQ_INT(t->sched_markers.data[0].stack, NO_INDEX);
	check_switch_stack(&m, t->sched_markers.data[1].stack);
	CHECK_EQ_INT(t->sched_markers.data[2].stack, t->sched_markers.data[1].stack);
	CHECK_EQ_INT(t->sched_markers.data[2].reason, OFFCPU_BLOCKED);
	for (size_t i = 0; i < t->samples.len; i++) {
		const struct thread_sample *s = &t->samples.data[i];

		if (s->ts < T0 + 10 * MS)
			check_offcpu_stack(&m, s->stack, NO_INDEX, OFFCPU_SLEEPING);
		else if (s->ts >= T0 + 20 * MS)
			check_offcpu_stack(&m, s->stack, t->sched_markers.data[1].stack,
					   OFFCPU_BLOCKED);
	}
out:
	model_free(&m);
}

/*
 * A thread alternating between two switch-out places (blocking in a read,
 * preempted elsewhere) gets a stack slot per place: each reuse stands on
 * its own slot's stack, not on whichever stack came last.
 */
static void reused_stacks_per_slot(void)
{
	struct model m;
	const struct thread *t;
	union record r;
	uint32_t stacks[4];
	size_t n = 0;

	setup(&m);
	m.stop_ts = T0 + 40 * MS;
	/* Slot 0: a sleep with a stack; slot 1: a preemption with another stack. */
	feed(&m, mk_switch((struct sw_args){ .pid = 200,
					     .tid = 201,
					     .ts = T0 + 2 * MS,
					     .since = T0 + 1 * MS,
					     .state = KTASK_INTERRUPTIBLE,
					     .stack = true }));
	r = mk_switch((struct sw_args){ .pid = 200,
					.tid = 201,
					.ts = T0 + 6 * MS,
					.since = T0 + 5 * MS,
					.preempt = true,
					.stack = true });
	r.sw.ips[1] = UIP + 0x100;
	r.sw.flags |= 1u << SWITCH_STACK_SLOT_SHIFT;
	feed(&m, r);
	/* Reuses of slot 0 then slot 1, after the other slot's stack was taken. */
	r = mk_switch((struct sw_args){ .pid = 200,
					.tid = 201,
					.ts = T0 + 10 * MS,
					.since = T0 + 9 * MS,
					.state = KTASK_INTERRUPTIBLE });
	r.sw.flags |= SWITCH_STACK_REUSED;
	feed(&m, r);
	r = mk_switch((struct sw_args){ .pid = 200,
					.tid = 201,
					.ts = T0 + 14 * MS,
					.since = T0 + 13 * MS,
					.preempt = true });
	r.sw.flags |= SWITCH_STACK_REUSED | (1u << SWITCH_STACK_SLOT_SHIFT);
	feed(&m, r);
	CHECK_EQ_INT(model_finish_expanded(&m), 0);
	t = thread_of(&m, 201);
	CHECK(t != NULL);
	if (!t)
		goto out;
	/* The off-CPU intervals' stacks, in time order (preemptions add runnable markers). */
	for (size_t i = 0; i < t->sched_markers.len; i++)
		if (t->sched_markers.data[i].kind == SCHED_MARKER_OFFCPU && n < 4)
			stacks[n++] = t->sched_markers.data[i].stack;
	CHECK_EQ_INT(n, 4);
	if (n != 4)
		goto out;
	check_switch_stack(&m, stacks[0]);
	CHECK(stacks[1] != NO_INDEX);
	CHECK(stacks[1] != stacks[0]);
	CHECK_EQ_INT(stacks[2], stacks[0]);
	CHECK_EQ_INT(stacks[3], stacks[1]);
out:
	model_free(&m);
}

/*
 * Issue 37: 1000 threads that fall asleep 2 ms in and sleep to the end of
 * 6 s, and one that sleeps 70 s: their off-CPU samples, one per interval
 * (5,998 each), are held as runs on 2 rows per wait (the run and the last
 * sample, for the stack chart's box), a run of at most 65,536 per row;
 * every thread's count stays exact, on the grid from the switch-out.
 */
static void late_sleepers_are_few_rows(void)
{
	const uint32_t threads = 1000, long_tid = 5000;
	const uint64_t out = T0 + 2 * MS, long_stop = T0 + 70002 * MS;
	uint64_t rows = 0;
	struct model m;

	setup(&m);
	/* The recording's end, as recording_stop sets it. */
	m.stop_ts = m.end_ts = T0 + 6000 * MS;
	for (uint32_t k = 0; k < threads; k++) {
		sample(&m, 200, 1000 + k, T0 + 1 * MS, T0 + 500 * US);
		sleep_out(&m, 1000 + k, out, T0 + 500 * US, 0);
	}
	CHECK_EQ_INT(model_finish(&m), 0);
	for (uint32_t k = 0; k < threads; k++) {
		const struct thread *t = thread_of(&m, 1000 + k);
		const struct thread_sample *s;

		CHECK(t != NULL);
		if (!t)
			break;
		/* The on-CPU sample, the run 2 .. 5998 ms, the last at 5999 ms. */
		CHECK_EQ_INT(t->samples.len, 3);
		if (t->samples.len != 3)
			break;
		s = t->samples.data;
		check_sample(&s[1], out, 1 * MS, SAMPLE_OFF_CPU);
		CHECK_EQ_INT(s[1].repeats, 5996);
		check_sample(&s[2], out + 5997 * MS, 0, SAMPLE_OFF_CPU);
		CHECK_EQ_INT(s[2].repeats, 0);
		CHECK_EQ_INT(s[2].stack, s[1].stack);
		rows += 2;
	}
	CHECK_EQ_INT(m.stats.offcpu_samples, (uint64_t)threads * 5998);
	CHECK_EQ_INT(m.stats.offcpu_rows, rows);
	model_free(&m);

	/* 70 s asleep: 70,000 samples, a run longer than a row holds. */
	setup(&m);
	m.stop_ts = m.end_ts = long_stop;
	sample(&m, 200, long_tid, T0 + 1 * MS, T0 + 500 * US);
	sleep_out(&m, long_tid, out, T0 + 500 * US, 0);
	CHECK_EQ_INT(model_finish(&m), 0);
	{
		const struct thread *t = thread_of(&m, long_tid);
		uint64_t weight = 0, next = out;

		CHECK(t && t->samples.len == 4);
		for (size_t i = 1; t && i < t->samples.len; i++) {
			const struct thread_sample *s = &t->samples.data[i];

			/* Each row's run goes on where the last one ended, inside the wait. */
			CHECK_EQ_INT(s->ts, next);
			CHECK(s->ts + s->repeats * MS < long_stop);
			weight += sample_weight(s);
			next = s->ts + sample_weight(s) * MS;
		}
		CHECK_EQ_INT(weight, 70000);
		CHECK_EQ_INT(m.stats.offcpu_samples, 70000);
		CHECK_EQ_INT(m.stats.offcpu_rows, 3);
	}
	model_free(&m);
}

int main(void)
{
	RUN(run_1ms_sleep_9ms_exact_deltas_and_offcpu_samples);
	RUN(late_sleepers_are_few_rows);
	RUN(migrating_thread_out_of_order_gives_same_result);
	RUN(no_offcpu_samples_keeps_markers_and_deltas);
	RUN(offcpu_time_carries_across_short_sleeps);
	RUN(sleep_wakeup_markers);
	RUN(blocking_syscall_markers);
	RUN(preempted_and_runnable_switch);
	RUN(other_threads_by_their_track_names);
	RUN(short_intervals_are_counted_not_marked);
	RUN(folded_wakeups_count_like_records);
	RUN(reasons_from_task_state);
	RUN(reused_stacks_per_slot);
	RUN(blocked_and_idle_waits_end_to_end);
	RUN(stop_closes_open_intervals);
	RUN(leaving_the_targets_ends_the_wait);
	RUN(late_event_across_flushes);
	RUN(new_thread_and_wakeup_of_running_thread);
	RUN(wakeup_racing_with_switch_out);
	RUN(lost_records_are_clamped);
	RUN(kernel_runtime_trues_up_deltas);
	RUN(kernel_runtime_across_lost_and_bad_records);
	RUN(sample_runtime_places_unseen_slices);
	RUN(held_switch_out_and_folded_waits);
	RUN(exiting_thread_has_no_offcpu_tail);
	RUN(period_deltas_without_replay);
	RUN(malformed_sched_records);
	RUN(reused_switch_stacks);
	return test_summary();
}
