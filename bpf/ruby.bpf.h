/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Ruby frames in samples (CRuby 3.x). A native stack through the VM shows
 * rb_vm_exec once per entry into the VM; the Ruby methods and blocks it
 * runs are control frames on the thread's VM stack, linked from its
 * execution context (ruby_current_ec, a TLS variable of libruby: every
 * Ruby thread's own, whether or not it holds the GVL). This reads each
 * Ruby frame's iseq and pc, innermost first, in the Python frames' format
 * (bpfprof_abi.h: interp INTERP_RUBY), and tags the native rb_vm_exec
 * frames: userspace (model/ingest.c) puts each one's group of Ruby frames
 * in its place and names the iseqs (lang/ruby_procs.c).
 *
 * Userspace publishes rb_procs: for each Ruby process, where its
 * ruby_current_ec is and the layout of its version.
 */
#ifndef BPFPROF_RUBY_BPF_H
#define BPFPROF_RUBY_BPF_H

const volatile bool ruby_frames = false;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);
	__type(key, __u32); /* tgid */
	__type(value, struct rb_proc);
} rb_procs SEC(".maps");

/* Control frames looked at per sample: C frames (skipped) count too. */
#define RB_MAX_CFPS	     (2 * BPFPROF_MAX_PYFRAMES)
/* A control frame's bytes, read at once (3.1's is 64). */
#define RB_CFP_WINDOW	     64
/* Frame flags (ep[0]): the frame a VM entry started with; a C function's or block's. */
#define RB_FRAME_FLAG_FINISH 0x0020
#define RB_FRAME_FLAG_CFRAME 0x0080
/* TLS module ids past this are not a process's (a hostile slot). */
#define RB_MAX_MODID	     4096

struct rb_walk {
	__u64 cfp, end;
	__u64 *ips; /* sample_event.ips */
	__u32 base; /* where the Ruby frames start in it (2 words each) */
	__u32 n;
	bool truncated;
	struct rb_layout l;
};

static __always_inline __u64 rb_word(const __u64 *w, __u16 off)
{
	return w[(off / 8) & (RB_CFP_WINDOW / 8 - 1)];
}

static long rb_step(__u32 i, struct rb_walk *w)
{
	__u64 win[RB_CFP_WINDOW / 8];
	__u64 pc, iseq, ep, flags;
	__u32 idx;

	if (w->cfp >= w->end)
		return 1;
	if (w->n >= BPFPROF_MAX_PYFRAMES) {
		w->truncated = true;
		return 1;
	}
	if (bpf_probe_read_user(win, sizeof(win), (void *)w->cfp)) {
		w->truncated = true;
		return 1;
	}
	w->cfp += w->l.cfp_size;
	pc = rb_word(win, w->l.cfp_pc);
	iseq = rb_word(win, w->l.cfp_iseq);
	ep = rb_word(win, w->l.cfp_ep);
	/* A C function's frame (its code is in the native stack) or the stack's dummy: none. */
	if (!pc || !iseq || !ep || bpf_probe_read_user(&flags, sizeof(flags), (void *)ep) ||
	    (flags & RB_FRAME_FLAG_CFRAME))
		return 0;
	idx = w->base + 2 * w->n;
	/* base <= BPFPROF_MAX_FRAMES and n < BPFPROF_MAX_PYFRAMES: this always fits. */
	w->ips[PY_IPS(idx)] = iseq;
	w->ips[PY_IPS(idx + 1)] =
		(pc & ~1ull) | (flags & RB_FRAME_FLAG_FINISH ? PY_FRAME_ENTRY : 0);
	w->n++;
	return 0;
}

struct rb_tag {
	__u64 *ips;
	__u32 kn; /* the user frames start here */
	__u64 exec_start, exec_len, core_start, core_len;
};

/* Tags a user frame in rb_vm_exec (a group's place) or in its core loop (left out). */
static long rb_tag_frame(__u32 i, struct rb_tag *t)
{
	__u64 *ip = &t->ips[PY_IPS(t->kn + i)];

	if (*ip - t->exec_start < t->exec_len)
		*ip |= USTACK_PY_EVAL;
	else if (*ip - t->core_start < t->core_len)
		*ip |= USTACK_INTERP_VM;
	return 0;
}

/*
 * The current thread's Ruby frames into ips[kn + un ...] (two words each)
 * and rb_vm_exec's frames among the user frames ips[kn .. kn + un) tagged
 * USTACK_PY_EVAL (its core loop's USTACK_INTERP_VM); the number of Ruby frames (0: not a Ruby
 * thread, or no Ruby code on it). *flags gets SAMPLE_PY_TRUNCATED when cut.
 */
static __always_inline __u32 ruby_stack(__u32 tgid, __u64 *ips, __u32 kn, __u32 un, __u32 *flags)
{
#if defined(__TARGET_ARCH_x86)
	struct task_struct *task = bpf_get_current_task_btf();
	struct rb_proc *rp = bpf_map_lookup_elem(&rb_procs, &tgid);
	struct rb_walk w = { .ips = ips, .base = kn + un };
	struct rb_tag t;
	__u64 modid, dtv, block, ec, ctx[3];
	__u16 lo;

	if (!rp)
		return 0;
	w.l = rp->layout;
	/* ruby_current_ec = *(dtv[modid].val + offset); dtv = the TCB's second word. */
	if (bpf_probe_read_user(&modid, sizeof(modid), (void *)rp->ec_modid_slot) || !modid ||
	    modid > RB_MAX_MODID ||
	    bpf_probe_read_user(&dtv, sizeof(dtv),
				(void *)(BPF_CORE_READ(task, thread.fsbase) + 8)) ||
	    bpf_probe_read_user(&block, sizeof(block), (void *)(dtv + 16 * modid)) || !block ||
	    block == (__u64)-1 ||
	    bpf_probe_read_user(&ec, sizeof(ec), (void *)(block + rp->ec_tls_offset)) || !ec)
		return 0;
	/* vm_stack, vm_stack_size and cfp are the context's first three words in 3.x. */
	lo = w.l.ec_vm_stack;
	if (w.l.ec_vm_stack_size != lo + 8 || w.l.ec_cfp != lo + 16 ||
	    bpf_probe_read_user(ctx, sizeof(ctx), (void *)(ec + lo)))
		return 0;
	w.cfp = ctx[2];
	/* The end of the control frames: the stack's end (they grow down from it). */
	w.end = ctx[0] + (ctx[1] << 3);
	if (w.cfp < ctx[0] || w.l.cfp_size < 8 || w.l.cfp_size > RB_CFP_WINDOW)
		return 0;
	bpf_loop(RB_MAX_CFPS, rb_step, &w, 0);
	if (w.truncated || w.cfp < w.end)
		*flags |= SAMPLE_PY_TRUNCATED;
	if (!w.n)
		return 0;
	t.ips = ips;
	t.kn = kn;
	t.exec_start = rp->exec_start;
	t.exec_len = rp->exec_end - rp->exec_start;
	t.core_start = rp->core_start;
	t.core_len = rp->core_end - rp->core_start;
	bpf_loop(un, rb_tag_frame, &t, 0);
	return w.n;
#else
	return 0;
#endif
}

#endif
