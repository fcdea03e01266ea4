/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Java frames named from a JVM's memory, with the layout the JVM itself
 * described (hotspot_vmstructs.h): an interpreted frame's Method and
 * bytecode index, or a compiled frame's nmethod and code offset, become
 * "pkg.Class.method", the source file and the line; a compiled frame
 * becomes one frame per method C2 inlined there, innermost first.
 *
 * What is read is the JVM's to shape: every read is bounded (a name of
 * HOTSPOT_MAX_NAME bytes, a line table of 4 KiB, an nmethod's debug
 * information of HOTSPOT_MAX_DEBUG bytes), and a stale pointer (an
 * nmethod freed and its memory reused) is told by its compile id.
 */
#ifndef BPFPROF_LANG_HOTSPOT_NAMES_H
#define BPFPROF_LANG_HOTSPOT_NAMES_H

#include <stdbool.h>
#include <stdint.h>

#include "hotspot_decode.h"
#include "hotspot_vmstructs.h"

#define HOTSPOT_FRAME_NAME 256 /* "pkg.Class.method", cut to fit */
#define HOTSPOT_FRAME_FILE 128 /* "Hot.java" */
#define HOTSPOT_MAX_DEBUG  (256u << 10)

struct hotspot_debug_cache;

struct hotspot_jvm {
	struct hotspot_layout layout;
	hotspot_read_fn read;
	void *ctx;
	unsigned x; /* UNSIGNED5's excluded bytes for this JDK */
	/* The nmethods' debug information last read (NULL: none kept; the caller's). */
	struct hotspot_debug_cache *debug_cache;
};

/*
 * The PcDescs and scopes of the few nmethods last named, by nmethod and
 * compile id: the pcs sampled in one nmethod are many, its debug
 * information one read. At most HOTSPOT_DEBUG_CACHE_BYTES, of
 * HOTSPOT_DEBUG_CACHE_ENTRIES nmethods.
 */
#define HOTSPOT_DEBUG_CACHE_ENTRIES 8
#define HOTSPOT_DEBUG_CACHE_BYTES   (256u << 10)
struct hotspot_debug_cache *hotspot_debug_cache_new(void);
void hotspot_debug_cache_free(struct hotspot_debug_cache *c);

struct hotspot_frame {
	char name[HOTSPOT_FRAME_NAME];
	char file[HOTSPOT_FRAME_FILE]; /* "" when the class has none */
	int line;		       /* 0 when unknown */
};

void hotspot_jvm_init(struct hotspot_jvm *j, const struct hotspot_layout *l, hotspot_read_fn read,
		      void *ctx);

/*
 * What names any bytecode index of one method without reading it again:
 * where its bytecodes are and its line table as read (an interpreted
 * method runs at many indexes, each a frame of its own).
 */
#define HOTSPOT_LINE_TABLE_MAX 4096u
struct hotspot_method_lines {
	uint64_t const_method; /* the Method's ConstMethod: changes when it is redefined */
	uint64_t code;	       /* its first bytecode */
	uint16_t code_size;
	bool has_table;	  /* the method has a line table ... */
	size_t table_len; /* ... of which this much was read (0: none could be) */
	uint8_t *table;	  /* malloc'd, table_len bytes; NULL when none */
};

/* The line of bytecode index `bci` in `lines`' method; 0 when unknown. */
int hotspot_method_line(const struct hotspot_jvm *j, const struct hotspot_method_lines *lines,
			int32_t bci);

/*
 * hotspot_name_method with no index, and what names its indexes into
 * *lines (free its table with free()). 0 or an error.
 */
int hotspot_name_method_lines(const struct hotspot_jvm *j, uint64_t method,
			      struct hotspot_frame *out, struct hotspot_method_lines *lines);

/* The method at `method` (a Method*), at bytecode index `bci` (-1: none). 0 or an error. */
int hotspot_name_method(const struct hotspot_jvm *j, uint64_t method, int32_t bci,
			struct hotspot_frame *out);

/* What else naming an nmethod found: whether the answer is final, and which compilation it was. */
struct hotspot_named {
	/*
	 * false: a read failed on the way (the read budget, a stuck page, a
	 * method being freed) and the nmethod's own method stands in for
	 * what it inlined there: worth asking again later, not keeping.
	 */
	bool complete;
	int32_t compile_id; /* the nmethod's, -1 when its header was not read */
};

/*
 * The frames of nmethod `nm` at code offset `pc_offset` (from its code's
 * start), a call's return address (is_return: the debug information
 * recorded at it exactly, else none) or a sampled leaf (the debug
 * information nearest after it): each method inlined there, innermost
 * first; of a chain deeper than `max`, the outermost `max`. With
 * compile_id >= 0 the nmethod must be that compilation (-ESTALE if not).
 * The number of frames, or an error; `named` (may be NULL) says more.
 */
int hotspot_name_nmethod(const struct hotspot_jvm *j, uint64_t nm, uint32_t pc_offset,
			 bool is_return, int32_t compile_id, struct hotspot_frame *out, int max,
			 struct hotspot_named *named);

#endif
