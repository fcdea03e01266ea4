// SPDX-License-Identifier: BSD-2-Clause
#include "source_namers.h"

#include <errno.h>
#include <stdlib.h>

#include "../model/model.h"
#include "profile_tables.h"

/* A stack no sample has reached yet. */
#define UNSEEN (SOURCE_NAMER_NONE - 1)

/* The one uid of `had` and `uid`; SOURCE_NAMER_NONE when they differ. */
static uint32_t merge(uint32_t had, uint32_t uid)
{
	return had == UNSEEN || had == uid ? uid : SOURCE_NAMER_NONE;
}

/* Mark `stack` and its prefixes with `uid`, up to the first that has it already. */
static void mark_stack(uint32_t *marks, const struct profile_tables *t, uint32_t stack,
		       uint32_t uid)
{
	while (stack != NO_INDEX && stack < t->stacks.len) {
		uint32_t m = merge(marks[stack], uid);

		/* Each mark changes at most twice (UNSEEN, a uid, NONE): the walk is bounded. */
		if (m == marks[stack])
			return;
		marks[stack] = m;
		stack = t->stacks.data[stack].prefix;
	}
}

int source_namers_build(struct profile_tables *t, const struct model *m)
{
	uint32_t *marks = malloc((t->stacks.len ? t->stacks.len : 1) * sizeof(*marks));
	int err = vec_reserve(&t->source_namers, t->sources.len);

	if (!marks || err) {
		free(marks);
		return -ENOMEM;
	}
	for (size_t i = 0; i < t->stacks.len; i++)
		marks[i] = UNSEEN;
	for (size_t i = 0; i < t->sources.len; i++)
		t->source_namers.data[i] = UNSEEN;
	t->source_namers.len = t->sources.len;
	for (size_t i = 0; i < m->threads.len; i++) {
		const struct thread *th = &m->threads.data[i];
		uint32_t uid = th->process < m->processes.len ? m->processes.data[th->process].uid
							      : PROCESS_UID_UNKNOWN;

		/* Not known: no uid is vouched for (PROCESS_UID_UNKNOWN is SOURCE_NAMER_NONE). */
		for (size_t k = 0; k < th->samples.len; k++) {
			uint32_t raw = th->samples.data[k].stack;

			if (raw < t->raw_stack_map.len)
				mark_stack(marks, t, t->raw_stack_map.data[raw], uid);
		}
	}
	for (size_t i = 0; i < t->stacks.len; i++) {
		const struct pt_frame *f = &t->frames.data[t->stacks.data[i].frame];
		int32_t source = t->funcs.data[f->func].source;
		uint32_t *namer;

		if (marks[i] == UNSEEN || source < 0 || (size_t)source >= t->source_namers.len)
			continue;
		namer = &t->source_namers.data[source];
		*namer = merge(*namer, marks[i]);
	}
	for (size_t i = 0; i < t->source_namers.len; i++)
		if (t->source_namers.data[i] == UNSEEN)
			t->source_namers.data[i] = SOURCE_NAMER_NONE;
	free(marks);
	return 0;
}
