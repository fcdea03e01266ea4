/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Native-endian integers at any address of a byte buffer (records from the
 * kernel's rings and files runtimes write carry no alignment promise).
 */
#ifndef BPFPROF_UTIL_UNALIGNED_H
#define BPFPROF_UTIL_UNALIGNED_H

#include <stdint.h>
#include <string.h>

static inline uint32_t get_u32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint64_t get_u64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

#endif
