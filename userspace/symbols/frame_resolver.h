/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * One place that turns a frame's (object, offset) into names, whatever its
 * source: executable files and the vDSO (symbolizer, with DWARF), the
 * kernel (kallsyms, through the symbolizer), JIT code (perf maps). The
 * synthetic frames (OBJ_TRUNCATED, OBJ_OFFCPU) are not code and are named
 * by the profile's tables, not here. Continuous mode's bounded caches go
 * through here too, so that the id space is split in one place.
 */
#ifndef BPFPROF_FRAME_RESOLVER_H
#define BPFPROF_FRAME_RESOLVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "frame_objects.h"
#include "symbolizer.h"

struct jit_maps;
struct python_frames;

/* The sources; not owned (the recording creates and frees them). */
struct frame_resolver {
	struct symbolizer *sym;
	struct jit_maps *jit;	  /* NULL: no JIT maps */
	struct python_frames *py; /* NULL: no Python frames */
	struct java_frames *java; /* NULL: no Java frames */
	struct python_frames *rb; /* NULL: no Ruby frames (the same kind of table) */
};

void frame_resolve(const struct frame_resolver *fr, uint32_t object, uint64_t offset,
		   bool is_return, struct resolved_frame *out);

/*
 * Bounded memory (continuous mode): retain_begin, retain every object still
 * referenced, then sweep frees the others in every source; returns how many
 * files and (in *jits) JIT maps were dropped.
 */
void frame_resolver_retain_begin(const struct frame_resolver *fr);
void frame_resolver_retain(const struct frame_resolver *fr, uint32_t object);
size_t frame_resolver_sweep(const struct frame_resolver *fr, size_t *jits);

#endif
