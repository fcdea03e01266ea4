// SPDX-License-Identifier: BSD-2-Clause
/* Cgroup paths (/proc/PID/cgroup), which users may name in delegated subtrees. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup/container_id.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *path = malloc(size + 1), id[128];
	const char *runtime;

	if (!path)
		return 0;
	memcpy(path, data, size);
	path[size] = '\0';
	if (cgroup_container_id(path, id, sizeof(id), &runtime))
		(void)container_id_is_hex(id);
	(void)container_id_is_hex(path);
	cgroup_container_id(path, id, 1, &runtime);
	free(path);
	return 0;
}
