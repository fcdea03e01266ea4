/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The thread that writes continuous snapshots. The poll thread cuts the
 * model and symbolizes the window (the symbolizer is its own), then hands
 * the finished window over and goes back to draining the rings at once:
 * serializing, compressing, fsync and the retention happen here, so a slow
 * disk or a huge snapshot cannot make the rings overflow. One window is in
 * flight at a time; the next cut waits for it, which bounds memory.
 */
#ifndef BPFPROF_SNAPSHOT_WRITER_H
#define BPFPROF_SNAPSHOT_WRITER_H

#include <pthread.h>
#include <stdbool.h>

/* Called on the writer thread with each job handed over; it owns and frees the job. */
typedef void (*snapshot_write_fn)(void *ctx, void *job);

struct snapshot_writer {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	void *job; /* handed over, not yet taken */
	bool busy; /* a job is handed over or being written */
	bool stop;
	bool started;
	snapshot_write_fn write;
	void *ctx;
};

/* Start the thread, with every signal blocked (they are the poll thread's). 0 or -errno. */
int snapshot_writer_start(struct snapshot_writer *w, snapshot_write_fn write, void *ctx);

/* Wait until the job in flight, if any, is written. True if there was one to wait for. */
bool snapshot_writer_wait_idle(struct snapshot_writer *w);

/* Hand `job` to the writer (waiting for the previous one first). */
void snapshot_writer_submit(struct snapshot_writer *w, void *job);

/* Write what is in flight, then end the thread. Safe after a failed or no start. */
void snapshot_writer_stop(struct snapshot_writer *w);

#endif
