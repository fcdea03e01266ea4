// SPDX-License-Identifier: BSD-2-Clause
/* Samples of a time window copied into a model of their own (window.h). */
#include "window.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model_internal.h"
#include "sched.h"

void model_window_init(struct model *dst, const struct model *like, uint64_t from, uint64_t to)
{
	model_init(dst, NULL, from);
	model_copy_settings(dst, like);
	dst->end_ts = to;
	dst->stop_ts = to;
}

/* What `dst` knows of a process it met first here. */
static int copy_process_info(struct process *dp, const struct process *sp)
{
	if (dp->name[0])
		return 0;
	memcpy(dp->name, sp->name, sizeof(dp->name));
	dp->is_idle = sp->is_idle;
	dp->kernel_thread = sp->kernel_thread;
	dp->cgroup_owner = sp->cgroup_owner;
	dp->uid = sp->uid;
	if (sp->cmdline && !dp->cmdline && !(dp->cmdline = strdup(sp->cmdline)))
		return -ENOMEM;
	if (sp->cgroup && !dp->cgroup && !(dp->cgroup = strdup(sp->cgroup)))
		return -ENOMEM;
	return 0;
}

/* The thread of `dst` that is `st` of `src`, made with what `src` knows of it when new. */
static struct thread *window_thread(struct model *dst, const struct model *src,
				    const struct thread *st, uint64_t ts)
{
	struct thread *dt = model_thread(dst, st->pid, st->tid, st->cpu, ts);

	if (!dt)
		return NULL;
	if (!dt->name[0])
		memcpy(dt->name, st->name, sizeof(dt->name));
	if (copy_process_info(&dst->processes.data[dt->process], &src->processes.data[st->process]))
		return NULL;
	return dt;
}

/*
 * The part of an off-CPU row's run (thread_sample.repeats) on its grid in
 * [from, to): a wait across the window's edge counts only its samples
 * inside. False when none is.
 */
static bool clip_offcpu_run(struct thread_sample *s, uint64_t interval, uint64_t from, uint64_t to)
{
	uint64_t lo = 0, hi = s->repeats;

	if (!interval || s->ts >= to)
		return s->ts >= from && s->ts < to;
	if (s->ts < from)
		lo = (from - s->ts + interval - 1) / interval;
	if (hi > (to - 1 - s->ts) / interval)
		hi = (to - 1 - s->ts) / interval;
	if (lo > hi)
		return false;
	/* The CPU delta is the run up to the switch-out, at the row's own time. */
	if (lo)
		s->cpu_delta_ns = 0;
	s->ts += lo * interval;
	s->repeats = (uint16_t)(hi - lo);
	return true;
}

static int copy_thread_samples(struct model *dst, const struct model *src, struct hmap *map,
			       const struct thread *st, uint64_t from, uint64_t to)
{
	struct thread *dt = NULL;

	for (size_t i = 0; i < st->samples.len; i++) {
		struct thread_sample s = st->samples.data[i];
		int64_t stack;

		if (s.kind == SAMPLE_OFF_CPU && s.repeats) {
			if (!clip_offcpu_run(&s, src->offcpu_interval_ns, from, to))
				continue;
		} else if (s.ts < from || s.ts >= to) {
			continue;
		}
		if (!dt && !(dt = window_thread(dst, src, st, s.ts)))
			return -ENOMEM;
		stack = model_copy_stack(dst, src, map, s.stack);
		if (stack < 0)
			return (int)stack;
		s.stack = (uint32_t)stack;
		if (vec_push(&dt->samples, s))
			return -ENOMEM;
		dt->first_ts = dt->first_ts < s.ts ? dt->first_ts : s.ts;
		dt->last_ts = dt->last_ts > s.ts ? dt->last_ts : s.ts;
		if (s.kind == SAMPLE_OFF_CPU) {
			dst->stats.offcpu_samples += sample_weight(&s);
			dst->stats.offcpu_rows++;
		} else
			dst->stats.samples++;
	}
	return 0;
}

/*
 * A wait `st` is still in at `to`: its off-CPU samples in [from, to), on
 * the grid its samples will have once it ends (one per interval from the
 * switch-out), with its switch-out stack and reason.
 */
static int copy_open_wait(struct model *dst, const struct model *src, struct hmap *map,
			  const struct thread *st, uint64_t from, uint64_t to)
{
	const struct sched_replay *r = st->replay;
	uint64_t interval = src->offcpu_interval_ns;
	uint64_t first, k;
	struct thread *dt;
	int64_t stack, frame;

	if (r->since >= to)
		return 0;
	/* The first grid point at or after `from`. */
	k = r->since >= from ? 0 : (from - r->since + interval - 1) / interval;
	first = r->since + k * interval;
	if (first >= to)
		return 0;
	dt = window_thread(dst, src, st, first);
	stack = dt ? model_copy_stack(dst, src, map, r->stack) : -ENOMEM;
	if (stack < 0)
		return (int)stack;
	frame = model_intern_frame(dst, OBJ_OFFCPU, r->reason, false);
	if (frame < 0)
		return (int)frame;
	stack = model_intern_stack(dst, (uint32_t)stack, (uint32_t)frame);
	if (stack < 0)
		return (int)stack;
	return offcpu_push_run(dst, dt, first, (to - 1 - first) / interval + 1, (uint32_t)stack);
}

int model_window_copy(struct model *dst, const struct model *src, uint64_t from, uint64_t to,
		      bool open_waits)
{
	struct hmap map = { 0 };
	int err = 0;

	for (size_t i = 0; i < src->threads.len && !err; i++) {
		const struct thread *st = &src->threads.data[i];

		err = copy_thread_samples(dst, src, &map, st, from, to);
		if (!err && open_waits && src->offcpu_samples && src->offcpu_interval_ns &&
		    st->replay && st->replay->state == REPLAY_OFF && st->replay->start_known)
			err = copy_open_wait(dst, src, &map, st, from, to);
	}
	hmap_free(&map);
	return err;
}
