// SPDX-License-Identifier: BSD-2-Clause
/*
 * Cutting the live model into snapshots (model/cut.c) with synthetic
 * records: each event in exactly one snapshot, intervals split at the
 * boundary with nothing lost or counted twice, lifetimes per window, dead
 * processes and their stacks gone from the live model. No BPF, no root.
 */
#include <stdlib.h>

#include "model/cut.h"
#include "sched_records.h"

#define B1 (T0 + 100 * MS) /* first boundary */
#define B2 (T0 + 200 * MS)

static void setup(struct model *m, bool sched)
{
	model_init(m, NULL, T0);
	m->sched_enabled = sched;
	m->offcpu_samples = sched;
	m->offcpu_interval_ns = 1 * MS;
	m->sched_min_ns = 0;
	m->period_is_ns = true;
	m->lifecycle = true;
}

static const struct process *find_process(const struct model *m, uint32_t pid)
{
	for (size_t i = 0; i < m->processes.len; i++)
		if (m->processes.data[i].pid == pid)
			return &m->processes.data[i];
	return NULL;
}

/* The one marker of `kind`, or NULL (a second one is an error). */
static const struct sched_marker *only_marker(const struct thread *t, uint8_t kind)
{
	const struct sched_marker *found = NULL;

	for (size_t i = 0; i < t->sched_markers.len; i++) {
		if (t->sched_markers.data[i].kind != kind)
			continue;
		CHECK(!found);
		found = &t->sched_markers.data[i];
	}
	return found;
}

/* The off-CPU samples the thread's rows stand for (thread_sample.repeats). */
static size_t count_offcpu_samples(const struct thread *t)
{
	size_t n = 0;

	for (size_t i = 0; i < t->samples.len; i++)
		if (t->samples.data[i].kind == SAMPLE_OFF_CPU)
			n += sample_weight(&t->samples.data[i]);
	return n;
}

static size_t count_markers(const struct thread *t, uint8_t kind)
{
	size_t n = 0;

	for (size_t i = 0; i < t->sched_markers.len; i++)
		n += t->sched_markers.data[i].kind == kind;
	return n;
}

/* The cut as continuous mode does it: replay up to the boundary, cut, finish the snapshot. */
static void cut_at(struct model *live, struct model *snap, uint64_t boundary)
{
	CHECK_EQ_INT(model_sched_flush(live, boundary - 1), 0);
	CHECK_EQ_INT(model_cut(live, snap, boundary), 0);
	CHECK_EQ_INT(model_finish(snap), 0);
	CHECK_EQ_INT(snap->start_ts < boundary, 1);
	CHECK_EQ_INT(snap->stop_ts, boundary);
	CHECK_EQ_INT(live->start_ts, boundary);
}

/* Without scheduler events, samples go by their time; records of the next window wait. */
static void test_samples_split_by_time(void)
{
	struct model live, snap;
	const struct thread *t;

	setup(&live, false);
	sample(&live, 10, 10, T0 + 10 * MS, 0);
	sample(&live, 10, 10, B1 - 1, 0);
	/* Drained early from another CPU's ring: it belongs to the next window. */
	sample(&live, 10, 10, B1, 0);
	sample(&live, 10, 10, B1 + 5 * MS, 0);
	cut_at(&live, &snap, B1);

	t = thread_of(&snap, 10);
	CHECK(t != NULL);
	if (t) {
		CHECK_EQ_INT(t->samples.len, 2);
		CHECK(t->samples.data[t->samples.len - 1].ts < B1);
	}
	CHECK_EQ_INT(model_finish(&live), 0);
	t = thread_of(&live, 10);
	CHECK(t != NULL);
	if (t) {
		CHECK_EQ_INT(t->samples.len, 2);
		CHECK_EQ_INT(t->samples.data[0].ts, B1);
		/* Its stack was interned again in the live model's own tables. */
		CHECK(t->samples.data[0].stack < live.stacks.len);
		CHECK_EQ_INT(
			live.frames.data[live.stacks.data[t->samples.data[0].stack].frame].offset,
			0x402000 + 10);
	}
	model_free(&snap);
	model_free(&live);
}

/*
 * A thread runs across B1, sleeps across B2 and is woken after it: its CPU
 * time and its wait are split at each boundary, adding up to the whole.
 */
static void test_intervals_split_at_boundaries(void)
{
	struct model live, s1, s2, s3;
	const struct thread *a, *b, *c;
	const struct sched_marker *mk;
	uint64_t out = B2 - 30 * MS, wake = B2 + 10 * MS, in = B2 + 15 * MS;

	setup(&live, true);
	sample(&live, 10, 10, B1 - 20 * MS, B1 - 50 * MS); /* running since B1-50 */
	sample(&live, 10, 10, B1 + 20 * MS, B1 - 50 * MS); /* same slice, across B1 */
	feed(&live, mk_switch((struct sw_args){ .pid = 10,
						.tid = 10,
						.ts = out,
						.since = B1 - 50 * MS,
						.state = KTASK_INTERRUPTIBLE,
						.stack = true }));
	cut_at(&live, &s1, B1);
	a = thread_of(&s1, 10);
	CHECK(a != NULL);
	if (a) {
		CHECK_EQ_INT(a->sched.on_cpu_ns, 50 * MS);
		CHECK_EQ_INT(sum_deltas(a),
			     30 * MS); /* up to its sample; the rest is in the totals */
	}

	cut_at(&live, &s2, B2);
	b = thread_of(&s2, 10);
	CHECK(b != NULL);
	if (b) {
		CHECK_EQ_INT(b->sched.on_cpu_ns, out - B1);
		mk = only_marker(b, SCHED_MARKER_OFFCPU);
		CHECK(mk != NULL);
		if (mk) {
			CHECK_EQ_INT(mk->start, out);
			CHECK_EQ_INT(mk->end, B2);
			CHECK(mk->stack != NO_INDEX && mk->stack < s2.stacks.len);
		}
		CHECK_EQ_INT(b->sched.offcpu_ns, B2 - out);
	}

	wakeup(&live, 10, 10, wake, 20, 20, "waker", 0);
	sample(&live, 10, 10, in + MS, in);
	CHECK_EQ_INT(model_sched_flush(&live, UINT64_MAX), 0);
	live.stop_ts = B2 + 50 * MS;
	CHECK_EQ_INT(model_cut(&live, &s3, live.stop_ts), 0);
	CHECK_EQ_INT(model_finish(&s3), 0);
	c = thread_of(&s3, 10);
	CHECK(c != NULL);
	if (c) {
		mk = only_marker(c, SCHED_MARKER_OFFCPU);
		CHECK(mk != NULL);
		if (mk) {
			CHECK_EQ_INT(mk->start, B2);
			CHECK_EQ_INT(mk->end, in);
			/* The switch-out stack came along, in the new tables. */
			CHECK(mk->stack != NO_INDEX && mk->stack < s3.stacks.len);
			CHECK_EQ_INT(s3.frames.data[s3.stacks.data[mk->stack].frame].offset, KIP);
		}
		mk = only_marker(c, SCHED_MARKER_RUNNABLE);
		CHECK(mk != NULL);
		if (mk) {
			CHECK_EQ_INT(mk->start, wake);
			CHECK_EQ_INT(mk->end, in);
		}
		CHECK_EQ_INT(c->sched.offcpu_ns, in - B2);
		/* One off-CPU sample per ms of the whole wait, none twice. */
		if (b)
			CHECK_EQ_INT(count_offcpu_samples(b) + count_offcpu_samples(c),
				     (in - out) / MS);
	}
	model_free(&s1);
	model_free(&s2);
	model_free(&s3);
	model_free(&live);
}

/*
 * A slice across B1 whose switch-out carries the kernel's CPU time: the
 * snapshot has its part up to B1, the live model the rest and the kernel's
 * difference, adding up to the kernel's figure, nothing counted twice.
 */
static void test_kernel_runtime_across_boundary(void)
{
	struct model live, s1;
	const struct thread *a, *b;

	setup(&live, true);
	feed(&live, mk_switch((struct sw_args){ .pid = 10,
						.tid = 10,
						.ts = B1 - 20 * MS,
						.since = B1 - 21 * MS,
						.state = KTASK_INTERRUPTIBLE,
						.runtime = 500 * MS }));
	/* On a CPU at the cut: 20 ms by switch times, 21 ms by the kernel. */
	sample(&live, 10, 10, B1 - 5 * MS, B1 - 10 * MS);
	feed(&live, mk_switch((struct sw_args){ .pid = 10,
						.tid = 10,
						.ts = B1 + 10 * MS,
						.since = B1 - 10 * MS,
						.state = KTASK_INTERRUPTIBLE,
						.runtime = 521 * MS }));
	cut_at(&live, &s1, B1);
	live.stop_ts = B1 + 20 * MS;
	CHECK_EQ_INT(model_finish(&live), 0);
	a = thread_of(&s1, 10);
	b = thread_of(&live, 10);
	CHECK(a && b);
	if (a && b) {
		/* Its first slice (1 ms, before the first figure) and 10 ms up to B1. */
		CHECK_EQ_INT(a->sched.on_cpu_ns, 1 * MS + 10 * MS);
		CHECK_EQ_INT(b->sched.on_cpu_ns, 11 * MS);
		/* What the snapshot's samples did not take stays in the snapshot. */
		CHECK_EQ_INT(sum_deltas(b), 11 * MS);
	}
	model_free(&s1);
	model_free(&live);
}

/* Woken before the boundary, on a CPU after it: the waker's instant is shown once. */
static void test_wakeup_across_boundary(void)
{
	struct model live, s1, s2;
	const struct thread *t;
	const struct sched_marker *mk;

	setup(&live, true);
	sample(&live, 20, 20, T0 + MS, T0); /* the waker is a thread of the model */
	feed(&live, mk_switch((struct sw_args){ .pid = 10,
						.tid = 10,
						.ts = B1 - 10 * MS,
						.since = T0,
						.state = KTASK_INTERRUPTIBLE }));
	wakeup(&live, 10, 10, B1 - 4 * MS, 20, 20, "t20", 0);
	cut_at(&live, &s1, B1);
	sample(&live, 10, 10, B1 + 3 * MS, B1 + 2 * MS);
	CHECK_EQ_INT(model_sched_flush(&live, UINT64_MAX), 0);
	CHECK_EQ_INT(model_cut(&live, &s2, B1 + 10 * MS), 0);
	CHECK_EQ_INT(model_finish(&s2), 0);

	t = thread_of(&s1, 20);
	CHECK(t && count_markers(t, SCHED_MARKER_WAKEUP) == 1);
	t = thread_of(&s2, 20);
	CHECK(!t || count_markers(t, SCHED_MARKER_WAKEUP) == 0);
	t = thread_of(&s1, 10);
	mk = t ? only_marker(t, SCHED_MARKER_RUNNABLE) : NULL;
	CHECK(mk && mk->start == B1 - 4 * MS && mk->end == B1);
	t = thread_of(&s2, 10);
	mk = t ? only_marker(t, SCHED_MARKER_RUNNABLE) : NULL;
	CHECK(mk && mk->start == B1 && mk->end == B1 + 2 * MS && mk->other_tid == 20);
	model_free(&s1);
	model_free(&s2);
	model_free(&live);
}

/* Lifetimes per window: born after the boundary, died before it, died after it. */
static void test_lifetimes(void)
{
	struct model live, snap;
	const struct process *p;

	setup(&live, false);
	sample(&live, 10, 10, T0 + MS, 0);
	sample(&live, 30, 30, T0 + MS, 0);
	sample(&live, 40, 40, T0 + MS, 0);
	CHECK_EQ_INT(model_exit(&live, 30, 30, B1 - 10 * MS), 0);	 /* dies in the window */
	CHECK_EQ_INT(model_exit(&live, 40, 40, B1 + 10 * MS), 0);	 /* dies in the next */
	CHECK_EQ_INT(model_fork(&live, 10, 10, 50, 50, B1 + 5 * MS), 0); /* born in the next */
	sample(&live, 50, 50, B1 + 6 * MS, 0);
	cut_at(&live, &snap, B1);

	p = find_process(&snap, 30);
	CHECK(p && p->ended && p->end_ts == B1 - 10 * MS);
	p = find_process(&snap, 40);
	CHECK(p && !p->ended);
	CHECK(!find_process(&snap, 50));
	CHECK(!thread_of(&snap, 50));

	CHECK_EQ_INT(model_finish(&live), 0);
	CHECK(!find_process(&live, 30));
	p = find_process(&live, 40);
	CHECK(p && p->ended && p->end_ts == B1 + 10 * MS && !p->started);
	p = find_process(&live, 50);
	CHECK(p && p->started && p->start_ts == B1 + 5 * MS);
	p = find_process(&live, 10);
	CHECK(p && !p->started);
	model_free(&snap);
	model_free(&live);
}

static bool alive_none(void *ctx, uint32_t pid, uint32_t tid)
{
	return false;
}

/*
 * A thread that did nothing in a window is still in its snapshot while it
 * lives; one that /proc says is gone leaves the model; one first heard of
 * after the boundary is the next window's.
 */
static void test_idle_and_vanished_threads(void)
{
	struct proc_source src = { .thread_alive = alive_none };
	struct model live, s1, s2, s3;

	setup(&live, false);
	sample(&live, 10, 10, T0 + MS, 0);
	sample(&live, 11, 11, B1 + MS, 0); /* drained early */
	cut_at(&live, &s1, B1);
	CHECK(thread_of(&s1, 10));
	CHECK(!thread_of(&s1, 11));
	CHECK(!find_process(&s1, 11));
	cut_at(&live, &s2, B2);
	CHECK(thread_of(&s2, 10) && thread_of(&s2, 10)->samples.len == 0);
	CHECK(thread_of(&s2, 11));
	CHECK(thread_of(&live, 10));
	/* Nothing heard of it for a whole window and /proc says it is gone. */
	live.source = src;
	cut_at(&live, &s3, B2 + 100 * MS);
	CHECK(thread_of(&s3, 10));
	CHECK(!thread_of(&live, 10));
	CHECK(!thread_of(&live, 11));
	model_free(&s1);
	model_free(&s2);
	model_free(&s3);
	model_free(&live);
}

/* A seeded target that never ran: no stacks at all, and its replay state is still unset. */
static void test_thread_without_events(void)
{
	struct model live, snap;

	setup(&live, true);
	CHECK(model_thread(&live, 5, 5, -1, T0) != NULL);
	cut_at(&live, &snap, B1);
	CHECK(thread_of(&snap, 5));
	CHECK(thread_of(&live, 5));
	CHECK_EQ_INT(live.stacks.len, 0);
	model_free(&snap);
	model_free(&live);
}

/*
 * Many short processes with stacks of their own, one cut per window: the
 * live model does not grow with them.
 */
static void test_live_model_stays_small(void)
{
	struct model live, snap;
	size_t frames_after_first = 0, threads_after_first = 0;

	setup(&live, true);
	for (unsigned int w = 0; w < 50; w++) {
		uint64_t b = T0 + (w + 1) * 100 * MS;

		for (unsigned int k = 0; k < 40; k++) {
			uint32_t pid = 1000 + w * 40 + k;
			union record r = mk_sample(pid, pid, 0, b - 90 * MS + k * MS, 0);

			r.sample.ips[0] = 0x500000 + pid; /* a frame of its own */
			feed(&live, r);
			CHECK_EQ_INT(model_exit(&live, pid, pid, b - 50 * MS + k * MS), 0);
		}
		sample(&live, 10, 10, b - MS, b - 2 * MS); /* one long-lived thread */
		cut_at(&live, &snap, b);
		CHECK_EQ_INT(snap.processes.len, 41);
		model_free(&snap);
		if (w == 0) {
			frames_after_first = live.frames.len;
			threads_after_first = live.threads.len;
		}
	}
	CHECK_EQ_INT(live.threads.len, threads_after_first);
	CHECK(live.frames.len <= frames_after_first + 1);
	CHECK_EQ_INT(live.processes.len, 1);
	model_free(&live);
}

/*
 * Lost-record intervals: close ones merge, far ones stay apart, nothing past
 * LOST_MAX_INTERVALS is a new one, and a cut gives each snapshot the
 * intervals that start in it (ending at its boundary at the latest).
 */
static void test_lost_intervals(void)
{
	uint64_t one[LOST_KINDS] = { 1, 2, 3, 4, 5 }, none[LOST_KINDS] = { 0 };
	struct model live, snap;

	setup(&live, true);
	CHECK_EQ_INT(model_add_lost(&live, T0, T0 + 10 * MS, none), 0);
	CHECK_EQ_INT(live.lost.len, 0); /* nothing lost: no interval */
	CHECK_EQ_INT(model_add_lost(&live, T0 + 10 * MS, T0 + 20 * MS, one), 0);
	CHECK_EQ_INT(model_add_lost(&live, T0 + 20 * MS, T0 + 30 * MS, one), 0);
	CHECK_EQ_INT(live.lost.len, 1);
	CHECK_EQ_INT(live.lost.data[0].start, T0 + 10 * MS);
	CHECK_EQ_INT(live.lost.data[0].end, T0 + 30 * MS);
	CHECK_EQ_INT(live.lost.data[0].count[LOST_SWITCHES], 4);
	/* 70 ms past the last: a new one (the gap is over LOST_MERGE_GAP_NS). */
	CHECK_EQ_INT(model_add_lost(&live, T0 + 150 * MS, T0 + 160 * MS, one), 0);
	CHECK_EQ_INT(model_add_lost(&live, T0 + 290 * MS, T0 + 300 * MS, one), 0);
	CHECK_EQ_INT(live.lost.len, 3);
	/* A cut at 155 ms: the first two are the snapshot's, the second ending at 155 ms. */
	CHECK_EQ_INT(model_cut(&live, &snap, T0 + 155 * MS), 0);
	CHECK_EQ_INT(snap.lost.len, 2);
	CHECK_EQ_INT(snap.lost.data[1].start, T0 + 150 * MS);
	CHECK_EQ_INT(snap.lost.data[1].end, T0 + 155 * MS);
	CHECK_EQ_INT(snap.lost.data[1].count[LOST_LIFECYCLE], 5);
	CHECK_EQ_INT(live.lost.len, 1);
	CHECK_EQ_INT(live.lost.data[0].start, T0 + 290 * MS);
	model_free(&snap);
	/* A machine that keeps losing: at most LOST_MAX_INTERVALS, the totals kept. */
	for (unsigned i = 0; i < 2 * LOST_MAX_INTERVALS; i++)
		CHECK_EQ_INT(model_add_lost(&live, T0 + (400 + i * 200) * MS,
					    T0 + (410 + i * 200) * MS, one),
			     0);
	CHECK_EQ_INT(live.lost.len, LOST_MAX_INTERVALS);
	{
		uint64_t samples = 0;

		for (size_t i = 0; i < live.lost.len; i++)
			samples += live.lost.data[i].count[LOST_SAMPLES];
		CHECK_EQ_INT(samples, 1 + 2 * LOST_MAX_INTERVALS);
	}
	model_free(&live);
}

int main(void)
{
	RUN(test_samples_split_by_time);
	RUN(test_intervals_split_at_boundaries);
	RUN(test_kernel_runtime_across_boundary);
	RUN(test_wakeup_across_boundary);
	RUN(test_lifetimes);
	RUN(test_idle_and_vanished_threads);
	RUN(test_thread_without_events);
	RUN(test_live_model_stays_small);
	RUN(test_lost_intervals);
	return test_summary();
}
