// SPDX-License-Identifier: BSD-2-Clause
/*
 * See jit_open.h. A job is shared by the caller and the worker, each
 * holding a reference: whoever is last frees it. An fd the worker opens
 * after its caller left is closed by whichever of the two sees both.
 */
#include "jit_open.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lang/python_reader.h"

struct jit_opener {
	struct py_reader *reader;
};

struct open_job {
	pthread_mutex_t lock;
	unsigned refs;
	bool finished, abandoned;
	int result;
	int (*open_fn)(void *arg);
	void (*drop)(void *arg);
	max_align_t arg[];
};

static void job_unref(struct open_job *job)
{
	bool last;

	pthread_mutex_lock(&job->lock);
	last = --job->refs == 0;
	pthread_mutex_unlock(&job->lock);
	if (!last)
		return;
	if (job->drop)
		job->drop(job->arg);
	pthread_mutex_destroy(&job->lock);
	free(job);
}

/* On the worker: the job comes as the read's address, the read is the open. */
static ssize_t run_job(void *ctx, uint32_t pid, uint64_t addr, void *buf, size_t len)
{
	struct open_job *job = (struct open_job *)(uintptr_t)addr;
	int fd = job->open_fn(job->arg);

	(void)ctx, (void)pid, (void)buf, (void)len;
	pthread_mutex_lock(&job->lock);
	if (job->abandoned && fd >= 0)
		close(fd);
	else
		job->result = fd;
	job->finished = true;
	pthread_mutex_unlock(&job->lock);
	job_unref(job);
	return 0;
}

struct jit_opener *jit_opener_new(unsigned deadline_ms)
{
	struct jit_opener *o = calloc(1, sizeof(*o));

	if (!o)
		return NULL;
	o->reader = py_reader_new(run_job, NULL, deadline_ms);
	if (!o->reader) {
		free(o);
		return NULL;
	}
	return o;
}

void jit_opener_free(struct jit_opener *o)
{
	if (!o)
		return;
	py_reader_free(o->reader);
	free(o);
}

int jit_opener_run(struct jit_opener *o, uint32_t owner, int (*open_fn)(void *arg), const void *arg,
		   size_t arg_size, void (*drop)(void *arg))
{
	struct open_job *job = calloc(1, sizeof(*job) + arg_size);
	unsigned char none;
	ssize_t r;
	int fd;

	if (!job) {
		if (drop)
			drop((void *)arg);
		return -ENOMEM;
	}
	pthread_mutex_init(&job->lock, NULL);
	job->refs = 2; /* ours, and the worker's once it has the job */
	job->result = -EIO;
	job->open_fn = open_fn;
	job->drop = drop;
	memcpy(job->arg, arg, arg_size);
	r = py_reader_read(o->reader, owner, 0, (uint64_t)(uintptr_t)job, &none, 0);
	if (r == -ETIMEDOUT) {
		pthread_mutex_lock(&job->lock);
		job->abandoned = true;
		/* Opened just as the deadline passed: nobody will use it. */
		if (job->finished && job->result >= 0)
			close(job->result);
		pthread_mutex_unlock(&job->lock);
		job_unref(job);
		return -ETIMEDOUT;
	}
	if (r < 0) {
		/* Refused before any worker took it: the worker's reference is ours too. */
		job->refs = 1;
		job_unref(job);
		return (int)r;
	}
	fd = job->result;
	job_unref(job);
	return fd;
}

unsigned jit_opener_stuck(struct jit_opener *o)
{
	return py_reader_stuck(o->reader);
}
