/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Feeds the BPF CFI unwinder (bpf/unwind.bpf.h): the unwind tables of the
 * executable files processes map, built once per file (unwind/table_store)
 * on a worker thread (table_worker) and published to the BPF maps from the
 * draining thread when ready, rows first, so the unwinder never sees a file
 * without its rows. A process's mappings are published at once: until its
 * files' tables are, their frames are walked with frame pointers.
 */
#ifndef BPFPROF_CAPTURE_UNWIND_LOADER_H
#define BPFPROF_CAPTURE_UNWIND_LOADER_H

#include <stddef.h>
#include <stdint.h>

#include "../unwind/table_store.h"
#include "../util/hashmap.h"
#include "key_shares.h"
#include "proc_shares.h"
#include "table_worker.h"
#include "unwind_misses.h"

struct python_loader;
struct php_loader;
struct ruby_loader;
struct rt_loader;

/* A process's mappings read for one sample serve its samples this long after. */
#define UNWIND_LOADER_PROC_COPIES    64
#define UNWIND_LOADER_PROC_FRESH_NS  (10ull * 1000000ull)
/*
 * For stamping the files a sample's PCs fall in, a copy this old serves:
 * a mapping changed since only stamps a file too many or too few for a
 * moment (a file just mapped is pinned anyway, see UNWIND_STORE_PIN_NS).
 */
#define UNWIND_LOADER_STAMP_FRESH_NS (1000ull * 1000000ull)
/* Processes gone whose mappings are kept for their stack copies (unwind_loader_proc_now). */
#define UNWIND_LOADER_GONE	     8
/*
 * Builds waiting for slots in quarantine (evicted for them), at most, and
 * the times each is tried (a try per refresh once the quarantine is over).
 */
#define UNWIND_LOADER_PARKED	     16
#define UNWIND_LOADER_PARK_TRIES     4
/* Between unpublishing the tables that move and moving them (a BPF walk takes microseconds). */
#define UNWIND_LOADER_GRACE_US	     1000
/*
 * Compactions this far apart at least: each unpublishes every table for a
 * few ms and moves up to the whole store, so files that keep coming (one
 * user's, made to) must not make the drain thread do it all the time; a
 * table refused meanwhile is FULL, and built again at its next mapping.
 */
#define UNWIND_LOADER_COMPACT_GAP_NS (250ull * 1000000ull)

/* A build waiting for the slots evicted for it (see unwind_loader.c: place). */
struct unwind_parked {
	struct table_done d;
	unsigned tries;
};

struct unwind_loader {
	struct unwind_store store;
	union unwind_slot *slots; /* the BPF arrays, mapped */
	struct unwind_rule *rules;
	size_t slots_bytes, rules_bytes;
	int files_fd, procs_fd;
	bool vdso_published;
	struct table_worker worker; /* not started: tables are built on the caller's thread */
	struct table_cache cache;   /* tables kept across runs; dir -1: none */
	struct hmap over_budget;    /* files said to be over their budget, said once */
	char longest_path[256];	    /* the file whose table took longest, for the summary */
	size_t unpublished;	    /* files or processes the BPF maps had no room for */
	VEC(uint32_t) dirty;	    /* processes whose executable mappings changed */
	struct unwind_proc *proc;   /* scratch for one process's mappings */
	unsigned compactions;	    /* the store compacted, its free slots in pieces */
	uint64_t compacted_at;	    /* CLOCK_MONOTONIC of the last (UNWIND_LOADER_COMPACT_GAP_NS) */
	VEC(struct unwind_parked) parked;
	size_t evicted_at_compaction; /* store.stats.evicted when it was last compacted */
	/* Python processes among those read (NULL: no Python frames); not owned. */
	struct python_loader *py;
	/* PHP processes among those read (NULL: no PHP frames); not owned. */
	struct php_loader *php;
	/* Ruby processes among those read (NULL: no Ruby frames); not owned. */
	struct ruby_loader *rb;
	/* JIT runtimes among those read (NULL: none); not owned. */
	struct rt_loader *rt;
	/* Who holds unwind_procs and py_procs: one user cannot take them all. */
	struct proc_shares shares;
	/*
	 * Processes' mappings as the BPF map holds them (what the unwinder
	 * used), for the files every sample falls in (unwind_store_sampled,
	 * from a copy up to UNWIND_LOADER_STAMP_FRESH_NS old, read again at
	 * most once a second per process: the second is in its proc_shares
	 * entry) and the files stacks that stopped early met without rows:
	 * processes' copies, each read again for those after
	 * UNWIND_LOADER_PROC_FRESH_NS of sample time, so that a burst of
	 * samples costs one read each.
	 */
	struct unwind_proc_copy {
		uint32_t pid;
		bool has;	  /* the map had an entry for it */
		uint64_t read_ts; /* the sample time it was read at; 0: never */
		struct unwind_proc *proc;
	} proc_copies[UNWIND_LOADER_PROC_COPIES];
	/* The files stacks that stopped early met without rows (issue 38). */
	struct unwind_misses misses;
	/* bpf/unwind.bpf.h's unwind_no_table, with stack copies; -1: none. */
	int no_table_fd;
	/* Its entries by user (capacity 0: not read yet). */
	struct key_shares no_table;
	/* A table's publishing failed: tried again at the next refresh. */
	bool publish_again;
	/* With stack copies: the last processes gone, their mappings as they were. */
	struct unwind_proc_copy gone[UNWIND_LOADER_GONE];
	unsigned gone_next;
};

/*
 * Map the BPF maps (slots_fd: an mmapable array of `capacity` slots;
 * rules_fd: one of UNWIND_MAX_RULES rules; files_fd: file -> its run of
 * slots; procs_fd: tgid -> mappings; capped_fd: proc_uids_capped).
 * 0 or -errno.
 */
int unwind_loader_open(struct unwind_loader *l, int slots_fd, int rules_fd, int files_fd,
		       int procs_fd, int capped_fd, size_t capacity);
/*
 * A sample of process `pid` came at `ts_ns` (its CLOCK_MONOTONIC stamp),
 * its user stack `uips` (n PCs): one refused an entry of the per-process
 * maps (proc_shares.h) is read again at the next refresh, to be admitted,
 * and the files the PCs fall in are stamped sampled by its user (every
 * sample's; see unwind_store_sampled). A stack that did not end at a root (`ustack_end`, enum
 * ustack_end) names the file it met without rows (misses).
 */
void unwind_loader_sampled(struct unwind_loader *l, uint32_t pid, uint64_t ts_ns,
			   unsigned ustack_end, const uint64_t *uips, size_t n);
/*
 * A stack that did not reach a root (`ustack_end`) names the file it met
 * without rows, as unwind_loader_sampled does: for a sample whose stack
 * was copied, once its copy was walked or given up (stack_finish.h).
 */
void unwind_loader_note_miss(struct unwind_loader *l, uint32_t pid, uint64_t ts_ns,
			     unsigned ustack_end, const uint64_t *uips, size_t n);
/*
 * Process pid's mappings as the BPF map holds them now (read into
 * *scratch), or as they were when it exited, for one of the last
 * UNWIND_LOADER_GONE gone with stack copies on; NULL when neither.
 */
const struct unwind_proc *unwind_loader_proc_now(struct unwind_loader *l, uint32_t pid,
						 struct unwind_proc *scratch);
/*
 * Why `miss`'s file had no rows for its samples, for people: "its table
 * came 92 ms after its first sample", "no CFI", "past the rows one file
 * may take", ...
 */
void unwind_loader_miss_reason(const struct unwind_loader *l, const struct unwind_miss *miss,
			       char *buf, size_t size);
/*
 * Read process `pid`'s executable mappings now: load their files' tables
 * and publish its mappings. A gone process, or one the maps have no room
 * for, is no error (its frames use frame pointers). 0 or -ENOMEM.
 */
int unwind_loader_add_process(struct unwind_loader *l, uint32_t pid);
/* The process mapped an executable file: read it again at the next refresh. */
int unwind_loader_mark(struct unwind_loader *l, uint32_t pid);
/*
 * Publish the tables the worker finished, then read the processes marked
 * since the last refresh. 0 or -ENOMEM.
 */
int unwind_loader_refresh(struct unwind_loader *l);
/*
 * Wait up to timeout_ms for the tables queued so far, publishing them:
 * for a recording's start, where the first samples of a command would
 * otherwise find no table. Whether all were done.
 */
bool unwind_loader_settle(struct unwind_loader *l, int timeout_ms);

/*
 * A descriptor that is readable while built tables wait to be published
 * (unwind_loader_refresh takes them), for the draining loop's epoll; -1
 * when there is none.
 */
int unwind_loader_wake_fd(const struct unwind_loader *l);
/*
 * Take tables from the cache under `state_dir` (unwind/table_cache.h), of at
 * most `bytes`, and keep those built there. Without it (a warning said why),
 * every table is built. Called before the first file is added.
 */
void unwind_loader_use_cache(struct unwind_loader *l, const char *state_dir, uint64_t bytes);
/*
 * What the unwind store holds, for the recording's summary: "14.7 of 32 MiB
 * (3.52M rows in 84 tables, 2412 rules); 3 evicted, 0 refused".
 */
void unwind_loader_store_line(const struct unwind_loader *l, char *buf, size_t size);
/* At -v: files, rows, build time, the slowest file; tables from the cache and built. */
void unwind_loader_log_summary(const struct unwind_loader *l);
/* A process forked: the child runs what its parent runs (its Python interpreter too). */
int unwind_loader_forked(struct unwind_loader *l, uint32_t parent, uint32_t child);
/* The process exited: its mappings go. */
void unwind_loader_forget(struct unwind_loader *l, uint32_t pid);
/* The mapping of `p` (sorted by start) that holds `pc`, or NULL. */
const struct unwind_mapping *unwind_proc_mapping_of(const struct unwind_proc *p, uint64_t pc);
/* Every process's: for -a. */
int unwind_loader_add_all(struct unwind_loader *l);
void unwind_loader_close(struct unwind_loader *l);

#endif
