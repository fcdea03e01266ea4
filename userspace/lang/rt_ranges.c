// SPDX-License-Identifier: BSD-2-Clause
/* See rt_ranges.h. */
#include "rt_ranges.h"

#include <string.h>

int rt_ranges_merge(struct rt_range *r, int n, int max)
{
	if (max < 1)
		return 0;
	while (n > max) {
		int best = 0;

		/* The smallest gap goes: ranges [best] and [best + 1] become one. */
		for (int i = 1; i + 1 < n; i++)
			if (r[i + 1].lo - r[i].hi < r[best + 1].lo - r[best].hi)
				best = i;
		r[best].hi = r[best + 1].hi;
		memmove(&r[best + 1], &r[best + 2], (size_t)(n - best - 2) * sizeof(*r));
		n--;
	}
	return n;
}

int rt_anon_exec_ranges(const map_entries_t *maps, struct rt_range *out, int max)
{
	struct rt_range r[RT_MAX_RANGES + 1]; /* one past max: the smallest gap goes at once */
	int n = 0;

	if (max > RT_MAX_RANGES)
		max = RT_MAX_RANGES;
	if (max < 1)
		return 0;
	for (size_t i = 0; i < maps->len; i++) {
		const struct map_entry *e = &maps->data[i];

		if (!e->executable || e->inode || (e->path && e->path[0]) || e->end <= e->start)
			continue;
		if (n && e->start < r[n - 1].hi)
			continue; /* out of order: not as /proc writes them */
		if (n && e->start == r[n - 1].hi) {
			r[n - 1].hi = e->end; /* adjacent: one range */
			continue;
		}
		r[n].lo = e->start;
		r[n].hi = e->end;
		if (++n > max)
			n = rt_ranges_merge(r, n, max);
	}
	memcpy(out, r, (size_t)n * sizeof(*r));
	return n;
}
