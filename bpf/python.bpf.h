/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Python frames in samples (CPython 2.7, 3.6 on). A native stack through
 * the interpreter shows only its loop (_PyEval_EvalFrameDefault, 2.7's
 * PyEval_EvalFrameEx); the Python functions it runs are frames linked
 * from the thread state: PyFrameObjects up to 3.10, interpreter frames in
 * the thread's data stack from 3.11. For a sample of any thread of a
 * Python process (whether it holds the GIL or waits for it, on CPU or at
 * switch-out) this finds that thread's own state, reads each frame's code
 * object and instruction, innermost first, and tags the native frames in
 * the interpreter loop: userspace (model/ingest.c) puts each loop's group
 * of Python frames in its place and names the code objects.
 *
 * Userspace publishes py_procs: for each Python process, its roots, the
 * loop and the layout of its version (bpfprof_abi.h).
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
	flag = ((__u8 *)win)[w->l.frame_entry & (PY_FRAME_WINDOW - 1)];
	if (w->l.entry_kind == PY_ENTRY_EVERY) {
		/*
		 * <= 3.10: each frame runs in a loop of its own; its int f_lasti
		 * is sent shifted past the entry bit (p2's decoder: instr >> 1).
		 */
		instr = (__u64)((__u32 *)win)[(w->l.frame_instr / 4) & (PY_FRAME_WINDOW / 4 - 1)]
			<< 1;
		entry = PY_FRAME_ENTRY;
	} else {
		instr = py_word(win, w->l.frame_instr);
		if (w->l.entry_kind == PY_ENTRY_IS_ENTRY)
			entry = flag ? PY_FRAME_ENTRY : 0;
	}
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
	__u32 kn;   /* the user frames start here */
	__u32 skip; /* the innermost loop frames left untagged */
	__u32 loops;
	__u64 start, len;
};

/* Counts the user frames in the interpreter loop. */
static long py_count_eval(__u32 i, struct py_tag *t)
{
	t->loops += t->ips[PY_IPS(t->kn + i)] - t->start < t->len;
	return 0;
}

/* Tags a user frame in the interpreter loop (innermost first: the first `skip` stay C frames). */
static long py_tag_eval(__u32 i, struct py_tag *t)
{
	__u64 *ip = &t->ips[PY_IPS(t->kn + i)];

	if (*ip - t->start >= t->len)
		return 0;
	if (t->skip)
		t->skip--;
	else
		*ip |= USTACK_PY_EVAL;
	return 0;
}

/* The thread states a list walk looks at before giving up (a fake list can be any length). */
#define PY_MAX_THREADS 64

struct py_find {
	__u64 tstate; /* in: the next to look at; out: the match, or 0 */
	__u64 fsbase;
	__u16 next, thread_id;
	bool found;
};

static long py_find_step(__u32 i, struct py_find *f)
{
	__u64 id = 0;

	if (!f->tstate)
		return 1;
	if (bpf_probe_read_user(&id, sizeof(id), (void *)(f->tstate + f->thread_id)))
		goto none;
	if (id == f->fsbase) {
		f->found = true;
		return 1;
	}
	if (bpf_probe_read_user(&f->tstate, sizeof(f->tstate), (void *)(f->tstate + f->next)))
		goto none;
	return 0;
none:
	f->tstate = 0;
	return 1;
}

/*
 * This thread's state. Any thread of the process may be sampled, not only
 * the one holding the GIL (_PyRuntime names that one alone): CPython keeps
 * each thread's state in the thread's own pthread key (autoTSSkey), which
 * glibc keeps in the thread's struct pthread, at fs base: two reads, and
 * the value is this thread's whatever it is doing. Where that route is
 * unknown (2.7 keeps keys in a list of its own; a libc not bpfprof's; a
 * version described only by its _Py_DebugOffsets), the first interpreter's
 * thread list is walked for the state whose thread_id is this thread's
 * pthread_t (at most PY_MAX_THREADS: the list is the process's to fake).
 */
static __always_inline __u64 py_thread_state(const struct py_proc *pp, const struct py_layout *l,
					     __u64 fsbase)
{
	struct py_find f = { .fsbase = fsbase,
			     .next = l->tstate_next,
			     .thread_id = l->tstate_thread_id };
	__u64 interp = 0, tstate = 0;
	__u32 key = 0;

	if (pp->tss_key && pp->tsd_offset &&
	    !bpf_probe_read_user(&key, sizeof(key), (void *)pp->tss_key) && key < 32 &&
	    !bpf_probe_read_user(&tstate, sizeof(tstate),
				 (void *)(fsbase + pp->tsd_offset + 16 * key + 8)))
		return tstate;
	if (!pp->interp_head ||
	    bpf_probe_read_user(&interp, sizeof(interp), (void *)pp->interp_head) || !interp ||
	    bpf_probe_read_user(&f.tstate, sizeof(f.tstate),
				(void *)(interp + l->interp_tstate_head)))
		return 0;
	bpf_loop(PY_MAX_THREADS, py_find_step, &f, 0);
	return f.found ? f.tstate : 0;
}

/*
 * The current thread's Python frames into ips[kn + un ...] (two words
 * each) and the interpreter loop's frames among the user frames
 * ips[kn .. kn + un) tagged USTACK_PY_EVAL; the number of Python frames
 * (0: not a Python thread, or none running). *flags gets
 * SAMPLE_PY_TRUNCATED when cut. At switch-out the current task is the one
 * leaving: its memory and fs base are the ones read.
 */
static __always_inline __u32 python_stack(__u32 tgid, __u64 *ips, __u32 kn, __u32 un, __u32 *flags)
{
#if defined(__TARGET_ARCH_x86)
	struct task_struct *task = bpf_get_current_task_btf();
	struct py_proc *pp = bpf_map_lookup_elem(&py_procs, &tgid);
	struct py_walk w = { .ips = ips, .base = kn + un };
	struct py_tag t;
	__u64 tstate, thread_id = 0, frame = 0, fsbase;

	if (!pp)
		return 0;
	w.l = pp->layout;
	fsbase = BPF_CORE_READ(task, thread.fsbase);
	tstate = py_thread_state(pp, &w.l, fsbase);
	if (!tstate)
		return 0;
	/*
	 * Its id: the key's value is the process's to write, and the list's
	 * match is this thread's. Fields too far apart for one read in some
	 * versions (2.7-3.10): two reads.
	 */
	if (bpf_probe_read_user(&thread_id, sizeof(thread_id),
				(void *)(tstate + w.l.tstate_thread_id)) ||
	    thread_id != fsbase ||
	    bpf_probe_read_user(&frame, sizeof(frame), (void *)(tstate + w.l.tstate_frame)))
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
	t.skip = 0;
	t.loops = 0;
	t.start = pp->eval_start;
	t.len = pp->eval_end - pp->eval_start;
	/*
	 * <= 3.10: one loop per frame, but the loop entering a frame links it
	 * (tstate->frame = f) after its prologue, and unlinks it before its
	 * epilogue: there the innermost loop has no frame yet, or none left
	 * (5-7 % of a busy pool thread's samples). It stays a C frame, so that
	 * each frame goes to its own loop, not to its caller's.
	 */
	if (w.l.entry_kind == PY_ENTRY_EVERY) {
		bpf_loop(un, py_count_eval, &t, 0);
		t.skip = t.loops > w.n ? t.loops - w.n : 0;
	}
	bpf_loop(un, py_tag_eval, &t, 0);
	return w.n;
#else
	return 0;
#endif
}

/* The record's frames, sized for a global function's argument. */
struct py_ips {
	__u64 w[BPFPROF_IPS_WORDS];
};

/* python_switch_stack's answer: the frame count, and this bit when cut. */
#define PY_STACK_TRUNCATED (1 << 16)

/*
 * python_stack at a switch-out, after prev's kn kernel and un user frames
 * (lens = kn | un << 16) in ips: the number of Python frames, with
 * PY_STACK_TRUNCATED when cut. A global function: the verifier checks it
 * once, not once for each state the switch program's stack walk ended in.
 */
__noinline int python_switch_stack(struct py_ips *ips, __u32 tgid, __u32 lens)
{
	__u32 kn = lens & 0xffff, un = lens >> 16, flags = 0, n;

	if (!ips || !python_frames || !un || kn > BPFPROF_MAX_KSTACK || un > BPFPROF_MAX_USTACK)
		return 0;
	n = python_stack(tgid, ips->w, kn, un, &flags);
	return (int)(n | (flags & SAMPLE_PY_TRUNCATED ? PY_STACK_TRUNCATED : 0));
}

#endif
