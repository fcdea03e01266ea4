/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A task's stacks: the kernel's from bpf_get_stack, the user's from the CFI
 * unwinder (unwind.bpf.h) or the frame pointers. Included by bpfprof.bpf.c
 * where its maps and knobs are defined; the sample and sched_switch
 * programs both take stacks here.
 */
#ifndef BPFPROF_STACKS_BPF_H
#define BPFPROF_STACKS_BPF_H

/*
 * The current task's kernel stack, then its user stack right after it, into
 * ips[BPFPROF_MAX_FRAMES]; returns SAMPLE_*STACK_* flags. Kernel stacks and
 * frame-pointer user stacks: bpf_get_stack(), which stops at the
 * perf_event_max_stack sysctl (userspace sets perf_max_stack from it, so a
 * full stack is known to be cut). `fps` gets each user frame's frame
 * pointer with the CFI walk (runtime.bpf.h). `may_copy` (a constant; on_sample's
 * only): the user stack may stop for a copy (SAMPLE_USTACK_COPIED).
 */
static __always_inline __u32 get_stacks(void *ctx, __u64 *ips, __u64 *fps, bool user,
					__u32 *kn_out, __u32 *un_out, bool may_find_vma,
					const bool may_copy)
{
	__u32 flags = 0, kn, un = 0, kmax, umax;
	long klen, ulen;

	kmax = perf_max_stack < BPFPROF_MAX_KSTACK ? perf_max_stack : BPFPROF_MAX_KSTACK;
	umax = perf_max_stack < BPFPROF_MAX_USTACK ? perf_max_stack : BPFPROF_MAX_USTACK;
	klen = bpf_get_stack(ctx, ips, BPFPROF_MAX_KSTACK * sizeof(__u64), 0);
	if (klen < 0) {
		flags |= SAMPLE_KSTACK_ERROR;
		klen = 0;
	}
	kn = (__u32)klen / sizeof(__u64);
	if (kn > BPFPROF_MAX_KSTACK)
		kn = BPFPROF_MAX_KSTACK;
	if (kn >= kmax)
		flags |= SAMPLE_KSTACK_TRUNCATED;

	/*
	 * A task past exit_mm() (the end of do_exit) has no user memory left:
	 * its user registers point into code that is gone, so no user stack.
	 */
	if (user && !bpf_get_current_task_btf()->mm)
		user = false;
	/* So is the stack of one inside execve once its old memory went (one find_vma). */
	if (user && cfi_unwind && may_find_vma) {
		bool used = false;

		if (unwind_user_gone_in_exec(&used))
			user = false;
		if (used)
			may_find_vma = false;
	}
	if (user && cfi_unwind) {
		un = unwind_user(bpf_get_current_task_btf(), &ips[kn], fps, &flags, may_find_vma,
				 may_copy);
	} else if (user) {
		/* Only as much as it can fill: bpf_get_stack zeroes the rest of the buffer. */
		if (umax > BPFPROF_MAX_USTACK || umax < 1)
			umax = BPFPROF_MAX_USTACK;
		ulen = bpf_get_stack(ctx, &ips[kn], umax * sizeof(__u64), BPF_F_USER_STACK);
		if (ulen < 0) {
			flags |= SAMPLE_USTACK_ERROR;
			ulen = 0;
		}
		un = (__u32)ulen / sizeof(__u64);
		if (un > BPFPROF_MAX_USTACK)
			un = BPFPROF_MAX_USTACK;
		if (un >= umax)
			flags |= SAMPLE_USTACK_TRUNCATED |
				 (USTACK_END_LIMIT << SAMPLE_USTACK_END_SHIFT);
	}
	if (un && kn && user_in_syscall())
		flags |= SAMPLE_USER_IN_SYSCALL;
	*kn_out = kn;
	*un_out = un;
	return flags;
}

#endif
