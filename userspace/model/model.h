/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The aggregator: it consumes decoded events (from BPF, or from a synthetic
 * source in tests) and keeps what becomes the profile:
 *
 *  - processes and threads (names, command lines, lifetimes),
 *  - raw frames, interned as (object, offset): the binary an address falls in
 *    and the file offset inside it, so that two processes running the same
 *    binary share frames and symbolization runs once per unique address,
 *  - raw stacks, hash-consed as (prefix, frame) in topological order,
 *  - per-thread samples.
 *
 * Symbolization happens after recording (profile_tables.c): each raw frame
 * becomes one or more profile frames, and each raw stack a profile stack.
 */
#ifndef BPFPROF_MODEL_H
#define BPFPROF_MODEL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../../bpf/bpfprof_abi.h"
#include "../symbols/frame_objects.h"
#include "../util/hashmap.h"
#include "../util/vec.h"

struct symbolizer;
struct model;
struct sched_replay;
struct map_entry;

#define NO_INDEX UINT32_MAX

/* Why a thread left the CPU, from the switch-out's task state and preempt flag. */
enum offcpu_reason {
	OFFCPU_SLEEPING = 0,  /* TASK_INTERRUPTIBLE (and TASK_IDLE kernel waits) */
	OFFCPU_BLOCKED = 1,   /* TASK_UNINTERRUPTIBLE ("D"), killable included */
	OFFCPU_PREEMPTED = 2, /* still runnable: preempted, or schedule() with TASK_RUNNING */
	/*
	 * Not produced from task states: a runnable switch without the preempt
	 * flag is a preemption at return to user mode as often as a
	 * sched_yield(), and nothing at the switch tells them apart.
	 */
	OFFCPU_YIELDED = 3,
	OFFCPU_STOPPED = 4, /* TASK_STOPPED / TASK_TRACED */
	OFFCPU_EXITING = 5, /* TASK_DEAD */
	OFFCPU_OTHER = 6,
	OFFCPU_REASON_MAX,
};

/* "sleeping", "blocked (D)", "preempted", ...: the name shown in profiles. */
const char *offcpu_reason_name(enum offcpu_reason r);
enum offcpu_reason offcpu_reason_from_state(uint32_t prev_state, bool preempted);

struct raw_frame {
	uint32_t object;
	/* Set when the address is a return address: symbolize offset - 1. */
	uint32_t is_return;
	uint64_t offset;
};

struct raw_stack {
	uint32_t prefix; /* NO_INDEX for a root */
	uint32_t frame;
};

enum sample_kind {
	SAMPLE_ON_CPU = 0,
	/*
	 * Synthesized from an off-CPU interval, one per sampling interval the
	 * thread spent off-CPU; its stack is the switch-out stack plus an
	 * OBJ_OFFCPU leaf naming the reason. cpu_delta_ns is the CPU the thread
	 * used since its previous sample (nonzero only for the first sample of
	 * an interval, covering the run up to the switch-out), 0 after. One
	 * row stands for a run of them (thread_sample.repeats).
	 */
	SAMPLE_OFF_CPU = 1,
};

/*
 * Where a wait that has off-CPU samples ended: its switch-in. The
 * front-end's stack chart joins consecutive samples with the same stack
 * into one box, so two waits with the same stack and no on-CPU sample
 * between them (a thread that runs for microseconds between 20 ms reads, a
 * wait4 per child) would read as one long wait; the Firefox emitter writes
 * a null-stack sample here, which ends every box (emit/wait_breaks.c).
 */
struct wait_end {
	uint64_t ts;
	bool resume; /* preempted or yielded: the thread resumes where it stopped */
};

struct thread_sample {
	uint64_t ts;	       /* CLOCK_MONOTONIC ns */
	uint64_t cpu_delta_ns; /* the thread's on-CPU time since its previous sample */
	uint32_t stack;	       /* raw stack, or NO_INDEX */
	uint8_t kind;
	uint8_t ustack_end; /* on-CPU: why its user stack ends there (enum ustack_end) */
	/*
	 * Off-CPU: this row stands for 1 + repeats samples, at ts and every
	 * offcpu_interval_ns after it, all inside the wait (written as the
	 * row's weight). One row per sample would make memory grow with
	 * threads x seconds: 5,000 sleepers over 5 s at 999 Hz are 25 M rows.
	 * In the padding, so a row stays 24 bytes. 0 for every other sample.
	 */
	uint16_t repeats;
};

_Static_assert(sizeof(struct thread_sample) == 24, "a sample row grew");

/* The longest run one row holds. */
#define SAMPLE_REPEATS_MAX UINT16_MAX

/* How many samples the row stands for: its weight in the profile. */
static inline uint64_t sample_weight(const struct thread_sample *s)
{
	return (uint64_t)s->repeats + 1;
}

enum sched_marker_kind {
	SCHED_MARKER_OFFCPU = 0,   /* interval: switch-out .. switch-in */
	SCHED_MARKER_RUNNABLE = 1, /* interval: wakeup (or preemption) .. switch-in */
	SCHED_MARKER_WAKEUP = 2,   /* instant, on the waker: it woke `other` */
};

/*
 * A scheduling marker of one thread. `other` is the waker (OFFCPU and
 * RUNNABLE after a wakeup), the preempting task (after a preemption), or the
 * wakee (WAKEUP); other_tid == 0 && other_pid == 0 with other_comm[0] == 0
 * means unknown. waker_kind says when no thread woke it (a timer, an
 * interrupt, a softirq: enum waker_kind); `other` is then empty.
 */
struct sched_marker {
	uint64_t start, end; /* ns; end == start for instants */
	uint32_t stack;	     /* OFFCPU: raw switch-out stack (no OBJ_OFFCPU leaf); else NO_INDEX */
	uint32_t other_pid, other_tid;
	char other_comm[BPFPROF_COMM_LEN];
	uint8_t kind;	/* enum sched_marker_kind */
	uint8_t reason; /* enum offcpu_reason (OFFCPU and RUNNABLE) */
	bool other_known;
	bool woken_new;	     /* RUNNABLE: the thread's first run after creation */
	uint8_t waker_kind;  /* OFFCPU, RUNNABLE: enum waker_kind of the waker */
	bool other_in_model; /* `other` is a thread of the model (sched_name_others) */
};

/*
 * Per-thread scheduling totals over the whole recording, including what was
 * below the marker threshold (`hidden_*`).
 */
struct sched_summary {
	uint64_t on_cpu_ns;
	uint64_t switches_voluntary, switches_preempted;
	uint64_t offcpu_count, offcpu_ns;		/* all off-CPU intervals */
	uint64_t offcpu_hidden_count, offcpu_hidden_ns; /* those under sched_min_ns */
	uint64_t runnable_count, runnable_ns;
	uint64_t runnable_hidden_count, runnable_hidden_ns;
	/* preemptions and yields at least the threshold long: their Off-CPU marker is their row */
	uint64_t runnable_as_offcpu_count;
	uint64_t wakeups_sent; /* wakeups this thread did to threads in the model */
};

/* A user mapping of a process, translated to an object of the symbolizer. */
struct proc_mapping {
	uint64_t start, end, pgoff;
	uint32_t object;
};

/* A syscall at least the threshold long (--syscall-min). */
struct syscall_marker {
	uint64_t start, end;
	int64_t ret; /* -errno on failure; unknown for a blocked wait */
	uint64_t args[6];
	uint32_t nr;
	/*
	 * From the scheduler (--syscalls=blocking): the wait of the thread
	 * inside the syscall, switch-out to switch-in; no return value.
	 */
	bool blocked_wait;
};

/* Every syscall of a thread, counted in the kernel, per syscall number. */
struct syscall_count {
	uint32_t nr;
	uint32_t shown; /* how many of them are markers (at least the threshold long) */
	uint64_t count;
	uint64_t ns;
};

struct thread {
	uint32_t pid, tid;
	uint32_t process; /* index in model.processes */
	int cpu;	  /* for idle threads (pid 0): the CPU; else -1 */
	char name[BPFPROF_COMM_LEN];
	uint64_t name_ts;	    /* the time of the record `name` came from */
	uint64_t first_ts, last_ts; /* first and last event seen */
	/*
	 * Lifetime from the kernel's fork/exit/exec records: `registered`
	 * when it was created during the recording (at register_ts), `exited`
	 * when it exited or its process image was replaced by an exec.
	 */
	bool registered, exited;
	/* Off the CPU from before the start to the end (model_blocked_throughout). */
	bool blocked_throughout;
	uint64_t register_ts, unregister_ts;
	uint32_t prev; /* the earlier thread with this tid (reuse, exec), or NO_INDEX */
	VEC(struct thread_sample) samples;
	VEC(struct wait_end) wait_ends;		/* in time order */
	VEC(struct sched_marker) sched_markers; /* in time order */
	struct sched_summary sched;
	VEC(struct syscall_marker) syscall_markers; /* in time order after model_finish */
	VEC(struct syscall_count) syscall_counts;   /* by syscall number after model_finish */
	/* The scheduler replay of the thread (model/sched.h), private to it; NULL until needed. */
	struct sched_replay *replay;
};

struct process {
	uint32_t pid;
	char name[BPFPROF_COMM_LEN]; /* main thread's comm */
	char *cmdline;		     /* NULL when unknown (exited before we looked) */
	bool is_idle;		     /* pid 0: per-CPU idle threads */
	uint32_t python_version;     /* its interpreter's PY_VERSION_HEX; 0: none known */
	bool kernel_thread; /* a kernel thread (PF_KTHREAD): read, its records', or its parent's */
	bool maps_read;	    /* /proc/PID/maps was read at least once */
	bool gone;	    /* /proc/PID vanished: do not look again */
	uint64_t maps_read_ts; /* when, to throttle re-reads on unknown addresses */
	uint32_t main_thread;  /* thread index, or NO_INDEX until finish */
	uint64_t first_ts, last_ts;
	/*
	 * The cgroup v2 path as /proc/PID/cgroup writes it ("/system.slice/x"),
	 * NULL when unknown; a forked child that was gone before anyone looked
	 * has its parent's, where it started.
	 */
	char *cgroup;
	/*
	 * Who could name that cgroup: 0 when it and every cgroup above it are
	 * root's (a runtime's), else the uid that owns one of them (a subtree
	 * delegated to a user, who may name it like a container);
	 * CGROUP_OWNER_UNKNOWN when not known.
	 */
	uint32_t cgroup_owner;
	/*
	 * Who runs this image: its real uid when the image was first read
	 * (/proc/PID/status; not the owner of /proc/PID, which is root for a
	 * process that is not dumpable), PROCESS_UID_UNKNOWN when it was gone. The source files its
	 * frames name are said to be this uid's in the profile: `bpfprof view` shows a viewer their
	 * own private files only when their own processes named them.
	 */
	uint32_t uid;
	/*
	 * One process image: a fork or an exec starts a new one (`started`, at
	 * start_ts), an exit or an exec ends it (`ended`, at end_ts). Images of
	 * the same pid (exec, pid reuse) are chained newest first through
	 * `prev`; pid_index points at the newest.
	 */
	bool started, ended;
	uint64_t start_ts, end_ts;
	uint32_t prev;
	VEC(uint32_t) threads;
	VEC(struct proc_mapping) mappings; /* sorted by start, no overlaps */
	/*
	 * The mappings of the image an exec at exec_ts took over (a child that
	 * forked and exec'd before any of its samples came: reuse_image), for
	 * its samples taken before the exec. Samples are read after the side
	 * band, so those come after the exec's record; a child's last steps
	 * in its parent's code (posix_spawn's, vfork's, execve's before the
	 * old memory goes) were raw addresses in the new program's mappings:
	 * 369 of true's 6,304 stacks under vforker, most of make's spawns.
	 */
	VEC(struct proc_mapping) before_exec;
	uint64_t exec_ts;
};

#define CGROUP_OWNER_UNKNOWN UINT32_MAX
#define PROCESS_UID_UNKNOWN  UINT32_MAX

struct model_stats {
	uint64_t samples;
	uint64_t offcpu_samples; /* off-CPU samples: the rows' weights, one per interval */
	uint64_t offcpu_rows;	 /* the rows that hold them (thread_sample.repeats) */
	uint64_t switches;
	uint64_t wakeups;	    /* records, and wakeups folded into samples and switch-outs */
	uint64_t wakeups_folded;    /* of those, the folded: kept in the kernel, no record */
	uint64_t switches_folded;   /* of `switches`, short waits only counted in the kernel */
	uint64_t sched_late_events; /* arrived after their time was replayed */
	uint64_t events_malformed;
	uint64_t unknown_user_addrs;
	uint64_t truncated_stacks;
	uint64_t syscall_markers;
	uint64_t syscalls_counted; /* every syscall in the kernel's totals */
	uint64_t restacks;	   /* samples whose user stack was finished later (a copy's) */
	uint64_t restacks_missed;  /* ... whose sample was no longer in the model */
};

/* Where the model learns about a process it has not seen yet. */
struct proc_source {
	/* Fill name/cmdline; return -ENOENT when the process is gone. */
	int (*read_info)(void *ctx, uint32_t pid, char name[BPFPROF_COMM_LEN], char **cmdline);
	/* Replace the mapping list; -ENOENT when gone. */
	int (*read_maps)(void *ctx, struct model *m, struct process *p);
	/*
	 * The symbolizer object of one executable mapping, or a negative errno
	 * (anonymous memory has none, but says the process runs JIT code).
	 */
	int64_t (*object_for_mapping)(void *ctx, uint32_t pid, const struct map_entry *e);
	/*
	 * The object of the process's JIT code (symbols/jit_maps.h), for
	 * addresses outside every file mapping: in executable memory no file
	 * names (anon_exec), or in no mapping known; offsets in it are raw
	 * addresses. A negative errno when it has none. Optional.
	 */
	int64_t (*jit_object)(void *ctx, uint32_t pid, bool anon_exec, uint64_t ts);
	/*
	 * The Java frames at a user address of a JVM, a call's return address
	 * or the sampled leaf (is_return false) (symbols/java_frames.h
	 * entry, object OBJ_JAVA), read from the JVM while it runs; a negative
	 * errno when it is none (not a JVM, no Java code there). Optional.
	 */
	int64_t (*java_frame)(void *ctx, uint32_t pid, uint32_t uid, uint64_t addr, bool is_return);
	/*
	 * A user frame BPF read a runtime's words for (a record of
	 * bpf/runtime.bpf.h: `kind` its enum rt_kind, `words` what the frame
	 * held), a call's return address or the sampled leaf (is_return
	 * false): its frames' entry under OBJ_JAVA (symbols/java_frames.h),
	 * asked before java_frame and jit_object; a negative errno when the
	 * words name nothing (the frame then goes to those). Optional.
	 */
	int64_t (*runtime_frame)(void *ctx, uint32_t pid, uint32_t uid, uint32_t kind, uint64_t pc,
				 bool is_return, const uint64_t words[RT_WORDS]);
	/* The process pid ended (its last thread exited). Optional. */
	void (*process_exit)(void *ctx, uint32_t pid);
	/*
	 * The cgroup v2 path of a live process, malloc'd, and who owns it (see
	 * process.cgroup_owner); a negative errno if unknown. Optional.
	 */
	int (*read_cgroup)(void *ctx, uint32_t pid, char **path, uint32_t *owner);
	/* Whether the thread still exists (continuous mode drops vanished ones). Optional. */
	bool (*thread_alive)(void *ctx, uint32_t pid, uint32_t tid);
	/* 1 when the process is a kernel thread, 0 when not, -errno when unknown. Optional. */
	int (*read_kernel_thread)(void *ctx, uint32_t pid);
	/* Who runs the process (see process.uid); -errno when unknown. Optional. */
	int (*read_uid)(void *ctx, uint32_t pid, uint32_t *uid);
	/*
	 * A Python frame of the process (its code object's address and the
	 * frame's instruction pointer, bpf/python.bpf.h) as the offset of a
	 * raw frame under OBJ_PYTHON; a negative errno only when out of
	 * memory (an unnamed frame is still a frame). Optional: without it,
	 * the interpreter's C frames stay.
	 */
	int64_t (*python_frame)(void *ctx, uint32_t pid, uint64_t code, uint64_t instr);
	/*
	 * The PY_VERSION_HEX of pid's Python interpreter, 0 when it runs none
	 * known (yet): for frame quality per version. Optional.
	 */
	uint32_t (*python_version)(void *ctx, uint32_t pid);
	/*
	 * A PHP frame (its zend_function's address and ((line << 1) | entry),
	 * bpf/php.bpf.h) as the offset of a raw frame under OBJ_PHP; as
	 * python_frame. Optional: without it, execute_ex stays.
	 */
	int64_t (*php_frame)(void *ctx, uint32_t pid, uint64_t func, uint64_t instr);
	/* A Ruby frame (its iseq and the VM's pc, bpf/ruby.bpf.h) under OBJ_RUBY, likewise. */
	int64_t (*ruby_frame)(void *ctx, uint32_t pid, uint64_t iseq, uint64_t pc);
	void *ctx;
};

/* What records the kernel could not deliver were of: ring records by kind, side-band records. */
enum lost_kind {
	LOST_SAMPLES,
	LOST_SWITCHES,
	LOST_WAKEUPS,
	LOST_SYSCALLS,	/* syscall markers and totals */
	LOST_LIFECYCLE, /* forks, exits, execs and mmaps (the side-band) */
	LOST_KINDS,
};

/*
 * Records lost (a full ring or side-band) somewhere in [start, end]: the
 * time between two reads of the kernel's drop counters, a poll interval.
 */
struct lost_interval {
	uint64_t start, end;
	uint64_t count[LOST_KINDS];
};

/*
 * Intervals closer than this are one (a stalled consumer loses in every
 * poll); past LOST_MAX_INTERVALS every new one joins the last, so that a
 * machine that keeps losing cannot flood every thread with markers.
 */
#define LOST_MERGE_GAP_NS  (100ULL * 1000 * 1000)
#define LOST_MAX_INTERVALS 256

struct model {
	VEC(struct process) processes;
	VEC(struct thread) threads;
	struct hmap pid_index; /* (pid) -> process */
	struct hmap tid_index; /* (tid, cpu for idle) -> thread */

	VEC(struct raw_frame) frames;
	struct hmap frame_index;
	VEC(struct raw_stack) stacks;
	struct hmap stack_index;

	struct proc_source source;
	/*
	 * CPU time a sample stands for: its perf period when the event counts
	 * nanoseconds (cpu-clock), else this nominal 1/frequency.
	 */
	bool period_is_ns;
	uint64_t nominal_period_ns;
	/*
	 * Scheduler accounting: with sched_enabled (switch events are being
	 * captured), threadCPUDelta comes from switch accounting and samples go
	 * through the per-thread replay (model/sched.c); without, a sample's
	 * CPU time is its period, as above.
	 */
	bool sched_enabled;
	bool offcpu_samples;	     /* synthesize off-CPU samples (--no-off-cpu clears) */
	uint64_t offcpu_interval_ns; /* one off-CPU sample per this much off-CPU time */
	uint64_t sched_min_ns;	     /* markers shorter than this are only counted */
	bool syscalls_enabled;	     /* syscall capture was on: counts and markers are real */
	bool syscalls_from_switch;   /* syscall markers from blocking switch-outs (no counts) */
	uint64_t syscall_min_ns;     /* syscalls shorter than this are only counted */
	/* Whole machine (-a): a fork's parent becomes a process of the model too. */
	bool all_processes;
	/* --cgroup: processes are labelled with their cgroup in the profile. */
	bool cgroup_names;
	/*
	 * Forks, exits and execs are fed (model_fork & co.): a process or
	 * thread without a start of its own existed before the recording.
	 * Without them, the first event seen is the best guess of a start.
	 */
	bool lifecycle;
	uint64_t stop_ts; /* when recording stopped; 0 = the last event */
	/*
	 * The kernel's __schedule, [lo, hi): a switch-out stack is taken from a
	 * tracepoint inside it, so its leafmost frames are the BPF program and
	 * the tracepoint machinery. Frames leafward of __schedule are dropped.
	 * 0, 0 = keep everything.
	 */
	uint64_t switch_trim_lo, switch_trim_hi;
	uint64_t start_ts; /* profile zero, CLOCK_MONOTONIC ns */
	uint64_t end_ts;
	struct model_stats stats;
	VEC(struct lost_interval) lost; /* in time order, merged (LOST_MERGE_GAP_NS) */
};

void model_init(struct model *m, const struct proc_source *source, uint64_t start_ts);

/* What a thread blocked all along is known to wait at (model_blocked_throughout). */
struct blocked_wait {
	uint8_t reason; /* enum offcpu_reason, from its state now */
	uint32_t stack; /* from model_task_stack; NO_INDEX when unknown */
	int32_t sys_nr; /* the syscall it sleeps in, from its saved registers; -1: none */
	uint64_t sys_args[6];
};

/*
 * Thread `thread` (an index in m->threads) neither ran nor woke during the
 * recording: it was off the CPU from before the start to the end, in the
 * wait `w` says. With scheduler capture it then gets its wait like any
 * thread: an Off-CPU marker over the recording, its off-CPU samples and
 * (--syscalls=blocking) its syscall's marker. Threads with any sample or
 * event are left as they are. 0 or -ENOMEM.
 */
int model_blocked_throughout(struct model *m, uint32_t thread, const struct blocked_wait *w);

/* Whether `t` neither ran nor woke so far: no sample, no marker, no event (idle threads: no). */
bool model_thread_silent(const struct thread *t);

/*
 * The raw stack of thread `thread` read outside any record (a sleeping
 * thread's, capture/task_stacks.h): ips as a switch record's, kstack_len
 * kernel frames then ustack_len user frames, with SAMPLE_* flags, and
 * py_len Python frames at py (two words each, as a record's). 0 with
 * *stack set, or -ENOMEM / -EINVAL.
 */
int model_task_stack(struct model *m, uint32_t thread, const uint64_t *ips, uint32_t kstack_len,
		     uint32_t ustack_len, const uint64_t *py, uint32_t py_len, uint32_t flags,
		     uint64_t ts, uint32_t *stack);
void model_free(struct model *m);

/*
 * Records were lost between `start` and `end` (after the intervals already
 * known): count[k] of each kind. Merged into the last interval when within
 * LOST_MERGE_GAP_NS of it, or when there are LOST_MAX_INTERVALS. 0 or -ENOMEM.
 */
int model_add_lost(struct model *m, uint64_t start, uint64_t end, const uint64_t count[LOST_KINDS]);

/* Feed one ring buffer record; returns 0, or -ENOMEM (anything else is counted and skipped). */
int model_add_record(struct model *m, const void *data, size_t size);
int model_add_sample(struct model *m, const struct sample_event *e, size_t size);
/*
 * A sample added before (the same pid, tid and ts) gets the stack of `e`
 * and the end its flags say: its user stack finished from a stack copy
 * (capture/stack_finish.h), the sample's place in time unchanged. One no
 * longer in the model (a window cut since) is counted (restacks_missed).
 * 0 or -ENOMEM.
 */
int model_sample_restack(struct model *m, const struct sample_event *e, size_t size);
int model_add_switch(struct model *m, const struct switch_event *e, size_t size);
int model_add_wakeup(struct model *m, const struct wakeup_event *e, size_t size);

/*
 * Replay buffered scheduler events with ts <= watermark, in time order per
 * thread, into samples, CPU deltas and markers. Events from different CPUs'
 * ring buffers arrive out of order; the caller passes a watermark before
 * which every ring has been drained. model_finish replays the rest.
 */
int model_sched_flush(struct model *m, uint64_t watermark);

/*
 * Process and thread lifetimes and executable mappings, from the kernel's
 * side-band records (capture/sideband.c), applied in time order. Each
 * returns 0 or -ENOMEM.
 *
 * A fork of a new process starts an image that inherits its parent's
 * mappings; an exec ends the pid's image and starts a new one (a new process
 * in the profile, same pid); a comm change without exec renames the thread.
 * Mappings of processes started during the recording come only from here,
 * so they are known even when the process exits before anyone looks.
 */
int model_fork(struct model *m, uint32_t ppid, uint32_t ptid, uint32_t pid, uint32_t tid,
	       uint64_t ts);
int model_exit(struct model *m, uint32_t pid, uint32_t tid, uint64_t ts);
int model_comm(struct model *m, uint32_t pid, uint32_t tid, const char *comm, bool exec,
	       uint64_t ts);
int model_mmap(struct model *m, uint32_t pid, uint64_t ts, const struct map_entry *e);

/* Interning; each returns the index or -ENOMEM. */
int64_t model_intern_frame(struct model *m, uint32_t object, uint64_t offset, bool is_return);
int64_t model_intern_stack(struct model *m, uint32_t prefix, uint32_t frame);

struct process *model_process(struct model *m, uint32_t pid, uint64_t ts);
/*
 * Read pid's mappings from /proc now, into its newest image (made at ts if
 * there is none): for a process held before its exec (`-- COMMAND`), whose
 * image until then is what /proc shows only before it is released.
 */
void model_read_process_maps(struct model *m, uint32_t pid, uint64_t ts);
struct thread *model_thread(struct model *m, uint32_t pid, uint32_t tid, int cpu, uint64_t ts);
/*
 * The newest thread entry of `tid` (any image, any pid), without creating
 * one; NULL when none. Not for the idle task (tid 0, one per CPU).
 */
struct thread *model_find_thread(struct model *m, uint32_t tid);
/* The thread `tid` of `pid` at ts, without creating one; NULL when the model has none. */
struct thread *model_thread_at(struct model *m, uint32_t pid, uint32_t tid, uint64_t ts);
/*
 * The thread that stands for process `pidx` (its main thread): the one
 * model_finish chose, or, in a model where that is missing or not one of
 * the process's threads, its earliest thread (first seen, then lowest tid);
 * NO_INDEX for a process without threads.
 */
uint32_t model_main_thread(const struct model *m, uint32_t pidx);
/* The newest image of `pid`, without creating one; NULL when none. */
struct process *model_find_process(struct model *m, uint32_t pid);

/*
 * After the last event: replay the scheduler events still queued and end
 * every thread's replay at stop_ts (or end_ts), give every process exactly
 * one main thread, sort each thread's samples and markers by time, and name
 * processes. Idempotent.
 */
int model_finish(struct model *m);

#endif
