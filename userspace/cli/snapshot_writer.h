/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A thread that takes continuous snapshots' windows in order, and its
 * queue. Continuous mode runs two: the symbolizer, which builds a cut
 * window's profile tables (the frame sources are shared with the poll
 * thread under the recording's symbols lock), and the writer, which
 * serializes, compresses, fsyncs and applies the retention. The poll
 * thread only cuts the model, hands the window over and goes back to
 * draining the rings at once, so cold symbol caches, a slow disk or a huge
 * snapshot cannot make the rings overflow.
 *
 * Up to SNAPSHOT_WRITER_QUEUE windows wait behind the one being handled.
 * One slow window (cold caches, an fsync behind other I/O) is absorbed
 * there and the reader never notices; only a thread slower than the
 * interval on average fills its queue, and then the next hand-over waits
 * for room, which bounds memory to that many windows per thread.
 */
#ifndef BPFPROF_SNAPSHOT_WRITER_H
#define BPFPROF_SNAPSHOT_WRITER_H

#include <pthread.h>
#include <stdbool.h>

#define SNAPSHOT_WRITER_QUEUE 2

/* Called on this queue's thread with each job handed over, in order; it owns the job then. */
typedef void (*snapshot_write_fn)(void *ctx, void *job);

struct snapshot_writer {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	void *queue[SNAPSHOT_WRITER_QUEUE]; /* handed over, not yet taken, oldest at head */
	unsigned head, queued;
	bool stop;
	bool started;
	snapshot_write_fn write;
	void *ctx;
};

/* Start the thread, with every signal blocked (they are the poll thread's). 0 or -errno. */
int snapshot_writer_start(struct snapshot_writer *w, snapshot_write_fn write, void *ctx);

/*
 * Wait until the queue has room for one more window. True if it was full
 * (the writer has fallen a whole queue behind, and the caller waited).
 */
bool snapshot_writer_wait_room(struct snapshot_writer *w);

/* Hand `job` to the writer (waiting for room first); jobs are written in order. */
void snapshot_writer_submit(struct snapshot_writer *w, void *job);

/* Write everything queued, then end the thread. Safe after a failed or no start. */
void snapshot_writer_stop(struct snapshot_writer *w);

#endif
