/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unwind tables built on a thread of their own (issue 27): a binary whose
 * table is slow to build (a hostile one, or just a big one) never holds up
 * the thread that drains the rings, so it never costs samples. The worker
 * only reads files and builds tables (unwind/file_table); the store and the
 * BPF maps stay the draining thread's, which takes the finished tables and
 * publishes them (capture/unwind_loader). Until then that file's frames are
 * walked with frame pointers, as for a file never read.
 *
 * The worker runs within a CPU budget over time: on average at most
 * TABLE_WORKER_DUTY of one CPU, in bursts of up to TABLE_WORKER_BURST_NS
 * (a recording's start, with every process's files). It is not niced: on a
 * busy machine a niced worker starved, and the tables of short-lived
 * programs came after they had ended.
 *
 * What another user queues is bounded (issue 27): at most
 * TABLE_WORKER_MAX_JOBS queued, TABLE_WORKER_MAX_JOBS_PER_UID of one file
 * owner's (files of a user's subordinate uids, util/uid_owner.h, are the
 * user's; past that the file is walked with frame pointers and queued
 * again when a process maps it later), owners served in turn (round robin
 * by uid), and at most TABLE_WORKER_MAX_FDS descriptors held for queued
 * jobs: the others reopen the process's /proc/PID/map_files link when they
 * start, and are built only if it is still the file queued (inode, size,
 * times).
 */
#ifndef BPFPROF_CAPTURE_TABLE_WORKER_H
#define BPFPROF_CAPTURE_TABLE_WORKER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "../unwind/table_cache.h"
#include "../unwind/table_store.h"
#include "../util/uid_owner.h"
#include "../util/vec.h"

#define TABLE_WORKER_DUTY     0.5
#define TABLE_WORKER_BURST_NS (4ull * 1000000000ull)

#define TABLE_WORKER_MAX_JOBS	      4096
#define TABLE_WORKER_MAX_JOBS_PER_UID 256
#define TABLE_WORKER_MAX_FDS	      64
/* How long stopping waits for a build to notice (it polls every few ms). */
#define TABLE_WORKER_STOP_MS	      10000

struct table_job {
	struct unwind_file_key key;
	struct unwind_file_id id;
	uint32_t uid; /* the file's owner */
	int fd;	      /* the worker's to close; -1: reopened through `link` */
	bool hot;     /* samples met the file without its table: built first */
	char *path;   /* as the process maps it, for the log */
	char *link;   /* /proc/PID/map_files/START-END */
};

struct table_done {
	struct unwind_file_key key;
	struct unwind_file_id id;
	char *path; /* the taker's to free */
	/* 0, -ENOMEM, or -ESTALE: the file could not be opened again as queued. */
	int err;
	struct unwind_built b; /* the taker's to free */
};

struct table_worker {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond; /* on CLOCK_MONOTONIC */
	bool started, stop, busy;
	VEC(struct table_job) jobs; /* in the order queued; taken by owner in turn */
	size_t fds;		    /* jobs holding a descriptor */
	/*
	 * Readable while finished builds wait to be taken: the draining loop
	 * polls it, so a table is published as soon as it is built, not at
	 * the loop's next timeout (tens of ms of a new program's samples).
	 */
	int wake_fd;
	size_t max_fds;	   /* at most: TABLE_WORKER_MAX_FDS, less under a low open-file limit */
	uint32_t last_uid; /* the owner served last */
	/*
	 * Files of a user's subordinate uids (its containers' images) queue as
	 * that user's; NULL: each uid its own. Set after table_worker_start.
	 */
	const struct uid_owners *owners;
	/*
	 * Tables kept across runs (unwind/table_cache.h), NULL: none. A job's
	 * table is taken from there when it is there, else built and written
	 * there. Set after table_worker_start, before the first job.
	 */
	struct table_cache *cache;
	/* Under the lock: tables taken from the cache and built, and the CPU time of each. */
	size_t from_cache, built;
	uint64_t from_cache_ns, built_ns;
	/* Room for every queued job's result is reserved: a build never ends unsaid. */
	VEC(struct table_done) done;
	/* The CPU budget: build time it may spend now (ns, may go negative). */
	double credit_ns;
	uint64_t credit_at;	  /* CLOCK_MONOTONIC of the last refill */
	struct cfi_budget budget; /* what one file's build may cost (its stop flag: `stop`) */
};

/* 0 or -errno (no thread: the caller builds its tables itself). */
int table_worker_start(struct table_worker *w);
/* The same, each file built within `budget` (the store's: unwind_store_budget). */
int table_worker_start_within(struct table_worker *w, const struct cfi_budget *budget);

/*
 * Queue the build of `f`'s table from `fd` (taken, closed even on error),
 * opened through `link`. 0, -ENOMEM, or -EBUSY when the queue (or the
 * owner's share of it) is full.
 */
/*
 * Samples met the file `key` without its table: its queued job, if any,
 * goes before every job no sample waits on (issue 38: clang's libLLVM and
 * libclang-cpp, queued behind libz3 and a dozen small libraries, came
 * 400 ms after their first samples). Owners still take turns among the
 * hot jobs, so one user's sampled files cannot hold back another's. True
 * when a queued job was found.
 */
bool table_worker_hurry(struct table_worker *w, const struct unwind_file_key *key);

int table_worker_submit(struct table_worker *w, const struct unwind_store_file *f, int fd,
			const char *path, const char *link);

/* The builds finished since the last call: moved to *out (malloc'd), *n of them. */
void table_worker_take(struct table_worker *w, struct table_done **out, size_t *n);

/* Wait up to timeout_ms until nothing is queued or being built; whether it is so. */
bool table_worker_wait_idle(struct table_worker *w, int timeout_ms);

/*
 * Drop what is queued, stop the build under way (its budget's stop flag),
 * end the thread; free what is left. True when no thread is left; false
 * when a stuck one (a read that hangs) was left behind: it may still use
 * what the worker points to (cache, owners), which must then stay as it
 * is, never freed or closed.
 */
bool table_worker_stop(struct table_worker *w);

#endif
