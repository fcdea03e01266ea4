/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The profile's shared tables (processed profile v66 `shared`), built from
 * the model after recording: every raw frame is symbolized once, funcs,
 * frames and stacks are hash-consed, and raw stacks are mapped to profile
 * stacks. Indexes in here are exactly what the emitter writes.
 */
#ifndef BPFPROF_PROFILE_TABLES_H
#define BPFPROF_PROFILE_TABLES_H

#include <stdint.h>

#include "../model/model.h"
#include "../symbols/symbolizer.h"
#include "../util/fair_lock.h"
#include "../util/hashmap.h"
#include "../util/strtab.h"
#include "../util/vec.h"

/* Indexes into meta.categories, in the order the emitter writes them. */
enum profile_category {
	CAT_OTHER = 0,	/* grey: the default category */
	CAT_KERNEL = 1, /* orange */
	CAT_USER = 2,	/* yellow */
	CAT_OFFCPU = 3, /* lightblue: off-CPU sample leaves and scheduling markers */
	CAT_PYTHON = 4, /* blue: Python functions (CPython's interpreter frames) */
	CAT_JAVA = 5,	/* green: Java methods and the JVM's JIT stubs */
	CAT_JS = 6,	/* magenta: JavaScript functions and V8's builtins */
	CAT_PHP = 7,	/* purple: PHP functions (the Zend engine's frames) */
	CAT_RUBY = 8,	/* red: Ruby methods and blocks (CRuby's control frames) */
	CAT_COUNT,
};

struct pt_func {
	uint32_t name;	  /* string */
	int32_t resource; /* -1 = none */
	int32_t source;	  /* -1 = null */
	int32_t line;	  /* 0 = null */
	bool is_js;	  /* funcTable.isJS: a JavaScript function */
};

struct pt_frame {
	uint32_t func;
	uint32_t category;
	int64_t address; /* -1 = none */
	uint32_t inline_depth;
	int32_t line;	       /* 0 = null */
	int32_t native_symbol; /* index in native_symbols, -1 = null */
};

/* An ELF symbol of a library: what the assembly view disassembles (nativeSymbols). */
struct pt_native_symbol {
	uint32_t lib;	  /* index in libs */
	uint64_t address; /* library-relative start */
	uint32_t name;	  /* string */
	uint64_t size;	  /* bytes */
};

struct pt_stack {
	uint32_t frame;
	uint32_t prefix; /* NO_INDEX = root */
};

struct pt_resource {
	uint32_t name; /* string */
	int32_t lib;   /* index in libs, -1 = null */
};

struct pt_lib {
	/*
	 * The tables' own copy of the library's identity (strings included):
	 * the symbolizer may drop its object once the tables are built, while
	 * a continuous snapshot is still being written from them.
	 */
	const struct object_info *obj;
};

/*
 * The "file" of a kernel function: its resource and this ("[kernel.kallsyms]
 * (no source)"). The front-end opens the source view on a double-click only
 * for a function with a file (or a native symbol, for the assembly view), so
 * on a kernel frame it did nothing at all; now the view opens with this as
 * its title above "Source code not available". The call tree shows it where
 * it showed the resource. The Firefox profile only: pprof gets no file.
 */
#define KERNEL_SOURCE_SUFFIX " (no source)"

struct profile_tables {
	struct strtab strings;
	VEC(struct pt_func) funcs;
	VEC(struct pt_frame) frames;
	VEC(struct pt_stack) stacks;
	VEC(struct pt_resource) resources;
	VEC(struct pt_lib) libs;
	VEC(struct pt_native_symbol) native_symbols;
	VEC(uint32_t) sources;	      /* filename string per source */
	VEC(uint32_t) source_namers;  /* per source: the uid its samples are of (source_namers.h) */
	VEC(uint32_t) raw_stack_map;  /* model raw stack -> profile stack */
	uint32_t process_marker_name; /* string "Process": the per-process info marker */
	uint32_t lost_marker_name;    /* "Lost events" when the model lost records, else NO_INDEX */
	/*
	 * Names of the scheduling markers, by enum sched_marker_kind, and of
	 * the per-thread "Scheduling" summary. Interned only when the model has
	 * scheduling data, so a profile without it keeps its old string table;
	 * NO_INDEX otherwise.
	 */
	uint32_t sched_marker_names[SCHED_MARKER_WAKEUP + 1];
	uint32_t sched_summary_marker_name;
	/*
	 * Syscall marker names by number (the last slot: numbers past the
	 * table) and the per-syscall totals' name; NO_INDEX where unused.
	 */
	uint32_t syscall_marker_names[SYSCALL_NR_MAX + 1];
	uint32_t syscall_totals_marker_name;
	struct hmap func_index, frame_index, stack_index, resource_index, lib_index, source_index,
		native_symbol_index;
};

typedef void (*frame_resolve_fn)(void *ctx, const struct raw_frame *f, struct resolved_frame *out);

/* Build all tables from the model (after model_finish). 0 or -ENOMEM. */
int profile_tables_build(struct profile_tables *t, const struct model *m, frame_resolve_fn resolve,
			 void *ctx);
/*
 * The same, with `resolve`'s sources shared with another thread: `lock` is
 * held while a frame is resolved and its names copied, and kept across
 * frames while nobody waits for it; a waiter waits one frame at most.
 */
int profile_tables_build_locked(struct profile_tables *t, const struct model *m,
				frame_resolve_fn resolve, void *ctx, struct fair_lock *lock);
void profile_tables_free(struct profile_tables *t);

/*
 * Whether a thread has scheduling markers or totals (then it gets a
 * "Scheduling" summary marker), and whether any thread has: then the tables
 * hold the scheduling marker names.
 */
bool profile_thread_has_sched(const struct thread *th);
bool profile_model_has_sched(const struct model *m);

/* The string index of the marker name of syscall `nr`. */
static inline uint32_t profile_syscall_name(const struct profile_tables *t, uint32_t nr)
{
	return t->syscall_marker_names[nr < SYSCALL_NR_MAX ? nr : SYSCALL_NR_MAX];
}

/* Profile stack for a sample's or marker's raw stack (NO_INDEX stays NO_INDEX). */
static inline uint32_t profile_stack_of(const struct profile_tables *t, uint32_t raw_stack)
{
	return raw_stack == NO_INDEX ? NO_INDEX : t->raw_stack_map.data[raw_stack];
}

#endif
