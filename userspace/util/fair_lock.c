// SPDX-License-Identifier: BSD-2-Clause
/* See fair_lock.h. */
#include "fair_lock.h"

void fair_lock_init(struct fair_lock *l)
{
	pthread_mutex_init(&l->mutex, NULL);
	pthread_cond_init(&l->turn, NULL);
	l->next_ticket = 0;
	l->serving = 0;
}

void fair_lock_destroy(struct fair_lock *l)
{
	pthread_cond_destroy(&l->turn);
	pthread_mutex_destroy(&l->mutex);
}

void fair_lock(struct fair_lock *l)
{
	uint64_t ticket;

	pthread_mutex_lock(&l->mutex);
	ticket = l->next_ticket;
	/* Atomic stores, under the mutex: fair_lock_contended reads them without it. */
	__atomic_store_n(&l->next_ticket, ticket + 1, __ATOMIC_RELEASE);
	while (l->serving != ticket)
		pthread_cond_wait(&l->turn, &l->mutex);
	pthread_mutex_unlock(&l->mutex);
}

void fair_unlock(struct fair_lock *l)
{
	pthread_mutex_lock(&l->mutex);
	__atomic_store_n(&l->serving, l->serving + 1, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&l->turn);
	pthread_mutex_unlock(&l->mutex);
}

/*
 * No mutex: a holder asks this between frames, millions of times for a big
 * profile. Its holder's own ticket is `serving`, so only a waiter's can
 * make the difference more than one; a waiter seen late is seen at the
 * next frame.
 */
bool fair_lock_contended(struct fair_lock *l)
{
	uint64_t serving = __atomic_load_n(&l->serving, __ATOMIC_ACQUIRE);

	return __atomic_load_n(&l->next_ticket, __ATOMIC_ACQUIRE) - serving > 1;
}
