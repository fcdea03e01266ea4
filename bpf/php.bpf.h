/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * PHP frames in samples (the Zend engine, PHP 8). A native stack through
 * PHP shows execute_ex, the VM loop, once per nesting of the engine (a
 * callback from an internal function enters it again); the PHP functions
 * it runs are zend_execute_data frames on the VM stack, the innermost in
 * executor_globals.current_execute_data, each linked to its caller. This
 * reads each frame's zend_function and its opline's line, innermost first,
 * and tags the native frames in execute_ex: userspace (model/ingest.c)
 * puts each loop's group of PHP frames in its place and names the
 * functions (lang/php_procs.c). The VM's handlers that execute_ex calls
 * (static functions, unnamed in a stripped php) are tagged too, and left
 * out: the PHP frames stand for them. A frame its own execute_ex ran first
 * carries ZEND_CALL_TOP in its call info: it ends a group. An internal
 * function's frame (strlen, array_map) is recorded too, with no line, as
 * part of its caller's group: it names the native frames above the loop.
 *
 * Userspace publishes php_procs: for each PHP process (an NTS build),
 * where executor_globals and execute_ex are and its version's layout.
 */
#ifndef BPFPROF_PHP_BPF_H
#define BPFPROF_PHP_BPF_H

const volatile bool php_frames = false;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);
	__type(key, __u32); /* tgid */
	__type(value, struct php_proc);
} php_procs SEC(".maps");

/* on_sample goes on in on_sample_php (php_sample.bpf.h) for a PHP process. */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} php_tail SEC(".maps");

/* The bytes of a zend_execute_data read at once: every field the layout names is in them. */
#define PHP_EX_WINDOW	  64
/* zend_function.type of an internal (C) function. */
#define PHP_INTERNAL_FUNC 1
/* An index into sample_event.ips, masked: the verifier sees it in bounds. */
#define PHP_IPS(i)	  ((i) & (BPFPROF_IPS_WORDS - 1))

struct php_walk {
	__u64 ex;
	__u64 *ips; /* sample_event.ips */
	__u32 base; /* where the PHP frames start in it (2 words each) */
	__u32 n;
	bool truncated;
	/* The innermost frame's opline as the VM loop holds it in a register (0: none). */
	__u64 top_ex, top_opline;
	struct php_layout l;
};

static __always_inline __u64 php_word(const __u64 *w, __u16 off)
{
	return w[(off / 8) & (PHP_EX_WINDOW / 8 - 1)];
}

static long php_step(__u32 i, struct php_walk *w)
{
	__u64 win[PHP_EX_WINDOW / 8];
	__u64 func, opline, entry = 0;
	__u32 call_info, line = 0, idx;
	__u8 type = PHP_INTERNAL_FUNC;

	if (!w->ex)
		return 1;
	if (w->n >= BPFPROF_MAX_PYFRAMES) {
		w->truncated = true;
		return 1;
	}
	if (bpf_probe_read_user(win, sizeof(win), (void *)w->ex)) {
		w->truncated = true;
		return 1;
	}
	func = php_word(win, w->l.ex_func);
	opline = php_word(win, w->l.ex_opline);
	call_info = ((__u32 *)win)[(w->l.ex_call_info / 4) & (PHP_EX_WINDOW / 4 - 1)];
	if (w->n == 0 && w->ex == w->top_ex && w->top_opline)
		opline = w->top_opline;
	w->ex = php_word(win, w->l.ex_prev);
	/* A frame with no function (zend_call_function's stand-in when none runs): nothing. */
	if (!func)
		return 0;
	/*
	 * Only user code runs in a loop of its own: an internal function
	 * zend_call_function called directly is a loop's first frame by its
	 * call info, yet ends no group. Its type is read for such a frame
	 * only: two reads a frame, not three. An internal frame's opline is
	 * stale, its line whatever it reads: userspace drops it.
	 */
	if (call_info & w->l.call_top) {
		bpf_probe_read_user(&type, sizeof(type), (void *)(func + w->l.func_type));
		if (type != PHP_INTERNAL_FUNC)
			entry = PY_FRAME_ENTRY;
	}
	if (bpf_probe_read_user(&line, sizeof(line), (void *)(opline + w->l.op_lineno)))
		line = 0;
	idx = w->base + 2 * w->n;
	/* base <= BPFPROF_MAX_FRAMES and n < BPFPROF_MAX_PYFRAMES: this always fits. */
	w->ips[PHP_IPS(idx)] = func;
	w->ips[PHP_IPS(idx + 1)] = ((__u64)line << 1) | entry;
	w->n++;
	return 0;
}

struct php_tag {
	__u64 *ips;
	__u32 kn;   /* the user frames start here */
	bool found; /* php_find_loop: a frame in execute_ex */
	__u64 vm_start, eval_start, eval_end;
};

/* Stops at the first user frame in the VM loop. */
static long php_find_loop(__u32 i, struct php_tag *t)
{
	__u64 ip = t->ips[PHP_IPS(t->kn + i)];

	t->found = ip >= t->eval_start && ip < t->eval_end;
	return t->found;
}

/* Tags a user frame in the VM loop (USTACK_PY_EVAL) or in the VM's handlers (USTACK_INTERP_VM). */
static long php_tag(__u32 i, struct php_tag *t)
{
	__u64 *ip = &t->ips[PHP_IPS(t->kn + i)];

	if (*ip >= t->eval_start && *ip < t->eval_end)
		*ip |= USTACK_PY_EVAL;
	else if (*ip >= t->vm_start && *ip < t->eval_start)
		*ip |= USTACK_INTERP_VM;
	return 0;
}

/*
 * The current thread's PHP frames into ips[kn + un ...] (two words each)
 * and execute_ex's frames among the user frames ips[kn .. kn + un) tagged
 * USTACK_PY_EVAL; the number of PHP frames (0: none running). *flags gets
 * SAMPLE_PY_TRUNCATED when cut. `regs`: the sample's registers.
 */
static __always_inline __u32 php_stack(struct bpf_perf_event_data *ctx, __u32 tgid, __u64 *ips,
				       __u32 kn, __u32 un, __u32 *flags)
{
#if defined(__TARGET_ARCH_x86)
	struct php_proc *pp = bpf_map_lookup_elem(&php_procs, &tgid);
	struct php_walk w = { .ips = ips, .base = kn + un };
	struct php_tag t = { .ips = ips, .kn = kn };
	__u64 ex;

	if (!pp)
		return 0;
	/*
	 * A thread not in the VM loop (starting, or one of an extension's own
	 * threads: the globals are the main thread's) has no frame for PHP
	 * frames to stand in: no walk.
	 */
	t.vm_start = pp->vm_start;
	t.eval_start = pp->eval_start;
	t.eval_end = pp->eval_end;
	bpf_loop(un, php_find_loop, &t, 0);
	if (!t.found)
		return 0;
	w.l = pp->layout;
	if (bpf_probe_read_user(&ex, sizeof(ex), (void *)(pp->eg + w.l.eg_current_execute_data)) ||
	    !ex)
		return 0;
	/*
	 * The VM loop keeps the running frame in r14 and its opline in r15
	 * (GCC's global registers, x86_64), saving the opline to the frame only
	 * before a call: interrupted in the loop itself (user mode, the leaf
	 * in execute_ex), r15 is the line running now when r14 is the frame.
	 */
	if (kn == 0 && ips[0] - pp->eval_start < pp->eval_end - pp->eval_start &&
	    ctx->regs.r14 == ex) {
		w.top_ex = ex;
		w.top_opline = ctx->regs.r15;
	}
	w.ex = ex;
	bpf_loop(BPFPROF_MAX_PYFRAMES + 1, php_step, &w, 0);
	if (w.truncated)
		*flags |= SAMPLE_PY_TRUNCATED;
	if (!w.n)
		return 0;
	bpf_loop(un, php_tag, &t, 0);
	return w.n;
#else
	return 0;
#endif
}

#endif
