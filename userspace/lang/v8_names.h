/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * JS frames named from a V8 heap (node 20 = V8 11.3): a frame's slots (its
 * context or frame-type marker, its JSFunction, its bytecode offset and
 * BytecodeArray) and its pc become the function's name as JS users read it
 * (`name`, or "<anonymous>"), its script's name and the line: interpreted
 * frames by their bytecode offset, optimized code by its pc with one frame
 * per function inlined there (innermost first), baseline code by its
 * function's first line.
 *
 * V8's GC moves objects while we read, and a process may fake them: every
 * object's type is checked before it is read as one, every read bounded,
 * and the caches are direct-mapped arrays of fixed size keyed by address,
 * so a moved object gives at worst a wrong name, never more work or memory.
 */
#ifndef BPFPROF_LANG_V8_NAMES_H
#define BPFPROF_LANG_V8_NAMES_H

#include <stdbool.h>
#include <stdint.h>

#include "hotspot_names.h" /* struct hotspot_frame: name, file, line (shared by the lang modules) */
#include "v8_decode.h"

/* The words a frame's capture holds, in this order (v8_capture.offsets). */
enum v8_word {
	V8_W_CONTEXT,	      /* [fp + fp_context]: a context (JS frame) or a frame-type marker */
	V8_W_FUNCTION,	      /* [fp + fp_function]: the JSFunction */
	V8_W_BYTECODE_OFFSET, /* [fp + fp_bytecode_offset]: a Smi in interpreted frames */
	V8_W_BYTECODE_ARRAY,  /* [fp + fp_bytecode_array] */
	V8_WORDS,
};

#define V8_MAX_INLINED	   16 /* inlining levels followed in one frame */
#define V8_CACHED_SFIS	   256
#define V8_CACHED_LINES	   512
#define V8_CACHED_BASELINE 128
#define V8_MAX_TABLE	   (256u << 10) /* a position table or inlining positions read at most */
#define V8_NAME_LEN	   128
#define V8_FILE_LEN	   HOTSPOT_FRAME_FILE

struct v8_sfi_entry {
	uint64_t sfi, script;
	int32_t start_line; /* 0: unknown */
	char name[V8_NAME_LEN];
	char file[V8_FILE_LEN];
};

struct v8_line_entry {
	uint64_t script;
	int32_t offset, line;
};

#define V8_CACHED_FRAMES  256
#define V8_CACHED_INLINED 8

/*
 * A frame named: its key (the function in its slot, its pc, its bytecode
 * slots) and the functions and offsets it was named by. Used again only
 * while the function still holds what it held (its code or its shared
 * info, at check_off): one read instead of a dozen.
 */
struct v8_frame_entry {
	uint64_t fn, pc, w_offset, w_array;
	uint64_t check;
	uint64_t checked_ns; /* when the check last held (CLOCK_MONOTONIC) */
	int32_t check_off;
	uint8_t n; /* 0: empty; V8_CACHED_INLINED + 1: too many to keep */
	bool is_return;
	struct {
		uint64_t sfi;
		int32_t offset;
	} f[V8_CACHED_INLINED];
};

/* What one process's frames keep between samples: fixed size (about 125 KB). */
#define V8_CHECK_PERIOD_NS (50ull * 1000 * 1000)

struct v8_name_cache {
	/*
	 * How long a kept frame is used with no read that its function still
	 * holds the code it was named by (0: checked at every use). Each check
	 * is a read through the reader, some microseconds: at every frame of
	 * every sample it cost node's recording 0.3 CPU; a GC that moves a
	 * function is seen within the period (a wrong name meanwhile at worst).
	 */
	uint64_t check_period_ns;
	struct v8_frame_entry frames[V8_CACHED_FRAMES];
	struct v8_frame_entry *rec; /* the entry a naming fills, while it runs */
	struct v8_sfi_entry sfis[V8_CACHED_SFIS];
	struct v8_line_entry lines[V8_CACHED_LINES];
	/* Baseline code: (code, code offset) -> bytecode offset (in `line`). */
	struct v8_line_entry baselines[V8_CACHED_BASELINE];
};

/*
 * The JS frames of a V8 frame at `pc` with slots `words` (enum v8_word),
 * innermost first, up to `max`: their count, or -ENOENT when the slots are
 * no JS frame's (a typed frame: see v8_frame_type), another error when the
 * heap cannot be read.
 */
int v8_name_js_frame(const struct v8_heap *h, struct v8_name_cache *c, uint64_t pc, bool is_return,
		     const uint64_t words[V8_WORDS], struct hotspot_frame *out, int max);

/*
 * A typed frame's (entry, exit, stub...) type from its marker: true and
 * `*name` ("EntryFrame") when `marker` is one.
 */
bool v8_frame_type(const struct v8_meta *m, uint64_t marker, const char **name);

#endif
