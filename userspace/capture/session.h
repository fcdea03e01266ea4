/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A recording session: loads and configures the BPF object, creates one ring
 * buffer per CPU, attaches the programs, and drains events into a callback.
 */
#ifndef BPFPROF_SESSION_H
#define BPFPROF_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../util/vec.h"
#include "perf_events.h"

struct bpfprof_bpf;
struct ring_buffer;

typedef int (*session_record_fn)(void *ctx, const void *data, size_t size);

/* One --cgroup target: the tasks in this cgroup v2 directory and below it. */
struct session_cgroup {
	int fd;		/* the open directory */
	uint64_t id;	/* its cgroup id (kernfs node id) */
	uint32_t level; /* its depth below the v2 root (0: the root) */
};

struct session_config {
	unsigned freq_hz;
	/* Bytes per CPU ring (rounded up to a power of two, at least a page); 0: sized for the rate
	 */
	size_t ring_bytes;
	bool include_idle;
	const uint32_t *tgids; /* filter to these processes; NULL = all */
	size_t nr_tgids;
	bool follow_forks; /* children of the targets become targets */
	/* Only tasks inside one of these cgroup trees (at most BPFPROF_MAX_CGROUPS); none: all */
	const struct session_cgroup *cgroups;
	size_t nr_cgroups;
	bool sched;	    /* capture context switches and wakeups */
	bool offcpu_stacks; /* with sched: take the stack of a thread leaving the CPU */
	/*
	 * User stacks from the binaries' .eh_frame (bpf/unwind.bpf.h), loaded
	 * for the targets (every process without tgids) and kept up to date
	 * through lifecycle_feed; else frame pointers.
	 */
	bool unwind_cfi;
	/*
	 * With unwind_cfi: tables kept across runs (unwind/table_cache.h) under
	 * state_dir/unwind-cache, at most unwind_cache_bytes (0: none).
	 */
	const char *state_dir;
	uint64_t unwind_cache_bytes;
	/*
	 * With unwind_cfi: bytes of a sample's stack copied where its walk met
	 * a file whose table is still being built (--stack-copy); 0: none.
	 */
	uint32_t stack_copy_bytes;
	/* Bytes of the unwind store (slots and rules); 0: UNWIND_MEMORY_DEFAULT. */
	uint64_t unwind_memory;
	/* with sched: waits shorter than this are not shown (their wakeups need no record) */
	uint64_t sched_min_ns;
	bool syscalls; /* count syscalls; those at least syscall_min_ns long are records */
	/* Name the syscall a thread sleeps in at its switch-out (needs `sched`). */
	bool syscalls_from_switch;
	uint64_t syscall_min_ns;
	session_record_fn on_record;
	void *ctx;
	/* Python frames (with unwind_cfi): the processes' registry to fill; NULL: none. */
	struct python_procs *python;
	/* PHP frames (with unwind_cfi): the processes' registry to fill; NULL: none. */
	struct php_procs *php;
	/* Ruby frames (with unwind_cfi): the processes' registry to fill; NULL: none. */
	struct ruby_procs *ruby;
	/* Runtime frames read in BPF (with unwind_cfi): the runtime modules that answer (copied).
	 */
	const struct rt_module *rt_modules;
	int rt_nmodules;
};

struct unwind_loader;
struct stack_finish;
struct unwind_proc;
struct python_loader;
struct python_procs;
struct php_loader;
struct php_procs;
struct ruby_loader;
struct ruby_procs;
struct rt_loader;
struct rt_module;
struct bpf_program;
struct bpf_iter_attach_opts;

/* A ring record held for the next drain (a copy). */
struct session_deferred {
	void *data;
	size_t size;
	uint64_t ts;
};

struct session {
	struct bpfprof_bpf *skel;
	struct unwind_loader *unwind; /* unwind_cfi: the tables the BPF unwinder reads */
	struct python_loader *py;     /* Python processes, when config.python */
	struct ruby_loader *rbl;      /* Ruby processes, when config.ruby */
	struct rt_loader *rt;	      /* JIT runtimes, when config.rt_nmodules */
	struct php_loader *php;	      /* PHP processes, when config.php */
	struct ring_buffer *rb;
	int *ring_fds;
	int nr_rings;
	size_t ring_bytes;
	struct perf_sampler sampler;
	bool sched;		   /* the switch/wakeup programs are loaded */
	bool sched_attached;	   /* ... and attached (session_start) */
	bool syscalls;		   /* the syscall programs are loaded */
	bool syscalls_from_switch; /* switch-outs name the syscall they sleep in */
	bool syscalls_attached;	   /* ... and attached */
	bool fold_waits;   /* short waits are counted in the kernel (bpf/fold_waits.bpf.h) */
	bool plain_claims; /* ... and claimed without cmpxchg but while flushing (held_waits.c) */
	bool cg_kfunc;	   /* other tasks' cgroups are tested with the 6.5+ kfunc */
	bool task_stacks;  /* the sleeping-thread stack iterator is loaded (task_stacks.h) */
	bool *online;
	int nr_possible, nr_online;
	session_record_fn on_record;
	void *record_ctx;
	int record_error; /* first error returned by on_record */
	/*
	 * Called before each drain of the BPF rings (0 or -errno, which stops
	 * the recording): what must be known before the records are decoded,
	 * e.g. the mappings a sample's addresses fall in, is read here.
	 */
	int (*before_drain)(void *ctx);
	void *before_drain_ctx;
	/*
	 * CLOCK_MONOTONIC time just before the last full drain: every record
	 * written before it has been handed to on_record (give or take a
	 * record being written at that instant; callers keep a margin).
	 */
	uint64_t drained_before_ns;
	/*
	 * The longest time between the starts of two drains since it was last
	 * taken (session_take_longest_drain_gap): how long the rings went
	 * unread, which with the poll loop's timeout is what decides overflow.
	 */
	uint64_t longest_drain_gap_ns;
	/*
	 * Full drains so far: read by a thread that symbolizes a snapshot
	 * (recording_build_tables), to say the rings were read on meanwhile.
	 */
	_Atomic uint64_t drains;
	/*
	 * Records written after the side-band was last drained (ts past
	 * defer_after_ns) wait for the next drain: a sample of a process that
	 * exec'd a moment ago would otherwise be decoded before its exec and
	 * mmaps, and its frames named against the wrong image, or none.
	 */
	uint64_t defer_after_ns;
	VEC(struct session_deferred) deferred;
	struct stack_finish *finish;   /* stack copies finished (session_copies.c); NULL: none */
	struct unwind_proc *copy_proc; /* scratch: a copied sample's process's mappings */
};

struct session_stats {
	uint64_t emitted[8];
	uint64_t dropped[8];
	uint64_t stack_copy_no_budget; /* stacks not copied: no budget (CPU, user) or ring room */
};

/*
 * Load the BPF object (sched, syscall and unwind choices made from `cfg`),
 * create and install one ring buffer per possible CPU, hand the kernel the
 * target pids and cgroups, load the unwind tables (--unwind cfi), and
 * attach the fork and exec tracepoints when following forks or unwinding
 * with CFI. The scheduler and syscall programs and the sampler are attached
 * by session_start. 0, or a negative errno after a one-line error.
 */
int session_open(struct session *s, const struct session_config *cfg);
struct sideband;
/* Make session_poll wake on the side-band's records too. 0 or -errno. */
int session_watch_fds(struct session *s, struct sideband *sb);
/* Add a target process (before or after start). */
int session_add_target(struct session *s, uint32_t tgid);
/* Start capturing context switches and wakeups (when configured), then sampling. */
int session_start(struct session *s, unsigned freq_hz, enum sample_event_kind kind);
/* Wait up to timeout_ms for events and hand them to the callback; >= 0 or -errno. */
int session_poll(struct session *s, int timeout_ms);
/* The longest gap between two drains since the last call (0: none yet); starts anew. */
uint64_t session_take_longest_drain_gap(struct session *s);
/* Stop sampling and drain what is left in the ring buffers. */
void session_stop(struct session *s);
void session_read_stats(struct session *s, struct session_stats *out);
/*
 * After session_stop: hand the live threads' syscall totals to the record
 * callback, as EV_SYSCALL_TOTALS records (read through a task iterator).
 * 0 or -errno.
 */
int session_dump_syscall_totals(struct session *s);
/*
 * Run iterator `prog` once (opts may be NULL) and hand what it writes, as
 * whole records of rec_size bytes, to on_rec (NULL: only run it). 0 or -errno.
 */
int session_run_iter(struct bpf_program *prog, const struct bpf_iter_attach_opts *opts, void *rec,
		     size_t rec_size, session_record_fn on_rec, void *ctx);
void session_close(struct session *s);

/* A record to the callback, through the stack copies' join (session.c). */
void session_dispatch(struct session *s, void *data, size_t size);
/* session_copies.c: the stack copies' knobs before load (0 bytes: none). */
void session_copies_configure(struct session *s, uint32_t bytes);
/* After the unwind tables are open: 0, or -ENOMEM (the recording goes on without copies). */
int session_copies_open(struct session *s);
/* Finish the copies whose tables came; `last`: the end, give up on the rest. */
void session_copies_poll(struct session *s, bool last);
void session_copies_close(struct session *s);

#endif
