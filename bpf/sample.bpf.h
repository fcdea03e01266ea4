/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The sampling programs: on_sample, run by the perf event on every CPU at
 * the sampling rate, and on_sample_python, its tail for a Python process.
 * Included by bpfprof.bpf.c after the helpers they share with the
 * scheduler programs (the wakeup folded into a sample, the thread's name).
 */
#ifndef BPFPROF_SAMPLE_BPF_H
#define BPFPROF_SAMPLE_BPF_H

/* A sample record of its stacks' size into its ring. */
static __always_inline void submit_sample(struct sample_event *e)
{
	__u64 size =
		__builtin_offsetof(struct sample_event, ips) +
		(__u64)(e->kstack_len + e->ustack_len + 2 * e->py_len + RT_REC_WORDS * e->rt_len) *
			sizeof(__u64);

	if (size > sizeof(*e))
		size = sizeof(*e);
	e->hdr.size = size;
	submit(e, size, EV_SAMPLE, e->hdr.cpu);
}

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} python_tail SEC(".maps");

/* on_sample's tail for a Ruby process (on_sample_ruby). */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} ruby_tail SEC(".maps");

SEC("perf_event")
int on_sample(struct bpf_perf_event_data *ctx)
{
	/* BTF-typed: plain loads (the stack walk needs this helper on every kernel anyway). */
	struct task_struct *cur = bpf_get_current_task_btf();
	__u32 tgid = cur->tgid, tid = cur->pid;
	__u32 zero = 0;
	struct cpu_slice *slice;
	struct sample_event *e;
	__u32 kn, un;

	if (tid == 0 && !include_idle)
		return 0;
	if (tid != 0 && !current_is_target(tgid))
		return 0;
	if (tid == 0 && (filter_tgid || nr_cgroups))
		return 0;

	e = bpf_map_lookup_elem(&scratch, &zero);
	if (!e)
		return 0;

	e->hdr.kind = EV_SAMPLE;
	e->hdr.cpu = bpf_get_smp_processor_id();
	e->hdr.ts = bpf_ktime_get_ns();
	e->hdr.pid = tgid;
	e->hdr.tid = tid;
	e->period = ctx->sample_period;
	e->flags = tid != 0 && (cur->flags & KPF_KTHREAD) ? EV_KTHREAD : 0;
	slice = bpf_map_lookup_elem(&cpu_slices, &zero);
	/*
	 * The CPU's last switch seen gave it to this thread: its slice's start
	 * and CPU time then. Else the switch that did was hidden from the
	 * program (switch_clock.bpf.h, recover_unseen_switch_in()) and the
	 * slice is another thread's: its runtime, taken for this thread's,
	 * made the replay's true-up credit up to all the wall time since this
	 * thread's last figure (1.5-1.8x its CPU time under load, with -a,
	 * where that other thread is a target too). So: the thread's own
	 * arrival stamp, and its CPU time then, which the fair class saved at
	 * that switch-in (set_next_entity(): prev_sum_exec_runtime); without
	 * it the replay lost the end of every slice before a hidden switch-in.
	 */
	if (slice && slice->tid == tid) {
		e->oncpu_since = slice->since;
		e->oncpu_runtime_ns = slice->runtime_ns;
	} else {
		e->oncpu_since = unseen_switch_in_time(cur, slice ? slice->since : 0, e->hdr.ts);
		e->oncpu_runtime_ns = tid ? cur->se.prev_sum_exec_runtime : 0;
	}
	/* The switch's time comes from the runqueue clock (switch_clock.bpf.h): within
	 * microseconds. */
	if (e->oncpu_since > e->hdr.ts)
		e->oncpu_since = e->hdr.ts;
	task_comm(e->comm, cur);
	e->woken.ts = 0;
	if (defer_wakeups && tid != 0) {
		/* A lookup only: this can be NMI context. */
		settle_wakeup(bpf_task_storage_get(&task_sched, cur, NULL, 0), cur, e->oncpu_since,
			      &e->woken);
	}

	e->flags |= get_stacks(ctx, e->ips, SAMPLE_FPS(e), tid != 0, &kn, &un, true, true);
	e->kstack_len = kn;
	e->ustack_len = un;
	e->py_len = 0;
	e->rt_len = 0;
	e->interp = INTERP_PYTHON;
	/*
	 * A Python process's sample goes on in on_sample_python, a program
	 * of its own (a tail call), which the verifier checks apart from the
	 * unwinder: in one program their paths multiply (1.4 s to load). It
	 * sends the sample, and its stack copy first, itself.
	 */
	if (python_frames && un && bpf_map_lookup_elem(&py_procs, &tgid))
		bpf_tail_call(ctx, &python_tail, 0);
	/* A PHP process's: on_sample_php (php_sample.bpf.h). */
	if (php_frames && un && bpf_map_lookup_elem(&php_procs, &tgid))
		bpf_tail_call(ctx, &php_tail, 0);
	/* A Ruby process's: on_sample_ruby (ruby.bpf.h). */
	if (ruby_frames && un && bpf_map_lookup_elem(&rb_procs, &tgid))
		bpf_tail_call(ctx, &ruby_tail, 0);
	/* A runtime's frames (runtime.bpf.h): a lookup, for a process that runs none. */
	e->rt_len = rt_stack((struct rt_ips *)e->ips, (struct rt_fps *)SAMPLE_FPS(e), tgid,
			     kn | un << 16, e->flags);
	/* As with Python frames: records tied to this walk's frames, its copy is not used. */
	if ((e->flags & SAMPLE_USTACK_COPIED) && e->rt_len) {
		e->flags &= ~SAMPLE_USTACK_COPIED;
		stack_copy_refund();
	}
	/* Its stack copy goes first. */
	if (e->flags & SAMPLE_USTACK_COPIED)
		stack_copy_submit(e);
	submit_sample(e);
	return 0;
}

/*
 * The sample on_sample left in scratch, for a tail that adds an
 * interpreter's frames (NULL: none), and its stacks' lengths: *un 0 when
 * they are not what a walk writes (the tail then walks nothing).
 */
static __always_inline struct sample_event *tail_sample(__u32 *kn, __u32 *un)
{
	__u32 zero = 0;
	struct sample_event *e = bpf_map_lookup_elem(&scratch, &zero);

	if (!e)
		return NULL;
	*kn = e->kstack_len;
	*un = e->ustack_len;
	if (*kn > BPFPROF_MAX_KSTACK || *un > BPFPROF_MAX_USTACK)
		*un = 0;
	return e;
}

/*
 * A sample with interpreter frames is not finished from a copy (they are
 * grouped by the loops of this walk, which a later one cannot redo:
 * capture/stack_finish.c): its copy stays out of the ring, and its bytes
 * go back to the budgets (S2/S5 review, finding 8). Its copy, if any,
 * goes first, then the sample.
 */
static __always_inline void send_interp_sample(struct sample_event *e)
{
	if ((e->flags & SAMPLE_USTACK_COPIED) && e->py_len) {
		e->flags &= ~SAMPLE_USTACK_COPIED;
		stack_copy_refund();
	}
	if (e->flags & SAMPLE_USTACK_COPIED)
		stack_copy_submit(e);
	submit_sample(e);
}

/* The tail of on_sample for a Python process: its Python frames, then the record. */
SEC("perf_event")
int on_sample_python(struct bpf_perf_event_data *ctx)
{
	__u32 kn, un;
	struct sample_event *e = tail_sample(&kn, &un);

	if (!e)
		return 0;
	if (un)
		e->py_len = python_stack(e->hdr.pid, e->ips, kn, un, &e->flags);
	send_interp_sample(e);
	return 0;
}

/* The tail of on_sample for a Ruby process: its Ruby frames (ruby.bpf.h), then the record. */
SEC("perf_event")
int on_sample_ruby(struct bpf_perf_event_data *ctx)
{
	__u32 kn, un;
	struct sample_event *e = tail_sample(&kn, &un);

	if (!e)
		return 0;
	e->interp = INTERP_RUBY;
	if (un)
		e->py_len = ruby_stack(e->hdr.pid, e->ips, kn, un, &e->flags);
	send_interp_sample(e);
	return 0;
}

#endif
