// SPDX-License-Identifier: BSD-2-Clause
/*
 * Perf maps by process, for as long as their object is in use.
 *
 * A continuous profile sees thousands of processes come and go, so maps are
 * not kept forever: the caller marks the objects still in use and sweeps
 * the rest (jit_maps_sweep), which frees their maps and makes their slots
 * (and so their object ids) reusable. A process whose map was not found
 * holds no object id anyone could mark: a sweep forgets it, and the next
 * lookup simply looks for its map again.
 */
#include "jit_maps.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/hashmap.h"
#include "../util/log.h"
#include "../util/strtab.h"
#include "../util/vec.h"
#include "perf_map.h"

/* How long to wait before looking again for a map a process has not written yet. */
#define JIT_RETRY_NS (100ULL * 1000 * 1000)

struct jit_entry {
	uint32_t pid;
	struct perf_map *map; /* NULL: not found (yet) */
	uint64_t tried_ns;
	bool used;    /* false: a free slot, listed in free_slots */
	bool marked;  /* kept by the next sweep */
	bool capped;  /* its map reached a limit, and we said so */
	bool refused; /* its map was not the process's, and we said so */
};

struct jit_maps {
	char *proc_root;
	VEC(struct jit_entry) entries; /* slot i is object OBJ_FIRST_JIT + i */
	VEC(uint32_t) free_slots;      /* unused entries, reused first */
	struct hmap by_pid;	       /* pid -> entries index */
	/* "0x..." names of addresses outside the maps, valid until the next sweep. */
	struct strtab addr_names;
	size_t addr_name_bytes;
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
	vec_free(&j->free_slots);
	strtab_free(&j->addr_names);
	hmap_free(&j->by_pid);
	free(j->proc_root);
	free(j);
}

/* A slot for a new entry of `pid`, indexed; its index or -ENOMEM. */
static int64_t add_entry(struct jit_maps *j, uint32_t pid)
{
	struct jit_entry ne = { .pid = pid, .used = true, .marked = true };
	struct hmap_key key = { pid, 0 };
	bool reused = j->free_slots.len > 0;
	uint32_t idx;

	if (reused) {
		idx = j->free_slots.data[--j->free_slots.len];
	} else {
		if (j->entries.len >= UINT32_MAX - OBJ_FIRST_JIT)
			return -ENOMEM;
		idx = (uint32_t)j->entries.len;
		if (vec_push(&j->entries, ne))
			return -ENOMEM;
	}
	if (hmap_put(&j->by_pid, key, idx)) {
		if (reused)
			j->free_slots.len++; /* give the slot back */
		else
			j->entries.len--;
		return -ENOMEM;
	}
	/* Born marked: a sweep frees only what a retain_begin unmarked. */
	j->entries.data[idx] = ne;
	return idx;
}

int64_t jit_maps_object(struct jit_maps *j, uint32_t pid, uint64_t now_ns)
{
	struct hmap_key key = { pid, 0 };
	struct jit_entry *e;
	uint32_t idx;

	if (!hmap_get(&j->by_pid, key, &idx)) {
		int64_t r = add_entry(j, pid);

		if (r < 0)
			return r;
		idx = (uint32_t)r;
	}
	e = &j->entries.data[idx];
	if (!e->map && (!e->tried_ns || now_ns - e->tried_ns >= JIT_RETRY_NS)) {
		e->tried_ns = now_ns ? now_ns : 1;
		e->map = perf_map_open(j->proc_root, (pid_t)pid);
		if (!e->map && (errno == EPERM || errno == EXDEV) && !e->refused) {
			e->refused = true;
			log_warn("the perf map of process %u is not read: %s; its JIT code stays "
				 "unnamed",
				 pid,
				 errno == EPERM ? "neither its user nor root owns it (any user may "
						  "write /tmp)"
						: "another file is mounted over it");
		}
	}
	return e->map ? (int64_t)OBJ_FIRST_JIT + idx : -ENOENT;
}

/* "0xADDR", valid until the next sweep; NULL when out of memory. */
static const char *addr_name(struct jit_maps *j, uint64_t addr)
{
	size_t before = strtab_len(&j->addr_names);
	char buf[32];
	int64_t idx;

	snprintf(buf, sizeof(buf), "0x%" PRIx64, addr);
	idx = strtab_intern(&j->addr_names, buf);
	if (idx < 0)
		return NULL;
	if (strtab_len(&j->addr_names) != before)
		j->addr_name_bytes += strlen(buf) + 1;
	return strtab_get(&j->addr_names, (uint32_t)idx);
}

bool jit_maps_resolve(struct jit_maps *j, uint32_t object, uint64_t addr,
		      struct resolved_frame *out)
{
	struct jit_entry *e;
	const char *name = NULL;

	if (!j || object < OBJ_FIRST_JIT || object - OBJ_FIRST_JIT >= j->entries.len)
		return false;
	e = &j->entries.data[object - OBJ_FIRST_JIT];
	/* A swept object's slot may be free or another process's: its address is all we know. */
	if (e->used && e->map) {
		name = perf_map_lookup(e->map, addr, NULL);
		if (!e->capped && perf_map_capped(e->map)) {
			e->capped = true;
			log_warn("the perf map of process %u is too large to read whole (limit on "
				 "its %s reached); its later JIT code shows as addresses",
				 e->pid, perf_map_capped(e->map));
		}
	}
	memset(out, 0, sizeof(*out));
	if (!name) {
		/* Code the map does not describe: the raw address, as for any unknown one. */
		name = addr_name(j, addr);
		if (!name)
			name = "(JIT code)";
	}
	out->count = 1;
	out->items[0].func = name;
	out->resource = NULL;
	out->address = -1;
	return true;
}

void jit_maps_retain_begin(struct jit_maps *j)
{
	for (size_t i = 0; i < j->entries.len; i++)
		j->entries.data[i].marked = false;
}

void jit_maps_retain(struct jit_maps *j, uint32_t object)
{
	if (object < OBJ_FIRST_JIT || object - OBJ_FIRST_JIT >= j->entries.len)
		return;
	j->entries.data[object - OBJ_FIRST_JIT].marked = true;
}

size_t jit_maps_sweep(struct jit_maps *j)
{
	size_t swept = 0;

	for (size_t i = 0; i < j->entries.len; i++) {
		struct jit_entry *e = &j->entries.data[i];

		/* Entries without a map have no id to mark: always dropped, looked up again. */
		if (!e->used || (e->marked && e->map))
			continue;
		hmap_del(&j->by_pid, (struct hmap_key){ e->pid, 0 });
		if (e->map)
			swept++;
		perf_map_free(e->map);
		*e = (struct jit_entry){ 0 };
		/* Out of memory, the slot is lost: one entry's worth, never reused. */
		(void)vec_push(&j->free_slots, (uint32_t)i);
	}
	/* Names made of addresses are valid until a sweep (jit_maps.h): now they go. */
	strtab_free(&j->addr_names);
	j->addr_name_bytes = 0;
	return swept;
}

size_t jit_maps_bytes(const struct jit_maps *j)
{
	size_t n = sizeof(*j) + j->entries.cap * sizeof(*j->entries.data) +
		   j->free_slots.cap * sizeof(*j->free_slots.data) +
		   j->by_pid.cap * sizeof(struct hmap_slot) + j->addr_name_bytes +
		   j->addr_names.strs.cap * sizeof(char *) +
		   j->addr_names.next.cap * sizeof(uint32_t) +
		   j->addr_names.index.cap * sizeof(struct hmap_slot);

	for (size_t i = 0; i < j->entries.len; i++)
		if (j->entries.data[i].map)
			n += perf_map_bytes(j->entries.data[i].map);
	return n;
}
