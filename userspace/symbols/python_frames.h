/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Python frames as the profile's tables see them: each distinct (function,
 * file, first line, line) a sample met is one entry, and a raw frame
 * (OBJ_PYTHON, entry) names it. The entries hold their own strings, so a
 * frame stays named after its process and code object are gone.
 */
#ifndef BPFPROF_SYMBOLS_PYTHON_FRAMES_H
#define BPFPROF_SYMBOLS_PYTHON_FRAMES_H

#include <stdbool.h>
#include <stdint.h>

#include "symbolizer.h"

struct python_frames;

struct python_frames *python_frames_new(void);
void python_frames_free(struct python_frames *f);

/* The entry of this location, added on first use; a negative errno (-ENOMEM). */
int64_t python_frames_intern(struct python_frames *f, const char *qualname, const char *filename,
			     int first_line, int line);

/* Names entry `index` into `out` (a Python frame); false for an index never handed out. */
bool python_frames_resolve(const struct python_frames *f, uint64_t index,
			   struct resolved_frame *out);

size_t python_frames_count(const struct python_frames *f);

#endif
