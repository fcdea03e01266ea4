/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Python frames in samples (CPython 3.11 on). A native stack through the
 * interpreter shows only _PyEval_EvalFrameDefault; the Python functions it
 * runs are interpreter frames in the thread's data stack, linked from the
 * thread state. For a sample of a thread that holds the GIL (the thread
 * state _PyRuntime names is this thread's: its pthread_t is our fs base),
 * this reads each frame's code object and instruction pointer, innermost
 * first, and tags the native frames in the interpreter loop: userspace
 * (model/ingest.c) puts each loop's group of Python frames in its place
 * and names the code objects (lang/python_code.c).
 *
 * Userspace publishes py_procs: for each Python process, where _PyRuntime
 * and the loop are and the layout of its version (bpfprof_abi.h).
 */
#ifndef BPFPROF_PYTHON_BPF_H
#define BPFPROF_PYTHON_BPF_H

const volatile bool python_frames = false;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);
	__type(key, __u32); /* tgid */
	__type(value, struct py_proc);
} py_procs SEC(".maps");

/* The bytes of an interpreter frame read at once: every field the layouts name is in them. */
#define PY_FRAME_WINDOW 128

/* An index into sample_event.ips, masked: the verifier sees it in bounds. */
#define PY_IPS(i) ((i) & (BPFPROF_IPS_WORDS - 1))

struct py_walk {
	__u64 frame;
	__u64 *ips; /* sample_event.ips */
	__u32 base; /* where the Python frames start in it (2 words each) */
	__u32 n;
	bool truncated;
	struct py_layout l;
};

static __always_inline __u64 py_word(const __u64 *w, __u16 off)
{
	return w[(off / 8) & (PY_FRAME_WINDOW / 8 - 1)];
}

static long py_step(__u32 i, struct py_walk *w)
{
	__u64 win[PY_FRAME_WINDOW / 8];
	__u64 code, instr, entry = 0;
	__u32 idx;
	__u8 flag;

	if (!w->frame)
		return 1;
	if (w->n >= BPFPROF_MAX_PYFRAMES) {
		w->truncated = true;
		return 1;
	}
	if (bpf_probe_read_user(win, sizeof(win), (void *)w->frame)) {
		w->truncated = true;
		return 1;
	}
	code = py_word(win, w->l.frame_code);
	instr = py_word(win, w->l.frame_instr);
	flag = ((__u8 *)win)[w->l.frame_entry & (PY_FRAME_WINDOW - 1)];
	if (w->l.entry_kind == PY_ENTRY_IS_ENTRY)
		entry = flag ? PY_FRAME_ENTRY : 0;
	w->frame = py_word(win, w->l.frame_previous);
	if (w->l.entry_kind == PY_ENTRY_OWNER && flag == 3) {
		/*
		 * 3.12+: a frame owned by the C stack is the marker a loop
		 * pushes under its first frame: that frame, already out, was
		 * its entry.
		 */
		if (w->n)
			w->ips[PY_IPS(w->base + 2 * w->n - 1)] |= PY_FRAME_ENTRY;
		return 0;
	}
	idx = w->base + 2 * w->n;
	/* base <= BPFPROF_MAX_FRAMES and n < BPFPROF_MAX_PYFRAMES: this always fits. */
	w->ips[PY_IPS(idx)] = code;
	w->ips[PY_IPS(idx + 1)] = (instr & ~1ull) | entry;
	w->n++;
	return 0;
}

struct py_tag {
	__u64 *ips;
	__u32 kn; /* the user frames start here */
	__u64 start, len;
};

/* Tags a user frame in the interpreter loop. */
static long py_tag_eval(__u32 i, struct py_tag *t)
{
	__u64 *ip = &t->ips[PY_IPS(t->kn + i)];

	if (*ip - t->start < t->len)
		*ip |= USTACK_PY_EVAL;
	return 0;
}

/*
 * The current thread's Python frames into ips[kn + un ...] (two words
 * each) and the interpreter loop's frames among the user frames
 * ips[kn .. kn + un) tagged USTACK_PY_EVAL; the number of Python frames
 * (0: not a Python thread, or not the GIL holder). *flags gets
 * SAMPLE_PY_TRUNCATED when cut.
 */
static __always_inline __u32 python_stack(__u32 tgid, __u64 *ips, __u32 kn, __u32 un, __u32 *flags)
{
#if defined(__TARGET_ARCH_x86)
	struct task_struct *task = bpf_get_current_task_btf();
	struct py_proc *pp = bpf_map_lookup_elem(&py_procs, &tgid);
	struct py_walk w = { .ips = ips, .base = kn + un };
	struct py_tag t;
	__u64 win[PY_FRAME_WINDOW / 8];
	__u64 tstate, thread_id, frame;
	__u16 lo, hi;

	if (!pp)
		return 0;
	w.l = pp->layout;
	if (bpf_probe_read_user(&tstate, sizeof(tstate),
				(void *)(pp->runtime + w.l.runtime_tstate)) ||
	    !tstate)
		return 0;
	/*
	 * The GIL holder's state: this thread's (its pthread_t is our fs base),
	 * or this thread runs no Python now. Its id and frame link in one read.
	 */
	lo = w.l.tstate_thread_id < w.l.tstate_frame ? w.l.tstate_thread_id : w.l.tstate_frame;
	hi = w.l.tstate_thread_id < w.l.tstate_frame ? w.l.tstate_frame : w.l.tstate_thread_id;
	if (hi - lo > PY_FRAME_WINDOW - 8 ||
	    bpf_probe_read_user(win, sizeof(win), (void *)(tstate + lo)))
		return 0;
	thread_id = py_word(win, w.l.tstate_thread_id - lo);
	frame = py_word(win, w.l.tstate_frame - lo);
	if (thread_id != BPF_CORE_READ(task, thread.fsbase))
		return 0;
	if (w.l.cframe_frame != PY_NO_CFRAME && frame &&
	    bpf_probe_read_user(&frame, sizeof(frame), (void *)(frame + w.l.cframe_frame)))
		return 0;
	w.frame = frame;
	bpf_loop(BPFPROF_MAX_PYFRAMES + 1, py_step, &w, 0);
	if (w.truncated)
		*flags |= SAMPLE_PY_TRUNCATED;
	if (!w.n)
		return 0;
	t.ips = ips;
	t.kn = kn;
	t.start = pp->eval_start;
	t.len = pp->eval_end - pp->eval_start;
	bpf_loop(un, py_tag_eval, &t, 0);
	return w.n;
#else
	return 0;
#endif
}

#endif
