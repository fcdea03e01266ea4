/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * V8's heap objects as the names of JS frames need them, decoded from
 * buffers or through a read callback (no process state here): source
 * position tables, a script's line of a source offset, strings, the
 * function name a ScopeInfo holds, optimized code's inlining positions.
 *
 * Layouts come from v8_meta.h (node 20 = V8 11.3, no pointer compression:
 * tagged words are full pointers, a Smi is the word's upper half). The heap
 * is the process's to shape, and V8's GC moves objects while we read: every
 * walk is bounded (string depth, reads, lengths), so a moved or fake object
 * gives a wrong or empty answer, never unbounded work.
 */
#ifndef BPFPROF_LANG_V8_DECODE_H
#define BPFPROF_LANG_V8_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "v8_meta.h"

/* Cons strings followed this deep at most (OTel: 16). */
#define V8_MAX_STRING_DEPTH 16
/* Reads one string may take (its pieces, their maps). */
#define V8_MAX_STRING_READS 64
/* A script's source is scanned for lines this far at most. */
#define V8_MAX_SOURCE_SCAN  (1u << 20)
/* line_ends arrays longer than this are no script's. */
#define V8_MAX_LINES	    (1u << 24)

/* Reads `len` bytes of the process at `addr`: 0 or a negative errno. */
typedef int (*v8_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);

struct v8_heap {
	const struct v8_meta *m;
	v8_read_fn read;
	void *ctx;
};

static inline bool v8_is_smi(uint64_t w)
{
	return (w & 1) == 0;
}

static inline int32_t v8_smi(uint64_t w)
{
	return (int32_t)(w >> 32);
}

static inline bool v8_is_heap_object(uint64_t w)
{
	return (w & 3) == 1;
}

/* Source position (V8's SourcePosition): offset in the script (-1: none) and inlining id (0: none).
 */
static inline int32_t v8_pos_offset(uint64_t pos)
{
	return (int32_t)((pos >> 1) & ((1u << 30) - 1)) - 1;
}

static inline uint32_t v8_pos_inlining(uint64_t pos)
{
	return (uint32_t)((pos >> 31) & 0xffff);
}

/*
 * The source position of a position table (V8's VLQ zigzag pairs of code
 * offset and position deltas) at code offset `target`: the last entry at
 * or before it. 0, or -ENOENT (no entry at or before it; a broken table).
 */
int v8_spt_position(const uint8_t *table, size_t len, int64_t target, uint64_t *pos);

/* 1-based line of source offset `offset` from line end offsets (sorted; lower bound). */
int v8_line_from_ends(const int32_t *ends, size_t n, int32_t offset);

/* The instance type of heap object `obj` (tagged): 0 or an error. */
int v8_type_of(const struct v8_heap *h, uint64_t obj, uint16_t *type);

/*
 * Units [skip, skip + max) of string `str` (tagged) into `out`: their
 * count, or an error (-ENOTSUP: an external string, whose chars are the
 * embedder's; -EINVAL: no string). `*len` gets the whole string's length.
 */
int v8_string_units(const struct v8_heap *h, uint64_t str, uint32_t skip, uint16_t *out, size_t max,
		    int32_t *len);

/* String `str` as UTF-8 in `out` (cut to fit, NUL-terminated): its byte length or an error. */
int v8_string(const struct v8_heap *h, uint64_t str, char *out, size_t out_len);

/*
 * The function name a ScopeInfo holds (V8 9.1.71 to 12.8.43: the first
 * string after its context locals; OTel's heuristic), and the function's
 * start offset (the first pair of Smis a < b after it), from the 16 words
 * after the ScopeInfo's map. 0 (name "" when none found) or an error.
 */
int v8_scope_info_name(const struct v8_heap *h, const uint64_t words[16], char *name,
		       size_t name_len, int32_t *start_pos);

/*
 * Inlining position `id` (1-based, from v8_pos_inlining) of an
 * InliningPositions ByteArray's data: the caller's source position and the
 * inlined function's index in the literal array (-1: the outer function).
 */
int v8_inlining_entry(const uint8_t *data, size_t len, uint32_t id, uint64_t *caller_pos,
		      int32_t *function_id);

/*
 * The bytecode offset of baseline (Sparkplug) code at code offset
 * `target` (a return address's offset, or a leaf's plus one: V8's
 * BytecodeOffsetIterator::AdvanceToPCOffset), from its bytecode offset
 * table (one unsigned VLQ code delta per bytecode, the first the
 * prologue's) walked beside its bytecodes, each bytecode's size from
 * m->bytecode_sizes. 0 and `*offset` (-1: the prologue), or an error.
 */
int v8_baseline_offset(const struct v8_meta *m, const uint8_t *table, size_t table_len,
		       const uint8_t *bytecodes, size_t bytecodes_len, uint64_t target,
		       int32_t *offset);

/*
 * The 1-based line of source offset `offset` in script `script` (tagged):
 * from its line_ends when V8 computed them, else by counting newlines in
 * its source (at most V8_MAX_SOURCE_SCAN units). 0 when unknown.
 */
int v8_script_line(const struct v8_heap *h, uint64_t script, int32_t offset);

#endif
