/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * JIT code: processes that run code in anonymous executable memory, or
 * publish a perf map (/tmp/perf-PID.map: node --perf-basic-prof, the JVM's
 * DumpPerfMapAtExit and agents, python -X perf) or a jitdump file
 * (jit-PID.dump: node --perf-prof, the JVM's perf agent). Each such process
 * gets one object id in a range of its own; its frames are (object,
 * address) and resolve through the jitdump, then the map. The map is read
 * inside the process's mount namespace and kept open, and what checking it
 * needs is read while the process lives, so that a map written at exit is
 * still found. Code no source names shows as one frame per runtime
 * ("[JIT] java", "[JIT] node", "[anon exec]").
 */
#ifndef BPFPROF_JIT_MAPS_H
#define BPFPROF_JIT_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "frame_objects.h"
#include "proc_maps.h"
#include "symbolizer.h"

struct jit_maps;

struct jit_maps *jit_maps_new(const char *proc_root);
void jit_maps_free(struct jit_maps *j);

/*
 * pid maps `m` (from /proc or a mmap record): anonymous executable memory,
 * a jitdump file (its writer's mark) or a JVM's or node's files say that
 * it runs JIT code, and which runtime; a jitdump is opened now, as the very
 * file mapped. Other mappings are ignored. 0 or -ENOMEM.
 */
int jit_maps_note_mapping(struct jit_maps *j, uint32_t pid, const struct map_entry *m);

/*
 * The JIT object of pid, for code at an address outside any file mapping:
 * in anonymous executable memory (anon_exec), or in no mapping at all. Its
 * perf map is opened on first use (a map not there yet is looked for again
 * after a while: runtimes create it once started). Returns the object id,
 * or -ENOENT: for code in anonymous memory, when the process is not known
 * to run JIT code; for an address in no mapping, when it has no map or
 * jitdump that could name it (an unwinder's made-up address stays one).
 */
int64_t jit_maps_object(struct jit_maps *j, uint32_t pid, bool anon_exec, uint64_t now_ns);

/*
 * Resolve `addr` in a JIT object; false when `object` is not one of ours.
 * Names stay valid until its object is swept.
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
 * marked. Processes not known to run JIT code (no object id) are forgotten
 * by every sweep; their map is looked for again on next use. Returns how
 * many objects were freed.
 */
void jit_maps_retain_begin(struct jit_maps *j);
/* Mark `object`; ids that are not JIT objects of `j` are ignored. */
void jit_maps_retain(struct jit_maps *j, uint32_t object);
size_t jit_maps_sweep(struct jit_maps *j);

/* Memory the maps hold, for the summary. */
size_t jit_maps_bytes(const struct jit_maps *j);

#endif
