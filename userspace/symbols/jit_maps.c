// SPDX-License-Identifier: BSD-2-Clause
#include "jit_maps.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/hashmap.h"
#include "../util/vec.h"
#include "perf_map.h"

/* How long to wait before looking again for a map a process has not written yet. */
#define JIT_RETRY_NS (100ULL * 1000 * 1000)

struct jit_entry {
	uint32_t pid;
	struct perf_map *map; /* NULL: not found (yet) */
	uint64_t tried_ns;
};

struct jit_maps {
	char *proc_root;
	VEC(struct jit_entry) entries;
	struct hmap by_pid; /* pid -> entries index */
	VEC(char *) names;  /* "0x..." names of addresses outside the maps, valid until free */
};

struct jit_maps *jit_maps_new(const char *proc_root)
{
	struct jit_maps *j = calloc(1, sizeof(*j));

	if (!j)
		return NULL;
	j->proc_root = strdup(proc_root ? proc_root : "/proc");
	if (!j->proc_root) {
		free(j);
		return NULL;
	}
	return j;
}

void jit_maps_free(struct jit_maps *j)
{
	if (!j)
		return;
	for (size_t i = 0; i < j->entries.len; i++)
		perf_map_free(j->entries.data[i].map);
	vec_free(&j->entries);
	for (size_t i = 0; i < j->names.len; i++)
		free(j->names.data[i]);
	vec_free(&j->names);
	hmap_free(&j->by_pid);
	free(j->proc_root);
	free(j);
}

int64_t jit_maps_object(struct jit_maps *j, uint32_t pid, uint64_t now_ns)
{
	struct hmap_key key = { pid, 0 };
	struct jit_entry *e;
	uint32_t idx;

	if (!hmap_get(&j->by_pid, key, &idx)) {
		struct jit_entry ne = { .pid = pid };

		idx = (uint32_t)j->entries.len;
		if (vec_push(&j->entries, ne))
			return -ENOMEM;
		if (hmap_put(&j->by_pid, key, idx)) {
			j->entries.len--;
			return -ENOMEM;
		}
	}
	e = &j->entries.data[idx];
	if (!e->map && (!e->tried_ns || now_ns - e->tried_ns >= JIT_RETRY_NS)) {
		e->tried_ns = now_ns ? now_ns : 1;
		e->map = perf_map_open(j->proc_root, (pid_t)pid);
	}
	return e->map ? (int64_t)JIT_OBJECT_BASE + idx : -ENOENT;
}

bool jit_maps_resolve(struct jit_maps *j, uint32_t object, uint64_t addr,
		      struct resolved_frame *out)
{
	const char *name = NULL;
	uint32_t idx;

	if (!j || object < JIT_OBJECT_BASE || object - JIT_OBJECT_BASE >= j->entries.len)
		return false;
	idx = object - JIT_OBJECT_BASE;
	if (j->entries.data[idx].map)
		name = perf_map_lookup(j->entries.data[idx].map, addr, NULL);
	memset(out, 0, sizeof(*out));
	if (!name) {
		/* Code the map does not describe: the raw address, as for any unknown one. */
		char buf[32], *copy;

		snprintf(buf, sizeof(buf), "0x%" PRIx64, addr);
		copy = strdup(buf);
		if (copy && !vec_push(&j->names, copy))
			name = copy;
		else
			free(copy);
		if (!name)
			name = "(JIT code)";
	}
	out->count = 1;
	out->items[0].func = name;
	out->resource = NULL;
	out->address = -1;
	return true;
}

size_t jit_maps_bytes(const struct jit_maps *j)
{
	size_t n = sizeof(*j) + j->entries.cap * sizeof(*j->entries.data);

	for (size_t i = 0; i < j->entries.len; i++)
		if (j->entries.data[i].map)
			n += perf_map_bytes(j->entries.data[i].map);
	return n;
}
