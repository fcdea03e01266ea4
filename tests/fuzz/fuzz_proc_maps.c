// SPDX-License-Identifier: BSD-2-Clause
/* /proc/PID/maps lines: every process's mappings, paths named by their owners. */
#include <stdint.h>
#include <stdio.h>

#include "symbols/proc_maps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	map_entries_t v = { 0 };
	FILE *f;

	if (!size)
		return 0;
	f = fmemopen((void *)data, size, "r");
	if (!f)
		return 0;
	proc_maps_parse(f, &v);
	fclose(f);
	map_entries_free(&v);
	return 0;
}
