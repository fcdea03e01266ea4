// SPDX-License-Identifier: BSD-2-Clause
/*
 * A Python thread's frames read from userspace (lang/python_walk.c) out of
 * a process's memory, which is the process's to shape: the input's first
 * bytes are the published py_proc (any layout, any roots) and the fs base,
 * the rest the memory at BASE; every read outside it fails. The walk must
 * end within its bounds whatever the lists and frames say.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "lang/python_walk.h"

#define BASE 0x10000

struct mem {
	const uint8_t *data;
	size_t size;
	unsigned reads;
};

static int mem_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct mem *m = ctx;

	m->reads++;
	if (addr < BASE || addr - BASE > m->size || len > m->size - (addr - BASE))
		return -EFAULT;
	memcpy(buf, m->data + (addr - BASE), len);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct py_proc pp;
	uint64_t fsbase, uips[8], py[2 * BPFPROF_MAX_PYFRAMES];
	struct mem m;
	bool truncated;
	uint32_t n;

	if (size < sizeof(pp) + sizeof(fsbase) + sizeof(uips))
		return 0;
	memcpy(&pp, data, sizeof(pp));
	memcpy(&fsbase, data + sizeof(pp), sizeof(fsbase));
	memcpy(uips, data + sizeof(pp) + sizeof(fsbase), sizeof(uips));
	m = (struct mem){ data, size, 0 };
	n = python_walk_thread(&pp, fsbase, mem_read, &m, uips, 8, py, &truncated);
	/* The bounds: 64 threads looked at, 129 frame steps, a few reads besides. */
	if (n > BPFPROF_MAX_PYFRAMES || m.reads > 8 + 2 * 64 + BPFPROF_MAX_PYFRAMES + 1)
		__builtin_trap();
	return 0;
}
