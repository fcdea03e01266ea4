/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * CFI unwinding of user stacks in the kernel (x86_64): for each frame, the
 * process's mappings (unwind_procs) give the PC's file (device, inode) and
 * the offset in it;
 * userspace loaded the file's .eh_frame as sorted rows (unwind_files,
 * unwind_slots, unwind_rules: compact, see bpfprof_abi.h and
 * userspace/unwind/compact_table.h); the rule of the row in force at the
 * PC says where the caller's CFA, return address and frame pointer are. A
 * file without rows (JIT code, a binary not loaded yet) is stepped through
 * with its frame pointer, as bpf_get_stack() would. The walk is a
 * bpf_loop, so the verifier sees one step, not 127.
 */
#ifndef BPFPROF_UNWIND_BPF_H
#define BPFPROF_UNWIND_BPF_H

/* Set by userspace before load when the maps below are filled. */
const volatile bool cfi_unwind = false;
/*
 * Set by userspace when the kernel has bpf_find_vma (5.17+): a process
 * userspace has not read yet (the first milliseconds after an exec, the
 * libraries ld.so maps next) has its code's files found in the kernel.
 */
const volatile bool unwind_find_vma = false;

/*
 * Not preallocated: a deleted element is freed after an RCU grace period,
 * not reused at once, so a walk that found an evicted file's value just
 * before userspace deleted it never reads the next file's base and slots
 * there (a preallocated hash hands the element to the very next update).
 * Userspace publishes no more files than this, a quarter for each user's.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
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

/*
 * Users at their share of unwind_procs or py_procs (PROC_CAPPED_*): one
 * user's thousands of processes must not take every entry, which would
 * leave every other user's programs without CFI and Python frames.
 * Userspace admits such a user's process on its first sample instead.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PROC_CAPPED_UIDS);
	__type(key, __u32); /* real uid */
	__type(value, __u8);
} proc_uids_capped SEC(".maps");

/* Whether `task`'s user is at its share of the map that `which` names. */
static __always_inline bool proc_uid_capped(struct task_struct *task, __u8 which)
{
	__u32 uid = BPF_CORE_READ(task, real_cred, uid.val);
	__u8 *capped = bpf_map_lookup_elem(&proc_uids_capped, &uid);

	return capped && (*capped & which);
}

/* Each file's run: its 64 KiB pages of code, then their rows, two a slot. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1); /* resized by userspace before load */
	__type(key, __u32);
	__type(value, union unwind_slot);
} unwind_slots SEC(".maps");

/*
 * The mapping bpf_find_vma found in this CPU's walk (end 0: none), kept for
 * the rest of the walk: early in a process's life, before userspace read
 * its maps, a stack that runs from libc through the program back into libc
 * (memset under main under __libc_start_call_main) needs libc's mapping
 * twice, and the kernel answers once per program run. A per-CPU array, not
 * fields of the walk: state the walk carries across bpf_loop steps, and a
 * may_find_vma that changes during it, multiply the verifier's states
 * (on_sample: 221k -> 510k instructions, or over the limit). Cleared when
 * a walk that may ask starts; `tgid` guards a walk interrupted by another
 * CPU-local one (a sample in NMI).
 */
struct unwind_vma_seen {
	__u32 tgid;
	__u32 asked; /* bpf_find_vma was asked in this walk */
	struct unwind_mapping m;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct unwind_vma_seen);
} unwind_vma_seen SEC(".maps");

/* Every file's rules, each kept once: a row holds its rule's index. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, UNWIND_MAX_RULES);
	__type(key, __u32);
	__type(value, struct unwind_rule);
} unwind_rules SEC(".maps");

/* Rows of one page: at most 65535, 16 halvings. */
#define UNWIND_SEARCH_STEPS 16

struct unwind_walk {
	__u32 tgid;
	__u64 *ips; /* where the user frames go */
	__u64 *fps; /* each frame's frame pointer */
	__u64 pc, sp, fp;
	__u64 ax; /* RAX at the interrupted PC: a clone's return value there */
	__u32 n;
	__u32 end;	  /* enum ustack_end, once the walk stopped */
	bool pc_is_exact; /* pc is the interrupted instruction, not a return address */
	/*
	 * Frame-pointer steps that did not move up so far, each kind on its
	 * own bound: a Go program's marked switches must not use up the one
	 * step code without CFI may take, nor that step the switches' budget.
	 * Each is 64 bits wide so that it fills a stack slot of its own: the
	 * verifier tracks a scalar spilled to a whole 8-byte slot, and prunes
	 * the walk's states by it, but not two 32-bit counters in one slot
	 * (as u32s, on_sample took 941k verified instructions against 216k,
	 * and bpfprof started 0.9 s slower).
	 */
	__u64 no_cfi_down_steps; /* in code without CFI (UNWIND_MAX_DOWN_STEPS) */
	__u64 switch_steps;	 /* at a marked stack switch (UNWIND_MAX_SWITCH_STEPS) */
	/*
	 * bpf_find_vma may be asked for a mapping the process's entry lacks:
	 * in interrupt context it can run once per program run (its unlock
	 * is deferred to an irq_work it owns until then), so unwind_walk_vma
	 * asks once per walk and keeps the answer.
	 */
	bool may_find_vma;
	/*
	 * The last mapping and row found, as plain values (a map value pointer
	 * kept across bpf_loop iterations defeats the verifier's pruning):
	 * consecutive frames are mostly in one file, and a recursion repeats
	 * one row, so most steps skip both searches.
	 */
	__u64 map_start, map_end; /* [start, end) of the mapping, 0 when none */
	__s64 map_to_file;	  /* ELF address = PC + map_to_file */
	__u64 base;		  /* the file's table: ELF address of its page 0 */
	__u32 first_slot, npages; /* its run in unwind_slots (npages 0: no table) */
	__u64 row_lo, row_hi;	  /* the cached row covers ELF addresses [lo, hi) */
	struct unwind_rule row;	  /* the cached row's rule */
	/*
	 * Stack copies (on_sample only, stack_copy.bpf.h): the current
	 * mapping's file. Where the walk stopped for a copy, and whether, is
	 * kept in the CPU's copy record, not here: a flag here that the code
	 * after the walk tests must be tracked exactly through every step,
	 * doubling the states the verifier walks (on_sample went past a
	 * million instructions).
	 */
	struct unwind_file_key file;
};

/*
 * The two binary searches run as bpf_loop callbacks of their own: inline,
 * their branches on loaded values multiply and the verifier gives up
 * (E2BIG); as callbacks each step is verified once.
 */
struct unwind_search {
	struct unwind_proc *proc; /* mappings: the process's */
	__u64 addr;		  /* rows: the offset in the page */
	__u32 lo, hi;		  /* the answer is lo - 1; rows: 2 * slot + half */
	/*
	 * Rows: the answer's pc_lo and rule and the next row's pc_lo, as the
	 * search meets them (the last row it steps past is the answer, the last
	 * it stops at the next one), so none is looked up again after it.
	 */
	__u32 lo_pc, hi_pc, rule;
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

/* Row `idx` (2 * its slot + which half) of unwind_slots, or NULL. */
static __always_inline struct unwind_crow *unwind_crow_at(__u32 idx)
{
	__u32 slot = idx >> 1;
	union unwind_slot *v = bpf_map_lookup_elem(&unwind_slots, &slot);

	return v ? &v->row[idx & 1] : NULL;
}

static long unwind_row_step(__u32 i, struct unwind_search *s)
{
	struct unwind_crow *r;
	__u32 mid;

	if (s->lo >= s->hi)
		return 1;
	mid = s->lo + (s->hi - s->lo) / 2;
	r = unwind_crow_at(mid);
	if (!r) {
		s->lo = s->hi = 0;
		return 1;
	}
	if (r->pc_lo <= s->addr) {
		s->lo = mid + 1;
		s->lo_pc = r->pc_lo;
		s->rule = r->rule;
	} else {
		s->hi = mid;
		s->hi_pc = r->pc_lo;
	}
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

/*
 * The rule in force at ELF address addr into w->row, with the range it
 * covers (up to the next row or the page's end) into w->row_lo/hi; false
 * when no page of the file's table holds addr. Within the page: the last
 * of its rows with pc_lo <= the offset, or the page's entry_rule before its
 * first (userspace/unwind/compact_table.c: compact_lookup, the same steps).
 */
static __always_inline bool unwind_find_row(struct unwind_walk *w, __u64 addr)
{
	struct unwind_search s = {};
	union unwind_slot *pg;
	struct unwind_rule *rule;
	__u64 off, page_start;
	__u32 idx, first;

	/* Below base the offset wraps past every page: one test for both ends. */
	off = addr - w->base;
	if ((off >> UNWIND_CODE_PAGE_SHIFT) >= w->npages)
		return false;
	idx = w->first_slot + (__u32)(off >> UNWIND_CODE_PAGE_SHIFT);
	pg = bpf_map_lookup_elem(&unwind_slots, &idx);
	if (!pg)
		return false;
	page_start = addr & ~((__u64)UNWIND_CODE_PAGE_SIZE - 1);
	first = 2 * (w->first_slot + w->npages) + pg->page.first_row;
	s.addr = off & (UNWIND_CODE_PAGE_SIZE - 1);
	s.lo = first;
	s.hi = first + pg->page.nrows;
	/* Before the page's first row: its entry rule, from the page's first byte. */
	s.lo_pc = 0;
	s.hi_pc = UNWIND_CODE_PAGE_SIZE;
	s.rule = pg->page.entry_rule;
	bpf_loop(UNWIND_SEARCH_STEPS, unwind_row_step, &s, 0);
	if (s.lo < first) /* a row past the array: not this table's */
		return false;
	rule = bpf_map_lookup_elem(&unwind_rules, &s.rule);
	if (!rule)
		return false;
	/* The cache only with its rule: a range without one would be walked with a stale rule. */
	w->row = *rule;
	w->row_lo = page_start + s.lo_pc;
	w->row_hi = page_start + s.hi_pc;
	return true;
}

#define UNWIND_VM_EXEC	  0x4ull /* VM_EXEC of vm_flags */
#define UNWIND_PAGE_SHIFT 12	 /* x86_64's, the one architecture unwound here */

/* bpf_find_vma's callback: the file mapping holding the address, when executable. */
static long unwind_vma_found(struct task_struct *task, struct vm_area_struct *vma,
			     struct unwind_mapping *out)
{
	struct file *file = BPF_CORE_READ(vma, vm_file);

	if (!file || !(BPF_CORE_READ(vma, vm_flags) & UNWIND_VM_EXEC))
		return 0;
	out->start = BPF_CORE_READ(vma, vm_start);
	out->end = BPF_CORE_READ(vma, vm_end);
	out->pgoff_bytes = BPF_CORE_READ(vma, vm_pgoff) << UNWIND_PAGE_SHIFT;
	out->file.ino = BPF_CORE_READ(file, f_inode, i_ino);
	out->file.dev = BPF_CORE_READ(file, f_inode, i_sb, s_dev);
	return 0;
}

/* The current task's executable file mapping holding addr into *out; false when none. */
static __always_inline bool unwind_current_vma(__u64 addr, struct unwind_mapping *out)
{
	out->end = 0;
	if (!bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_find_vma))
		return false;
	if (bpf_find_vma(bpf_get_current_task_btf(), addr, unwind_vma_found, out, 0))
		return false;
	return out->end > out->start && addr >= out->start && addr < out->end;
}

static long unwind_vma_any(struct task_struct *task, struct vm_area_struct *vma, bool *found)
{
	*found = true;
	return 0;
}

#define UNWIND_NR_EXECVE   59  /* x86_64 */
#define UNWIND_NR_EXECVEAT 322

/*
 * Whether the current task is inside execve past the point where its old
 * memory went: its user registers still hold the old image's PC, which no
 * mapping of the new one holds. Its user stack is gone then, not broken.
 * *used_find_vma: bpf_find_vma was asked (it answers once per sample).
 */
static __always_inline bool unwind_user_gone_in_exec(bool *used_find_vma)
{
#if defined(__TARGET_ARCH_x86)
	struct task_struct *task = bpf_get_current_task_btf();
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
	bool found = false;
	long nr, err;

	if (!regs || !unwind_find_vma ||
	    !bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_find_vma))
		return false;
	nr = (long)BPF_CORE_READ(regs, orig_ax);
	if (nr != UNWIND_NR_EXECVE && nr != UNWIND_NR_EXECVEAT)
		return false;
	*used_find_vma = true;
	/*
	 * -ENOENT: no mapping holds it. -EBUSY: the memory map's lock is
	 * held, which in execve is the new image's being set up (its ELF
	 * segments, the stack, the vDSO mapped): the old one is gone too.
	 * Before that point only another thread of the old process could
	 * hold it, and then the stack is lost for one sample; shown, it
	 * was a raw address in the new image (a tenth of make's, sh's and
	 * cc's stacks that were not whole on a build machine).
	 */
	err = bpf_find_vma(task, BPF_CORE_READ(regs, ip), unwind_vma_any, &found, 0);
	return err == -2 || err == -16;
#else
	return false;
#endif
}

/*
 * The executable file mapping of the current task holding addr into *out:
 * the one bpf_find_vma gave this walk if it holds addr, else the kernel's
 * answer if it was not asked yet in this walk; false when none.
 */
static __always_inline bool unwind_walk_vma(__u32 tgid, __u64 addr, struct unwind_mapping *out)
{
	__u32 zero = 0;
	struct unwind_vma_seen *seen = bpf_map_lookup_elem(&unwind_vma_seen, &zero);

	if (!seen)
		return false;
	if (seen->tgid == tgid && addr >= seen->m.start && addr < seen->m.end) {
		*out = seen->m;
		return true;
	}
	if (seen->asked)
		return false;
	seen->asked = 1;
	if (!unwind_current_vma(addr, out))
		return false;
	seen->tgid = tgid;
	seen->m = *out;
	return true;
}

/* A walk that may ask bpf_find_vma starts: what an earlier walk found is not its. */
static __always_inline void unwind_vma_seen_clear(void)
{
	__u32 zero = 0;
	struct unwind_vma_seen *seen = bpf_map_lookup_elem(&unwind_vma_seen, &zero);

	if (seen) {
		seen->asked = 0;
		seen->m.end = 0;
	}
}

/* Makes the mapping holding addr the walk's current one; false when none. */
static __always_inline bool unwind_enter_mapping(struct unwind_walk *w, __u64 addr)
{
	struct unwind_proc *proc = bpf_map_lookup_elem(&unwind_procs, &w->tgid);
	struct unwind_mapping *map = proc ? unwind_find_mapping(proc, addr) : NULL;
	struct unwind_mapping found;
	struct unwind_file_key key;
	struct unwind_file_info *info;
	__u64 pgoff;

	w->row_lo = w->row_hi = 0;
	if (map) {
		w->map_start = map->start;
		w->map_end = map->end;
		pgoff = map->pgoff_bytes;
		key = map->file;
		w->file = key;
	} else if (unwind_find_vma && w->may_find_vma) {
		/* Not read by userspace yet: the kernel's, asked once per walk. */
		if (!unwind_walk_vma(w->tgid, addr, &found)) {
			w->map_start = w->map_end = 0;
			return false;
		}
		w->map_start = found.start;
		w->map_end = found.end;
		pgoff = found.pgoff_bytes;
		key = found.file;
		/*
		 * No copy of a file found here: a process userspace has not
		 * published (its user at its share of unwind_procs) may never
		 * have its tables built. Key 0 is in unwind_no_table.
		 */
		w->file.dev = w->file.ino = 0;
	} else {
		w->map_start = w->map_end = 0;
		return false;
	}
	info = bpf_map_lookup_elem(&unwind_files, &key);
	w->base = info ? info->base : 0;
	w->first_slot = info ? info->first_slot : 0;
	w->npages = info ? info->npages : 0;
	w->map_to_file = info ? (__s64)(pgoff - w->map_start) + info->bias : 0;
	return true;
}

/*
 * Frame-pointer steps through code without CFI that may step down to
 * another stack, per walk: a runtime's stack switch before its tables are
 * loaded (Go's systemstack from g0 to the goroutine's stack, which lies
 * lower). A chain that loops repeats a frame at most once more, not to the
 * depth limit.
 */
#define UNWIND_MAX_DOWN_STEPS 1

/*
 * Steps at a runtime's marked stack switch (Go's mcall, systemstack,
 * morestack) that do not move up, per walk. Go's rows restore BP where a
 * prologue saved it (userspace/unwind/go_table.c), so at the switch BP is
 * mostly the one it was entered with and one step crosses to the
 * goroutine's stack. Where no row restored it (a sample in a prologue
 * before the save, frameless or NOFRAME code, Go tables read without
 * their code) BP may still be a frame below, on the same stack: each such
 * step climbs the BP chain one link and the walk goes on from there, some
 * ten steps for the scheduler's stacks on g0 (the staircase of mcall frames
 * every parked goroutine's stack showed before issue 37). A chain that
 * truly loops ends after these.
 */
#define UNWIND_MAX_SWITCH_STEPS 16

/*
 * Always 0, but writable, so its value is unknown to the verifier: the
 * walk's step counters start from it. A flag that starts as a known 0
 * doubles the states it explores per step (the verifier tells 0 from 1
 * where it is tested), which on_switch_btf cannot afford.
 */
__u32 unwind_no_down_step = 0;

/*
 * One frame with the frame pointer: the caller's return address and FP are
 * at [fp]. The caller's frame is above this one (fp + 16 > sp) but where
 * the code switches stacks: UNWIND_MAX_SWITCH_STEPS times where a row says
 * so (`may_switch`), in place too; UNWIND_MAX_DOWN_STEPS times in code
 * without CFI, never in place. A frame
 * pointer at or below SP is otherwise not this stack's (a heap address left
 * in RBP by code built without frame pointers), and following it loops (a
 * struct pthread points at itself) or runs off the stack's end.
 */
static __always_inline long unwind_fp_step(struct unwind_walk *w, __u32 no_fp_end, bool may_switch)
{
	__u64 frame[2];

	if (!w->fp) {
		w->end = no_fp_end;
		return 1;
	}
	if (!may_switch && w->fp + 16 == w->sp) {
		w->end = USTACK_END_STUCK;
		return 1;
	}
	if (w->fp + 16 <= w->sp) {
		if (may_switch) {
			if (w->switch_steps >= UNWIND_MAX_SWITCH_STEPS) {
				w->end = USTACK_END_STUCK;
				return 1;
			}
			w->switch_steps++;
		} else {
			if (w->no_cfi_down_steps >= UNWIND_MAX_DOWN_STEPS) {
				w->end = USTACK_END_STUCK;
				return 1;
			}
			w->no_cfi_down_steps++;
		}
	}
	if (bpf_probe_read_user(frame, sizeof(frame), (void *)w->fp)) {
		w->end = USTACK_END_UNREADABLE;
		return 1;
	}
	w->sp = w->fp + 16;
	w->fp = frame[0];
	w->pc = frame[1];
	return 0;
}

/*
 * A signal trampoline (__restore_rt): SP points at the ucontext the kernel
 * pushed; the interrupted registers are in its uc_mcontext (x86_64 offsets
 * of struct ucontext / struct sigcontext, a stable ABI).
 */
#define UC_MCONTEXT_RBP 120
#define UC_MCONTEXT_RSP 160
#define UC_MCONTEXT_RIP 168

static __always_inline long unwind_signal_step(struct unwind_walk *w)
{
	__u64 regs[7]; /* rbp .. rip: rbp rbx rdx rax rcx rsp rip */

	if (bpf_probe_read_user(regs, sizeof(regs), (void *)(w->sp + UC_MCONTEXT_RBP))) {
		w->end = USTACK_END_UNREADABLE;
		return 1;
	}
	/*
	 * The interrupted SP may be anywhere (an alternate signal stack), but
	 * never the signal frame's own: that is a frame read again, forever.
	 */
	if (regs[(UC_MCONTEXT_RSP - UC_MCONTEXT_RBP) / 8] == w->sp) {
		w->end = USTACK_END_STUCK;
		return 1;
	}
	w->fp = regs[0];
	w->sp = regs[(UC_MCONTEXT_RSP - UC_MCONTEXT_RBP) / 8];
	w->pc = regs[(UC_MCONTEXT_RIP - UC_MCONTEXT_RBP) / 8];
	w->pc_is_exact = true;
	return 0;
}

/*
 * Files userspace knows will get no table (no CFI, refused, past a cap):
 * a walk meeting their code goes on with frame pointers, not a stack copy,
 * or every sample in them would copy. Written by userspace only; full, a
 * file not in it copies until the CPU's copy budget is spent.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct unwind_file_key);
	__type(value, __u8);
} unwind_no_table SEC(".maps");

/*
 * Whether the walk stops at frame n for its stack to be copied: it is in
 * a file's code whose table is not published but may come, and the CPU
 * has the budget. Only where `may_copy` is a constant true (on_sample):
 * the switch program does not contain this.
 */
static __always_inline bool unwind_stop_for_copy(struct unwind_walk *w, __u32 n, __u64 addr)
{
	struct stack_copy_scratch *sc;

	if (!stack_copy_bytes || !stack_copy_on || bpf_map_lookup_elem(&unwind_no_table, &w->file))
		return false;
	sc = stack_copy_budget();
	if (!sc)
		return false;
	sc->stopped = 1;
	sc->ev.pc = w->pc;
	sc->ev.sp = w->sp;
	sc->ev.fp = w->fp;
	sc->ev.ax = w->ax;
	sc->ev.file = w->file;
	sc->ev.frame = (__u16)n;
	sc->ev.offset = 0;
	/* Exact when addr is the PC itself, not a return address less one: no test. */
	sc->ev.flags = (__u16)((1 - (w->pc - addr)) & STACK_COPY_PC_EXACT);
	w->end = USTACK_END_NO_CFI;
	return true;
}

/*
 * A frame in code without a table (JIT code, a file whose table is not
 * published): the runtime's own step where it has one (rt_step.bpf.h: a
 * JVM's compiled frames), else the frame pointer's, as unwind_fp_step(w,
 * USTACK_END_NO_CFI, false). A global function, which the verifier checks
 * once: the walk's step only copies its answer back, one state whatever
 * it was (a runtime step tried before the frame pointer's, inline, took
 * the switch program from 257k to 413k verified instructions).
 */
__noinline int unwind_nofile_step(struct rt_step *s)
{
	__u64 frame[2];

	if (!s)
		return 1;
	if (!rt_hotspot_step(s))
		return 0;
	if (!s->fp) {
		s->end = USTACK_END_NO_CFI;
		return 1;
	}
	if (s->fp + 16 == s->sp) {
		s->end = USTACK_END_STUCK;
		return 1;
	}
	if (s->fp + 16 <= s->sp) {
		if (s->down_steps >= UNWIND_MAX_DOWN_STEPS) {
			s->end = USTACK_END_STUCK;
			return 1;
		}
		s->down_steps++;
	}
	if (bpf_probe_read_user(frame, sizeof(frame), (void *)s->fp)) {
		s->end = USTACK_END_UNREADABLE;
		return 1;
	}
	s->sp = s->fp + 16;
	s->fp = frame[0];
	s->pc = frame[1];
	return 0;
}

static __always_inline long unwind_nofile(struct unwind_walk *w, __u64 addr)
{
	struct rt_step s = {
		.pc = w->pc,
		.sp = w->sp,
		.fp = w->fp,
		.addr = addr,
		.file = w->file.dev | w->file.ino,
		.down_steps = w->no_cfi_down_steps,
		.tgid = w->tgid,
		.end = w->end,
	};
	if (unwind_nofile_step(&s)) {
		w->end = s.end;
		return 1;
	}
	w->pc = s.pc;
	w->sp = s.sp;
	w->fp = s.fp;
	w->no_cfi_down_steps = s.down_steps;
	return 0;
}

static __always_inline long unwind_step_body(struct unwind_walk *w, const bool may_copy)
{
	__u64 addr, file_addr, cfa, ra;
	__u16 rules;
	__u32 n = w->n;

	if (!w->pc) {
		w->end = USTACK_END_FP_CHAIN;
		return 1;
	}
	if (n >= BPFPROF_MAX_USTACK) {
		w->end = USTACK_END_LIMIT;
		return 1;
	}
	w->ips[n] = w->pc;
	w->fps[n] = w->fp;
	w->n = n + 1;
	/* A caller's PC is a return address: the call it returns from is just before. */
	addr = n && !w->pc_is_exact ? w->pc - 1 : w->pc;
	w->pc_is_exact = false;
	if ((addr < w->map_start || addr >= w->map_end) && !unwind_enter_mapping(w, addr))
		/* Not in a file we know (JIT code, a process not read yet): try the frame pointer.
		 */
		return unwind_fp_step(w, USTACK_END_NO_CFI, false);
	if (!w->npages || (may_copy && stack_copy_all)) {
		/*
		 * A file's code before its table: its stack is copied, the walk
		 * finished later (the bench's stack_copy_all: code with a table too).
		 */
		if (may_copy && unwind_stop_for_copy(w, n, addr))
			return 1;
		if (w->npages)
			goto cfi;
		/* JIT code (file key 0), or a file's before its table. */
		return unwind_nofile(w, addr);
	}
cfi:
	file_addr = addr + w->map_to_file;
	/*
	 * Code its file's CFI does not cover (node's builtins, hand-written
	 * assembly): the frame pointer is all there is, as for JIT code.
	 */
	if ((file_addr < w->row_lo || file_addr >= w->row_hi) && !unwind_find_row(w, file_addr))
		return unwind_fp_step(w, USTACK_END_NO_ROW, false);
	rules = w->row.rules;
	switch (UNWIND_RULE_CFA(rules)) {
	case UNWIND_CFA_SP:
		cfa = w->sp + w->row.cfa_offset;
		break;
	case UNWIND_CFA_FP:
		cfa = w->fp + w->row.cfa_offset;
		break;
	case UNWIND_CFA_PLT:
		cfa = w->sp + w->row.cfa_offset + (((addr & 15) >= UNWIND_RULE_PLT(rules)) ? 8 : 0);
		break;
	case UNWIND_CFA_SIGNAL:
		return unwind_signal_step(w);
	case UNWIND_CFA_ROOT:
		w->end = USTACK_END_ROOT;
		return 1;
	case UNWIND_CFA_CLONE:
		/* The new thread, back from clone: nothing called it (its stack is new). */
		if (!n && !w->ax) {
			w->end = USTACK_END_ROOT;
			return 1;
		}
		cfa = w->sp + w->row.cfa_offset;
		break;
	case UNWIND_CFA_SWITCH:
		return unwind_fp_step(w, USTACK_END_NO_ROW, true);
	default:
		/* A gap between FDEs, or rules the table cannot hold. */
		return unwind_fp_step(w, USTACK_END_NO_ROW, false);
	}
	/*
	 * Every CFI step moves up the stack: a CFA at or below SP is rules
	 * that do not hold here (a stale FP in a CFA = FP + n row), and a
	 * walk that does not move emits one frame forever.
	 */
	if (cfa <= w->sp) {
		w->end = USTACK_END_STUCK;
		return 1;
	}
	if (bpf_probe_read_user(&ra, sizeof(ra), (void *)(cfa - 8)) ||
	    (UNWIND_RULE_FP(rules) == UNWIND_FP_SAVED &&
	     bpf_probe_read_user(&w->fp, sizeof(w->fp), (void *)(cfa + w->row.fp_offset)))) {
		w->end = USTACK_END_UNREADABLE;
		return 1;
	}
	w->sp = cfa;
	w->pc = ra;
	return 0;
}

static long unwind_step(__u32 i, struct unwind_walk *w)
{
	return unwind_step_body(w, false);
}

/* on_sample's step: the same, but it may stop for a stack copy. */
static long unwind_step_copy(__u32 i, struct unwind_walk *w)
{
	return unwind_step_body(w, true);
}

#define UNWIND_NR_VFORK 58 /* x86_64 */

/*
 * A task in vfork: the parent while the kernel copies it or waits for the
 * child's exec, the child right after. glibc's __vfork pops its return
 * address into RDI before the syscall (the child runs on the same stack
 * and would overwrite it) and pushes it back after; its CFI says so
 * (DW_CFA_register), which the table cannot hold, so these stacks ended in
 * __vfork: make's, sh's and gcc's spawning, on- and off-CPU. At the
 * instruction after the syscall, before the push (the code there says so:
 * syscall, push %rdi), the caller's PC is RDI and its SP this SP. Taken
 * here, before the walk, not as a rule of the walk's step: a rule kind
 * there doubled the switch program's verification (170k -> 314k
 * instructions, half a second more at every start).
 */
static __always_inline bool unwind_vfork_return(struct pt_regs *regs, __u64 pc, __u64 *ra)
{
	__u8 code[3];

	if (BPF_CORE_READ(regs, orig_ax) != UNWIND_NR_VFORK ||
	    bpf_probe_read_user(code, sizeof(code), (void *)(pc - 2)) || code[0] != 0x0f ||
	    code[1] != 0x05 || code[2] != 0x57)
		return false;
	*ra = BPF_CORE_READ(regs, di);
	return true;
}

/*
 * The user stack of `task` (its registers at its last entry into the
 * kernel) into ips[0..BPFPROF_MAX_USTACK); returns how many frames, with
 * SAMPLE_USTACK_* flags and the reason it ends added to *flags.
 * `may_find_vma`: `task` is current and the context allows bpf_find_vma
 * (a sample, not sched_switch with the run queue locked). `may_copy`, a
 * constant: the walk may stop at a file whose table is still to come, its
 * stack copied for userspace to finish (stack_copy.bpf.h; on_sample only).
 */
static __always_inline __u32 unwind_user(struct task_struct *task, __u64 *ips, __u64 *fps,
					 __u32 *flags, bool may_find_vma, const bool may_copy)
{
#if defined(__TARGET_ARCH_x86)
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
	struct unwind_walk w = {};
	__u64 ra;
	long loops;

	if (!regs)
		return 0;
	w.tgid = BPF_CORE_READ(task, tgid);
	w.ips = ips;
	w.fps = fps;
	w.pc = BPF_CORE_READ(regs, ip);
	w.sp = BPF_CORE_READ(regs, sp);
	w.fp = BPF_CORE_READ(regs, bp);
	w.ax = BPF_CORE_READ(regs, ax);
	w.end = USTACK_END_LIMIT;
	if (unwind_vfork_return(regs, w.pc, &ra)) {
		ips[0] = w.pc;
		w.fps[0] = w.fp;
		w.n = 1;
		w.pc = ra;
	}
	w.may_find_vma = may_find_vma;
	if (may_find_vma)
		unwind_vma_seen_clear();
	w.no_cfi_down_steps = unwind_no_down_step;
	w.switch_steps = unwind_no_down_step;
	if (may_copy) {
		stack_copy_begin();
		loops = bpf_loop(BPFPROF_MAX_USTACK + 1, unwind_step_copy, &w, 0);
		if (stack_copy_take())
			*flags |= SAMPLE_USTACK_COPIED;
	} else {
		loops = bpf_loop(BPFPROF_MAX_USTACK + 1, unwind_step, &w, 0);
	}
	if (loops < 0)
		*flags |= SAMPLE_USTACK_ERROR;
	if (w.end == USTACK_END_LIMIT || w.end == USTACK_END_STUCK)
		*flags |= SAMPLE_USTACK_TRUNCATED;
	*flags |= w.end << SAMPLE_USTACK_END_SHIFT;
	return w.n;
#else
	return 0; /* userspace refuses --unwind cfi on other architectures */
#endif
}

/*
 * At exec, the new image's mappings that the unwinder needs first, before
 * userspace reads them: the executable's code (where mm->start_code is)
 * and, for a dynamic program, the interpreter's (where the task starts:
 * its entry point). Without them, the first milliseconds of every process
 * (ld.so, and all of a short one) would be walked with frame pointers.
 * Process context (not sched_switch or NMI), so bpf_find_vma runs as often
 * as needed and the map update is allowed. `proc` is scratch (10 KiB).
 */
static __always_inline void unwind_exec_mappings(struct unwind_proc *proc, __u32 tgid)
{
#if defined(__TARGET_ARCH_x86)
	struct task_struct *task = bpf_get_current_task_btf();
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
	struct unwind_mapping a, b;
	bool have_a, have_b;

	proc->n = 0;
	have_a = unwind_current_vma(BPF_CORE_READ(task, mm, start_code), &a);
	have_b = regs && unwind_current_vma(BPF_CORE_READ(regs, ip), &b);
	if (have_a && have_b && a.start == b.start)
		have_b = false; /* static: the entry is in the executable itself */
	if (have_a && have_b && b.start < a.start) {
		proc->m[0] = b;
		proc->m[1] = a;
		proc->n = 2;
	} else {
		if (have_a)
			proc->m[proc->n++ & 1] = a;
		if (have_b)
			proc->m[proc->n++ & 1] = b;
	}
	if (proc->n)
		bpf_map_update_elem(&unwind_procs, &tgid, proc, BPF_ANY);
	else
		bpf_map_delete_elem(&unwind_procs, &tgid);
#endif
}

#endif
