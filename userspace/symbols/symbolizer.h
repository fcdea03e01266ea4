/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Address -> symbol. Owns the registry of objects (binaries a frame can
 * point into: the kernel, ELF files, the vDSO) and a symbol table per object,
 * loaded once and shared by every process that maps it. Objects are keyed by
 * (device, inode) for files, so the same library seen in 200 processes is
 * parsed once.
 */
#ifndef BPFPROF_SYMBOLIZER_H
#define BPFPROF_SYMBOLIZER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "proc_maps.h"

struct symbolizer;

enum object_kind {
	OBJECT_KERNEL,
	OBJECT_UNKNOWN,
	OBJECT_SYNTHETIC, /* ids reserved for frames that are no code (frame_objects.h) */
	OBJECT_ELF,
	OBJECT_VDSO,
};

struct object_info {
	enum object_kind kind;
	const char *name;     /* basename: "libc.so.6", "[kernel.kallsyms]", "[vdso]" */
	const char *path;     /* path as the process saw it */
	const char *build_id; /* lowercase hex, or NULL */
	uint8_t runtime; /* enum code_runtime (lang/code_runtime.h), once its symbols are read */
};

/* At most this many frames for one address (1 + inline depth); see resolved_frame. */
#define RESOLVED_MAX_DEPTH 16

/*
 * One address resolved: item 0 is the real function; items 1.. are the
 * functions inlined into it at that address, outer to inner. Each item's
 * line is where that function is at the address: the call of the next
 * item for all but the last, the address' own line for the last.
 */
struct resolved_frame {
	unsigned count; /* >= 1 */
	struct {
		const char *func; /* demangled name, never NULL or empty */
		const char *file; /* source file or NULL */
		int line;	  /* 0 when unknown */
		int start_line;	  /* where the function starts in `file`; 0 when unknown */
	} items[RESOLVED_MAX_DEPTH];
	/* Resource the functions belong to: a library or "[kernel.kallsyms]" / "[module]". */
	const char *resource;	       /* NULL for none */
	const struct object_info *lib; /* the libs[] entry to cite, or NULL (kernel, unknown) */
	int64_t address;	       /* library-relative address (first PT_LOAD based), or -1 */
	/*
	 * The ELF symbol holding the address, for the assembly view: its
	 * library-relative start (-1: none), its size in bytes and its name.
	 */
	int64_t symbol_address;
	uint64_t symbol_size;
	const char *symbol_name;
	bool kernel;
	/* A Python function's frame (symbols/python_frames.h): the Python category. */
	bool python;
	/* A PHP function's frame (symbols/java_frames.h, JAVA_FRAMES_PHP): the PHP category. */
	bool php;
	/* A Ruby method's or block's frame (the Ruby frames' python_frames table): Ruby's. */
	bool ruby;
	/* JIT code of a JVM or of V8 (symbols/jit_maps.h): the Java or JavaScript category. */
	bool java, javascript;
	/* A JavaScript function (not V8's builtins): the front-end's "JavaScript only" keeps it. */
	bool is_js;
	/*
	 * Not code: the "off-CPU: <reason>" leaf of an off-CPU sample. It gets
	 * the Off-CPU category and no resource, so that waiting is told apart
	 * from running in the graphs and does not count towards any library.
	 */
	bool offcpu;
};

/*
 * `proc_root` is normally "/proc"; tests point it at a fake tree.
 * The kernel symbol source is `kallsyms_path` (normally "/proc/kallsyms").
 */
struct symbolizer *symbolizer_new(const char *proc_root, const char *kallsyms_path);
/*
 * Object ids below OBJ_FIRST_FILE (frame_objects.h) are registered by _new:
 * the kernel, unknown addresses, and the synthetic ids, which it never
 * resolves (the profile's tables name them).
 */
void symbolizer_free(struct symbolizer *s);

/*
 * Where separate debug files are looked up by build-id and debug link
 * (default "/usr/lib/debug"); set before resolving. 0 or -ENOMEM.
 */
int symbolizer_set_debug_root(struct symbolizer *s, const char *path);

struct debuginfo_server;
/* Ask this debuginfod client (not owned; NULL: none) for debug files found nowhere locally. */
void symbolizer_set_debuginfod(struct symbolizer *s, struct debuginfo_server *d);

/*
 * At most this many files are kept open from registration to resolution
 * (default: 1024, or half the RLIMIT_NOFILE soft limit if that is lower).
 * Objects past it are reopened by path when resolved, which fails for
 * files of processes that have exited meanwhile. Affects later registrations.
 * A file is closed once its object is read, or swept.
 */
void symbolizer_set_max_open_files(struct symbolizer *s, unsigned n);

/*
 * DWARF read into memory (files users other than root can change, each
 * within DWARF_IMAGE_MAX_BYTES) across all live objects: at most `all`
 * bytes, and those of files of one owner at most `per_owner`, so that many
 * -g builds, one user's or many users', cannot grow the profiler past one
 * file's cap times their number. A file past what is left gets no DWARF
 * (its symbols name it, without lines). Defaults: SYMBOLIZER_DWARF_BUDGET
 * and half of it.
 */
#define SYMBOLIZER_DWARF_BUDGET (1ull << 30)
void symbolizer_set_dwarf_budget(struct symbolizer *s, uint64_t all, uint64_t per_owner);

/*
 * The object for a file-backed executable mapping of process `pid` (or the
 * vDSO); interned by dev+inode (files) or kind (vDSO). Returns the object id
 * (>= OBJ_FIRST_FILE, frame_objects.h) or a negative errno. Mappings that
 * cannot be symbolized (anonymous) return -ENOENT. Call it while `pid`
 * lives: the object's file is opened here and kept (see
 * symbolizer_set_max_open_files), so that it can be read after the
 * process has exited or from outside its mount namespace.
 */
int64_t symbolizer_object_for_mapping(struct symbolizer *s, pid_t pid, const struct map_entry *m);

const struct object_info *symbolizer_object(struct symbolizer *s, uint32_t object);

/*
 * Resolve (object, offset): for files and the vDSO `offset` is the file
 * offset of the instruction (with DWARF, in the file or a separate debug
 * file, also its source lines and inlined calls; read at the first
 * address resolved in the object); for OBJ_KERNEL the kernel address; for
 * OBJ_UNKNOWN the raw user address; for OBJ_OFFCPU an enum offcpu_reason
 * (the frame is named "off-CPU: <reason>" and flagged `offcpu`). `is_return` means the address is a
 * return address (look up offset - 1). Never fails: an address without a
 * symbol resolves to "libname+0xOFFSET" (or "0xADDR"; so does any offset
 * of an id that was swept). Strings stay valid until symbolizer_free, with
 * two exceptions: those of an object (its function, file and library
 * names, and `lib`) until that object is swept, and names made of an
 * address ("0xADDR", "libname+0xOFFSET") until the next symbolizer_sweep.
 */
void symbolizer_resolve(struct symbolizer *s, uint32_t object, uint64_t offset, bool is_return,
			struct resolved_frame *out);

/*
 * Bounded memory for a profiler that runs for days (continuous mode), by
 * mark and sweep. After a snapshot is written: symbolizer_retain_begin,
 * then symbolizer_retain for every object still referenced (live
 * processes' mappings, frames the next snapshot will resolve), then
 * symbolizer_sweep frees every other object: its symbols, DWARF, kept file,
 * strings and index entries. OBJ_KERNEL..OBJ_OFFCPU and the vDSO are
 * always kept; objects registered after retain_begin count as marked.
 * Marked objects keep their ids and everything they loaded. The id of a
 * swept object may be handed out again by a later registration, and a
 * later mapping of a swept file registers it anew, so nothing may still
 * hold a swept id (symbolizer_object returns NULL for it meanwhile).
 */
void symbolizer_retain_begin(struct symbolizer *s);
/* Mark `object`; reserved (< OBJ_FIRST_FILE) and unknown ids are ignored. */
void symbolizer_retain(struct symbolizer *s, uint32_t object);
/* Free every unmarked object; returns how many were freed. */
size_t symbolizer_sweep(struct symbolizer *s);
/*
 * A profile (a continuous snapshot, a scrape) is about to be symbolized,
 * or is done; both under the lock the symbolizer is used under. The time
 * budgets spent for earlier profiles (checking debug files by CRC, fetching
 * them from debuginfod, decoding Go lines) start again, so that a days-long
 * run does not lose names once they are spent. Builds overlap in continuous
 * mode: a snapshot's, on the recording's schedule (`scheduled`), and a
 * scrape's, which any local user may ask for. A scheduled build starts them
 * again always (at most once a snapshot interval); an asked-for one only
 * when no other build is in flight, so that scrapes neither refill the
 * budget a snapshot is spending nor, one after another, keep it from ever
 * starting again.
 */
void symbolizer_build_begin(struct symbolizer *s, bool scheduled);
void symbolizer_build_end(struct symbolizer *s);

struct symbolizer_stats {
	uint64_t objects, objects_failed; /* alive: swept ones are not counted */
	uint64_t symbols_loaded;
	uint64_t lookups;
	uint64_t bytes;		   /* approximate memory held by caches, DWARF included */
	uint64_t dwarf_objects;	   /* objects whose DWARF was read */
	uint64_t dwarf_bytes;	   /* estimated memory held for DWARF (part of `bytes`) */
	uint64_t dwarf_read_bytes; /* of it, DWARF read into memory (symbolizer_set_dwarf_budget) */
	uint64_t open_files;	   /* files kept open since registration */
};
void symbolizer_get_stats(const struct symbolizer *s, struct symbolizer_stats *out);

#endif
