/* SPDX-License-Identifier: BSD-2-Clause */
/* Clock reads in nanoseconds; BPF's bpf_ktime_get_ns() is CLOCK_MONOTONIC. */
#ifndef BPFPROF_CLOCK_H
#define BPFPROF_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

#endif
