/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The stacks of a process's threads as they sleep now, for threads no
 * switch record describes: a target blocked from before the recording
 * began (bpf/task_stack.bpf.h gives the kernel stack and the user
 * registers; the user stack is walked here, unwind/user_walk.c, with the
 * recording's CFI rows and the process's memory).
 */
#ifndef BPFPROF_CAPTURE_TASK_STACKS_H
#define BPFPROF_CAPTURE_TASK_STACKS_H

#include <stdint.h>

#include "../../bpf/bpfprof_abi.h"

struct session;

/* One thread's stacks, laid out as a switch record's: kernel frames, then user frames. */
struct task_stack {
	uint32_t pid, tid;
	const uint64_t *ips;
	uint32_t kstack_len, ustack_len;
	uint32_t flags; /* SAMPLE_*STACK_*, SAMPLE_USER_IN_SYSCALL, the user stack's end */
};

typedef int (*task_stack_fn)(void *ctx, const struct task_stack *st);

/*
 * Hand the stacks of every thread of process `pid` to fn (its nonzero
 * return stops and is returned). -EOPNOTSUPP when the kernel cannot
 * (no bpf_task_pt_regs, or no scheduler capture); 0 or -errno.
 */
int task_stacks_of(struct session *s, uint32_t pid, task_stack_fn fn, void *ctx);

#endif
