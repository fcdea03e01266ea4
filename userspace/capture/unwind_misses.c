// SPDX-License-Identifier: BSD-2-Clause
#include "unwind_misses.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct hmap_key key_of(const struct unwind_file_key *k)
{
	return (struct hmap_key){ .a = k->dev, .b = k->ino };
}

bool unwind_misses_wants_name(const struct unwind_misses *m, const struct unwind_file_key *key)
{
	const struct unwind_miss *f;
	uint32_t at;

	if (!hmap_get(&m->index, key_of(key), &at))
		return true;
	f = &m->files.data[at];
	return !f->name[0] && f->name_tries < UNWIND_MISS_NAME_TRIES;
}

/* A name looked up for `f`: kept when found, else one more try counted. */
static void take_name(struct unwind_miss *f, const char *name)
{
	if (!name || f->name[0])
		return;
	if (name[0])
		snprintf(f->name, sizeof(f->name), "%s", name);
	else if (f->name_tries < UNWIND_MISS_NAME_TRIES)
		f->name_tries++;
}

uint64_t unwind_misses_stacks(const struct unwind_misses *m, const struct unwind_file_key *key)
{
	uint32_t at;

	return hmap_get(&m->index, key_of(key), &at) ? m->files.data[at].stacks : 0;
}

int unwind_misses_note(struct unwind_misses *m, const struct unwind_file_key *key, uint64_t ts,
		       const char *name)
{
	struct unwind_miss add = { .key = *key, .stacks = 1, .first_ts = ts };
	struct unwind_miss *f;
	uint32_t at;

	if (hmap_get(&m->index, key_of(key), &at)) {
		f = &m->files.data[at];
		f->stacks++;
		if (ts < f->first_ts)
			f->first_ts = ts;
		take_name(f, name);
		return 0;
	}
	if (m->files.len >= UNWIND_MISSES_MAX) {
		m->others++;
		return 0;
	}
	take_name(&add, name);
	if (vec_push(&m->files, add))
		return -ENOMEM;
	if (hmap_put(&m->index, key_of(key), (uint32_t)(m->files.len - 1))) {
		m->files.len--;
		return -ENOMEM;
	}
	return 0;
}

static int by_stacks(const void *a, const void *b)
{
	const struct unwind_miss *x = a, *y = b;

	if (x->stacks != y->stacks)
		return x->stacks > y->stacks ? -1 : 1;
	return x->first_ts < y->first_ts ? -1 : x->first_ts > y->first_ts;
}

size_t unwind_misses_top(const struct unwind_misses *m, struct unwind_miss *out, size_t max)
{
	struct unwind_miss *all;
	size_t n = m->files.len;

	if (!n || !max)
		return 0;
	all = malloc(n * sizeof(*all));
	if (!all)
		return 0;
	memcpy(all, m->files.data, n * sizeof(*all));
	qsort(all, n, sizeof(*all), by_stacks);
	if (n > max)
		n = max;
	memcpy(out, all, n * sizeof(*out));
	free(all);
	return n;
}

void unwind_misses_free(struct unwind_misses *m)
{
	hmap_free(&m->index);
	vec_free(&m->files);
	memset(m, 0, sizeof(*m));
}
