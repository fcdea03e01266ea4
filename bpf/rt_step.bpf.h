/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A JIT runtime's frames stepped by what the runtime says of them (issue
 * 39): the map of processes a lang module published (rt_procs, struct
 * rt_proc in bpfprof_abi.h), and HotSpot's step, for the user walk
 * (unwind.bpf.h) to ask where a frame is in a JVM's code cache. Its
 * compiled frames keep no frame pointer (RBP is a register like another
 * to C2): the frame-pointer step read a C2 frame's RBP, some value of the
 * method's, and the walk ended in the first compiled frame, or skipped
 * every Java frame to the interpreted one RBP was still left from. Each
 * compiled frame says its size in its code blob's header; the blob is
 * found through its code heap's segment map, as HotSpot finds it
 * (CodeHeap::find_blob). Included by bpfprof.bpf.c before unwind.bpf.h,
 * which calls it.
 */
#ifndef BPFPROF_RT_STEP_BPF_H
#define BPFPROF_RT_STEP_BPF_H

/* Set by userspace when a lang module may publish runtimes (with the CFI walk only). */
const volatile bool runtime_frames = false;

/*
 * Written by userspace only (capture/rt_loader.c), a quarter for each
 * user's processes (proc_shares.h): a lookup in the sample or switch
 * program, never an update there.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 4096);
	__type(key, __u32); /* tgid */
	__type(value, struct rt_proc);
} rt_procs SEC(".maps");

/*
 * Back-steps through a segment map to a block's start: HotSpot's hops are
 * at most 0xfe segments, a method's code a few of them (OTel's bound too).
 */
#define RT_HS_SEGMAP_STEPS    12
/* A compiled frame's size, in words, at most (a 64 KiB frame). */
#define RT_HS_MAX_FRAME_WORDS 8192
/* An interpreter frame's sender's SP is this far above its fp at most (its locals, 64 Ki). */
#define RT_HS_MAX_SENDER_DIST (1u << 20)

/* One frame of the walk, as unwind_step_body hands it over (a global function's argument). */
struct rt_step {
	__u64 pc, sp, fp; /* in: the frame's; out: its caller's, when stepped */
	__u64 addr;	  /* the pc to look up: a return address less one, else pc itself */
	__u64 file;	  /* its mapping's file key, dev | ino: 0 for anonymous code */
	__u64 down_steps; /* in, out: the walk's no_cfi_down_steps (unwind.bpf.h) */
	__u32 tgid;
	__u32 end; /* out: enum ustack_end, when the walk stops here */
};

static __always_inline bool rt_in(__u64 a, __u64 lo, __u64 hi)
{
	return a - lo < hi - lo;
}

/*
 * The walk's frame s at s->pc stepped to its caller when s->tgid is a
 * published JVM and pc is in its code cache: 0, s holding the caller's
 * pc, sp and fp. Otherwise, or when what the JVM's memory says does not
 * hold (a free segment, a blob without a frame size: stubs and the
 * interpreter's neighbours, a return address outside the code cache), 1:
 * the walk steps by the frame pointer, as it did before. Every step moves
 * SP up.
 */
static __always_inline int rt_hotspot_step(struct rt_step *s)
{
	struct rt_proc *p;
	struct rt_hotspot *hs;
	__u64 lo = 0, segmap = 0, seg, blob, sp, w[3];
	__u32 log2 = 0, tgid;
	__s32 fs;
	__u8 tag;
	bool found = false;

	if (!s || !runtime_frames || s->file)
		return 1;
	tgid = s->tgid;
	p = bpf_map_lookup_elem(&rt_procs, &tgid);
	if (!p || p->kind != RT_KIND_HOTSPOT || !p->hs.nheaps)
		return 1;
	hs = &p->hs;
	if (!rt_in(s->addr, hs->code_lo, hs->code_hi))
		return 1;
	if (rt_in(s->addr, hs->interp_lo, hs->interp_hi)) {
		/*
		 * The interpreter: its frame pointer frame, the caller's SP
		 * the one it saved (sender sp, fp-8), then [fp] and [fp+8].
		 */
		if (hs->sender_sp_off != -8 || s->fp < s->sp ||
		    s->fp - s->sp > RT_HS_MAX_SENDER_DIST ||
		    bpf_probe_read_user(w, sizeof(w), (void *)(s->fp - 8)))
			return 1;
		/* w[0] the sender's SP, w[1] the saved fp, w[2] the return address. */
		if (w[0] < s->fp + 16 || w[0] - s->fp > RT_HS_MAX_SENDER_DIST)
			return 1;
		s->sp = w[0];
		s->fp = w[1];
		s->pc = w[2];
		return 0;
	}
	for (int i = 0; i < RT_HS_MAX_HEAPS; i++)
		if (i < hs->nheaps && rt_in(s->addr, hs->heaps[i].lo, hs->heaps[i].hi)) {
			lo = hs->heaps[i].lo;
			segmap = hs->heaps[i].segmap;
			log2 = hs->heaps[i].log2 & 31;
			found = true;
		}
	if (!found)
		return 1;
	/* Each segment's byte: 0 the block starts here, 0xff free, else segments back to hop. */
	seg = (s->addr - lo) >> log2;
	found = false;
	for (int i = 0; i < RT_HS_SEGMAP_STEPS; i++) {
		if (bpf_probe_read_user(&tag, 1, (void *)(segmap + seg)) || tag == 0xff)
			return 1;
		if (!tag) {
			found = true;
			break;
		}
		if (tag > seg)
			return 1;
		seg -= tag;
	}
	if (!found)
		return 1;
	blob = lo + (seg << log2) + hs->heap_block;
	if (bpf_probe_read_user(&fs, sizeof(fs), (void *)(blob + hs->blob_frame_size)) || fs <= 0 ||
	    fs > RT_HS_MAX_FRAME_WORDS)
		return 1; /* the interpreter, stubs, adapters: frame size 0, frame pointers */
	/* The frame's top: the saved RBP, then the return address. */
	sp = s->sp + 8 * (__u64)fs;
	if (!bpf_probe_read_user(w, 16, (void *)(sp - 16)) &&
	    rt_in(w[1], hs->code_lo, hs->code_hi)) {
		s->sp = sp;
		s->fp = w[0];
		s->pc = w[1];
		return 0;
	}
	/*
	 * The innermost frame in its prologue or epilogue: its frame not
	 * made yet, or gone, the return address at SP (nothing pushed, or
	 * RBP popped) or above RBP at SP + 8 (pushed, not popped).
	 */
	if (s->addr != s->pc || bpf_probe_read_user(w, 16, (void *)s->sp))
		return 1;
	if (rt_in(w[0], hs->code_lo, hs->code_hi)) {
		s->pc = w[0];
		s->sp += 8;
		return 0;
	}
	if (rt_in(w[1], hs->code_lo, hs->code_hi)) {
		s->pc = w[1];
		s->fp = w[0];
		s->sp += 16;
		return 0;
	}
	return 1;
}

#endif
