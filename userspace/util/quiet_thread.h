/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A helper thread that receives no signal: SIGINT, SIGTERM and SIGHUP stay
 * with the poll loop, which ends the recording on them.
 */
#ifndef BPFPROF_UTIL_QUIET_THREAD_H
#define BPFPROF_UTIL_QUIET_THREAD_H

#include <pthread.h>
#include <stdbool.h>

/* pthread_create with every signal blocked in the new thread. 0 or -errno. */
int quiet_thread_start(pthread_t *t, void *(*fn)(void *), void *arg);

/* Set *stop under `lock`, wake the thread waiting on `cond`, wait for it to end. */
void quiet_thread_stop(pthread_t t, pthread_mutex_t *lock, pthread_cond_t *cond, bool *stop);

#endif
