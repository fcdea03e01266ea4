// SPDX-License-Identifier: BSD-2-Clause
/*
 * jitdump files (jit-PID.dump): written by any user's JIT, read by root;
 * and the names in them taken apart as each runtime's.
 */
#include <string.h>

#include "fuzz_util.h"
#include "lang/jit_names.h"
#include "symbols/perf_map.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = fuzz_memfd(data, size);
	struct perf_map *pm;
	struct jit_name n;
	uint64_t addr = 0, start;
	char name[256];

	/* The first bytes as a name, for each runtime's parser. */
	memcpy(name, data, size < sizeof(name) - 1 ? size : sizeof(name) - 1);
	name[size < sizeof(name) - 1 ? size : sizeof(name) - 1] = '\0';
	for (int rt = JIT_RUNTIME_UNKNOWN; rt <= JIT_RUNTIME_PYTHON; rt++) {
		jit_name_parse((enum jit_runtime)rt, name, &n);
		/* Every part lies inside the name (ASan sees a read past it). */
		if (n.func_len)
			(void)memchr(n.func, '\0', n.func_len);
		if (n.file)
			(void)memchr(n.file, '\0', n.file_len);
	}
	if (fd < 0)
		return 0;
	pm = perf_map_open_jitdump_fd(fd);
	if (!pm)
		return 0;
	for (size_t i = 40; i + 8 <= size && i < 256; i += 8) {
		memcpy(&addr, data + i, 8);
		perf_map_lookup(pm, addr, &start);
		perf_map_lookup(pm, addr + 1, NULL);
	}
	perf_map_lookup(pm, 0, NULL);
	perf_map_lookup(pm, UINT64_MAX, NULL);
	perf_map_free(pm);
	return 0;
}
