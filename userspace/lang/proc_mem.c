// SPDX-License-Identifier: BSD-2-Clause
/* See proc_mem.h. */
#include "proc_mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/uio.h>

ssize_t proc_mem_read(void *ctx, uint32_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };

	(void)ctx;
	return process_vm_readv((pid_t)pid, &local, 1, &remote, 1, 0);
}

char *proc_path_absolute(const char *cwd, char *name)
{
	char *abs;

	if (!name || name[0] == '/' || name[0] == '<' || name[0] == '-' || !cwd)
		return name;
	if (asprintf(&abs, "%s/%s", cwd, name[0] == '.' && name[1] == '/' ? name + 2 : name) < 0)
		return name;
	free(name);
	return abs;
}
