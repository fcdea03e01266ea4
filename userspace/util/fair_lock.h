/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A lock taken in the order it was asked for (a ticket lock over a mutex
 * and a condition variable). A plain mutex lets the thread that releases it
 * take it again at once: a thread that symbolizes a whole snapshot, one
 * frame at a time, would keep the frame sources for seconds while the
 * thread draining the rings waits to register one new mapping. Here a
 * waiter is served after the holder's one frame: the holder asks
 * fair_lock_contended after each and lets go when someone waits.
 */
#ifndef BPFPROF_UTIL_FAIR_LOCK_H
#define BPFPROF_UTIL_FAIR_LOCK_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct fair_lock {
	pthread_mutex_t mutex;
	pthread_cond_t turn;
	uint64_t next_ticket; /* handed to the next caller of fair_lock */
	uint64_t serving;     /* the ticket that holds the lock, or is next to */
};

/* A zeroed fair_lock is an unlocked one too (glibc's zeroed mutex and cond). */
void fair_lock_init(struct fair_lock *l);
void fair_lock_destroy(struct fair_lock *l);
void fair_lock(struct fair_lock *l);
void fair_unlock(struct fair_lock *l);
/* Whether another thread waits for the lock (call it holding the lock). */
bool fair_lock_contended(struct fair_lock *l);

#endif
