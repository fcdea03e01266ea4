/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Runtime frames (issue 39): for a process a runtime module published
 * (rt_procs, struct rt_proc in bpfprof_abi.h), the words that name each of
 * its frames, read at offsets from the frame's frame pointer as the user
 * walk found it (the scratch's fps), one record per user frame whose PC
 * lies in the runtime's code. The walk only notes each frame's frame
 * pointer (one store a step, whatever the process runs); this runs after
 * it, over its frames, in on_sample and in the switch program alike
 * (off-CPU stacks too), as a global function the verifier checks once.
 * Inline, or in the walk's step, each of the states the walk ends in took
 * it again: the switch program went past a million instructions. A
 * process without a runtime costs one hash lookup that misses.
 * Userspace names the frames from the words (model/ingest.c, then the lang
 * module: lang/hotspot_procs.h for HotSpot's interpreter).
 */
#ifndef BPFPROF_RUNTIME_BPF_H
#define BPFPROF_RUNTIME_BPF_H

/* runtime_frames and rt_procs: rt_step.bpf.h, which the user walk calls. */

/* An index into sample_event.ips / switch_event.ips, masked: the verifier sees it in bounds. */
#define RT_IPS(i)   ((i) & (BPFPROF_IPS_WORDS - 1))
#define RT_FRAME(i) ((i) & (BPFPROF_MAX_USTACK - 1))

struct rt_pass {
	__u64 *ips; /* the record's ips[]: user frames from kn, records from kn + un */
	__u64 *fps; /* each user frame's frame pointer (the walk's) */
	__u32 kn, un;
	__u32 n;	     /* records so far */
	bool top_exact;	     /* the innermost user frame is the interrupted instruction */
	__u64 top[RT_WORDS]; /* the registers top_reg names, at the interruption */
	struct rt_proc *p;   /* rt_procs' value: a copy would not fit the stack */
};

/*
 * Where each enum rt_reg is in struct pt_regs: the registers are read by
 * offset, not by a switch, which the verifier would walk once per word and
 * register (7^4 paths: the switch program went past its million
 * instructions).
 */
static const __u16 rt_reg_offs[8] = {
	[RT_REG_NONE] = 0,
	[RT_REG_RBX] = __builtin_offsetof(struct pt_regs, bx),
	[RT_REG_R9] = __builtin_offsetof(struct pt_regs, r9),
	[RT_REG_R12] = __builtin_offsetof(struct pt_regs, r12),
	[RT_REG_R13] = __builtin_offsetof(struct pt_regs, r13),
	[RT_REG_R14] = __builtin_offsetof(struct pt_regs, r14),
	[RT_REG_R15] = __builtin_offsetof(struct pt_regs, r15),
};

/* User frame i: a record when its PC is in the runtime's code. */
static long rt_frame(__u32 i, struct rt_pass *r)
{
	__u64 pc = r->ips[RT_IPS(r->kn + i)], fp = r->fps[RT_FRAME(i)], w0, v;
	bool in = false, regs = false;
	__u32 at;

	for (int k = 0; k < RT_MAX_RANGES; k++)
		if (k < r->p->nranges &&
		    pc - r->p->ranges[k].lo < r->p->ranges[k].hi - r->p->ranges[k].lo)
			in = true;
	if (!in)
		return 0;
	if (r->n >= BPFPROF_MAX_RTFRAMES)
		return 1;
	/* kn + un <= BPFPROF_MAX_FRAMES and n < BPFPROF_MAX_RTFRAMES: it fits (bpfprof_abi.h). */
	at = r->kn + r->un + RT_REC_WORDS * r->n;
	for (int j = 0; j < RT_WORDS; j++) {
		v = 0;
		if (j < r->p->nwords) {
			if (!i && r->top_exact && r->p->top_reg[j]) {
				v = r->top[j];
				regs = true;
			} else if (bpf_probe_read_user(&v, sizeof(v),
						       (void *)(fp + r->p->off[j]))) {
				v = 0;
			}
		}
		r->ips[RT_IPS(at + 1 + j)] = v;
	}
	w0 = (i & 0xffff) | ((__u64)r->p->kind << 16) | (regs ? RT_REC_TOP_REGS : 0);
	r->ips[RT_IPS(at)] = w0;
	r->n++;
	return 0;
}

/* The memory the records go to and come from, sized for a global function's arguments. */
struct rt_ips {
	__u64 w[BPFPROF_IPS_WORDS];
};

struct rt_fps {
	__u64 fp[BPFPROF_MAX_USTACK];
};

/*
 * The current task's runtime records after its kn kernel and un user
 * frames (lens = kn | un << 16: five arguments at most) in ips (fps holds the user frames' frame
 * pointers); the number of records (0: no runtime published for tgid, or none of its frames in its
 * code). `flags`: the stack's SAMPLE_* flags. A global function: the verifier checks it once, not
 * once for each state the walk before it ended in (the switch program went past its million
 * instructions so).
 */
__noinline int rt_stack(struct rt_ips *ips, struct rt_fps *fps, __u32 tgid, __u32 lens, __u32 flags)
{
#if defined(__TARGET_ARCH_x86)
	__u32 kn = lens & 0xffff, un = lens >> 16;
	struct rt_proc *p;
	struct rt_pass r;
	struct pt_regs *regs;

	if (!ips || !fps || !runtime_frames || !un || kn > BPFPROF_MAX_KSTACK ||
	    un > BPFPROF_MAX_USTACK)
		return 0;
	p = bpf_map_lookup_elem(&rt_procs, &tgid);
	if (!p)
		return 0;
	r.ips = ips->w;
	r.fps = fps->fp;
	r.kn = kn;
	r.un = un;
	r.n = 0;
	r.p = p;
	r.top_exact = !(flags & SAMPLE_USER_IN_SYSCALL);
	regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	/* Read whatever top_reg says (RT_REG_NONE too): rt_frame uses only those it names. */
	for (int j = 0; j < RT_WORDS; j++)
		if (bpf_probe_read_kernel(&r.top[j], sizeof(r.top[j]),
					  (char *)regs + rt_reg_offs[r.p->top_reg[j] & 7]))
			r.top[j] = 0;
	bpf_loop(un, rt_frame, &r, 0);
	return r.n;
#else
	return 0;
#endif
}

#endif
