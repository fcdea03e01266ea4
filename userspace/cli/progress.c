// SPDX-License-Identifier: BSD-2-Clause
#include "progress.h"

#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>

void progress_init(struct progress *p)
{
	p->enabled = isatty(STDERR_FILENO);
	p->last_ns = 0;
}

void progress_update(struct progress *p, uint64_t now_ns, double elapsed_s, double duration_s,
		     uint64_t samples, uint64_t lost)
{
	if (!p->enabled || now_ns - p->last_ns < 250000000ULL)
		return;
	p->last_ns = now_ns;
	if (duration_s > 0)
		fprintf(stderr, "\r\033[Krecording %.1fs / %.0fs: %" PRIu64 " samples, %" PRIu64
				" lost (Ctrl-C to stop)",
			elapsed_s, duration_s, samples, lost);
	else
		fprintf(stderr, "\r\033[Krecording %.1fs: %" PRIu64 " samples, %" PRIu64
				" lost (Ctrl-C to stop)",
			elapsed_s, samples, lost);
	fflush(stderr);
}

void progress_clear(struct progress *p)
{
	if (p->enabled && p->last_ns) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
	}
}
