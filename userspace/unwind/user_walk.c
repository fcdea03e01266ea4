// SPDX-License-Identifier: BSD-2-Clause
#include "user_walk.h"

#include <errno.h>
#include <stdbool.h>

/* x86_64 offsets in the ucontext a signal frame's SP points at (bpf/unwind.bpf.h). */
#define UC_MCONTEXT_RBP 120
#define UC_MCONTEXT_RSP 160
#define UC_MCONTEXT_RIP 168

struct walk {
	const struct user_walk_ops *ops;
	uint64_t pc, sp, fp;
	uint64_t ax; /* RAX at the first frame's PC: a clone's return value there */
	/* Frame-pointer steps that did not move up, each kind on its own bound. */
	uint32_t no_cfi_down_steps; /* in code without CFI (MAX_DOWN_STEPS) */
	uint32_t switch_steps;	    /* at a marked stack switch (MAX_SWITCH_STEPS) */
	bool pc_is_exact;
	bool have_map;
	struct user_walk_mapping map;
};

/*
 * Frame-pointer steps that do not move up, per walk and each kind on its
 * own bound (bpf/unwind.bpf.h): in code without CFI, and at a runtime's
 * marked stack switch.
 */
#define MAX_DOWN_STEPS	 1
#define MAX_SWITCH_STEPS 16

/*
 * One frame with the frame pointer: the caller's FP and return address are
 * at [fp], above this frame unless the code switches stacks: where a row
 * says so (`may_switch`) MAX_SWITCH_STEPS times, in place too, or
 * MAX_DOWN_STEPS times in code without CFI, never in place.
 */
static bool fp_step(struct walk *w, uint8_t no_fp_end, bool may_switch, uint8_t *end)
{
	uint64_t frame[2];

	if (!w->fp) {
		*end = no_fp_end;
		return false;
	}
	if ((!may_switch && w->fp + 16 == w->sp) ||
	    (w->fp + 16 <= w->sp && (may_switch ? w->switch_steps++ >= MAX_SWITCH_STEPS
						: w->no_cfi_down_steps++ >= MAX_DOWN_STEPS))) {
		*end = USTACK_END_STUCK;
		return false;
	}
	if (w->ops->read(w->ops->ctx, w->fp, frame, sizeof(frame))) {
		*end = USTACK_END_UNREADABLE;
		return false;
	}
	w->sp = w->fp + 16;
	w->fp = frame[0];
	w->pc = frame[1];
	return true;
}

/* __restore_rt: the interrupted registers are in the ucontext at SP. */
static bool signal_step(struct walk *w, uint8_t *end)
{
	uint64_t regs[7]; /* rbp rbx rdx rax rcx rsp rip */

	if (w->ops->read(w->ops->ctx, w->sp + UC_MCONTEXT_RBP, regs, sizeof(regs))) {
		*end = USTACK_END_UNREADABLE;
		return false;
	}
	if (regs[(UC_MCONTEXT_RSP - UC_MCONTEXT_RBP) / 8] == w->sp) {
		*end = USTACK_END_STUCK;
		return false;
	}
	w->fp = regs[0];
	w->sp = regs[(UC_MCONTEXT_RSP - UC_MCONTEXT_RBP) / 8];
	w->pc = regs[(UC_MCONTEXT_RIP - UC_MCONTEXT_RBP) / 8];
	w->pc_is_exact = true;
	return true;
}

/* Step from the frame at w->pc (already recorded as frame n) to its caller. */
static bool step(struct walk *w, uint32_t n, uint8_t *end)
{
	struct unwind_rule rule, *row = &rule;
	uint64_t addr, file_addr, lo, hi, cfa, ra;
	uint16_t rules, index;

	addr = n && !w->pc_is_exact ? w->pc - 1 : w->pc;
	w->pc_is_exact = false;
	if (!w->have_map || addr < w->map.start || addr >= w->map.end)
		w->have_map = w->ops->mapping(w->ops->ctx, addr, &w->map) == 0;
	if (!w->have_map || !w->map.table.npages)
		return fp_step(w, USTACK_END_NO_CFI, false, end);
	file_addr = addr + (uint64_t)w->map.map_to_file;
	/* No page of the table holds it: code its CFI does not cover. */
	if (!compact_lookup(&w->map.table, file_addr, &rule, &index, &lo, &hi))
		return fp_step(w, USTACK_END_NO_ROW, false, end);
	rules = row->rules;
	switch (UNWIND_RULE_CFA(rules)) {
	case UNWIND_CFA_SP:
		cfa = w->sp + (uint64_t)(int64_t)row->cfa_offset;
		break;
	case UNWIND_CFA_FP:
		cfa = w->fp + (uint64_t)(int64_t)row->cfa_offset;
		break;
	case UNWIND_CFA_PLT:
		cfa = w->sp + (uint64_t)(int64_t)row->cfa_offset +
		      ((addr & 15) >= UNWIND_RULE_PLT(rules) ? 8 : 0);
		break;
	case UNWIND_CFA_SIGNAL:
		return signal_step(w, end);
	case UNWIND_CFA_ROOT:
		*end = USTACK_END_ROOT;
		return false;
	case UNWIND_CFA_CLONE:
		if (!n && !w->ax) {
			*end = USTACK_END_ROOT;
			return false;
		}
		cfa = w->sp + (uint64_t)(int64_t)row->cfa_offset;
		break;
	case UNWIND_CFA_SWITCH:
		return fp_step(w, USTACK_END_NO_ROW, true, end);
	default:
		return fp_step(w, USTACK_END_NO_ROW, false, end);
	}
	if (cfa <= w->sp) {
		*end = USTACK_END_STUCK;
		return false;
	}
	if (w->ops->read(w->ops->ctx, cfa - 8, &ra, sizeof(ra)) ||
	    (UNWIND_RULE_FP(rules) == UNWIND_FP_SAVED &&
	     w->ops->read(w->ops->ctx, cfa + (uint64_t)(int64_t)row->fp_offset, &w->fp,
			  sizeof(w->fp)))) {
		*end = USTACK_END_UNREADABLE;
		return false;
	}
	w->sp = cfa;
	w->pc = ra;
	return true;
}

uint32_t user_walk(const struct user_walk_ops *ops, uint64_t pc, uint64_t sp, uint64_t fp,
		   uint64_t ax, uint64_t *ips, uint32_t max, uint8_t *end)
{
	return user_walk_from(ops, pc, sp, fp, ax, false, ips, max, end);
}

uint32_t user_walk_from(const struct user_walk_ops *ops, uint64_t pc, uint64_t sp, uint64_t fp,
			uint64_t ax, bool pc_is_return, uint64_t *ips, uint32_t max, uint8_t *end)
{
	struct walk w = { .ops = ops, .pc = pc, .sp = sp, .fp = fp, .ax = ax };
	uint32_t n = 0;

	*end = USTACK_END_LIMIT;
	for (;;) {
		if (!w.pc) {
			*end = USTACK_END_FP_CHAIN;
			break;
		}
		if (n >= max)
			break;
		ips[n] = w.pc;
		/* A walk resumed at a return address steps as from a caller's frame. */
		if (!step(&w, n++ + (pc_is_return ? 1 : 0), end))
			break;
	}
	return n;
}
