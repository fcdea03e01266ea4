/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * JIT code of processes that publish a perf map (/tmp/perf-PID.map: node
 * --perf-basic-prof, JVM agents, python -X perf). Each such process gets
 * one object id in a range of its own; its frames are (object, address) and
 * resolve through the map, read inside the process's mount namespace and
 * kept open so that it can still be read after the process exits.
 */
#ifndef BPFPROF_JIT_MAPS_H
#define BPFPROF_JIT_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "frame_objects.h"
#include "symbolizer.h"

struct jit_maps;

struct jit_maps *jit_maps_new(const char *proc_root);
void jit_maps_free(struct jit_maps *j);

/*
 * The object of pid's perf map, opening it on first use (a map not there
 * yet is looked for again after a while: runtimes create it once started).
 * Returns the object id, or -ENOENT when the process has no map.
 */
int64_t jit_maps_object(struct jit_maps *j, uint32_t pid, uint64_t now_ns);

/*
 * Resolve `addr` in a JIT object; false when `object` is not one of ours.
 * Names from a map stay valid until its object is swept; "0xADDR" names
 * (addresses the map does not describe, or ids that were swept) until the
 * next jit_maps_sweep.
 */
bool jit_maps_resolve(struct jit_maps *j, uint32_t object, uint64_t addr,
		      struct resolved_frame *out);

/*
 * Bounded memory in continuous mode, as for the symbolizer (see
 * symbolizer_retain_begin): after a snapshot, jit_maps_retain_begin, then
 * jit_maps_retain for every JIT object still referenced, then jit_maps_sweep
 * frees the maps of all others, closes their files and makes their ids
 * reusable by later processes (so nothing may keep a swept id: it would
 * name another process's code). Objects created after retain_begin count as
 * marked. Processes whose map was not found (no object id) are forgotten by
 * every sweep; their map is looked for again on next use. Returns how many
 * objects (maps) were freed.
 */
void jit_maps_retain_begin(struct jit_maps *j);
/* Mark `object`; ids that are not JIT objects of `j` are ignored. */
void jit_maps_retain(struct jit_maps *j, uint32_t object);
size_t jit_maps_sweep(struct jit_maps *j);

/* Memory the maps hold, for the summary. */
size_t jit_maps_bytes(const struct jit_maps *j);

#endif
