// SPDX-License-Identifier: BSD-2-Clause
/* See python_reader.h. */
#include "python_reader.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../util/quiet_thread.h"

struct py_worker {
	struct py_reader *r;
	pthread_t thread;
	pthread_cond_t wake; /* a job came, or the reader closes */
	/* The job, under r->lock. buf is the worker's own: an abandoned caller is gone. */
	bool has_job, done, abandoned;
	uint32_t owner, pid;
	uint64_t addr;
	size_t len;
	uint8_t *buf;
	ssize_t result;
};

struct py_reader {
	pthread_mutex_t lock;
	pthread_cond_t done; /* a job finished */
	python_mem_read_fn fn;
	void *ctx;
	unsigned deadline_ms;
	bool closing;
	unsigned refs;	  /* the owner, and each stuck worker left running at py_reader_free */
	unsigned started; /* workers[0..started) run */
	struct py_worker workers[PY_READER_MAX_WORKERS];
};

static void reader_unref_locked(struct py_reader *r)
{
	bool last = --r->refs == 0;

	pthread_mutex_unlock(&r->lock);
	if (!last)
		return;
	for (unsigned i = 0; i < r->started; i++)
		pthread_cond_destroy(&r->workers[i].wake);
	pthread_cond_destroy(&r->done);
	pthread_mutex_destroy(&r->lock);
	free(r);
}

static void *worker_main(void *arg)
{
	struct py_worker *w = arg;
	struct py_reader *r = w->r;

	pthread_mutex_lock(&r->lock);
	for (;;) {
		uint32_t pid;
		uint64_t addr;
		uint8_t *buf;
		size_t len;
		ssize_t res;

		while (!w->has_job && !r->closing)
			pthread_cond_wait(&w->wake, &r->lock);
		if (!w->has_job)
			break;
		pid = w->pid;
		addr = w->addr;
		buf = w->buf;
		len = w->len;
		pthread_mutex_unlock(&r->lock);
		res = r->fn(r->ctx, pid, addr, buf, len);
		pthread_mutex_lock(&r->lock);
		w->has_job = false;
		if (w->abandoned) {
			/* Its caller left at the deadline: the buffer is ours to free. */
			free(w->buf);
			w->buf = NULL;
			w->abandoned = false;
			if (r->closing) {
				reader_unref_locked(r);
				return NULL;
			}
			continue;
		}
		w->result = res;
		w->done = true;
		pthread_cond_broadcast(&r->done);
	}
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

struct py_reader *py_reader_new(python_mem_read_fn fn, void *ctx, unsigned deadline_ms)
{
	struct py_reader *r = calloc(1, sizeof(*r));
	pthread_condattr_t attr;

	if (!r)
		return NULL;
	pthread_mutex_init(&r->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&r->done, &attr);
	pthread_condattr_destroy(&attr);
	r->fn = fn;
	r->ctx = ctx;
	r->deadline_ms = deadline_ms;
	r->refs = 1;
	return r;
}

/* Whether `w` was left to a read that has not returned. Under r->lock. */
static bool stuck(const struct py_worker *w)
{
	return w->has_job && w->abandoned;
}

/*
 * An idle worker for a read of `owner`, started if need be; NULL when the
 * owner holds a stuck read already (so one owner never holds two) or when
 * every worker there may be is stuck. Under r->lock.
 */
static struct py_worker *idle_worker(struct py_reader *r, uint32_t owner)
{
	struct py_worker *idle = NULL, *w;

	for (unsigned i = 0; i < r->started; i++) {
		w = &r->workers[i];
		if (stuck(w) && w->owner == owner)
			return NULL;
		if (!w->has_job && !idle)
			idle = w;
	}
	if (idle || r->started == PY_READER_MAX_WORKERS)
		return idle;
	w = &r->workers[r->started];
	w->r = r;
	pthread_cond_init(&w->wake, NULL);
	if (quiet_thread_start(&w->thread, worker_main, w)) {
		pthread_cond_destroy(&w->wake);
		return NULL;
	}
	r->started++;
	return w;
}

ssize_t py_reader_read(struct py_reader *r, uint32_t owner, uint32_t pid, uint64_t addr, void *buf,
		       size_t len)
{
	struct py_worker *w;
	struct timespec until;
	uint8_t *job_buf = malloc(len ? len : 1);
	ssize_t res;

	if (!job_buf)
		return -ENOMEM;
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += r->deadline_ms / 1000;
	until.tv_nsec += (long)(r->deadline_ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&r->lock);
	w = idle_worker(r, owner);
	if (!w) {
		pthread_mutex_unlock(&r->lock);
		free(job_buf);
		return -EBUSY;
	}
	w->owner = owner;
	w->pid = pid;
	w->addr = addr;
	w->len = len;
	w->buf = job_buf;
	w->done = false;
	w->has_job = true;
	pthread_cond_signal(&w->wake);
	while (!w->done)
		if (pthread_cond_timedwait(&r->done, &r->lock, &until) == ETIMEDOUT && !w->done) {
			w->abandoned = true; /* job_buf is the worker's now */
			pthread_mutex_unlock(&r->lock);
			return -ETIMEDOUT;
		}
	w->done = false;
	w->buf = NULL;
	res = w->result;
	pthread_mutex_unlock(&r->lock);
	if (res > 0)
		memcpy(buf, job_buf, (size_t)res <= len ? (size_t)res : len);
	free(job_buf);
	return res;
}

bool py_reader_holds(struct py_reader *r, uint32_t owner)
{
	bool holds = false;

	pthread_mutex_lock(&r->lock);
	for (unsigned i = 0; i < r->started && !holds; i++)
		holds = stuck(&r->workers[i]) && r->workers[i].owner == owner;
	pthread_mutex_unlock(&r->lock);
	return holds;
}

unsigned py_reader_stuck(struct py_reader *r)
{
	unsigned n = 0;

	pthread_mutex_lock(&r->lock);
	for (unsigned i = 0; i < r->started; i++)
		n += stuck(&r->workers[i]);
	pthread_mutex_unlock(&r->lock);
	return n;
}

void py_reader_free(struct py_reader *r)
{
	bool left[PY_READER_MAX_WORKERS];

	if (!r)
		return;
	pthread_mutex_lock(&r->lock);
	r->closing = true;
	for (unsigned i = 0; i < r->started; i++) {
		struct py_worker *w = &r->workers[i];

		/* Only an abandoned job can be in flight: the owner is the only caller. */
		left[i] = w->has_job;
		r->refs += left[i];
		pthread_cond_signal(&w->wake);
	}
	pthread_mutex_unlock(&r->lock);
	for (unsigned i = 0; i < r->started; i++) {
		if (left[i])
			pthread_detach(r->workers[i].thread);
		else
			pthread_join(r->workers[i].thread, NULL);
	}
	pthread_mutex_lock(&r->lock);
	reader_unref_locked(r);
}
