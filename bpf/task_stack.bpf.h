/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The stacks of sleeping threads, for the ones no switch record will ever
 * describe: a target thread blocked from before the recording began (in
 * pthread_join, a read, a lock) is never switched out while we watch, so
 * at the end userspace asks for it here (struct task_stack_event).
 */
#ifndef BPFPROF_TASK_STACK_BPF_H
#define BPFPROF_TASK_STACK_BPF_H

/*
 * Set by userspace before each run: the process whose threads are read, or
 * 0 for every sleeping thread of the machine (-a: one pass over all tasks
 * rather than one per process), each with its kernel stack and syscall;
 * userspace walks the user stacks of those it wants.
 */
__u32 task_stack_tgid = 0;

/* Per CPU: the record is too big for the BPF stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct task_stack_event);
} task_stack_scratch SEC(".maps");

SEC("iter/task")
int dump_task_stacks(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	struct task_stack_event *e;
	struct pt_regs *regs;
	__u32 zero = 0, state;
	long klen;

	if (!task || (task_stack_tgid && task->tgid != task_stack_tgid))
		return 0;
	state = task_state(task, true);
	/* Every task: only those asleep now can have slept all along. */
	if (!task_stack_tgid && !(state & (TASK_STACK_SLEEPING | TASK_STACK_BLOCKED)))
		return 0;
	e = bpf_map_lookup_elem(&task_stack_scratch, &zero);
	if (!e)
		return 0;
	e->pid = task->tgid;
	e->tid = task->pid;
	e->flags = 0;
	e->state = state | (task->flags & KPF_KTHREAD ? TASK_STACK_KTHREAD : 0);
	e->sys_nr = -1;
	read_task_syscall(task, &e->sys_nr, e->sys_args);
	klen = bpf_get_task_stack(task, e->kips, sizeof(e->kips), 0);
	if (klen < 0) {
		e->flags |= SAMPLE_KSTACK_ERROR;
		klen = 0;
	}
	e->kstack_len = (__u32)klen / sizeof(__u64);
	if (e->kstack_len >= BPFPROF_MAX_KSTACK)
		e->flags |= SAMPLE_KSTACK_TRUNCATED;
	e->ip = e->sp = e->bp = e->ax = e->fsbase = 0;
#if defined(__TARGET_ARCH_x86)
	/* A kernel thread has no user registers: its pt_regs are not a user context. */
	if (!(task->flags & KPF_KTHREAD) && task->mm) {
		/* Saved at its switch-out: where its pthread keys are (a Python thread's state). */
		e->fsbase = BPF_CORE_READ(task, thread.fsbase);
		regs = (struct pt_regs *)bpf_task_pt_regs(task);
		if (regs) {
			e->ip = BPF_CORE_READ(regs, ip);
			e->sp = BPF_CORE_READ(regs, sp);
			e->bp = BPF_CORE_READ(regs, bp);
			e->ax = BPF_CORE_READ(regs, ax);
			/* In a syscall (not a fault): the user leaf is a return address. */
			if ((long)BPF_CORE_READ(regs, orig_ax) >= 0)
				e->flags |= SAMPLE_USER_IN_SYSCALL;
		}
	}
#else
	(void)regs; /* userspace walks user stacks from these registers on x86_64 only */
#endif
	bpf_seq_write(ctx->meta->seq, e, sizeof(*e));
	return 0;
}

#endif
