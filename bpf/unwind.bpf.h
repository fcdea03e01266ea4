/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * CFI unwinding of user stacks in the kernel (x86_64): for each frame, the
 * process's mappings (unwind_procs) give the PC's file (device, inode) and
 * the offset in it;
 * userspace loaded the file's .eh_frame as sorted rows (unwind_files,
 * unwind_rows, see bpfprof_abi.h and userspace/unwind/); the row in force
 * at the PC says where the caller's CFA, return address and frame pointer
 * are. A file without rows (JIT code, a binary not loaded yet) is stepped
 * through with its frame pointer, as bpf_get_stack() would. The walk is a
 * bpf_loop, so the verifier sees one step, not 127.
 */
#ifndef BPFPROF_UNWIND_BPF_H
#define BPFPROF_UNWIND_BPF_H

/* Set by userspace before load when the maps below are filled. */
const volatile bool cfi_unwind = false;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct unwind_file_key);
	__type(value, struct unwind_file_info);
} unwind_files SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);
	__type(key, __u32); /* tgid */
	__type(value, struct unwind_proc);
} unwind_procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1); /* resized by userspace before load */
	__type(key, __u32);
	__type(value, struct unwind_row);
} unwind_rows SEC(".maps");

/* Rows of one file: 2^24 is more than any binary has (node: 372k). */
#define UNWIND_SEARCH_STEPS 24

struct unwind_walk {
	__u32 tgid;
	__u64 *ips; /* where the user frames go */
	__u64 pc, sp, fp;
	__u32 n, max;
	__u32 flags; /* SAMPLE_USTACK_* */
};

/*
 * The two binary searches run as bpf_loop callbacks of their own: inline,
 * their branches on loaded values multiply and the verifier gives up
 * (E2BIG); as callbacks each step is verified once.
 */
struct unwind_search {
	struct unwind_proc *proc; /* mappings: the process's */
	__u64 addr;
	__u32 lo, hi; /* the answer is lo - 1 */
};

static long unwind_mapping_step(__u32 i, struct unwind_search *s)
{
	__u32 mid;

	if (s->lo >= s->hi)
		return 1;
	mid = s->lo + (s->hi - s->lo) / 2;
	if (s->proc->m[mid & (UNWIND_MAX_MAPPINGS - 1)].start <= s->addr)
		s->lo = mid + 1;
	else
		s->hi = mid;
	return 0;
}

static long unwind_row_step(__u32 i, struct unwind_search *s)
{
	struct unwind_row *r;
	__u32 mid;

	if (s->lo >= s->hi)
		return 1;
	mid = s->lo + (s->hi - s->lo) / 2;
	r = bpf_map_lookup_elem(&unwind_rows, &mid);
	if (!r) {
		s->lo = s->hi = 0;
		return 1;
	}
	if (r->pc <= s->addr)
		s->lo = mid + 1;
	else
		s->hi = mid;
	return 0;
}

/* The mapping of `proc` that holds addr, or NULL. */
static __always_inline struct unwind_mapping *unwind_find_mapping(struct unwind_proc *proc,
								  __u64 addr)
{
	struct unwind_search s = { .proc = proc, .addr = addr, .lo = 0, .hi = proc->n };
	__u32 idx;

	if (s.hi > UNWIND_MAX_MAPPINGS)
		s.hi = UNWIND_MAX_MAPPINGS;
	bpf_loop(9, unwind_mapping_step, &s, 0);
	if (!s.lo)
		return NULL;
	idx = (s.lo - 1) & (UNWIND_MAX_MAPPINGS - 1);
	return addr < proc->m[idx].end ? &proc->m[idx] : NULL;
}

/* The last row of the file's run with pc <= addr, or NULL. */
static __always_inline struct unwind_row *unwind_find_row(const struct unwind_file_info *info,
							  __u64 addr)
{
	struct unwind_search s = { .addr = addr,
				   .lo = info->first_row,
				   .hi = info->first_row + info->nrows };
	__u32 idx;

	bpf_loop(UNWIND_SEARCH_STEPS, unwind_row_step, &s, 0);
	if (s.lo <= info->first_row)
		return NULL;
	idx = s.lo - 1;
	return bpf_map_lookup_elem(&unwind_rows, &idx);
}

/* One frame with the frame pointer: the caller's return address and FP are at [fp]. */
static __always_inline bool unwind_fp_step(struct unwind_walk *w)
{
	__u64 frame[2];

	if (!w->fp || bpf_probe_read_user(frame, sizeof(frame), (void *)w->fp))
		return false;
	w->sp = w->fp + 16;
	w->fp = frame[0];
	w->pc = frame[1];
	return true;
}

static long unwind_step(__u32 i, struct unwind_walk *w)
{
	struct unwind_mapping *map;
	struct unwind_proc *proc;
	struct unwind_file_key key;
	struct unwind_file_info *info;
	struct unwind_row *row;
	__u64 addr, cfa, ra;
	__u16 rules;
	__u32 n = w->n;

	if (n >= w->max || n >= BPFPROF_MAX_STACK) {
		w->flags |= SAMPLE_USTACK_TRUNCATED;
		return 1;
	}
	if (!w->pc)
		return 1;
	w->ips[n] = w->pc;
	w->n = n + 1;
	/* A caller's PC is a return address: the call it returns from is just before. */
	addr = n ? w->pc - 1 : w->pc;
	/*
	 * Looked up per frame on purpose: a map value pointer kept in the walk
	 * across bpf_loop iterations defeats the verifier's state pruning
	 * (1M instructions, E2BIG); a u32 hash lookup is small next to the two searches.
	 */
	proc = bpf_map_lookup_elem(&unwind_procs, &w->tgid);
	map = proc ? unwind_find_mapping(proc, addr) : NULL;
	/* Not in a file we know (JIT code, a process not read yet): try the frame pointer. */
	if (!map)
		return unwind_fp_step(w) ? 0 : 1;
	key = map->file;
	info = bpf_map_lookup_elem(&unwind_files, &key);
	if (!info)
		return unwind_fp_step(w) ? 0 : 1;
	row = unwind_find_row(info, addr - map->start + map->pgoff_bytes + info->bias);
	if (!row)
		return 1;
	rules = row->rules;
	switch (UNWIND_RULE_CFA(rules)) {
	case UNWIND_CFA_SP:
		cfa = w->sp + row->cfa_offset;
		break;
	case UNWIND_CFA_FP:
		cfa = w->fp + row->cfa_offset;
		break;
	case UNWIND_CFA_PLT:
		cfa = w->sp + row->cfa_offset + (((addr & 15) >= UNWIND_RULE_PLT(rules)) ? 8 : 0);
		break;
	default:
		/* The outermost frame, a signal frame, or rules the table cannot hold. */
		return 1;
	}
	if (bpf_probe_read_user(&ra, sizeof(ra), (void *)(cfa - 8)))
		return 1;
	if (UNWIND_RULE_FP(rules) == UNWIND_FP_SAVED &&
	    bpf_probe_read_user(&w->fp, sizeof(w->fp), (void *)(cfa + row->fp_offset)))
		return 1;
	w->sp = cfa;
	w->pc = ra;
	return 0;
}

/*
 * The user stack of `task` (its registers at its last entry into the
 * kernel) into ips[0..max); returns how many frames, with SAMPLE_USTACK_*
 * flags added to *flags.
 */
static __always_inline __u32 unwind_user(struct task_struct *task, __u64 *ips, __u32 max,
					 __u32 *flags)
{
#if defined(__TARGET_ARCH_x86)
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
	struct unwind_walk w = {};

	if (!regs)
		return 0;
	w.tgid = BPF_CORE_READ(task, tgid);
	w.ips = ips;
	w.max = max;
	w.pc = BPF_CORE_READ(regs, ip);
	w.sp = BPF_CORE_READ(regs, sp);
	w.fp = BPF_CORE_READ(regs, bp);
	if (bpf_loop(BPFPROF_MAX_STACK + 1, unwind_step, &w, 0) < 0)
		*flags |= SAMPLE_USTACK_ERROR;
	*flags |= w.flags;
	return w.n;
#else
	return 0; /* userspace refuses --unwind cfi on other architectures */
#endif
}

#endif
