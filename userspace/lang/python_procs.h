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
 * and a failed read is a frame without a name, never an error. What is
 * kept has a byte budget, shared out per uid and per process; a line table
 * is indexed once (python_linetable.h); a read waits for a deadline only
 * (python_reader.h), and a uid one of whose reads stalled is not read
 * until that read returns, and for a while after.
 */
#ifndef BPFPROF_LANG_PYTHON_PROCS_H
#define BPFPROF_LANG_PYTHON_PROCS_H

#include <stdint.h>
#include <sys/types.h>

#include "python_layout.h"
#include "python_reader.h"

struct python_procs;

struct python_procs *python_procs_new(void);
void python_procs_free(struct python_procs *p);
/* Tests: read memory through `fn` (on worker threads) instead of process_vm_readv. */
void python_procs_set_reader(struct python_procs *p, python_mem_read_fn fn, void *ctx);
/*
 * Tests: the bytes kept over all processes, of one uid and of one process,
 * and how long a read may take before its process is read no more.
 */
void python_procs_set_limits(struct python_procs *p, size_t max_bytes, size_t max_uid_bytes,
			     size_t max_proc_bytes, unsigned read_deadline_ms);

/* What was not read, for the recording's summary. */
struct python_procs_stats {
	uint64_t over_budget_frames; /* frames whose code object was past a memory share */
	uint64_t stalled_frames;     /* frames left unread while their uid's read stalled */
	uint32_t stalled_procs;	     /* processes one of whose reads stalled */
	size_t bytes;		     /* what the code objects kept take now */
	size_t peak_bytes;	     /* and at most */
};
void python_procs_get_stats(const struct python_procs *p, struct python_procs_stats *out);

/*
 * Process `pid` of user `uid` (whose share of the cache it takes) runs the
 * interpreter `info`, whose ELF addresses are `load_bias` off in it; `cwd`
 * (may be NULL) makes its relative script paths absolute. Forgets what was
 * known of an earlier image. 0 or -ENOMEM.
 */
int python_procs_add(struct python_procs *p, uint32_t pid, uint32_t uid,
		     const struct python_info *info, int64_t load_bias, const char *cwd);
/*
 * `child` was forked from `parent`: the same interpreter at the same
 * addresses (its code objects are read anew). 0, or -ENOMEM.
 */
int python_procs_fork(struct python_procs *p, uint32_t parent, uint32_t child);
/* The process exited or exec'd: its code objects go. */
void python_procs_forget(struct python_procs *p, uint32_t pid);
/* Whether `pid` is a Python process known here. */
int python_procs_known(const struct python_procs *p, uint32_t pid);
/* Its interpreter's PY_VERSION_HEX (python_info's), 0 when not known here. */
uint32_t python_procs_version(const struct python_procs *p, uint32_t pid);
/*
 * `len` bytes of Python process pid's memory at `addr`, read as its code
 * objects are (on a reader thread, within the deadline; a uid whose read
 * stalled is not read for a while): 0, -ENOENT (not a Python process
 * known), or -EFAULT.
 */
int python_procs_read(struct python_procs *p, uint32_t pid, uint64_t addr, void *buf, size_t len);

struct python_location {
	const char *qualname; /* "Class.method", "<module>"; never NULL */
	const char *filename; /* absolute when it could be made so; never NULL */
	int first_line;	      /* where the function starts */
	int line;	      /* of the instruction; 0 when the table does not say */
};

/*
 * The function, file and line of a Python frame of `pid`: its code object
 * `code` and the frame's last instruction pointer `instr`. Strings stay
 * valid until the process is forgotten. A code object past the process's
 * memory share, or of a uid one of whose reads stalls, is not read:
 * 0 with a name that says so. 0, -ENOENT (not a Python process here, or not
 * a code object), -EIO (unreadable: the process is gone), -ENOMEM.
 */
int python_procs_resolve(struct python_procs *p, uint32_t pid, uint64_t code, uint64_t instr,
			 struct python_location *out);

#endif
