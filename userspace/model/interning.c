// SPDX-License-Identifier: BSD-2-Clause
/*
 * Raw frames and stacks, hash-consed: a frame is (object, offset,
 * is_return), a stack is (prefix stack, frame), so a stack is one index and
 * stacks that share a root share its entries.
 */
#include "model.h"

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
