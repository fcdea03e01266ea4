// SPDX-License-Identifier: BSD-2-Clause
/* Samples of a time window copied into a model of their own (window.h). */
#include "window.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model_internal.h"

void model_window_init(struct model *dst, const struct model *like, uint64_t from, uint64_t to)
{
	model_init(dst, NULL, from);
	model_copy_settings(dst, like);
	dst->end_ts = to;
	dst->stop_ts = to;
}

/* A stack of `src` in `dst`: its frames interned again, root first (depth is bounded). */
static int64_t copy_stack(struct model *dst, const struct model *src, struct hmap *map,
			  uint32_t stack)
{
	struct hmap_key key = { stack, 0 };
	const struct raw_stack *s;
	const struct raw_frame *f;
	int64_t prefix = NO_INDEX, frame, out;
	uint32_t idx;

	if (stack == NO_INDEX || stack >= src->stacks.len)
		return NO_INDEX;
	if (hmap_get(map, key, &idx))
		return idx;
	s = &src->stacks.data[stack];
	if (s->prefix != NO_INDEX && (prefix = copy_stack(dst, src, map, s->prefix)) < 0)
		return prefix;
	f = &src->frames.data[s->frame];
	frame = model_intern_frame(dst, f->object, f->offset, f->is_return);
	if (frame < 0)
		return frame;
	out = model_intern_stack(dst, (uint32_t)prefix, (uint32_t)frame);
	if (out < 0)
		return out;
	return hmap_put(map, key, (uint32_t)out) ? -ENOMEM : out;
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
	if (sp->cmdline && !dp->cmdline && !(dp->cmdline = strdup(sp->cmdline)))
		return -ENOMEM;
	if (sp->cgroup && !dp->cgroup && !(dp->cgroup = strdup(sp->cgroup)))
		return -ENOMEM;
	return 0;
}

static int copy_thread_samples(struct model *dst, const struct model *src, struct hmap *map,
			       const struct thread *st, uint64_t from, uint64_t to)
{
	struct thread *dt = NULL;

	for (size_t i = 0; i < st->samples.len; i++) {
		struct thread_sample s = st->samples.data[i];
		int64_t stack;
		int err;

		if (s.ts < from || s.ts >= to)
			continue;
		if (!dt) {
			dt = model_thread(dst, st->pid, st->tid, st->cpu, s.ts);
			if (!dt)
				return -ENOMEM;
			if (!dt->name[0])
				memcpy(dt->name, st->name, sizeof(dt->name));
			err = copy_process_info(&dst->processes.data[dt->process],
						&src->processes.data[st->process]);
			if (err)
				return err;
		}
		stack = copy_stack(dst, src, map, s.stack);
		if (stack < 0)
			return (int)stack;
		s.stack = (uint32_t)stack;
		if (vec_push(&dt->samples, s))
			return -ENOMEM;
		dt->first_ts = dt->first_ts < s.ts ? dt->first_ts : s.ts;
		dt->last_ts = dt->last_ts > s.ts ? dt->last_ts : s.ts;
		if (s.kind == SAMPLE_OFF_CPU)
			dst->stats.offcpu_samples++;
		else
			dst->stats.samples++;
	}
	return 0;
}

int model_window_copy(struct model *dst, const struct model *src, uint64_t from, uint64_t to)
{
	struct hmap map = { 0 };
	int err = 0;

	for (size_t i = 0; i < src->threads.len && !err; i++)
		err = copy_thread_samples(dst, src, &map, &src->threads.data[i], from, to);
	hmap_free(&map);
	return err;
}
