// SPDX-License-Identifier: BSD-2-Clause
/* See table_worker.h. */
#include "table_worker.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../util/quiet_thread.h"
#include "../util/elf_open.h"

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * The CPU budget over time (lock held): refill for the time gone by, then
 * wait while it is spent. False when told to stop meanwhile.
 */
static bool wait_for_credit(struct table_worker *w)
{
	for (;;) {
		uint64_t now = mono_ns();
		struct timespec until;
		double missing;

		w->credit_ns += (double)(now - w->credit_at) * TABLE_WORKER_DUTY;
		if (w->credit_ns > (double)TABLE_WORKER_BURST_NS)
			w->credit_ns = (double)TABLE_WORKER_BURST_NS;
		w->credit_at = now;
		if (w->credit_ns >= 0 || w->stop)
			return !w->stop;
		missing = -w->credit_ns / TABLE_WORKER_DUTY;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += (time_t)(missing / 1e9);
		until.tv_nsec += (long)((uint64_t)missing % 1000000000ull);
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&w->cond, &w->lock, &until);
	}
}

static void *worker_main(void *arg)
{
	struct table_worker *w = arg;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		struct table_done d = { 0 };
		struct table_job job;

		while (w->head == w->jobs.len && !w->stop)
			pthread_cond_wait(&w->cond, &w->lock);
		if (w->stop || !wait_for_credit(w))
			break;
		job = w->jobs.data[w->head++];
		if (w->head == w->jobs.len)
			w->head = w->jobs.len = 0;
		w->busy = true;
		pthread_mutex_unlock(&w->lock);

		d.key = job.key;
		d.id = job.id;
		d.path = job.path;
		d.err = unwind_file_build(elf_open_fd(job.fd),
					  &cfi_default_budget, &d.b);
		close(job.fd);

		pthread_mutex_lock(&w->lock);
		w->credit_ns -= (double)d.b.build_ns;
		if (vec_push(&w->done, d)) {
			unwind_built_free(&d.b);
			free(d.path); /* its file stays PENDING: frame pointers */
		}
		w->busy = false;
		pthread_cond_broadcast(&w->cond);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

int table_worker_start(struct table_worker *w)
{
	int err;

	memset(w, 0, sizeof(*w));
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	w->credit_ns = (double)TABLE_WORKER_BURST_NS;
	w->credit_at = mono_ns();
	err = quiet_thread_start(&w->thread, worker_main, w);
	if (err) {
		pthread_cond_destroy(&w->cond);
		pthread_mutex_destroy(&w->lock);
		return err;
	}
	w->started = true;
	return 0;
}

int table_worker_submit(struct table_worker *w, const struct unwind_store_file *f, int fd,
			const char *path)
{
	struct table_job job = { .key = f->key, .id = f->id, .fd = fd, .path = strdup(path) };
	int err = 0;

	if (!job.path) {
		close(fd);
		return -ENOMEM;
	}
	pthread_mutex_lock(&w->lock);
	if (vec_push(&w->jobs, job))
		err = -ENOMEM;
	else
		pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
	if (err) {
		close(fd);
		free(job.path);
	}
	return err;
}

void table_worker_take(struct table_worker *w, struct table_done **out, size_t *n)
{
	pthread_mutex_lock(&w->lock);
	*out = w->done.data;
	*n = w->done.len;
	memset(&w->done, 0, sizeof(w->done));
	pthread_mutex_unlock(&w->lock);
}

bool table_worker_wait_idle(struct table_worker *w, int timeout_ms)
{
	struct timespec until;
	bool idle;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += timeout_ms / 1000;
	until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&w->lock);
	while ((w->busy || w->head < w->jobs.len) &&
	       pthread_cond_timedwait(&w->cond, &w->lock, &until) != ETIMEDOUT)
		;
	idle = !w->busy && w->head == w->jobs.len;
	pthread_mutex_unlock(&w->lock);
	return idle;
}

void table_worker_stop(struct table_worker *w)
{
	if (!w->started)
		return;
	quiet_thread_stop(w->thread, &w->lock, &w->cond, &w->stop);
	for (size_t i = w->head; i < w->jobs.len; i++) {
		close(w->jobs.data[i].fd);
		free(w->jobs.data[i].path);
	}
	vec_free(&w->jobs);
	for (size_t i = 0; i < w->done.len; i++) {
		unwind_built_free(&w->done.data[i].b);
		free(w->done.data[i].path);
	}
	vec_free(&w->done);
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->lock);
	w->started = false;
}
