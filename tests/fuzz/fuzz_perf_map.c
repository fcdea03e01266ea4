// SPDX-License-Identifier: BSD-2-Clause
/* Perf maps (/tmp/perf-PID.map): written by any user's JIT, read by root. */
#include <string.h>

#include "fuzz_util.h"
#include "symbols/perf_map.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = fuzz_memfd(data, size);
	struct perf_map *pm;
	uint64_t addr = 0, start;

	if (fd < 0)
		return 0;
	pm = perf_map_open_fd(fd);
	if (!pm)
		return 0;
	/* Look up addresses the input itself names, and their neighbours. */
	for (size_t i = 0; i + 8 <= size && i < 64; i += 8) {
		memcpy(&addr, data + i, 8);
		perf_map_lookup(pm, addr, &start);
		perf_map_lookup(pm, addr + 1, NULL);
	}
	perf_map_lookup(pm, 0, NULL);
	perf_map_lookup(pm, UINT64_MAX, NULL);
	perf_map_free(pm);
	return 0;
}
