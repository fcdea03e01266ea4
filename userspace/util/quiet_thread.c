// SPDX-License-Identifier: BSD-2-Clause
/* See quiet_thread.h. */
#include "quiet_thread.h"

#include <signal.h>

int quiet_thread_start(pthread_t *t, void *(*fn)(void *), void *arg)
{
	sigset_t all, old;
	int err;

	/* The new thread inherits this mask. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	err = pthread_create(t, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return -err;
}

void quiet_thread_stop(pthread_t t, pthread_mutex_t *lock, pthread_cond_t *cond, bool *stop)
{
	pthread_mutex_lock(lock);
	*stop = true;
	pthread_cond_broadcast(cond);
	pthread_mutex_unlock(lock);
	pthread_join(t, NULL);
}
