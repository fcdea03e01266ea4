// SPDX-License-Identifier: BSD-2-Clause
/*
 * util/fair_lock.c: a waiter is seen (fair_lock_contended) and waiters get
 * the lock in the order they asked, so that a thread that takes it again
 * at once goes behind them (what keeps the rings' reader from starving
 * behind a thread symbolizing a snapshot frame by frame).
 */
#include <pthread.h>
#include <sched.h>

#include "test.h"
#include "util/fair_lock.h"

static struct fair_lock lock;
static pthread_mutex_t order_lock = PTHREAD_MUTEX_INITIALIZER;
static int order[3], nr_order;

static void record(int who)
{
	pthread_mutex_lock(&order_lock);
	order[nr_order++] = who;
	pthread_mutex_unlock(&order_lock);
}

static void *waiter(void *arg)
{
	fair_lock(&lock);
	record((int)(long)arg);
	fair_unlock(&lock);
	return NULL;
}

/* Until `n` callers hold or wait for the lock. */
static void wait_for_callers(uint64_t n)
{
	for (;;) {
		uint64_t callers;

		pthread_mutex_lock(&lock.mutex);
		callers = lock.next_ticket - lock.serving;
		pthread_mutex_unlock(&lock.mutex);
		if (callers >= n)
			return;
		sched_yield();
	}
}

static void test_served_in_order(void)
{
	pthread_t a, b;

	fair_lock_init(&lock);
	nr_order = 0;
	fair_lock(&lock);
	CHECK(!fair_lock_contended(&lock));
	pthread_create(&a, NULL, waiter, (void *)1L);
	wait_for_callers(2);
	CHECK(fair_lock_contended(&lock));
	pthread_create(&b, NULL, waiter, (void *)2L);
	wait_for_callers(3);
	/* The holder lets go and asks again at once: it is served after both. */
	fair_unlock(&lock);
	fair_lock(&lock);
	record(3);
	CHECK(!fair_lock_contended(&lock));
	fair_unlock(&lock);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	CHECK_EQ_INT(nr_order, 3);
	CHECK_EQ_INT(order[0], 1);
	CHECK_EQ_INT(order[1], 2);
	CHECK_EQ_INT(order[2], 3);
	fair_lock_destroy(&lock);
}

int main(void)
{
	RUN(test_served_in_order);
	return test_summary();
}
