// SPDX-License-Identifier: BSD-2-Clause
/*
 * The pool that reads other processes' memory for the drain
 * (lang/python_reader.h, issue 37), against a fake read that blocks on
 * some addresses until released: one owner (uid) holds one stuck worker at
 * most and is refused more without a read; a stuck worker is replaced, so
 * other owners are read on; the pool stops at PY_READER_MAX_WORKERS
 * threads; a released read gives its worker and its owner back.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "lang/python_reader.h"
#include "test.h"

#define BLOCKED_AT 0x1000 /* reads here wait for the release */
#define REFUSED_AT 0x3000 /* read only by reads the pool must refuse: it counts them */

struct fake {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool released;
	unsigned refused_calls, blocked;
};

static ssize_t fake_read(void *ctx, uint32_t pid, uint64_t addr, void *buf, size_t len)
{
	struct fake *f = ctx;

	(void)pid;
	pthread_mutex_lock(&f->lock);
	f->refused_calls += addr == REFUSED_AT;
	if (addr == BLOCKED_AT) {
		f->blocked++;
		while (!f->released)
			pthread_cond_wait(&f->cond, &f->lock);
		f->blocked--;
		pthread_cond_broadcast(&f->cond);
		pthread_mutex_unlock(&f->lock);
		return -1;
	}
	pthread_mutex_unlock(&f->lock);
	memset(buf, 0x5a, len);
	return (ssize_t)len;
}

/* Until `n` reads wait in the fake (a worker may start its read late); 30 s bound a hang only. */
static bool blocked_becomes(struct fake *f, unsigned n)
{
	unsigned now = 0;

	for (int i = 0; i < 3000 && now != n; i++) {
		pthread_mutex_lock(&f->lock);
		now = f->blocked;
		pthread_mutex_unlock(&f->lock);
		if (now != n)
			usleep(10000);
	}
	return now == n;
}

/* Lets every blocked read return; returns once none waits in the fake. */
static void fake_release(struct fake *f)
{
	pthread_mutex_lock(&f->lock);
	f->released = true;
	pthread_cond_broadcast(&f->cond);
	while (f->blocked)
		pthread_cond_wait(&f->cond, &f->lock);
	pthread_mutex_unlock(&f->lock);
}

/* A read that answers, retried: a short deadline may pass on a loaded machine (a hang's bound). */
static bool answered(struct py_reader *r, uint32_t owner)
{
	char buf[16];

	for (int i = 0; i < 1000; i++) {
		memset(buf, 0, sizeof(buf));
		if (py_reader_read(r, owner, 1, 0x2000, buf, sizeof(buf)) == sizeof(buf))
			return buf[0] == 0x5a && buf[15] == 0x5a;
		usleep(10000);
	}
	return false;
}

/* Until `n` workers are stuck (a slow answered read may be, briefly); 30 s bound a hang only. */
static bool stuck_becomes(struct py_reader *r, unsigned n)
{
	for (int i = 0; i < 3000; i++) {
		if (py_reader_stuck(r) == n)
			return true;
		usleep(10000);
	}
	return false;
}

/* Owners 1 .. PY_READER_MAX_WORKERS stall reads; others, numbered past them, are answered. */
static void owners_and_cap(void)
{
	static struct fake f = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER };
	/* Short: every read this test lets time out is one that never answers. */
	struct py_reader *r = py_reader_new(fake_read, &f, 20);
	char buf[8];

	CHECK(answered(r, 9000));
	/* Owner 1's read sticks; owner 1 is refused at once, without a read; others are read. */
	CHECK_EQ_INT(py_reader_read(r, 1, 100, BLOCKED_AT, buf, sizeof(buf)), -ETIMEDOUT);
	CHECK(py_reader_holds(r, 1));
	CHECK(!py_reader_holds(r, 2));
	CHECK_EQ_INT(py_reader_read(r, 1, 101, REFUSED_AT, buf, sizeof(buf)), -EBUSY);
	CHECK_EQ_INT(py_reader_read(r, 1, 100, BLOCKED_AT, buf, sizeof(buf)), -EBUSY);
	CHECK(answered(r, 9001));
	CHECK(stuck_becomes(r, 1));
	/* Owner after owner sticks a worker: each is replaced, up to the cap. */
	for (uint32_t owner = 2; owner <= PY_READER_MAX_WORKERS; owner++)
		CHECK_EQ_INT(py_reader_read(r, owner, 100 + owner, BLOCKED_AT, buf, sizeof(buf)),
			     -ETIMEDOUT);
	CHECK_EQ_INT(py_reader_stuck(r), PY_READER_MAX_WORKERS);
	CHECK(blocked_becomes(&f, PY_READER_MAX_WORKERS));
	/* Past the cap no thread is started: a read is refused at once. */
	CHECK_EQ_INT(py_reader_read(r, 1000, 1, REFUSED_AT, buf, sizeof(buf)), -EBUSY);
	/* Released, the workers and their owners are back. */
	fake_release(&f);
	CHECK(stuck_becomes(r, 0));
	/* Refused reads never reached the fake. */
	pthread_mutex_lock(&f.lock);
	CHECK_EQ_INT(f.refused_calls, 0);
	pthread_mutex_unlock(&f.lock);
	CHECK(!py_reader_holds(r, 1));
	CHECK(answered(r, 1));
	CHECK(answered(r, 1000));
	py_reader_free(r);
}

int main(void)
{
	RUN(owners_and_cap);
	return test_summary();
}
