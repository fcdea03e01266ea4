/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The one BPF <-> userspace event ABI of bpfprof.
 *
 * Every record in a ring buffer starts with struct event_header; `kind`
 * selects the payload and `size` is the whole record's length in bytes, so
 * the consumer can skip kinds it does not know (a newer BPF object with an
 * older decoder keeps working). Fields are fixed-size and naturally aligned
 * so that the layout is the same for the BPF target and for userspace.
 */
#ifndef BPFPROF_ABI_H
#define BPFPROF_ABI_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/*
 * Frames per stack. Kernel stacks: the kernel's default perf_event_max_stack
 * (bpf_get_stack gives no more unless that sysctl is raised, and kernel
 * stacks that deep are rare). User stacks: CFI unwinding walks as deep as
 * this (recursive code, interpreters); frame pointers through
 * bpf_get_stack stop at perf_event_max_stack. Records carry only the
 * frames used, so the bound costs nothing on shallow stacks.
 */
#define BPFPROF_MAX_KSTACK   127
#define BPFPROF_MAX_USTACK   512
#define BPFPROF_MAX_FRAMES   (BPFPROF_MAX_KSTACK + BPFPROF_MAX_USTACK)
/* Python frames per sample (interpreter frames of CPython, see struct py_proc). */
#define BPFPROF_MAX_PYFRAMES 128
/*
 * sample_event.ips[]'s size: the native frames and the Python frames' word
 * pairs, rounded up to a power of two so that BPF can mask an index into it.
 */
#define BPFPROF_IPS_WORDS    1024
/*
 * Runtime frames (struct rt_proc): a record of RT_REC_WORDS words per user
 * frame in a runtime's code, at most BPFPROF_MAX_RTFRAMES a stack; past
 * that, frames stay plain PCs. A sample has Python frames or runtime
 * records, never both (a process is one or the other).
 */
#define RT_WORDS	     4
#define RT_REC_WORDS	     (1 + RT_WORDS)
#define BPFPROF_MAX_RTFRAMES 64
_Static_assert(BPFPROF_IPS_WORDS >= BPFPROF_MAX_FRAMES + 2 * BPFPROF_MAX_PYFRAMES,
	       "sample_event.ips holds every frame");
_Static_assert(BPFPROF_IPS_WORDS >= BPFPROF_MAX_FRAMES + RT_REC_WORDS * BPFPROF_MAX_RTFRAMES,
	       "sample_event.ips and switch_event.ips hold every frame and runtime record");
#define BPFPROF_COMM_LEN    16
/* --cgroup: at most this many cgroup trees are targets. */
#define BPFPROF_MAX_CGROUPS 8

enum bpfprof_event_kind {
	EV_SAMPLE = 1,	       /* a timer/cycles sample with stacks */
	EV_SWITCH = 2,	       /* a target thread left a CPU (sched_switch) */
	EV_WAKEUP = 3,	       /* a thread was woken (sched_waking / sched_wakeup_new) */
	EV_SYSCALL = 4,	       /* a syscall at least --syscall-min long ended */
	EV_SYSCALL_TOTALS = 5, /* a thread's per-syscall counts since its last totals */
	EV_STACK_COPY = 6,     /* the user stack above a sample's frame whose file had no table */
	EV_KIND_MAX,
	/*
	 * Made by userspace, never in a ring (capture/stack_finish.c): a
	 * sample_event whose user stack was finished from its copy, for the
	 * model to put in place of the stack the sample came with.
	 */
	EV_SAMPLE_RESTACK = 0x100,
};

struct event_header {
	__u16 kind;
	__u16 size; /* of the whole record, header included */
	__u32 cpu;
	__u64 ts;  /* CLOCK_MONOTONIC ns (bpf_ktime_get_ns) */
	__u32 pid; /* tgid */
	__u32 tid;
};

/* sample_event.flags */
/*
 * The user stack stops at a frame whose file had no unwind table yet; the
 * stack above it went to the ring as a stack_copy_event just before this
 * record (sample_event only: switch_event uses bits 8+).
 */
#define SAMPLE_USTACK_COPIED	 (1u << 29)
#define SAMPLE_KSTACK_TRUNCATED	 (1u << 0)
#define SAMPLE_USTACK_TRUNCATED	 (1u << 1)
#define SAMPLE_KSTACK_ERROR	 (1u << 2)
#define SAMPLE_USTACK_ERROR	 (1u << 3)
/*
 * The thread is inside a system call: the innermost user frame is the
 * instruction after the syscall, a return address like every outer frame.
 * Without it, a thread in the kernel entered it through an interrupt or an
 * exception (a page fault), and the innermost user frame is the
 * instruction that was interrupted or faulted, which is often the first of
 * a function: looking it up as a return address (minus one) would name
 * the function before it.
 */
#define SAMPLE_USER_IN_SYSCALL	 (1u << 4)
/*
 * Why the user stack ends where it does (enum ustack_end), so a profile can
 * say how many stacks are whole and why the others are not.
 */
#define SAMPLE_USTACK_END_SHIFT	 5
#define SAMPLE_USTACK_END_MASK	 (7u << SAMPLE_USTACK_END_SHIFT)
#define SAMPLE_USTACK_END(flags) (((flags)&SAMPLE_USTACK_END_MASK) >> SAMPLE_USTACK_END_SHIFT)

enum ustack_end {
	USTACK_END_UNKNOWN = 0,	   /* frame pointers (bpf_get_stack does not say) */
	USTACK_END_ROOT = 1,	   /* the CFI says this frame has no caller (_start, clone3) */
	USTACK_END_FP_CHAIN = 2,   /* a frame-pointer step found FP 0: the chain's end */
	USTACK_END_NO_CFI = 3,	   /* code without CFI (JIT, not loaded) and no frame pointer */
	USTACK_END_NO_ROW = 4,	   /* code its file's CFI does not cover, and no frame pointer */
	USTACK_END_UNREADABLE = 5, /* the stack could not be read where the CFI points */
	USTACK_END_LIMIT = 6,	   /* BPFPROF_MAX_USTACK frames: truncated */
	/*
	 * A step that did not move up the stack (the caller's SP at or below
	 * this frame's, outside a known stack switch): a chain past the
	 * stack's end, or a loop. Counted as truncated (one marked frame).
	 */
	USTACK_END_STUCK = 7,
};

/*
 * A wakeup folded into the next record of the woken thread. Wakeups of waits
 * shorter than the scheduling threshold (--sched-min) are not records of
 * their own (on switch-heavy machines they were half of all records): the
 * kernel keeps the wakeup with the thread and the thread's first record after
 * it ran again (a sample or its switch-out) carries it. ts == 0: none.
 */
struct folded_wakeup {
	__u64 ts; /* when it was woken (not before its switch-out) */
	__u32 waker_pid, waker_tid;
};

/* The sample's Python stack was cut at BPFPROF_MAX_PYFRAMES frames, or could not be read. */
#define SAMPLE_PY_TRUNCATED (1u << 31) /* sample_event, and switch_event with SWITCH_HAS_STACK */
/*
 * sample_event.flags and switch_event.flags: the thread is a kernel thread
 * (PF_KTHREAD). /proc says so too, but only while the thread lives: a
 * kworker that exits before the reader reaches its first record would
 * otherwise be shown as a user process.
 */
#define EV_KTHREAD	    (1u << 30)

/*
 * A user frame (ips[]) that is CPython's interpreter loop: it runs the next
 * group of the sample's Python frames. User addresses never have bit 63.
 */
#define USTACK_PY_EVAL (1ull << 63)
/*
 * A user frame in the interpreter's own code beside or inside its loop
 * (PHP's VM handlers, called from execute_ex; Ruby's vm_exec_core inside
 * rb_vm_exec), whose work the interpreter's frames show: left out where
 * they are put. User addresses never have bit 62 either.
 */
#define USTACK_INTERP_VM (1ull << 62)
#define USTACK_TAGS	 (USTACK_PY_EVAL | USTACK_INTERP_VM)
/* Python frame: the frame is the first its interpreter loop ran (ends a group). */
#define PY_FRAME_ENTRY 1ull

/*
 * sample_event.interp: the interpreter whose frames py_len holds (the
 * format is the same: a code word, an instruction word with
 * PY_FRAME_ENTRY), and whose loop USTACK_PY_EVAL tags.
 */
enum interp_kind {
	INTERP_PYTHON = 0,
	INTERP_RUBY = 1, /* iseq pointer, VM pc (bpf/ruby.bpf.h) */
	INTERP_PHP = 2,	 /* a zend_function * and ((u64)line << 1) | PY_FRAME_ENTRY (php.bpf.h) */
};

/*
 * ips[] holds kstack_len kernel frames followed by ustack_len user frames,
 * each innermost (leaf) first, as bpf_get_stack() returns them, then
 * py_len Python frames, innermost first, two words each: the code
 * object's address, and the frame's last instruction pointer (2-aligned)
 * with PY_FRAME_ENTRY in bit 0; or rt_len runtime records of RT_REC_WORDS
 * words each (struct rt_proc). Only the used part of ips[] is sent:
 * size = offsetof(ips) + 8 * (kstack_len + ustack_len + 2 * py_len +
 * RT_REC_WORDS * rt_len).
 */
struct sample_event {
	struct event_header hdr;
	char comm[BPFPROF_COMM_LEN];
	__u64 period; /* event period: ns for cpu-clock, cycles for the PMU */
	/*
	 * When the running thread got this CPU: the time of the CPU's last
	 * context switch, 0 if none was seen since the recording started.
	 */
	__u64 oncpu_since;
	/*
	 * The thread's se.sum_exec_runtime when it got this CPU (at
	 * oncpu_since; 0: unknown): the kernel's CPU time of everything it ran
	 * before this slice, so a slice whose switch-in follows switch-outs the
	 * replay never saw still starts from the kernel's exact figure.
	 */
	__u64 oncpu_runtime_ns;
	__u16 kstack_len;
	__u16 ustack_len;
	__u32 flags;
	__u16 py_len;
	__u16 rt_len; /* runtime records after the user frames (struct rt_proc); 0 with py_len */
	__u16 interp; /* enum interp_kind: whose frames py_len holds */
	__u16 py_pad[1];
	struct folded_wakeup woken; /* the wakeup that ended the thread's last wait */
	__u64 ips[BPFPROF_IPS_WORDS];
};

/* switch_event.flags (the stack flags are the SAMPLE_* bits above) */
#define SWITCH_PREEMPT		(1u << 8)  /* prev was preempted (involuntary switch) */
#define SWITCH_PREV_TARGET	(1u << 9)  /* prev passes the target filter */
#define SWITCH_NEXT_TARGET	(1u << 10) /* next passes the target filter */
#define SWITCH_HAS_STACK	(1u << 11) /* ips[] holds prev's stack at switch-out */
/*
 * No stack, on purpose: prev's stack was taken less than a sampling interval
 * ago at a switch-out from the same place (same user entry address, state
 * and preemption; stacks cost ~1 us, switches can come every microsecond),
 * so that stack stands for this one too.
 */
#define SWITCH_STACK_REUSED	(1u << 12)
/*
 * Which of prev's switch-out places (slots) the stack belongs to, with
 * SWITCH_HAS_STACK (the stack taken now, kept for the slot) or
 * SWITCH_STACK_REUSED (the slot's last stack). A thread often alternates
 * between places, e.g. blocking in read() and being preempted on the way
 * out of write(); with a single remembered place each alternation cost a
 * stack.
 */
#define SWITCH_STACK_SLOTS	4
#define SWITCH_STACK_SLOT_SHIFT 13
#define SWITCH_STACK_SLOT_MASK	(3u << SWITCH_STACK_SLOT_SHIFT)
/*
 * --cgroup: not a switch-out but the end of a thread's timeline. The thread
 * (hdr.pid/tid) was a target and has left the target cgroups (moved out):
 * whatever wait it was in ended at oncpu_since, when it got a CPU outside;
 * nothing of it is recorded from then on, until it comes back. No stack.
 */
#define SWITCH_LEFT_TARGETS	(1u << 15)
/*
 * Not a switch-out: only `folded`, the short waits a thread had since its
 * last switch record, read at the end of a recording or of a snapshot
 * window (the thread has not sent a switch record since).
 */
#define SWITCH_FOLD_ONLY	(1u << 16)

/*
 * Short waits the kernel counted instead of sending (see fold_waits in
 * bpfprof.bpf.c), since the thread's previous switch record: `waits`
 * switch-outs, `preempted` of them involuntary, whose waits each stayed
 * under every threshold that would show them; `off_ns` off-CPU in all, of
 * which `runnable` waits (preempted, or from the wakeup to the switch-in)
 * spent `runnable_ns` runnable; `wakeups` of them were ended by a wakeup,
 * `waker_wakeups` of those by waker_pid/waker_tid (the first waker seen;
 * the others are only counted).
 */
struct folded_waits {
	__u64 off_ns;
	__u64 runnable_ns;
	__u32 waits, preempted;
	__u32 runnable, wakeups;
	__u32 waker_pid, waker_tid;
	__u32 waker_wakeups, pad;
};

/*
 * A context switch on hdr.cpu at hdr.ts; hdr.pid/hdr.tid are prev, the task
 * leaving the CPU. Emitted when prev is a target (its on-CPU slice ends) and
 * never for a switch away from idle: a slice's start is carried instead, in
 * oncpu_since, from a per-CPU "last switch" time, so switch-ins cost no record.
 * With fold_waits (bpf/fold_waits.bpf.h) most are held until prev's switch-in
 * and written then, with back_ts, or only counted (struct folded_waits) when
 * the wait was too short to show.
 *
 * prev_state is prev's raw task state (TASK_INTERRUPTIBLE = 1,
 * TASK_UNINTERRUPTIBLE = 2, TASK_STOPPED = 4, TASK_TRACED = 8, with
 * TASK_NOLOAD / TASK_WAKEKILL / TASK_DEAD bits); 0 with SWITCH_PREEMPT clear
 * is a voluntary yield. next_comm is filled only when prev stays runnable
 * (preempted or yielding), where who took the CPU is the story; reading it
 * for every sleep cost more than the rest of the record. With
 * SWITCH_HAS_STACK, ips[] is laid out as in sample_event: kstack_len kernel
 * frames then ustack_len user frames, then rt_len runtime records.
 */
struct switch_event {
	struct event_header hdr;
	__u64 oncpu_since; /* when prev got this CPU (0: before the recording) */
	/*
	 * prev's se.sum_exec_runtime: all the CPU time the kernel accounted to
	 * it, up to this switch-out (0: unknown). The slice's length by the
	 * switch times differs from the kernel's by tens of microseconds: the
	 * kernel skips the clock update of a switch that follows a wakeup and
	 * counts from the wakeup instead. Consecutive switch-outs give the
	 * kernel's exact figure for the time between them, which is what
	 * getrusage, top and CLOCK_THREAD_CPUTIME_ID report.
	 */
	__u64 runtime_ns;
	__u32 next_pid, next_tid;
	char prev_comm[BPFPROF_COMM_LEN];
	char next_comm[BPFPROF_COMM_LEN];
	__u32 prev_state;
	__u32 flags;
	__u16 kstack_len;
	__u16 ustack_len;
	/*
	 * --syscalls=blocking: prev went to sleep inside this syscall (its
	 * number, and its arguments from the saved registers, arg 0 first);
	 * -1 when it did not, or when not asked. A syscall that blocks at
	 * least the threshold becomes a marker at no per-syscall cost.
	 */
	__s32 sys_nr;
	struct folded_wakeup woken; /* the wakeup that ended prev's last wait */
	__u64 sys_args[6];
	__u16 rt_len; /* with SWITCH_HAS_STACK: runtime records after the user frames */
	/*
	 * With SWITCH_HAS_STACK: Python frames after the user frames, as in
	 * sample_event (0 with rt_len), and whose (enum interp_kind, as
	 * sample_event's interp).
	 */
	__u16 py_len;
	__u16 interp;
	__u16 rt_pad;
	/*
	 * A switch-out held back until its wait's length was known: when prev
	 * got a CPU again (0: sent at the switch-out, or its wait was still on
	 * when the recording or the snapshot window ended). hdr.ts stays the
	 * switch-out's time; the record is written at back_ts, and the wakeup
	 * that ended the wait, if any, follows it as a record of its own.
	 */
	__u64 back_ts;
	struct folded_waits folded;
	__u64 ips[BPFPROF_IPS_WORDS];
};

/*
 * switch_event.prev_state: the task state bits of include/linux/sched.h
 * (stable for years; TASK_REPORT_MAX and the idle bits excluded).
 */
#define KTASK_INTERRUPTIBLE   0x0001
#define KTASK_UNINTERRUPTIBLE 0x0002
#define KTASK_STOPPED	      0x0004
#define KTASK_TRACED	      0x0008
#define KTASK_EXIT_DEAD	      0x0010
#define KTASK_EXIT_ZOMBIE     0x0020
#define KTASK_PARKED	      0x0040
#define KTASK_DEAD	      0x0080
#define KTASK_WAKEKILL	      0x0100
#define KTASK_NOLOAD	      0x0400
#define KTASK_RTLOCK_WAIT     0x1000 /* PREEMPT_RT lock wait: reported as "D" by the kernel */

/* wakeup_event.flags */
#define WAKEUP_NEW	    (1u << 0) /* first wakeup of a new task (sched_wakeup_new) */
#define WAKEUP_WAKEE_TARGET (1u << 1)
#define WAKEUP_WAKER_TARGET (1u << 2)
/*
 * What woke the wakee (enum waker_kind) when no thread did: the wakeup ran
 * in interrupt context, and the task it interrupted is no waker. Then
 * waker_pid/waker_tid are 0 and waker_comm is empty, here and wherever the
 * wakeup is folded (struct folded_wakeup, struct folded_waits).
 */
#define WAKEUP_WAKER_SHIFT  3
#define WAKEUP_WAKER_MASK   (3u << WAKEUP_WAKER_SHIFT)
#define WAKEUP_WAKER(flags) (((flags)&WAKEUP_WAKER_MASK) >> WAKEUP_WAKER_SHIFT)

enum waker_kind {
	WAKER_THREAD = 0,    /* a thread: waker_pid/waker_tid (the idle task: tid 0) */
	WAKER_TIMER = 1,     /* a timer's expiry (hrtimer or timer_list callback) */
	WAKER_INTERRUPT = 2, /* a hardware interrupt (device, IPI) or an NMI */
	WAKER_SOFTIRQ = 3,   /* a softirq, in interrupt context or in ksoftirqd */
};

/*
 * hdr.pid/hdr.tid is the woken task (the wakee), a target; the waker is the
 * task that ran on hdr.cpu at hdr.ts, unless the wakeup came from interrupt
 * context (WAKEUP_WAKER_MASK). Emitted at the wakeup when the wakee has slept
 * for the threshold already, else at the wakee's first sample or switch-out
 * after it ran again if its whole wait reached the threshold; shorter waits
 * fold the wakeup into that record instead (struct folded_wakeup). A wakee
 * whose switch-out is held (fold_waits) keeps its wakeup until its switch-in:
 * sent right after the held switch-out, or counted with the folded wait.
 */
struct wakeup_event {
	struct event_header hdr;
	__u32 waker_pid, waker_tid;
	char waker_comm[BPFPROF_COMM_LEN];
	char wakee_comm[BPFPROF_COMM_LEN];
	__u32 target_cpu; /* the CPU the wakee was queued on */
	__u32 flags;
};

/*
 * A syscall of a target thread that took at least the threshold
 * (--syscall-min): hdr.ts is its end, enter_ts its start; args are the
 * registers it was called with (arg 0 first), ret what it returned
 * (-errno on failure).
 */
struct syscall_event {
	struct event_header hdr;
	__u64 enter_ts;
	__s64 ret;
	__u64 args[6];
	__u32 nr;
	__u32 pad;
};

/*
 * Syscall numbers a thread's totals can name; larger ones (none today on
 * x86_64 or arm64) are not counted.
 */
#define SYSCALL_NR_MAX 512
/* Distinct syscalls a thread's totals hold before they are sent and reset. */
#define SYSCALL_SLOTS  32

struct syscall_total {
	__u64 count;
	__u64 ns; /* time spent in it, entry to exit */
	__u32 nr;
	__u32 pad;
};

/* syscall_totals_event.reason */
#define SYSCALL_TOTALS_FULL 1 /* the thread used more distinct syscalls than slots */
#define SYSCALL_TOTALS_EXIT 2 /* the thread exited */
#define SYSCALL_TOTALS_END  3 /* the recording ended (read through a task iterator) */

/*
 * Every syscall of a target thread is counted in the kernel, short or not:
 * nr_slots totals since the thread's previous totals record (they add up).
 * Sent when the slots are full, when the thread exits, and for every live
 * thread at the end of the recording. The record is always full-size;
 * slots past nr_slots are undefined.
 */
struct syscall_totals_event {
	struct event_header hdr;
	__u32 nr_slots;
	__u32 reason;
	struct syscall_total slots[SYSCALL_SLOTS];
};

/*
 * A thread's stacks as it sleeps, read through a task iterator for threads
 * no switch record describes (blocked since before the recording began):
 * the kernel stack from bpf_get_task_stack(), and the user registers it
 * entered the kernel with, for userspace to walk the user stack from
 * (another task's memory is out of a BPF program's reach). Not a ring
 * record: the iterator writes it whole, full-size.
 */
struct task_stack_event {
	__u32 pid, tid;
	__u64 ip, sp, bp; /* user registers at its kernel entry; 0 when none (kernel thread) */
	__u64 ax;	  /* RAX there: a clone's return value (0 in the new thread) */
	__u64 fsbase;	  /* x86_64: its fs base (its pthread_t: its Python state's key); 0: none */
	__u32 kstack_len;
	__u32 flags;  /* SAMPLE_KSTACK_*, SAMPLE_USER_IN_SYSCALL */
	__s32 sys_nr; /* the syscall it sleeps in, from its saved registers; -1: none */
	__u32 state;  /* task->__state: TASK_STACK_SLEEPING or TASK_STACK_BLOCKED bits */
	__u64 sys_args[6];
	__u64 kips[BPFPROF_MAX_KSTACK];
};

/*
 * task_stack_event.state: the kernel's TASK_INTERRUPTIBLE,
 * TASK_UNINTERRUPTIBLE and TASK_NOLOAD (with the second, TASK_IDLE: a kernel
 * thread's idle wait, not a "D" one).
 */
#define TASK_STACK_SLEEPING 0x1
#define TASK_STACK_BLOCKED  0x2
#define TASK_STACK_NOLOAD   0x400
/* Not the kernel's: set in task_stack_event.state for a kernel thread. */
#define TASK_STACK_KTHREAD  0x80000000u

/*
 * CFI unwinding of user stacks. Userspace turns each executable file's
 * .eh_frame into rows (userspace/unwind/cfi_table.h) and loads them into
 * two maps: one from a file, by device and inode as the kernel has them in
 * vma->vm_file, to its run of rows; one array of all rows, each run sorted
 * by pc. 100 processes of one program share one run.
 */
struct unwind_file_key {
	__u64 dev; /* the kernel's dev_t of the file's superblock: major << 20 | minor */
	__u64 ino;
};

/*
 * A file's table, compact (userspace/unwind/compact_table.h): its code cut
 * into 64 KiB pages from `base`, each page one slot of unwind_slots
 * (npages from first_slot), the pages' rows right after them, two a slot.
 * A row holds its PC's offset in its page and the index of its rule in
 * unwind_rules, where every file's rules are kept once: some 4 bytes a
 * row against the 16 of a row with its PC and rules.
 */
struct unwind_file_info {
	__u64 base;	  /* ELF virtual address of page 0's first byte (64 KiB aligned) */
	__s64 bias;	  /* ELF virtual address = offset in the file + bias */
	__u32 first_slot; /* its first page's index in unwind_slots */
	__u32 npages;	  /* 0: no table */
	__u32 flags;	  /* none yet */
	__u32 pad;
};

/*
 * A process's executable file mappings, sorted by start, as userspace read
 * them from /proc/PID/maps (again after each executable mmap): the
 * unwinder finds a PC's file here. (bpf_find_vma would, but it works only
 * once per program run where interrupts are off.)
 */
#define UNWIND_MAX_MAPPINGS 256

/*
 * proc_uids_capped's value (a uid -> these bits): the user holds its share
 * of unwind_procs (UNWIND) or py_procs (PY), so the kernel side adds no
 * entry for its new processes (userspace/capture/proc_shares.c). Its keys:
 * the capped owners and the subordinate uids they run processes under
 * (PROC_SHARE_RAW_UIDS each).
 */
#define PROC_CAPPED_UNWIND 1
#define PROC_CAPPED_PY	   2
#define PROC_CAPPED_RT	   4 /* rt_procs: userspace only (no kernel side adds its entries) */
#define PROC_CAPPED_PHP	   8  /* php_procs: userspace only, as rt_procs */
#define PROC_CAPPED_RB	   16 /* rb_procs: userspace only */
#define PROC_CAPPED_UIDS   512

struct unwind_mapping {
	__u64 start, end;
	__u64 pgoff_bytes; /* offset in the file of `start` */
	struct unwind_file_key file;
};

struct unwind_proc {
	__u32 n;
	__u32 pad;
	struct unwind_mapping m[UNWIND_MAX_MAPPINGS];
};

/* How a row finds the caller's frame. */
enum unwind_cfa {
	UNWIND_CFA_NONE = 0, /* no usable CFI: a gap, or rules the table cannot hold */
	UNWIND_CFA_SP = 1,   /* CFA = SP + cfa_offset */
	UNWIND_CFA_FP = 2,   /* CFA = FP + cfa_offset */
	/*
	 * A PLT entry (16 bytes): CFA = SP + cfa_offset, plus 8 once the
	 * entry's push has run, i.e. when (PC & 15) >= plt_threshold.
	 */
	UNWIND_CFA_PLT = 3,
	UNWIND_CFA_SIGNAL = 4, /* a signal trampoline: the caller's registers are in the sigframe */
	/* The outermost frame (_start, a new thread's entry): its return address is undefined. */
	UNWIND_CFA_ROOT = 5,
	/*
	 * Right after a clone/clone3 syscall, code no FDE covers (glibc ends
	 * the parent's FDE before the syscall, the child's starts at its
	 * entry): with RAX 0 at the interrupted PC this is the new thread,
	 * whose first frame this is (a root); otherwise the parent, CFA = SP
	 * + cfa_offset as before the syscall.
	 */
	UNWIND_CFA_CLONE = 6,
	/*
	 * A stack switch the runtime keeps a frame pointer across (Go's
	 * systemstack, mcall, morestack, asmcgocall): the caller is found
	 * through FP (CFA = FP + 16, FP saved at CFA - 16) and may be on
	 * another stack, lower than this one.
	 */
	UNWIND_CFA_SWITCH = 7,
};

enum unwind_fp {
	UNWIND_FP_SAME = 0,  /* the caller's FP is this frame's FP */
	UNWIND_FP_SAVED = 1, /* the caller's FP is saved at CFA + fp_offset */
	UNWIND_FP_UNDEF = 2, /* the caller's FP cannot be recovered */
};

/* unwind_rule.rules: the CFA rule, the FP rule and the PLT threshold (enum unwind_cfa/_fp). */
#define UNWIND_RULE_CFA(r)	   ((r)&0x7)
#define UNWIND_RULE_FP(r)	   (((r) >> 3) & 0x3)
#define UNWIND_RULE_PLT(r)	   (((r) >> 5) & 0xf)
#define UNWIND_RULES(cfa, fp, plt) ((__u16)((cfa) | ((fp) << 3) | ((plt) << 5)))

/* How to find the caller's frame where a row is in force (unwind_rules' value). */
struct unwind_rule {
	__s32 cfa_offset;
	__s16 fp_offset;
	__u16 rules; /* UNWIND_RULES(): its CFA and FP rules, its PLT threshold */
};

/* unwind_rules: index 0 is UNWIND_CFA_NONE, a row's rule is a u16. */
#define UNWIND_MAX_RULES 65536

/* Code pages of a compact table: a row's PC is its offset in its page. */
#define UNWIND_CODE_PAGE_SHIFT 16
#define UNWIND_CODE_PAGE_SIZE  (1u << UNWIND_CODE_PAGE_SHIFT)

/* A row: from pc_lo in its page on, rule `rule` holds (until the next row or the page's end). */
struct unwind_crow {
	__u16 pc_lo;
	__u16 rule;
};

/*
 * A page's rows: first_row (from the file's first row) and nrows of them,
 * sorted by pc_lo; entry_rule holds from the page's first byte to its first
 * row, so that a lookup never leaves its page. A row at the first byte is
 * the entry rule, not a row: a page has at most 65535 rows.
 */
struct unwind_page {
	__u32 first_row;
	__u16 nrows;
	__u16 entry_rule;
};

/* unwind_slots' value: a page, or two rows (a map's values are 8-byte aligned). */
union unwind_slot {
	struct unwind_page page;
	struct unwind_crow row[2];
};

/*
 * CPython's interpreter frames (2.7, 3.6 on; lang/python_layout.h). Userspace
 * finds each Python process's roots (its first interpreter, the pthread key
 * its thread states are kept under) and its version's layout and publishes
 * them by tgid; a sample of any thread of it (on CPU, or at switch-out)
 * finds that thread's own state and walks its frames. Offsets are in bytes.
 */
enum py_entry_kind {
	PY_ENTRY_IS_ENTRY = 0, /* 3.11: a bool in each frame marks a loop's first frame */
	PY_ENTRY_OWNER = 1,    /* 3.12+: a marker frame owned by the C stack (owner 3) follows it */
	PY_ENTRY_EVERY = 2,    /* 2.7-3.10: every frame runs in a loop of its own; f_lasti an int */
};

struct py_layout {
	__u16 interp_tstate_head; /* PyInterpreterState: its first thread state */
	__u16 tstate_next;	  /* PyThreadState: the next one */
	__u16 tstate_thread_id;	  /* its pthread_t (the thread's TCB, fs base on x86_64) */
	__u16 tstate_frame;	  /* frame (<= 3.10), cframe (3.11, 3.12), current_frame (3.13+) */
	__u16 cframe_frame;	  /* _PyCFrame.current_frame; 0xffff: tstate_frame is the frame */
	__u16 frame_code;	  /* f_code (f_executable in 3.13+) */
	__u16 frame_previous;	  /* f_back (<= 3.10) or previous */
	__u16 frame_instr;	  /* f_lasti (<= 3.10), prev_instr (3.11, 3.12), instr_ptr (3.13+) */
	__u16 frame_entry;	  /* is_entry (3.11) or owner (3.12+) */
	__u8 entry_kind;	  /* enum py_entry_kind */
	__u8 pad[5];
};

#define PY_NO_CFRAME 0xffff

struct py_proc {
	__u64 interp_head; /* where the process keeps its first interpreter's address; 0: unknown */
	/*
	 * Where it keeps the pthread key of its thread states (a 4-byte key,
	 * Py_tss_t._key or 3.6's autoTLSkey); 0: none to use (2.7 keeps its
	 * own list of keys, 3.14+ is described by no table).
	 */
	__u64 tss_key;
	__u64 eval_start, eval_end; /* the interpreter loop's code */
	/*
	 * fs base + tsd_offset: glibc's struct pthread specific_1stblock (the
	 * values of keys 0-31, 16 bytes each, the value at 8); 0: the
	 * process's libc is not bpfprof's, its layout unknown.
	 */
	__u32 tsd_offset;
	__u32 pad;
	struct py_layout layout;
};

/*
 * PHP's frames (lang/php_layout.h): the Zend engine keeps the running
 * function's zend_execute_data in executor_globals.current_execute_data,
 * each linked to its caller's. Userspace publishes per PHP process where
 * executor_globals and the VM loop (execute_ex) are, and the offsets of
 * its version; BPF walks the frames (bpf/php.bpf.h). Offsets in bytes.
 */
struct php_layout {
	__u16 eg_current_execute_data; /* zend_executor_globals */
	__u16 ex_opline;	       /* zend_execute_data: const zend_op * */
	__u16 ex_func;		       /* zend_function * */
	__u16 ex_call_info;	       /* This.u1.type_info: ZEND_CALL_* in its top bits */
	__u16 ex_prev;		       /* prev_execute_data */
	__u16 func_type;	       /* zend_function.type (u8): ZEND_INTERNAL_FUNCTION = 1 */
	__u16 op_lineno;	       /* zend_op.lineno (u32) */
	__u16 pad;
	__u32 call_top; /* ZEND_CALL_TOP: the call_info bit of a loop's first frame */
	__u32 pad2;
};

struct php_proc {
	__u64 eg;		    /* address of executor_globals (an NTS build) */
	__u64 eval_start, eval_end; /* execute_ex's code */
	/* The VM's code below execute_ex: [vm_start, eval_start), its handlers (USTACK_INTERP_VM). */
	__u64 vm_start;
	struct php_layout layout;
};

/*
 * Ruby's control frames (CRuby 3.x; lang/ruby_layout.h). A thread's
 * execution context is its TLS variable ruby_current_ec, of libruby's TLS
 * block: the block is dtv[modid] (the dtv at the thread's fs base + 8),
 * modid the word the dynamic linker put in the GOT slot `ec_modid_slot`
 * (a DTPMOD64 relocation), so BPF reads it there and needs nothing per
 * thread. The context's cfp points into the top of its VM stack; each
 * control frame's caller is the next one up, to the stack's end. Offsets
 * are in bytes.
 */
struct rb_layout {
	__u16 ec_vm_stack;	/* rb_execution_context_t.vm_stack (VALUE *) */
	__u16 ec_vm_stack_size; /* .vm_stack_size (size_t, in VALUEs) */
	__u16 ec_cfp;		/* .cfp */
	__u16 cfp_size;		/* sizeof(rb_control_frame_t) */
	__u16 cfp_pc, cfp_iseq, cfp_ep;
	__u16 pad;
};

struct rb_proc {
	__u64 ec_modid_slot; /* the GOT slot holding libruby's TLS module id */
	__u64 ec_tls_offset; /* ruby_current_ec's offset in libruby's TLS block */
	__u64 exec_start, exec_end; /* rb_vm_exec's code: one call per group of frames */
	__u64 core_start, core_end; /* its core loop's (vm_exec_core's); 0, 0: not known */
	struct rb_layout layout;
};

/*
 * Runtime frames (issue 39): JIT-compiling runtimes keep what names a frame
 * in the frame itself, at fixed offsets from its frame pointer (HotSpot's
 * interpreter: the Method* at fp-24 and the bytecode pointer at fp-64; V8:
 * the JSFunction at fp-16 and the bytecode offset at fp-40). Userspace
 * publishes, per process running such a runtime (a lang module's answer),
 * where its code is and which words to read; the user walk records each
 * frame's frame pointer, and for each user frame whose PC lies in one of
 * the ranges one record of RT_REC_WORDS words follows the user frames
 * (sample_event, switch_event): word 0 = RT_REC_*, then word i + 1 = the
 * word at fp + off[i] (0 when unreadable, or i >= nwords), or, for the
 * innermost frame interrupted there (not in a syscall), the register
 * top_reg[i] names when it is not RT_REG_NONE. Records are innermost first.
 */
enum rt_kind {
	RT_KIND_NONE = 0,
	RT_KIND_HOTSPOT = 1,
	RT_KIND_V8 = 2,
};

/* x86_64 user registers a runtime keeps frame state in (rt_proc.top_reg). */
enum rt_reg {
	RT_REG_NONE = 0,
	RT_REG_RBX = 1,
	RT_REG_R9 = 2,
	RT_REG_R12 = 3,
	RT_REG_R13 = 4, /* HotSpot's interpreter: the bytecode pointer */
	RT_REG_R14 = 5,
	RT_REG_R15 = 6,
};

#define RT_MAX_RANGES 8

struct rt_range {
	__u64 lo, hi; /* [lo, hi) */
};

/*
 * A HotSpot JVM's compiled frames (C1, C2, native wrappers, runtime stubs)
 * keep no frame pointer (RBP is one more register to C2): the user walk
 * steps them by their code blob's frame size, found through the code
 * heap's segment map (bpf/rt_step.bpf.h rt_hotspot_step). A frame of size
 * S words at SP: its return address at SP + 8S - 8, the caller's RBP saved
 * at SP + 8S - 16. The template interpreter keeps RBP frames, and its
 * caller's SP at fp + 8 * interpreter_frame_sender_sp_offset (a compiled
 * caller's SP is there, not at fp + 16: the adapter that called the
 * interpreter extended the caller's stack). nheaps 0: no step (frame
 * pointers, as before).
 */
#define RT_HS_MAX_HEAPS 4

struct rt_hs_heap {
	__u64 lo, hi; /* [lo, hi): the heap's code (reserved: it never moves) */
	__u64 segmap; /* its segment map: a byte per 2^log2 bytes of code */
	__u32 log2;   /* log2 of its segment size */
	__u32 pad;
};

struct rt_hotspot {
	__u64 code_lo, code_hi; /* CodeCache's bounds: every Java frame's return address is here */
	__u64 interp_lo, interp_hi; /* the template interpreter's code; 0, 0: not known */
	struct rt_hs_heap heaps[RT_HS_MAX_HEAPS];
	__u8 nheaps;	       /* <= RT_HS_MAX_HEAPS; 0: compiled frames not stepped */
	__u8 heap_block;       /* sizeof(HeapBlock): a blob follows its block's header */
	__u16 blob_frame_size; /* offset of CodeBlob::_frame_size (an int: words) */
	__s32 sender_sp_off;   /* bytes from an interpreter frame's fp to its sender's SP */
};

struct rt_proc {
	__u8 kind;    /* enum rt_kind */
	__u8 nranges; /* <= RT_MAX_RANGES */
	__u8 nwords;  /* <= RT_WORDS */
	__u8 pad;
	__u8 top_reg[RT_WORDS]; /* enum rt_reg */
	__s32 off[RT_WORDS];	/* bytes from the frame's frame pointer */
	struct rt_range ranges[RT_MAX_RANGES];
	struct rt_hotspot hs; /* kind RT_KIND_HOTSPOT: its frames' step */
};

/* A runtime record's word 0: the frame's index among the user frames (0: innermost), ... */
#define RT_REC_FRAME(w0) ((__u32)((w0)&0xffff))
/* ... the process's enum rt_kind, ... */
#define RT_REC_KIND(w0)	 ((__u32)(((w0) >> 16) & 0xff))
/* ... and whether the words top_reg names came from registers (the innermost frame, interrupted).
 */
#define RT_REC_TOP_REGS	 (1ull << 24)

/*
 * A sample's user stack from the SP of its frame `frame` on, where the
 * walk met a file the BPF maps had no table for yet (a program's first
 * milliseconds, while its table is built): userspace finishes the walk
 * from these bytes once the table is there (capture/stack_finish.c).
 * `len` bytes were readable (page by page: an NMI cannot fault a page
 * in). A record holds STACK_COPY_MAX bytes at most (its size is a u16):
 * a deeper copy goes on in up to STACK_COPY_CHUNKS records in a row, each
 * after the first marked STACK_COPY_MORE with its place in the copy
 * (`offset`), all before the sample. A compiler's parser runs 300 frames
 * and 60-100 KiB deep (clang-16 building a BPF object).
 */
#define STACK_COPY_MAX	     (60u * 1024)
#define STACK_COPY_CHUNKS    4u
#define STACK_COPY_TOTAL_MAX (STACK_COPY_CHUNKS * STACK_COPY_MAX)
#define STACK_COPY_PC_EXACT  1 /* pc is the interrupted instruction, not a return address */
#define STACK_COPY_MORE	     2 /* the bytes at `offset` of the copy the record before began */

struct stack_copy_event {
	struct event_header hdr;     /* cpu, ts, pid and tid: the sample's */
	__u64 pc, sp, fp;	     /* the registers at that frame */
	__u64 ax;		     /* RAX at the interrupted PC (frame 0: a clone's child) */
	struct unwind_file_key file; /* the file without a table */
	__u16 frame;		     /* pc is ips[kstack_len + frame] of the sample */
	__u16 flags;		     /* STACK_COPY_* */
	__u32 len;		     /* bytes of the stack copied in this record */
	__u32 offset;		     /* where they are in the copy (from sp): 0 but with MORE */
	__u32 pad;
	__u8 bytes[STACK_COPY_MAX];
};

/*
 * Per-CPU counters (one BPF_MAP_TYPE_PERCPU_ARRAY slot): events handed to a
 * ring buffer and events lost because the ring buffer had no room, per kind.
 */
struct bpfprof_stats {
	__u64 emitted[EV_KIND_MAX];
	__u64 dropped[EV_KIND_MAX];
	/* Stacks not copied for want of the CPU's copy budget: walked on with frame pointers. */
	__u64 stack_copy_no_budget;
};

#endif /* BPFPROF_ABI_H */
