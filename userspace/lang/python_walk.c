// SPDX-License-Identifier: BSD-2-Clause
/* See python_walk.h. Kept step for step with bpf/python.bpf.h. */
#include <stdbool.h>
#include <string.h>

#include "python_walk.h"

/* As in python.bpf.h: the list is the process's to fake, the window one read a frame. */
#define PY_MAX_THREADS	   64
#define PY_FRAME_WINDOW	   128
#define PY_OWNED_BY_CSTACK 3

static bool read_u64(python_read_fn read, void *ctx, uint64_t addr, uint64_t *out)
{
	return read(ctx, addr, out, sizeof(*out)) == 0;
}

static uint64_t thread_state(const struct py_proc *pp, uint64_t fsbase, python_read_fn read,
			     void *ctx)
{
	const struct py_layout *l = &pp->layout;
	uint64_t tstate = 0, interp = 0, id;
	uint32_t key = 0;

	if (pp->tss_key && pp->tsd_offset && read(ctx, pp->tss_key, &key, sizeof(key)) == 0 &&
	    key < 32 && read_u64(read, ctx, fsbase + pp->tsd_offset + 16 * key + 8, &tstate))
		return tstate;
	if (!pp->interp_head || !read_u64(read, ctx, pp->interp_head, &interp) || !interp ||
	    !read_u64(read, ctx, interp + l->interp_tstate_head, &tstate))
		return 0;
	for (int i = 0; i < PY_MAX_THREADS && tstate; i++) {
		if (!read_u64(read, ctx, tstate + l->tstate_thread_id, &id))
			return 0;
		if (id == fsbase)
			return tstate;
		if (!read_u64(read, ctx, tstate + l->tstate_next, &tstate))
			return 0;
	}
	return 0;
}

static uint64_t word_at(const uint8_t *win, uint16_t off)
{
	uint64_t v;

	memcpy(&v, win + (off & (PY_FRAME_WINDOW - 8) & ~7u), sizeof(v));
	return v;
}

/* Tags the loop's user frames, the innermost `skip` of them left C frames (see python.bpf.h). */
static void tag_loops(const struct py_proc *pp, uint64_t *uips, uint32_t un, uint32_t n)
{
	uint64_t len = pp->eval_end - pp->eval_start;
	uint32_t loops = 0, skip = 0;

	if (pp->layout.entry_kind == PY_ENTRY_EVERY) {
		for (uint32_t i = 0; i < un; i++)
			loops += uips[i] - pp->eval_start < len;
		skip = loops > n ? loops - n : 0;
	}
	for (uint32_t i = 0; i < un; i++) {
		if (uips[i] - pp->eval_start >= len)
			continue;
		if (skip)
			skip--;
		else
			uips[i] |= USTACK_PY_EVAL;
	}
}

uint32_t python_walk_thread(const struct py_proc *pp, uint64_t fsbase, python_read_fn read,
			    void *ctx, uint64_t *uips, uint32_t un, uint64_t *py, bool *truncated)
{
	const struct py_layout *l = &pp->layout;
	uint64_t tstate, id = 0, frame = 0;
	uint32_t n = 0, steps = 0;

	*truncated = false;
	if (!fsbase || !un)
		return 0;
	tstate = thread_state(pp, fsbase, read, ctx);
	/* The key's value is the process's to write, the list's match this thread's: checked. */
	if (!tstate || !read_u64(read, ctx, tstate + l->tstate_thread_id, &id) || id != fsbase ||
	    !read_u64(read, ctx, tstate + l->tstate_frame, &frame))
		return 0;
	if (l->cframe_frame != PY_NO_CFRAME && frame &&
	    !read_u64(read, ctx, frame + l->cframe_frame, &frame))
		return 0;
	/* Steps, markers included, bounded as bpf_loop bounds them: a list of markers can loop. */
	while (frame && steps++ < BPFPROF_MAX_PYFRAMES + 1) {
		uint8_t win[PY_FRAME_WINDOW];
		uint64_t code, instr, entry = 0;
		uint32_t lasti;
		uint8_t flag;

		if (n >= BPFPROF_MAX_PYFRAMES || read(ctx, frame, win, sizeof(win))) {
			*truncated = true;
			break;
		}
		code = word_at(win, l->frame_code);
		flag = win[l->frame_entry & (PY_FRAME_WINDOW - 1)];
		if (l->entry_kind == PY_ENTRY_EVERY) {
			memcpy(&lasti, win + (l->frame_instr & (PY_FRAME_WINDOW - 4) & ~3u), 4);
			instr = (uint64_t)lasti << 1;
			entry = PY_FRAME_ENTRY;
		} else {
			instr = word_at(win, l->frame_instr);
			if (l->entry_kind == PY_ENTRY_IS_ENTRY)
				entry = flag ? PY_FRAME_ENTRY : 0;
		}
		frame = word_at(win, l->frame_previous);
		if (l->entry_kind == PY_ENTRY_OWNER && flag == PY_OWNED_BY_CSTACK) {
			if (n)
				py[2 * n - 1] |= PY_FRAME_ENTRY;
			continue;
		}
		py[2 * n] = code;
		py[2 * n + 1] = (instr & ~1ull) | entry;
		n++;
	}
	if (n)
		tag_loops(pp, uips, un, n);
	return n;
}
