// SPDX-License-Identifier: BSD-2-Clause
#include "snapshot_writer.h"

#include <errno.h>
#include <string.h>

#include "../util/quiet_thread.h"

static void *writer_main(void *arg)
{
	struct snapshot_writer *w = arg;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		void *job;

		while (!w->queued && !w->stop)
			pthread_cond_wait(&w->cond, &w->lock);
		if (!w->queued)
			break; /* stop, and nothing left */
		job = w->queue[w->head];
		w->queue[w->head] = NULL;
		w->head = (w->head + 1) % SNAPSHOT_WRITER_QUEUE;
		w->queued--;
		/* Room for the next cut as soon as the job is taken, not once it is written. */
		pthread_cond_broadcast(&w->cond);
		pthread_mutex_unlock(&w->lock);
		w->write(w->ctx, job);
		pthread_mutex_lock(&w->lock);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

int snapshot_writer_start(struct snapshot_writer *w, snapshot_write_fn write, void *ctx)
{
	int err;

	memset(w, 0, sizeof(*w));
	w->write = write;
	w->ctx = ctx;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	err = quiet_thread_start(&w->thread, writer_main, w);
	if (err) {
		pthread_cond_destroy(&w->cond);
		pthread_mutex_destroy(&w->lock);
		return err;
	}
	w->started = true;
	return 0;
}

bool snapshot_writer_wait_room(struct snapshot_writer *w)
{
	bool waited = false;

	if (!w->started)
		return false;
	pthread_mutex_lock(&w->lock);
	while (w->queued == SNAPSHOT_WRITER_QUEUE) {
		waited = true;
		pthread_cond_wait(&w->cond, &w->lock);
	}
	pthread_mutex_unlock(&w->lock);
	return waited;
}

void snapshot_writer_submit(struct snapshot_writer *w, void *job)
{
	if (!w->started) {
		w->write(w->ctx, job); /* no thread: write it here */
		return;
	}
	pthread_mutex_lock(&w->lock);
	while (w->queued == SNAPSHOT_WRITER_QUEUE)
		pthread_cond_wait(&w->cond, &w->lock);
	w->queue[(w->head + w->queued) % SNAPSHOT_WRITER_QUEUE] = job;
	w->queued++;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
}

void snapshot_writer_stop(struct snapshot_writer *w)
{
	if (!w->started)
		return;
	quiet_thread_stop(w->thread, &w->lock, &w->cond, &w->stop);
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->lock);
	w->started = false;
}
