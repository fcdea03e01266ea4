// SPDX-License-Identifier: BSD-2-Clause
/*
 * `bpfprof report FILE` reads whatever file it is given, from any user:
 * the profile loader (JSON, gzip'd or not) and the statistics over it.
 */
#include <stdint.h>
#include <stdio.h>

#include "report/report_load.h"
#include "report/report_stats.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct report_filter all = { -1, -1 }, one = { 1, -1 };
	struct report_profile p = { 0 };
	struct report_stats s = { 0 };
	int fd = fuzz_memfd(data, size);
	char path[64];

	if (fd < 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (!report_profile_load(&p, path)) {
		if (!report_stats_compute(&s, &p, &all, 8))
			report_stats_free(&s);
		if (!report_stats_compute(&s, &p, &one, 8))
			report_stats_free(&s);
		report_profile_free(&p);
	}
	close(fd);
	return 0;
}
