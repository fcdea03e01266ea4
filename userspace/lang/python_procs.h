/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The recording's Python processes and the code objects their samples
 * name. A sample carries, per Python frame, the address of its code object
 * and its instruction pointer (bpf/python.bpf.h); here they become a
 * function's qualified name, its file and the line, read from the
 * process's memory (process_vm_readv) while it lives and kept per process
 * (a code object lives as long as its function, mostly the whole run).
 *
 * Everything read is the process's own, so hostile: lengths are bounded,
 * every object's type is checked against the interpreter's PyCode_Type,
 * and a failed read is a frame without a name, never an error.
 */
#ifndef BPFPROF_LANG_PYTHON_PROCS_H
#define BPFPROF_LANG_PYTHON_PROCS_H

#include <stdint.h>
#include <sys/types.h>

#include "python_layout.h"

struct python_procs;

/* Reads process memory: bytes read, or -1 (the default reads with process_vm_readv). */
typedef ssize_t (*python_mem_read_fn)(void *ctx, uint32_t pid, uint64_t addr, void *buf,
				      size_t len);

struct python_procs *python_procs_new(void);
void python_procs_free(struct python_procs *p);
/* Tests: read memory through `fn` instead of process_vm_readv. */
void python_procs_set_reader(struct python_procs *p, python_mem_read_fn fn, void *ctx);

/*
 * Process `pid` runs the interpreter `info`, whose ELF addresses are
 * `load_bias` off in it; `cwd` (may be NULL) makes its relative script
 * paths absolute. Forgets what was known of an earlier image. 0 or -ENOMEM.
 */
int python_procs_add(struct python_procs *p, uint32_t pid, const struct python_info *info,
		     int64_t load_bias, const char *cwd);
/*
 * `child` was forked from `parent`: the same interpreter at the same
 * addresses (its code objects are read anew). 0, or -ENOMEM.
 */
int python_procs_fork(struct python_procs *p, uint32_t parent, uint32_t child);
/* The process exited or exec'd: its code objects go. */
void python_procs_forget(struct python_procs *p, uint32_t pid);
/* Whether `pid` is a Python process known here. */
int python_procs_known(const struct python_procs *p, uint32_t pid);

struct python_location {
	const char *qualname; /* "Class.method", "<module>"; never NULL */
	const char *filename; /* absolute when it could be made so; never NULL */
	int first_line;	      /* where the function starts */
	int line;	      /* of the instruction; 0 when the table does not say */
};

/*
 * The function, file and line of a Python frame of `pid`: its code object
 * `code` and the frame's last instruction pointer `instr`. Strings stay
 * valid until the process is forgotten. 0, -ENOENT (not a Python process
 * here, or not a code object), -EIO (unreadable: the process is gone),
 * -ENOMEM.
 */
int python_procs_resolve(struct python_procs *p, uint32_t pid, uint64_t code, uint64_t instr,
			 struct python_location *out);

/* Line of code unit `unit` in a 3.11+ location table (PEP 657's format); 0: none. */
int python_line_of(const uint8_t *table, size_t len, int first_line, int64_t unit);

#endif
