// SPDX-License-Identifier: BSD-2-Clause
/*
 * Raw frames and stacks, hash-consed: a frame is (object, offset,
 * is_return), a stack is (prefix stack, frame), so a stack is one index and
 * stacks that share a root share its entries.
 */
#include "model_internal.h"

#include <errno.h>

int64_t model_intern_frame(struct model *m, uint32_t object, uint64_t offset, bool is_return)
{
	struct hmap_key key = { offset, ((uint64_t)object << 1) | is_return };
	struct raw_frame f = { object, is_return, offset };
	uint32_t idx;

	if (hmap_get(&m->frame_index, key, &idx))
		return idx;
	idx = (uint32_t)m->frames.len;
	if (vec_push(&m->frames, f))
		return -ENOMEM;
	if (hmap_put(&m->frame_index, key, idx)) {
		m->frames.len--;
		return -ENOMEM;
	}
	return idx;
}

int64_t model_intern_stack(struct model *m, uint32_t prefix, uint32_t frame)
{
	struct hmap_key key = { prefix, frame };
	struct raw_stack s = { prefix, frame };
	uint32_t idx;

	if (hmap_get(&m->stack_index, key, &idx))
		return idx;
	idx = (uint32_t)m->stacks.len;
	if (vec_push(&m->stacks, s))
		return -ENOMEM;
	if (hmap_put(&m->stack_index, key, idx)) {
		m->stacks.len--;
		return -ENOMEM;
	}
	return idx;
}

/*
 * Stacks are chains that share prefixes: each `src` stack is translated
 * once, root first, and `map` remembers it. Depth is bounded by
 * BPFPROF_MAX_FRAMES frames plus markers.
 */
int64_t model_copy_stack(struct model *dst, const struct model *src, struct hmap *map,
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
	if (s->prefix != NO_INDEX && (prefix = model_copy_stack(dst, src, map, s->prefix)) < 0)
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
