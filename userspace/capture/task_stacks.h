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

#include <stdbool.h>
#include <stdint.h>

#include "../../bpf/bpfprof_abi.h"

struct session;

/* One thread's stacks, laid out as a switch record's: kernel frames, then user frames. */
struct task_stack {
	uint32_t pid, tid;
	const uint64_t *ips;
	uint32_t kstack_len, ustack_len; /* both 0 when `want` said no */
	uint32_t flags; /* SAMPLE_*STACK_*, SAMPLE_USER_IN_SYSCALL, the user stack's end */
	uint32_t state; /* TASK_STACK_SLEEPING / TASK_STACK_BLOCKED bits */
	int32_t sys_nr; /* the syscall it sleeps in, -1: none */
	uint64_t sys_args[6];
	/* Its Python frames (lang/python_walk.h), two words each; the loop's user frames tagged. */
	const uint64_t *py;
	uint32_t py_len;
};

typedef int (*task_stack_fn)(void *ctx, const struct task_stack *st);

/*
 * Whether the stacks of thread pid/tid (in `state`, struct task_stack's)
 * are wanted (`walks_user`: it has a
 * user stack to walk, which reads the process's memory, the costly part),
 * so that a caller that wants a few of many threads says which. NULL:
 * every thread's.
 */
typedef bool (*task_stack_want_fn)(void *ctx, uint32_t pid, uint32_t tid, uint32_t state,
				   bool walks_user);

/*
 * Hand the stacks of every thread of process `pid` to fn (its nonzero
 * return stops and is returned); pid 0: of every thread asleep now, in one
 * pass over the machine's tasks. -EOPNOTSUPP when the kernel cannot (no
 * bpf_task_pt_regs, or no scheduler capture); 0 or -errno.
 */
int task_stacks_of(struct session *s, uint32_t pid, task_stack_want_fn want, task_stack_fn fn,
		   void *ctx);

#endif
