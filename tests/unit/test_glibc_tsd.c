// SPDX-License-Identifier: BSD-2-Clause
/*
 * glibc's thread-specific data as util/glibc_tsd.c measures it: the offset
 * it finds in this process's libc places every thread's key values where
 * BPF reads CPython's thread state (fs base + offset + 16 * key + 8), on
 * a thread other than the one that measured it too, for a key made after.
 */
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include "test.h"
#include "util/glibc_tsd.h"

static struct glibc_tsd tsd;
static pthread_key_t key;

static void *check_on_thread(void *arg)
{
	const void **at;

	pthread_setspecific(key, arg);
	at = (const void **)((char *)pthread_self() + tsd.offset + 16 * key + 8);
	return (void *)(uintptr_t)(*at == arg);
}

static void measured_offset_finds_key_values(void)
{
	static const char mark = 0;
	pthread_t t;
	void *ok = NULL;

	CHECK_EQ_INT(glibc_tsd_measure(&tsd), 0);
	CHECK(tsd.offset > 0 && tsd.offset < 4096 && tsd.inode != 0);
	CHECK_EQ_INT(pthread_key_create(&key, NULL), 0);
	CHECK(key < 32);
	CHECK_EQ_INT(pthread_create(&t, NULL, check_on_thread, (void *)&mark), 0);
	CHECK_EQ_INT(pthread_join(t, &ok), 0);
	CHECK(ok == (void *)1);
	CHECK(check_on_thread((void *)&tsd) == (void *)1);
	pthread_key_delete(key);
}

int main(void)
{
	RUN(measured_offset_finds_key_values);
	return test_summary();
}
