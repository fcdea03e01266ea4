/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Where glibc keeps a thread's pthread key values (pthread_setspecific):
 * in the thread's struct pthread, whose address is its pthread_t (fs base
 * on x86_64), an array specific_1stblock of 32 { seq, data } pairs for
 * keys 0-31. Its offset is private to the glibc build, so it is measured
 * in bpfprof's own process (a key set, then found in pthread_self()'s
 * bytes) and used only for a process that maps that same libc file.
 */
#ifndef BPFPROF_UTIL_GLIBC_TSD_H
#define BPFPROF_UTIL_GLIBC_TSD_H

#include <stdint.h>
#include <sys/types.h>

struct glibc_tsd {
	dev_t dev; /* bpfprof's libc file (makedev(major, minor)) */
	uint64_t inode;
	uint32_t offset; /* of specific_1stblock in struct pthread; 0: not measured */
};

/* Measures bpfprof's own libc; 0, or -errno (t->offset 0: unknown). */
int glibc_tsd_measure(struct glibc_tsd *t);

#endif
