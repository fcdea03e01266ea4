/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * An off-CPU row stands for a run of samples one interval apart
 * (thread_sample.repeats, model/offcpu_samples.c). The replay's tests check
 * the samples themselves, one per interval, as they were before rows held
 * runs: expand_offcpu_rows turns every run back into its samples.
 */
#ifndef BPFPROF_TEST_OFFCPU_ROWS_H
#define BPFPROF_TEST_OFFCPU_ROWS_H

#include <errno.h>
#include <stdlib.h>

#include "model/model.h"

static inline int expand_thread_rows(const struct model *m, struct thread *t)
{
	struct thread_sample *out;
	size_t n = 0, k = 0;

	for (size_t i = 0; i < t->samples.len; i++)
		n += sample_weight(&t->samples.data[i]);
	if (n == t->samples.len)
		return 0;
	out = calloc(n, sizeof(*out));
	if (!out)
		return -ENOMEM;
	for (size_t i = 0; i < t->samples.len; i++) {
		const struct thread_sample *s = &t->samples.data[i];

		for (uint64_t r = 0; r < sample_weight(s); r++) {
			out[k] = *s;
			out[k].repeats = 0;
			out[k].ts = s->ts + r * m->offcpu_interval_ns;
			/* The run up to the switch-out is its first sample's. */
			if (r)
				out[k].cpu_delta_ns = 0;
			k++;
		}
	}
	free(t->samples.data);
	t->samples.data = out;
	t->samples.len = t->samples.cap = n;
	return 0;
}

/* Every thread's rows as their samples; 0 or -ENOMEM. */
static inline int expand_offcpu_rows(struct model *m)
{
	for (size_t i = 0; i < m->threads.len; i++)
		if (expand_thread_rows(m, &m->threads.data[i]))
			return -ENOMEM;
	return 0;
}

/* model_finish, then the rows as their samples. */
static inline int model_finish_expanded(struct model *m)
{
	int err = model_finish(m);

	return err ? err : expand_offcpu_rows(m);
}

#endif
