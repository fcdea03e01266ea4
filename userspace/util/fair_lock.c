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
	ticket = l->next_ticket++;
	while (l->serving != ticket)
		pthread_cond_wait(&l->turn, &l->mutex);
	pthread_mutex_unlock(&l->mutex);
}

void fair_unlock(struct fair_lock *l)
{
	pthread_mutex_lock(&l->mutex);
	l->serving++;
	pthread_cond_broadcast(&l->turn);
	pthread_mutex_unlock(&l->mutex);
}

bool fair_lock_contended(struct fair_lock *l)
{
	bool contended;

	pthread_mutex_lock(&l->mutex);
	contended = l->next_ticket - l->serving > 1;
	pthread_mutex_unlock(&l->mutex);
	return contended;
}
