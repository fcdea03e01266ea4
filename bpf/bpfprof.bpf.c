// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * bpfprof kernel side: samples with kernel+user stacks from a perf event per
 * CPU, context switches with the stack at switch-out, wakeups, target
 * filtering in the kernel, and fork tracking for `-- cmd`.
 *
 * Rules followed here: no shared hash-map *updates* from the perf_event
 * (NMI-like) handler or from sched_switch — they only look up (task
 * storage and per-CPU maps are theirs to write); per-CPU scratch, state
 * and counters; every failed ring buffer write is counted.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "bpfprof_abi.h"

/* task_struct.flags: a kernel thread (PF_KTHREAD in include/linux/sched.h; not in BTF). */
#define KPF_KTHREAD 0x00200000

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Knobs, set by userspace before load. */
const volatile bool include_idle = false;
const volatile bool filter_tgid = false;  /* only tgids in target_tgids */
const volatile bool follow_forks = false; /* children of targets become targets */
const volatile __u32 nr_rings = 1;
const volatile __u64 wakeup_bytes = 256 * 1024; /* wake the consumer past this much data */
const volatile bool offcpu_stacks = true;	/* take prev's stack at switch-out */
/*
 * A switch-out place's stack is taken again once the waits that reused it
 * add up to this much off-CPU time (the sampling interval: one off-CPU
 * sample's worth), or once it is 64 intervals old, whichever comes first.
 */
const volatile __u64 offcpu_stack_interval_ns = 1000000;
/* --syscalls=blocking: name the syscall a thread sleeps in at its switch-out. */
const volatile bool syscalls_from_switch = false;
/* The kernel's perf_event_max_stack sysctl: bpf_get_stack() walks no deeper. */
const volatile __u32 perf_max_stack = BPFPROF_MAX_KSTACK;
/*
 * Waits shorter than this are not shown as markers (--sched-min); with
 * defer_wakeups their wakeups are folded into the woken thread's next
 * record instead of being records of their own. Needs the BTF-typed
 * sched_waking program: only it can reach the wakee's task storage.
 */
const volatile __u64 sched_min_ns = 1000000;
const volatile bool defer_wakeups = false;
/*
 * Hold target switch-outs until their switch-in and only count the waits
 * shorter than fold_min_ns while the off-CPU time counted since the
 * thread's last record stays under fold_off_ns (fold_waits.bpf.h).
 */
const volatile bool fold_waits = false;
const volatile __u64 fold_min_ns = 0;
const volatile __u64 fold_off_ns = ~0ULL;

struct ringbuf_map {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024); /* resized by userspace before load */
};

/* One ring buffer per CPU (or per CPU group): index = cpu % nr_rings. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1); /* resized by userspace */
	__type(key, __u32);
	__array(values, struct ringbuf_map);
} rings SEC(".maps");

/*
 * Each user frame's frame pointer, as the walk found it, kept beside the
 * record it is building (never sent): runtime.bpf.h reads a runtime's
 * words from it. The record comes first: a scratch pointer is a record's.
 */
struct sample_scratch {
	struct sample_event e;
	__u64 fps[BPFPROF_MAX_USTACK];
};

struct switch_scratch {
	struct switch_event e;
	__u64 fps[BPFPROF_MAX_USTACK];
};

#define SAMPLE_FPS(e) (((struct sample_scratch *)(e))->fps)
#define SWITCH_FPS(e) (((struct switch_scratch *)(e))->fps)

/*
 * The sample record, built per CPU before it goes to a ring (too big for
 * the BPF stack). Each context has its own scratch: a perf_event sample can
 * interrupt a tracepoint program on the same CPU, so they must not share.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sample_scratch);
} scratch SEC(".maps");

/* sched_switch has its own scratch: a PMU sample (NMI) can land in the middle of it. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct switch_scratch);
} switch_scratch SEC(".maps");

/*
 * A switch-out held back (fold_waits.bpf.h): what of the switch record can
 * only be read at the switch-out. The rest is read when it is sent: the
 * thread's name, CPU time and syscall do not change while it is off the CPU.
 * The fields every held switch-out writes come first (see task_sched_state).
 */
struct held_switch {
	__u64 since;
	__u32 prev_state, flags;
	__u32 cpu, pad;
	__u32 next_pid, next_tid; /* only when prev stays runnable */
	struct folded_wakeup woken;
	char next_comm[BPFPROF_COMM_LEN]; /* only when prev stays runnable */
};

/* task_sched_state.wake_ts of a kept wakeup whose time its switch-in reads. */
#define WAKE_TS_AT_SWITCH_IN 1

/*
 * Per-thread state kept by the kernel with the task: no shared map is updated.
 *
 * Laid out by how often it is touched: a switch-out, a switch-in and a kept
 * wakeup touch the fields from off_ts to fold, every switch of every target
 * (~180 bytes), and the off-CPU stacks' rate limit comes last, as only
 * record -a's off-CPU samples use it. The value starts 8 bytes into a cache
 * line the lookup reads anyway (bpf_local_storage_data's map pointer), so
 * this order puts the hot part in three lines where the stack slots first
 * made it four.
 */
struct task_sched_state {
	__u64 off_ts; /* its last switch-out (0: none seen) */
	/*
	 * A wakeup of its current wait that was not sent (the wait was still
	 * short): see settle_wakeup(). wake_ts == 0: none; WAKE_TS_AT_SWITCH_IN:
	 * its time is read at the switch-in (switch_in_wake_time()).
	 */
	__u64 wake_ts;
	/*
	 * fold_waits: its last switch-out, not sent while held is 1; must_send:
	 * that one may not be folded, next_must_send: nor the next one.
	 */
	__u64 held; /* 64 bits: the cmpxchg of BPF's v1-v2 instruction sets */
	__u32 must_send, next_must_send;
	struct held_switch hs;
	__u32 waker_pid, waker_tid;
	__u32 wake_cpu, wake_target_cpu;
	__u32 wake_flags, pad;
	char waker_comm[BPFPROF_COMM_LEN];
	struct folded_waits fold; /* counted since its last switch record */
	/* Per switch-out place (slot): when its stack was last taken (0: never) and where. */
	__u64 stack_ts[SWITCH_STACK_SLOTS];
	__u64 stack_sig[SWITCH_STACK_SLOTS]; /* see switch_signature() */
	/* Per slot: the off-CPU time of the waits that reused its stack since it was taken. */
	__u64 stack_off_ns[SWITCH_STACK_SLOTS];
	__u32 stack_last, pad2; /* the slot of its last switch-out, plus one (0: none) */
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct task_sched_state);
} task_sched SEC(".maps");

/*
 * When this CPU last switched tasks, i.e. when the task now running on it
 * got the CPU, and that task's CPU time by the kernel then (0 for tasks
 * that are no target). Samples and switch-outs carry them, so a switch-in
 * needs no record of its own: that halves the records on switch-heavy
 * machines.
 */
#include "switch_clock.bpf.h"

struct cpu_slice {
	__u64 since;
	__u64 runtime_ns;
	__u32 tid, pad; /* whose slice: next's tid at the CPU's last switch seen (0: idle) */
	struct switch_clock clock;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cpu_slice);
} cpu_slices SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bpfprof_stats);
} stats SEC(".maps");

/* Target processes (tgid -> 1). Written by userspace and by the fork tracepoint only. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u8);
} target_tgids SEC(".maps");

static __always_inline bool tgid_is_target(__u32 tgid)
{
	if (!filter_tgid)
		return true;
	return bpf_map_lookup_elem(&target_tgids, &tgid) != NULL;
}

#include "cgroup_filter.bpf.h"

static __always_inline void count(bool ok, __u32 kind)
{
	__u32 zero = 0;
	struct bpfprof_stats *s = bpf_map_lookup_elem(&stats, &zero);

	if (!s || kind >= EV_KIND_MAX)
		return;
	if (ok)
		s->emitted[kind]++;
	else
		s->dropped[kind]++;
}

/* Hand a finished record to this CPU's ring buffer; count drops. */
static __always_inline void submit(void *rec, __u64 size, __u32 kind, __u32 cpu)
{
	__u32 idx = nr_rings ? cpu % nr_rings : 0;
	void *ring = bpf_map_lookup_elem(&rings, &idx);
	__u64 flags = BPF_RB_NO_WAKEUP;
	long err;

	if (!ring) {
		count(false, kind);
		return;
	}
	/* Waking the consumer per record costs more than the record: batch. */
	if (bpf_ringbuf_query(ring, BPF_RB_AVAIL_DATA) >= wakeup_bytes)
		flags = BPF_RB_FORCE_WAKEUP;
	err = bpf_ringbuf_output(ring, rec, size, flags);
	count(err == 0, kind);
}

/*
 * Whether the current task entered the kernel through a system call, from
 * the user registers its entry saved: the syscall number there, or -1 for
 * interrupts and exceptions (x86's orig_ax, arm64's syscallno).
 */
static __always_inline bool user_in_syscall(void)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());

	if (!regs)
		return false;
#if defined(__TARGET_ARCH_x86)
	return (long)regs->orig_ax >= 0;
#elif defined(__TARGET_ARCH_arm64)
	return regs->syscallno >= 0;
#else
	return true; /* the old guess: a return address */
#endif
}

#include "stack_copy.bpf.h"
#include "rt_step.bpf.h"
#include "unwind.bpf.h"
#include "python.bpf.h"
#include "php.bpf.h"
#include "ruby.bpf.h"

#include "stacks.bpf.h"
#include "runtime.bpf.h"

/*
 * A task's name (`task` BTF-typed): two 8-byte loads and stores, where
 * bpf_get_current_comm()'s strscpy costs ~55 ns (a third of a kept wakeup)
 * and a memcpy into a char array is 32 byte loads and stores (clang does not
 * know the destination's alignment; every one here is 8-byte aligned, see
 * the asserts below). The kernel keeps comm's last byte NUL; a rename racing
 * with the copy can mix two names, as with the helper.
 */
static __always_inline void task_comm(char dst[BPFPROF_COMM_LEN], struct task_struct *task)
{
	__u64 lo, hi;

	__builtin_memcpy(&lo, &task->comm[0], sizeof(lo));
	__builtin_memcpy(&hi, &task->comm[8], sizeof(hi));
	((__u64 *)dst)[0] = lo;
	((__u64 *)dst)[1] = hi;
}

_Static_assert(__builtin_offsetof(struct sample_event, comm) % 8 == 0, "comm alignment");
_Static_assert(__builtin_offsetof(struct switch_event, prev_comm) % 8 == 0, "comm alignment");
_Static_assert(__builtin_offsetof(struct switch_event, next_comm) % 8 == 0, "comm alignment");
_Static_assert(__builtin_offsetof(struct wakeup_event, waker_comm) % 8 == 0, "comm alignment");
_Static_assert(__builtin_offsetof(struct task_sched_state, waker_comm) % 8 == 0, "comm alignment");
_Static_assert(__builtin_offsetof(struct held_switch, next_comm) % 8 == 0, "comm alignment");

/* The current task's name. */
static __always_inline void current_comm(char dst[BPFPROF_COMM_LEN])
{
	task_comm(dst, bpf_get_current_task_btf());
}

/*
 * A wakeup record. The waker ran on `cpu` at `ts`; its comm comes from
 * `waker_comm` when given, else it is `current` (the record is built in its
 * context), and there is none when an interrupt woke the wakee
 * (WAKEUP_WAKER_MASK in `flags`). Small and fixed-size, so it is built on the
 * stack.
 */
static __always_inline void emit_wakeup(__u64 ts, __u32 cpu, struct task_struct *wakee,
					__u32 waker_pid, __u32 waker_tid, const char *waker_comm,
					__u32 target_cpu, __u32 flags)
{
	struct wakeup_event e;

	__builtin_memset(&e, 0, sizeof(e));
	e.hdr.kind = EV_WAKEUP;
	e.hdr.size = sizeof(e);
	e.hdr.cpu = cpu;
	e.hdr.ts = ts;
	e.hdr.pid = BPF_CORE_READ(wakee, tgid);
	e.hdr.tid = BPF_CORE_READ(wakee, pid);
	e.waker_pid = waker_pid;
	e.waker_tid = waker_tid;
	if (waker_comm)
		__builtin_memcpy(e.waker_comm, waker_comm, sizeof(e.waker_comm));
	else if (!(flags & WAKEUP_WAKER_MASK))
		current_comm(e.waker_comm);
	BPF_CORE_READ_STR_INTO(&e.wakee_comm, wakee, comm);
	e.target_cpu = target_cpu;
	e.flags = flags;
	/* This CPU's ring: a settled wakeup is written on the wakee's CPU. */
	submit(&e, sizeof(e), EV_WAKEUP, bpf_get_smp_processor_id());
}

/*
 * The current task, woken from its last wait, has been on this CPU since
 * `since`. A wakeup of that wait kept back by keep_wakeup() is settled now
 * that the wait's length is known: its own record when the wait is long
 * enough to be shown, else folded into the record being built (`out`),
 * which costs no record at all. Done at the thread's first sample or
 * switch-out after it ran again, where its task storage is at hand anyway:
 * a lookup of `next` at every switch-in would cost more.
 */
static __always_inline void settle_wakeup(struct task_sched_state *ts, struct task_struct *task,
					  __u64 since, struct folded_wakeup *out)
{
	out->ts = 0;
	/* A wakeup during this slice races with the switch-out to come: it ends the next wait. */
	if (!ts || !ts->wake_ts || ts->wake_ts > since)
		return;
	/* Not timed at a switch-in (it never should be): it was before this slice. */
	if (ts->wake_ts == WAKE_TS_AT_SWITCH_IN)
		ts->wake_ts = since;
	if (since - ts->off_ts >= sched_min_ns) {
		emit_wakeup(ts->wake_ts, ts->wake_cpu, task, ts->waker_pid, ts->waker_tid,
			    ts->waker_comm, ts->wake_target_cpu, ts->wake_flags);
	} else {
		/* A wakeup racing with the switch-out ends the wait at the switch-out. */
		out->ts = ts->wake_ts > ts->off_ts ? ts->wake_ts : ts->off_ts;
		out->waker_pid = ts->waker_pid;
		out->waker_tid = ts->waker_tid;
	}
	ts->wake_ts = 0;
}

#include "sample.bpf.h"
#include "php_sample.bpf.h"
#include "waker_context.bpf.h"

/*
 * `-- cmd`: a child of a target process becomes a target. --unwind cfi: a
 * new process maps what its parent maps, so it starts with its parent's
 * unwind mappings, until userspace reads its own (after its next mmap or
 * exec); without this its first stacks would be walked with frame
 * pointers. A fork is not sched_switch or NMI context, so the hash updates
 * here are allowed. A user at its share of the maps gets no copy: its
 * child is admitted by userspace when sampled (proc_uids_capped).
 */
static __always_inline void track_fork(struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid);
	__u32 ctgid = BPF_CORE_READ(child, tgid);
	struct unwind_proc *proc;
	__u8 one = 1;

	if (ptgid == ctgid)
		return;
	if (follow_forks && bpf_map_lookup_elem(&target_tgids, &ptgid))
		bpf_map_update_elem(&target_tgids, &ctgid, &one, BPF_NOEXIST);
	if (!cfi_unwind || (filter_tgid && !bpf_map_lookup_elem(&target_tgids, &ctgid)))
		return;
	proc = bpf_map_lookup_elem(&unwind_procs, &ptgid);
	if (proc && !proc_uid_capped(child, PROC_CAPPED_UNWIND))
		bpf_map_update_elem(&unwind_procs, &ctgid, proc, BPF_NOEXIST);
	/* A forked Python process has its interpreter where its parent had it. */
	if (python_frames && !proc_uid_capped(child, PROC_CAPPED_PY)) {
		struct py_proc *pp = bpf_map_lookup_elem(&py_procs, &ptgid);

		if (pp)
			bpf_map_update_elem(&py_procs, &ctgid, pp, BPF_NOEXIST);
	}
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork_btf, struct task_struct *parent, struct task_struct *child)
{
	track_fork(parent, child);
	return 0;
}

/* Fallback for kernels whose BTF lacks the tracepoint's types. */
SEC("raw_tp/sched_process_fork")
int BPF_PROG(on_fork_raw, struct task_struct *parent, struct task_struct *child)
{
	track_fork(parent, child);
	return 0;
}

/* Scratch for the exec handler's new unwind mappings (too big for the BPF stack). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct unwind_proc);
} exec_scratch SEC(".maps");

/*
 * --unwind cfi: an exec replaces every mapping, so the process's unwind
 * mappings are replaced at once: stale rows applied to the new image would
 * make up frames. With bpf_find_vma, the new executable's and interpreter's
 * code are entered here (unwind_exec_mappings) until userspace reads the
 * rest; without, or for a user at its share of the map, the entry goes
 * (frame pointers meanwhile, until userspace reads or admits it). Not
 * sched_switch or NMI context.
 */
SEC("raw_tp/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *task)
{
	__u32 tgid = BPF_CORE_READ(task, tgid), zero = 0;
	struct unwind_proc *proc;

	/* Another image: userspace finds its interpreter, if any, when it reads it. */
	if (python_frames)
		bpf_map_delete_elem(&py_procs, &tgid);
	/*
	 * Nor does the old image's runtime (a JVM's code cache, V8's code
	 * ranges) say anything of the new one: its frames would be read at the
	 * old offsets until userspace reads the new maps.
	 */
	bpf_map_delete_elem(&rt_procs, &tgid);
	if (php_frames)
		bpf_map_delete_elem(&php_procs, &tgid);
	if (ruby_frames)
		bpf_map_delete_elem(&rb_procs, &tgid);
	if (!cfi_unwind || !unwind_find_vma ||
	    (filter_tgid && !bpf_map_lookup_elem(&target_tgids, &tgid)) ||
	    proc_uid_capped(task, PROC_CAPPED_UNWIND) ||
	    !(proc = bpf_map_lookup_elem(&exec_scratch, &zero))) {
		bpf_map_delete_elem(&unwind_procs, &tgid);
		return 0;
	}
	unwind_exec_mappings(proc, tgid);
	return 0;
}

/*
 * A task_struct field. tp_btf programs get BTF-typed pointers and read them
 * with plain loads; raw_tp ones need a probe read, a helper call each
 * (about 10 ns, and sched_switch reads several per switch).
 */
#define TASK_READ(btf, t, field) ((btf) ? (t)->field : BPF_CORE_READ(t, field))

/* task->__state (5.14+) or task->state (older kernels), via CO-RE. */
struct task_struct___pre514 {
	long state;
} __attribute__((preserve_access_index));

static __always_inline __u32 task_state(struct task_struct *t, bool btf)
{
	if (bpf_core_field_exists(t->__state))
		return TASK_READ(btf, t, __state);
	return (__u32)TASK_READ(btf, (struct task_struct___pre514 *)t, state);
}

/*
 * Where a thread leaves the CPU, cheaply: the user address it entered the
 * kernel from (the syscall's libc wrapper, or the interrupted instruction),
 * its state and whether it was preempted. Switch-outs with the same
 * signature almost always have the same stack, so only those may reuse it.
 */
static __always_inline __u64 switch_signature(struct task_struct *task, __u32 state, bool preempt)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
	/* The helper returns a BTF-typed pointer, read with a plain load in both flavours. */
	__u64 ip = regs ? PT_REGS_IP(regs) : 0;

	return ip ^ ((__u64)state << 48) ^ ((__u64)preempt << 63);
}

/*
 * The wait that ended at `since` (the slice now ending began then) was
 * spent under the stack of its switch-out's slot: charge it there, so that
 * a place's stack is taken again per interval of off-CPU time it stands for,
 * as off-CPU samples are cut. Per interval of wall time, a thread waking a
 * million times a second took a stack every interval at every place, most
 * of them for waits that together made no off-CPU sample.
 */
static __always_inline void charge_stack_slot(struct task_sched_state *ts, __u64 since)
{
	__u32 last = ts->stack_last;

	if (last && ts->off_ts && since > ts->off_ts)
		ts->stack_off_ns[(last - 1) & (SWITCH_STACK_SLOTS - 1)] += since - ts->off_ts;
}

/*
 * The slot of the place `sig` among the thread's remembered switch-out
 * places: returns true when its stack still stands (less than an interval
 * of off-CPU time spent under it, and not 64 intervals old): reuse it; else
 * false after claiming the slot for a stack taken now: the place's own
 * slot, or else an unused or the least recently taken one.
 */
static __always_inline bool stack_slot(struct task_sched_state *ts, __u64 sig, __u64 now,
				       __u32 *slot_out)
{
	__u32 slot = SWITCH_STACK_SLOTS, victim = 0;
	bool reuse;

#pragma unroll
	for (__u32 i = 0; i < SWITCH_STACK_SLOTS; i++) {
		if (ts->stack_ts[i] && ts->stack_sig[i] == sig) {
			slot = i;
			break;
		}
		if (ts->stack_ts[i] < ts->stack_ts[victim])
			victim = i;
	}
	if (slot >= SWITCH_STACK_SLOTS)
		slot = victim;
	slot &= SWITCH_STACK_SLOTS - 1; /* for the verifier */
	reuse = ts->stack_ts[slot] && ts->stack_sig[slot] == sig &&
		ts->stack_off_ns[slot] < offcpu_stack_interval_ns &&
		now - ts->stack_ts[slot] < offcpu_stack_interval_ns * 64;
	if (!reuse) {
		ts->stack_ts[slot] = now;
		ts->stack_sig[slot] = sig;
		ts->stack_off_ns[slot] = 0;
	}
	ts->stack_last = slot + 1;
	*slot_out = slot;
	return reuse;
}

/* The header of a switch record about tgid/tid at `now`, in a slice that began at `since`. */
static __always_inline void switch_record_begin(struct switch_event *e, __u32 tgid, __u32 tid,
						__u64 since, __u64 now)
{
	e->hdr.kind = EV_SWITCH;
	e->hdr.cpu = bpf_get_smp_processor_id();
	e->hdr.ts = now;
	e->hdr.pid = tgid;
	e->hdr.tid = tid;
	e->oncpu_since = since;
}

/*
 * --cgroup: a thread that was a target (it left a CPU as one: off_ts is
 * set) is seen outside the targets, so it moved out. Its timeline must end
 * here (SWITCH_LEFT_TARGETS), or a wait it was in when it moved would stay
 * open to the end of the recording. Reported once: off_ts is cleared.
 */
static __always_inline void note_left_targets(struct task_struct *task, __u32 tgid, __u32 tid,
					      __u64 since, __u64 now)
{
	struct task_sched_state *ts = bpf_task_storage_get(&task_sched, task, NULL, 0);
	struct switch_event *e;
	__u32 zero = 0;
	__u64 size;

	if (!ts || !ts->off_ts)
		return;
	ts->off_ts = 0;
	ts->wake_ts = 0;
	e = bpf_map_lookup_elem(&switch_scratch, &zero);
	if (!e)
		return;
	switch_record_begin(e, tgid, tid, since, now);
	e->runtime_ns = 0;
	e->next_pid = e->next_tid = 0;
	e->prev_comm[0] = e->next_comm[0] = '\0';
	e->prev_state = 0;
	e->flags = SWITCH_LEFT_TARGETS;
	e->sys_nr = -1;
	e->woken.ts = 0;
	e->kstack_len = e->ustack_len = 0;
	size = __builtin_offsetof(struct switch_event, ips);
	e->hdr.size = size;
	submit(e, size, EV_SWITCH, e->hdr.cpu);
}

/* Kernel threads and io_uring/user workers: their saved registers are zeros, not a syscall. */
#define TASK_NO_SYSCALL_REGS \
	(KPF_KTHREAD | 0x00000010 /* PF_IO_WORKER */ | 0x00004000 /* PF_USER_WORKER */)

/*
 * The syscall `task` is inside (current going to sleep, or a sleeping task
 * read by an iterator), from the user registers saved at its kernel entry:
 * the number and its six arguments. The one place that knows each arch's
 * registers: x86's orig_ax holds the number during a syscall, arm64's
 * syscallno (an interrupt or exception entry stores a negative value
 * there); the arguments as the syscall got them (arm64 keeps x0 in
 * orig_x0, as its return value overwrites x0). False when it is in none,
 * or the arch is not known here.
 */
static __always_inline bool read_task_syscall(struct task_struct *task, __s32 *nr_out, __u64 *args)
{
#if defined(__TARGET_ARCH_x86) || defined(__TARGET_ARCH_arm64)
	struct pt_regs *regs;
	long nr;

	if (task->flags & TASK_NO_SYSCALL_REGS)
		return false;
	/*
	 * The helper returns a BTF-typed pointer: plain loads, which cost a
	 * fraction of seven bpf_probe_read_kernel calls (140 ns per switch).
	 */
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	if (!regs)
		return false;
#if defined(__TARGET_ARCH_x86)
	nr = regs->orig_ax;
	if (nr < 0 || nr >= SYSCALL_NR_MAX)
		return false;
	args[0] = regs->di;
	args[1] = regs->si;
	args[2] = regs->dx;
	args[3] = regs->r10;
	args[4] = regs->r8;
	args[5] = regs->r9;
#else
	nr = regs->syscallno;
	if (nr < 0 || nr >= SYSCALL_NR_MAX)
		return false;
	args[0] = regs->orig_x0;
	args[1] = regs->regs[1];
	args[2] = regs->regs[2];
	args[3] = regs->regs[3];
	args[4] = regs->regs[4];
	args[5] = regs->regs[5];
#endif
	*nr_out = (__s32)nr;
	return true;
#else
	return false;
#endif
}

/* The syscall `task` (current, going to sleep) waits in, for the switch record. */
static __always_inline void read_blocking_syscall(struct task_struct *task, struct switch_event *e)
{
	__s32 nr;

	if (read_task_syscall(task, &nr, e->sys_args))
		e->sys_nr = nr;
}

#include "fold_waits.bpf.h"

/*
 * Every context switch on every CPU comes here, so the common path (a
 * switch of non-targets) is one per-CPU store and at most one lookup. Only
 * a target leaving the CPU produces a record; its stack is taken now,
 * while it is still `current`, because nothing can unwind a sleeping
 * task's user stack later. `btf`: prev and next are BTF-typed pointers
 * (tp_btf), read with plain loads; `cg_kfunc`: next's cgroup is tested with
 * the kfunc (see cgroup_filter.bpf.h).
 */
static __always_inline void handle_switch(void *ctx, bool preempt, struct task_struct *prev,
					  struct task_struct *next, bool btf, bool cg_kfunc)
{
	__u32 zero = 0, prev_tid, prev_tgid, next_tid, next_tgid, kn = 0, un = 0, state, flags;
	__u32 slot = 0;
	struct folded_wakeup woken = {};
	__u64 now, since = 0, size;
	struct task_sched_state *ts;
	struct cpu_slice *slice;
	struct task_struct *cur;
	struct switch_event *e;
	bool next_target, take_stack = false;

	slice = bpf_map_lookup_elem(&cpu_slices, &zero);
	now = btf ? switch_clock_now(slice ? &slice->clock : NULL, prev) : bpf_ktime_get_ns();
	next_tid = TASK_READ(btf, next, pid);
	next_tgid = TASK_READ(btf, next, tgid);
	next_target = next_tid != 0 && task_is_target(next, next_tgid, cg_kfunc);
	if (slice) {
		since = slice->since;
		slice->since = now;
		slice->tid = next_tid;
		/* next has not run since its last switch-out: this is final until it does. */
		slice->runtime_ns = next_target ? TASK_READ(btf, next, se.sum_exec_runtime) : 0;
	}
	/* next's wait ends: its held switch-out is folded or sent before prev's record. */
	if (fold_waits && btf && next_target)
		end_held_wait(next, next_tgid, next_tid, now, slice ? &slice->clock : NULL);
	/* Only the BTF-typed next can reach its task storage: raw_tp sees leavers at switch-out. */
	if (nr_cgroups && btf && next_tid != 0 && !next_target)
		note_left_targets(next, next_tgid, next_tid, now, now);

	prev_tid = TASK_READ(btf, prev, pid);
	if (prev_tid == 0)
		return; /* idle leaving the CPU: its slice is not accounted */
	prev_tgid = TASK_READ(btf, prev, tgid);
	if (!current_is_target(prev_tgid)) { /* prev is still current */
		if (nr_cgroups)
			note_left_targets(bpf_get_current_task_btf(), prev_tgid, prev_tid, since,
					  now);
		return;
	}

	/* prev is still current here: the helper gives raw_tp a BTF-typed pointer to it. */
	cur = btf ? prev : bpf_get_current_task_btf();
	state = task_state(prev, btf);
	flags = SWITCH_PREV_TARGET | (cur->flags & KPF_KTHREAD ? EV_KTHREAD : 0);
	if (preempt)
		flags |= SWITCH_PREEMPT;
	if (next_target)
		flags |= SWITCH_NEXT_TARGET;
	/* The storage serves kept wakeups, the stack rate limit, held waits and seeing leavers. */
	ts = defer_wakeups || offcpu_stacks || nr_cgroups || fold_waits
		     ? bpf_task_storage_get(&task_sched, cur, NULL, BPF_LOCAL_STORAGE_GET_F_CREATE)
		     : NULL;
	if (fold_waits && btf && ts)
		since = recover_unseen_switch_in(ts, cur, prev_tgid, prev_tid, since, now,
						 slice ? &slice->clock : NULL);
	if (defer_wakeups)
		settle_wakeup(ts, cur, since, &woken);
	/* Before off_ts moves on: it is where the wait that ended at `since` began. */
	if (offcpu_stacks && ts)
		charge_stack_slot(ts, since);
	if (ts)
		ts->off_ts = now;
	if (offcpu_stacks) {
		if (ts && stack_slot(ts, switch_signature(cur, state, preempt), now, &slot))
			flags |= SWITCH_STACK_REUSED;
		else
			take_stack = true;
		flags |= slot << SWITCH_STACK_SLOT_SHIFT;
	}
	/* The common case on switch-heavy machines: decided at its switch-in. */
	if (fold_waits && btf && ts && !take_stack &&
	    hold_switch(ts, next, next_tgid, next_tid, since, state, flags, &woken))
		return;

	e = bpf_map_lookup_elem(&switch_scratch, &zero);
	if (!e)
		return;
	switch_record_begin(e, prev_tgid, prev_tid, since, now);
	/* Final for this slice: the kernel has run update_curr() for prev before the tracepoint. */
	e->runtime_ns = TASK_READ(btf, prev, se.sum_exec_runtime);
	e->next_pid = next_tgid;
	e->next_tid = next_tid;
	task_comm(e->prev_comm, cur);
	e->prev_state = state;
	/* Who took the CPU matters only when prev did not give it up to wait. */
	if (wait_is_runnable(flags, state))
		BPF_CORE_READ_STR_INTO(&e->next_comm, next, comm);
	else
		e->next_comm[0] = '\0';
	e->woken = woken;
	e->sys_nr = -1;
	if (syscalls_from_switch && !wait_is_runnable(flags, state))
		read_blocking_syscall(cur, e);
	if (take_stack)
		flags |= SWITCH_HAS_STACK |
			 get_stacks(ctx, e->ips, SWITCH_FPS(e), true, &kn, &un, false, false);
	e->flags = flags;
	e->kstack_len = kn;
	e->ustack_len = un;
	e->py_len = 0;
	e->interp = INTERP_PYTHON;
	e->rt_len = 0;
	/* Python's frames in its waits too: a thread asleep, or waiting for the GIL, in its function. */
	if (take_stack && python_frames && un && bpf_map_lookup_elem(&py_procs, &prev_tgid)) {
		int py = python_switch_stack((struct py_ips *)e->ips, prev_tgid, kn | un << 16);

		e->py_len = py & 0xffff;
		if (py & PY_STACK_TRUNCATED)
			e->flags |= SAMPLE_PY_TRUNCATED;
	} else if (take_stack) {
		/* A runtime's frames in its waits too (runtime.bpf.h). */
		e->rt_len = rt_stack((struct rt_ips *)e->ips, (struct rt_fps *)SWITCH_FPS(e),
				     prev_tgid, kn | un << 16, flags);
	}
	e->back_ts = 0;
	if (fold_waits && btf && ts) {
		/* Sent now, its wait still on: the next switch-out must end it. */
		ts->next_must_send = 1;
		take_folded(ts, &e->folded);
	} else {
		__builtin_memset(&e->folded, 0, sizeof(e->folded));
	}
	size = __builtin_offsetof(struct switch_event, ips) +
	       (__u64)(kn + un + 2 * e->py_len + RT_REC_WORDS * e->rt_len) * sizeof(__u64);
	if (size > sizeof(*e))
		size = sizeof(*e);
	e->hdr.size = size;
	submit(e, size, EV_SWITCH, e->hdr.cpu);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch_btf, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	handle_switch(ctx, preempt, prev, next, true, false);
	return 0;
}

/* --cgroup on kernels with bpf_task_under_cgroup (6.5+). */
SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch_btf_cg, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	handle_switch(ctx, preempt, prev, next, true, true);
	return 0;
}

SEC("raw_tp/sched_switch")
int BPF_PROG(on_switch_raw, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	handle_switch(ctx, preempt, prev, next, false, false);
	return 0;
}

/* sched_entity.sched_delayed: EEVDF's delayed dequeue (6.12+). */
struct sched_entity___delayed {
	unsigned char sched_delayed;
} __attribute__((preserve_access_index));

/*
 * Whether `p` (BTF-typed) is on a runqueue as a runnable task. Since 6.12 a
 * task that goes to sleep with negative lag stays queued, marked
 * sched_delayed, until its lag is paid or it is woken: it sleeps all the
 * same. Two threads that wake each other on one CPU are nearly always in
 * that state, and counting them as queued sent every one of their wakeups
 * as a record (~300 ns instead of ~190 ns kept).
 */
static __always_inline bool task_queued_runnable(struct task_struct *p)
{
	struct sched_entity___delayed *se = (void *)&p->se;

	if (!p->on_rq)
		return false;
	if (bpf_core_field_exists(se->sched_delayed) && se->sched_delayed)
		return false;
	return true;
}

/*
 * Keep the wakeup of `p` with the task instead of sending it, when that is
 * safe: p is not queued as runnable (a wakeup of a runnable task may not end
 * any wait, the replay sorts those out) and p's switch-out was seen, and its
 * wait is still shorter than the threshold. Returns true when kept.
 */
static __always_inline bool keep_wakeup(struct task_struct *p, struct task_struct *cur, __u64 *now,
					__u32 waker_pid, __u32 waker_tid, __u32 cpu, __u32 flags)
{
	struct task_sched_state *ts = bpf_task_storage_get(&task_sched, p, NULL, 0);
	__u64 wake_ts;

	/*
	 * Its switch-out is held (fold_waits): the wakeup goes out with it or
	 * is counted with it, whatever the wait's length, never before it.
	 * Its time is read at the switch-in, where it can be had for free.
	 */
	if (fold_waits && ts && ts->held) {
		if (ts->wake_ts)
			return true;
		wake_ts = wake_time_at_switch_in() ? WAKE_TS_AT_SWITCH_IN : bpf_ktime_get_ns();
		goto keep;
	}
	if (task_queued_runnable(p)) /* only called for BTF-typed pointers */
		return false;
	if (!ts || !ts->off_ts)
		return false;
	if (ts->wake_ts)
		return true; /* the first wakeup ends the wait; it is kept already */
	*now = wake_ts = bpf_ktime_get_ns();
	if (wake_ts - ts->off_ts >= sched_min_ns)
		return false;
keep:
	ts->wake_ts = wake_ts;
	ts->waker_pid = waker_pid;
	ts->waker_tid = waker_tid;
	ts->wake_cpu = cpu;
	ts->wake_flags = flags;
	ts->wake_target_cpu = bpf_core_field_exists(p->wake_cpu) ? p->wake_cpu : 0;
	if (flags & WAKEUP_WAKER_MASK)
		__builtin_memset(ts->waker_comm, 0, sizeof(ts->waker_comm));
	else
		task_comm(ts->waker_comm, cur);
	return true;
}

/*
 * A wakeup, in the waker's context: `current` is the waker, unless the
 * wakeup comes from an interrupt (waker_kind()), which names no thread.
 * Only the wakee's timeline needs it (the waker's instant comes from the
 * wakee's replay), so wakeups of non-targets are dropped here, before the
 * context is looked at.
 */
static __always_inline void handle_wakeup(struct task_struct *p, __u32 flags, bool btf,
					  bool cg_kfunc)
{
	struct task_struct *cur = bpf_get_current_task_btf();
	__u64 now = 0;
	__u32 waker_tgid = cur->tgid, waker_tid = cur->pid, cpu, target_cpu = 0, kind;
	__u32 wakee_tid = TASK_READ(btf, p, pid), wakee_tgid = TASK_READ(btf, p, tgid);

	if (wakee_tid == 0 || !task_is_target(p, wakee_tgid, cg_kfunc))
		return;
	flags |= WAKEUP_WAKEE_TARGET;
	kind = flags & WAKEUP_NEW ? WAKER_THREAD : waker_kind(cur);
	if (kind != WAKER_THREAD) {
		flags |= kind << WAKEUP_WAKER_SHIFT;
		waker_tgid = waker_tid = 0;
	} else if (waker_tid != 0 && current_is_target(waker_tgid)) {
		flags |= WAKEUP_WAKER_TARGET;
	}
	cpu = bpf_get_smp_processor_id();
	if (btf && defer_wakeups && !(flags & WAKEUP_NEW) &&
	    keep_wakeup(p, cur, &now, waker_tgid, waker_tid, cpu, flags))
		return;
	if (!now)
		now = bpf_ktime_get_ns();
	if (bpf_core_field_exists(p->wake_cpu))
		target_cpu = TASK_READ(btf, p, wake_cpu);
	emit_wakeup(now, cpu, p, waker_tgid, waker_tid, NULL, target_cpu, flags);
}

SEC("tp_btf/sched_waking")
int BPF_PROG(on_waking_btf, struct task_struct *p)
{
	handle_wakeup(p, 0, true, false);
	return 0;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(on_waking_btf_cg, struct task_struct *p)
{
	handle_wakeup(p, 0, true, true);
	return 0;
}

SEC("raw_tp/sched_waking")
int BPF_PROG(on_waking_raw, struct task_struct *p)
{
	handle_wakeup(p, 0, false, false);
	return 0;
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(on_wakeup_new_btf, struct task_struct *p)
{
	handle_wakeup(p, WAKEUP_NEW, true, false);
	return 0;
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(on_wakeup_new_btf_cg, struct task_struct *p)
{
	handle_wakeup(p, WAKEUP_NEW, true, true);
	return 0;
}

SEC("raw_tp/sched_wakeup_new")
int BPF_PROG(on_wakeup_new_raw, struct task_struct *p)
{
	handle_wakeup(p, WAKEUP_NEW, false, false);
	return 0;
}

#include "syscalls.bpf.h"
#include "task_stack.bpf.h"
