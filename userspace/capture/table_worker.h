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
 */
#ifndef BPFPROF_CAPTURE_TABLE_WORKER_H
#define BPFPROF_CAPTURE_TABLE_WORKER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "../unwind/table_store.h"
#include "../util/vec.h"

#define TABLE_WORKER_DUTY     0.5
#define TABLE_WORKER_BURST_NS (4ull * 1000000000ull)

struct table_job {
	struct unwind_file_key key;
	struct unwind_file_id id;
	int fd;	    /* the worker's to close */
	char *path; /* as the process maps it, for the log */
};

struct table_done {
	struct unwind_file_key key;
	struct unwind_file_id id;
	char *path;	       /* the taker's to free */
	int err;	       /* 0 or -ENOMEM */
	struct unwind_built b; /* the taker's to free */
};

struct table_worker {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool started, stop, busy;
	VEC(struct table_job) jobs; /* from `head` on, in order */
	size_t head;
	VEC(struct table_done) done;
	/* The CPU budget: build time it may spend now (ns, may go negative). */
	double credit_ns;
	uint64_t credit_at; /* CLOCK_MONOTONIC of the last refill */
};

/* 0 or -errno (no thread: the caller builds its tables itself). */
int table_worker_start(struct table_worker *w);

/* Queue the build of `f`'s table from `fd` (taken, closed even on error). 0 or -ENOMEM. */
int table_worker_submit(struct table_worker *w, const struct unwind_store_file *f, int fd,
			const char *path);

/* The builds finished since the last call: moved to *out (malloc'd), *n of them. */
void table_worker_take(struct table_worker *w, struct table_done **out, size_t *n);

/* Wait up to timeout_ms until nothing is queued or being built; whether it is so. */
bool table_worker_wait_idle(struct table_worker *w, int timeout_ms);

/* Drop what is queued, finish the build under way, end the thread; free what is left. */
void table_worker_stop(struct table_worker *w);

#endif
