// SPDX-License-Identifier: BSD-2-Clause
/*
 * The cut of the live model into a snapshot and what goes on (cut.h). The
 * old model becomes the snapshot in place: processes and threads outside
 * its window are removed and the arrays compacted, its frame and stack
 * tables stay as they are. The new live model is built beside it from
 * copies of what is still alive, with its stacks interned again into
 * tables of its own.
 */
#include "cut.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model_internal.h"
#include "sched.h"

struct cut {
	struct model *old; /* becomes the snapshot */
	struct model *live;
	uint64_t boundary;
	struct hmap stack_map; /* old stack -> live stack */
	uint32_t *live_proc;   /* old process index -> live index, or NO_INDEX */
	uint32_t *live_thread; /* old thread index -> live index, or NO_INDEX */
	uint32_t *snap_proc;   /* old process index -> snapshot index, or NO_INDEX */
	uint32_t *snap_thread; /* old thread index -> snapshot index, or NO_INDEX */
};

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static int reintern_in_place(struct cut *c, uint32_t *stack)
{
	int64_t s = model_copy_stack(c->live, c->old, &c->stack_map, *stack);

	if (s < 0)
		return (int)s;
	*stack = (uint32_t)s;
	return 0;
}

static bool process_alive_at(const struct process *p, uint64_t ts)
{
	return !(p->ended && p->end_ts < ts);
}

static bool thread_alive_at(const struct thread *t, uint64_t ts)
{
	return !(t->exited && t->unregister_ts < ts);
}

/*
 * A thread nothing was heard of during the whole window, whose exit was
 * never seen (a lost side-band record, or no side-band at all): it is
 * dropped once /proc says it is gone, so such threads cannot pile up.
 */
static bool thread_vanished(const struct model *m, const struct thread *t, uint64_t window_start)
{
	if (t->exited || t->last_ts >= window_start || t->tid == 0 || !m->source.thread_alive)
		return false;
	return !m->source.thread_alive(m->source.ctx, t->pid, t->tid);
}

static int copy_process(struct cut *c, const struct process *p, uint32_t old_idx)
{
	struct process np = *p;
	uint32_t idx = (uint32_t)c->live->processes.len;

	memset(&np.threads, 0, sizeof(np.threads));
	memset(&np.mappings, 0, sizeof(np.mappings));
	/* Samples from before an exec in an earlier window were taken there. */
	memset(&np.before_exec, 0, sizeof(np.before_exec));
	np.exec_ts = 0;
	np.cmdline = NULL;
	np.cgroup = NULL;
	np.main_thread = NO_INDEX;
	np.prev = p->prev == NO_INDEX ? NO_INDEX : c->live_proc[p->prev];
	/* Started in an earlier window: in this one it was there from the start. */
	if (np.started && np.start_ts < c->boundary)
		np.started = false;
	np.first_ts = max_u64(np.first_ts, c->boundary);
	if ((p->cmdline && !(np.cmdline = strdup(p->cmdline))) ||
	    (p->cgroup && !(np.cgroup = strdup(p->cgroup))) ||
	    vec_reserve(&np.mappings, p->mappings.len))
		goto fail;
	if (p->mappings.len)
		memcpy(np.mappings.data, p->mappings.data,
		       p->mappings.len * sizeof(*p->mappings.data));
	np.mappings.len = p->mappings.len;
	if (vec_push(&c->live->processes, np))
		goto fail;
	/* Images are in creation order, so the newest alive one ends up indexed. */
	if (model_index_process(c->live, idx))
		return -ENOMEM; /* the pushed copy is freed with the live model */
	c->live_proc[old_idx] = idx;
	return 0;
fail:
	free(np.cmdline);
	free(np.cgroup);
	vec_free(&np.mappings);
	return -ENOMEM;
}

/*
 * The replay of a thread continues from the boundary: the part of a wait,
 * runnable wait or slice before it is the snapshot's (closed there by
 * model_finish), the rest is the live model's.
 */
static int continue_replay(struct cut *c, struct thread *t)
{
	struct sched_replay *r = t->replay;
	const struct model *m = c->live;
	uint64_t b = c->boundary;
	int err;

	if (!r)
		return 0; /* never replayed: nothing to continue */
	/* The switch-out stack means something only while off; else it may be stale or unset. */
	if (r->state != REPLAY_OFF)
		r->stack = NO_INDEX;
	else if ((err = reintern_in_place(c, &r->stack)))
		return err;
	for (unsigned int k = 0; k < SWITCH_STACK_SLOTS; k++)
		if ((r->have_switch_stack & (1u << k)) &&
		    (err = reintern_in_place(c, &r->last_switch_stack[k])))
			return err;
	/* CPU time no sample took, or samples took too much of, is the snapshot's. */
	r->cpu_since_sample_ns = 0;
	r->cpu_debt_ns = 0;
	if (r->state == REPLAY_ON) {
		/* The snapshot accounted the slice up to b: so must the kernel figure's true-up. */
		if (b > r->cursor)
			r->runtime_replayed_ns += b - r->cursor;
		r->cursor = max_u64(r->cursor, b);
	} else if (r->state == REPLAY_OFF) {
		if (r->since < b) {
			/* The snapshot made off-CPU samples for its part: carry what it left. */
			if (r->start_known && m->offcpu_samples && m->offcpu_interval_ns)
				r->offcpu_carry_ns = (r->offcpu_carry_ns + (b - r->since)) %
						     m->offcpu_interval_ns;
			r->since = b;
		}
		if (r->woken && r->wake_ts < b) {
			/* The snapshot showed the wakeup; from here on it waits for a CPU. */
			r->wake_ts = b;
			r->waker_told = true;
		}
	}
	return 0;
}

static int copy_thread(struct cut *c, const struct thread *t, uint32_t old_idx)
{
	struct thread nt = *t;
	uint32_t idx = (uint32_t)c->live->threads.len;
	struct process *np;
	int err = -ENOMEM;

	memset(&nt.samples, 0, sizeof(nt.samples));
	memset(&nt.wait_ends, 0, sizeof(nt.wait_ends));
	memset(&nt.sched_markers, 0, sizeof(nt.sched_markers));
	memset(&nt.syscall_markers, 0, sizeof(nt.syscall_markers));
	memset(&nt.syscall_counts, 0, sizeof(nt.syscall_counts));
	nt.replay = NULL;
	nt.blocked_throughout = false; /* the next window tells again */
	memset(&nt.sched, 0, sizeof(nt.sched));
	nt.process = c->live_proc[t->process];
	nt.prev = t->prev == NO_INDEX ? NO_INDEX : c->live_thread[t->prev];
	if (nt.registered && nt.register_ts < c->boundary)
		nt.registered = false;
	/* last_ts stays: before the boundary, it says nothing was heard in the new window yet. */
	nt.first_ts = max_u64(nt.first_ts, c->boundary);
	/* Records of the new window that arrived before the cut. */
	for (size_t i = 0; i < t->samples.len; i++) {
		struct thread_sample s = t->samples.data[i];

		if (s.ts < c->boundary)
			continue;
		if ((err = reintern_in_place(c, &s.stack)))
			goto fail;
		err = -ENOMEM;
		if (vec_push(&nt.samples, s))
			goto fail;
	}
	for (size_t i = 0; i < t->wait_ends.len; i++)
		if (t->wait_ends.data[i].ts >= c->boundary &&
		    vec_push(&nt.wait_ends, t->wait_ends.data[i]))
			goto fail;
	for (size_t i = 0; i < t->syscall_markers.len; i++)
		if (t->syscall_markers.data[i].end >= c->boundary &&
		    vec_push(&nt.syscall_markers, t->syscall_markers.data[i]))
			goto fail;
	/* The replay goes on in the live model from where it stands; the snapshot keeps its own. */
	if (t->replay) {
		nt.replay = malloc(sizeof(*nt.replay));
		if (!nt.replay)
			goto fail;
		*nt.replay = *t->replay;
		memset(&nt.replay->pending, 0, sizeof(nt.replay->pending));
		if (vec_reserve(&nt.replay->pending, t->replay->pending.len))
			goto fail;
		for (size_t i = 0; i < t->replay->pending.len; i++) {
			struct sched_event ev = t->replay->pending.data[i];

			if ((err = reintern_in_place(c, &ev.stack)))
				goto fail;
			nt.replay->pending.data[nt.replay->pending.len++] = ev;
		}
	}
	if ((err = continue_replay(c, &nt)))
		goto fail;
	err = -ENOMEM;
	if (vec_push(&c->live->threads, nt))
		goto fail;
	c->live_thread[old_idx] = idx;
	np = &c->live->processes.data[nt.process];
	if (vec_push(&np->threads, idx) || model_index_thread(c->live, idx))
		return -ENOMEM; /* the pushed thread is freed with the live model */
	return 0;
fail:
	vec_free(&nt.samples);
	vec_free(&nt.wait_ends);
	vec_free(&nt.syscall_markers);
	sched_replay_free(nt.replay);
	return err;
}

static int build_live(struct cut *c)
{
	struct model *old = c->old;
	int err;

	for (size_t i = 0; i < old->processes.len; i++) {
		const struct process *p = &old->processes.data[i];

		c->live_proc[i] = NO_INDEX;
		if (process_alive_at(p, c->boundary) && (err = copy_process(c, p, (uint32_t)i)))
			return err;
	}
	for (size_t i = 0; i < old->threads.len; i++) {
		const struct thread *t = &old->threads.data[i];

		c->live_thread[i] = NO_INDEX;
		if (c->live_proc[t->process] == NO_INDEX || !thread_alive_at(t, c->boundary) ||
		    thread_vanished(old, t, old->start_ts))
			continue;
		if ((err = copy_thread(c, t, (uint32_t)i)))
			return err;
	}
	return 0;
}

static void free_process_data(struct process *p)
{
	free(p->cmdline);
	free(p->cgroup);
	vec_free(&p->threads);
	vec_free(&p->mappings);
	vec_free(&p->before_exec);
}

static void free_thread_data(struct thread *t)
{
	vec_free(&t->samples);
	vec_free(&t->wait_ends);
	vec_free(&t->sched_markers);
	sched_replay_free(t->replay);
	t->replay = NULL;
	vec_free(&t->syscall_markers);
	vec_free(&t->syscall_counts);
}

/* Keep the samples, wait ends and syscall markers before the boundary; the rest went live. */
static void trim_thread(struct thread *t, uint64_t boundary)
{
	size_t n = 0;

	for (size_t i = 0; i < t->samples.len; i++)
		if (t->samples.data[i].ts < boundary)
			t->samples.data[n++] = t->samples.data[i];
	t->samples.len = n;
	n = 0;
	for (size_t i = 0; i < t->wait_ends.len; i++)
		if (t->wait_ends.data[i].ts < boundary)
			t->wait_ends.data[n++] = t->wait_ends.data[i];
	t->wait_ends.len = n;
	n = 0;
	for (size_t i = 0; i < t->syscall_markers.len; i++)
		if (t->syscall_markers.data[i].end < boundary)
			t->syscall_markers.data[n++] = t->syscall_markers.data[i];
	t->syscall_markers.len = n;
	/* Its queue went live; what it replayed up to the boundary stays for model_finish. */
	if (t->replay)
		vec_free(&t->replay->pending);
	if (t->exited && t->unregister_ts >= boundary)
		t->exited = false;
	t->first_ts = min_u64(t->first_ts, boundary);
	t->last_ts = min_u64(t->last_ts, boundary);
}

/*
 * Which old processes and threads the snapshot keeps (snap_proc/snap_thread,
 * in order): those known before the boundary that were not born after it.
 * A thread first heard of after the boundary (a record drained early) is
 * the next window's, even if it existed before.
 */
static void choose_snapshot(struct cut *c)
{
	struct model *old = c->old;
	uint64_t b = c->boundary;
	uint32_t n = 0;

	for (size_t i = 0; i < old->processes.len; i++) {
		const struct process *p = &old->processes.data[i];
		bool keep = !(p->started && p->start_ts >= b) && p->first_ts < b;

		c->snap_proc[i] = keep ? n++ : NO_INDEX;
	}
	n = 0;
	for (size_t i = 0; i < old->threads.len; i++) {
		const struct thread *t = &old->threads.data[i];
		bool keep = c->snap_proc[t->process] != NO_INDEX &&
			    !(t->registered && t->register_ts >= b) && t->first_ts < b;

		c->snap_thread[i] = keep ? n++ : NO_INDEX;
	}
}

static uint32_t map_index(const uint32_t *map, uint32_t idx)
{
	return idx == NO_INDEX ? NO_INDEX : map[idx];
}

/* Compact the old model into the snapshot and index it again. */
static int build_snapshot(struct cut *c)
{
	struct model *m = c->old;
	size_t np = 0, nt = 0;

	choose_snapshot(c);
	for (size_t i = 0; i < m->threads.len; i++) {
		struct thread *t = &m->threads.data[i];

		if (c->snap_thread[i] == NO_INDEX) {
			free_thread_data(t);
			continue;
		}
		trim_thread(t, c->boundary);
		t->process = c->snap_proc[t->process];
		t->prev = map_index(c->snap_thread, t->prev);
		m->threads.data[nt++] = *t;
	}
	m->threads.len = nt;
	for (size_t i = 0; i < m->processes.len; i++) {
		struct process *p = &m->processes.data[i];
		size_t k = 0;

		if (c->snap_proc[i] == NO_INDEX) {
			free_process_data(p);
			continue;
		}
		for (size_t j = 0; j < p->threads.len; j++) {
			uint32_t ti = c->snap_thread[p->threads.data[j]];

			if (ti != NO_INDEX)
				p->threads.data[k++] = ti;
		}
		p->threads.len = k;
		p->prev = map_index(c->snap_proc, p->prev);
		p->main_thread = NO_INDEX;
		if (p->ended && p->end_ts >= c->boundary)
			p->ended = false;
		p->first_ts = min_u64(p->first_ts, c->boundary);
		p->last_ts = min_u64(p->last_ts, c->boundary);
		m->processes.data[np++] = *p;
	}
	m->processes.len = np;

	hmap_free(&m->pid_index);
	hmap_free(&m->tid_index);
	for (size_t i = 0; i < m->processes.len; i++)
		if (model_index_process(m, (uint32_t)i))
			return -ENOMEM;
	for (size_t i = 0; i < m->threads.len; i++)
		if (model_index_thread(m, (uint32_t)i))
			return -ENOMEM;
	m->end_ts = m->stop_ts = c->boundary;
	return 0;
}

/*
 * Lost-record intervals: those that start before the boundary are the
 * snapshot's (ending there at the latest), the rest stay with the live model.
 */
static int cut_lost(struct model *live, struct model *snap, uint64_t boundary)
{
	size_t keep = 0;

	for (size_t i = 0; i < snap->lost.len; i++) {
		struct lost_interval li = snap->lost.data[i];

		if (li.start < boundary) {
			if (li.end > boundary)
				li.end = boundary;
			snap->lost.data[keep++] = li;
		} else if (vec_push(&live->lost, li)) {
			return -ENOMEM;
		}
	}
	snap->lost.len = keep;
	return 0;
}

int model_cut(struct model *live, struct model *snap, uint64_t boundary)
{
	struct cut c = { 0 };
	size_t nproc = live->processes.len ? live->processes.len : 1;
	size_t nthread = live->threads.len ? live->threads.len : 1;
	int err = -ENOMEM;

	*snap = *live;
	model_init(live, &snap->source, boundary);
	model_copy_settings(live, snap);
	c.old = snap;
	c.live = live;
	c.boundary = boundary;
	c.live_proc = malloc(nproc * sizeof(uint32_t));
	c.live_thread = malloc(nthread * sizeof(uint32_t));
	c.snap_proc = malloc(nproc * sizeof(uint32_t));
	c.snap_thread = malloc(nthread * sizeof(uint32_t));
	if (c.live_proc && c.live_thread && c.snap_proc && c.snap_thread &&
	    !(err = build_live(&c)) && !(err = build_snapshot(&c)))
		err = cut_lost(live, snap, boundary);
	hmap_free(&c.stack_map);
	free(c.live_proc);
	free(c.live_thread);
	free(c.snap_proc);
	free(c.snap_thread);
	if (err) {
		struct model settings;

		model_init(&settings, &snap->source, boundary);
		model_copy_settings(&settings, snap);
		model_free(snap);
		model_free(live);
		model_init(snap, &settings.source, boundary);
		*live = settings;
	}
	return err;
}
