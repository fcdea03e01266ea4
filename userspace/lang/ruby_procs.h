/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The recording's Ruby processes and the iseqs their samples name. A
 * sample carries, per Ruby frame, its iseq's address and the VM's pc
 * (bpf/ruby.bpf.h); here they become the iseq's label ("inner", "block in
 * inner", "<main>"), its file and the line, read from the process's memory
 * while it lives and kept per process (an iseq lives as long as its
 * method, mostly the whole run).
 *
 * Everything read is the process's own, so hostile: each object's type is
 * checked in its flags, lengths are bounded, and a failed read is a frame
 * without a name, never an error. What is kept has a byte budget over all
 * processes and per process; reads wait for a deadline only
 * (python_reader.h), and a process one of whose reads stalled is not read
 * again.
 */
#ifndef BPFPROF_LANG_RUBY_PROCS_H
#define BPFPROF_LANG_RUBY_PROCS_H

#include <stdint.h>
#include <sys/types.h>

#include "python_reader.h"
#include "ruby_layout.h"

struct ruby_procs;

struct ruby_procs *ruby_procs_new(void);
void ruby_procs_free(struct ruby_procs *p);
/* Tests: read memory through `fn` (on worker threads) instead of process_vm_readv. */
void ruby_procs_set_reader(struct ruby_procs *p, python_mem_read_fn fn, void *ctx);
/* Tests: the bytes kept over all processes and of one, and a read's deadline. */
void ruby_procs_set_limits(struct ruby_procs *p, size_t max_bytes, size_t max_proc_bytes,
			   unsigned read_deadline_ms);

/*
 * Process `pid` of user `uid` runs the interpreter `info` (`code`: its
 * layout); `cwd` (may be NULL) makes its relative script paths absolute.
 * Forgets what was known of an earlier image. 0 or -ENOMEM.
 */
int ruby_procs_add(struct ruby_procs *p, uint32_t pid, uint32_t uid,
		   const struct ruby_code_layout *code, const char *cwd);
/* `child` was forked from `parent`: the same interpreter (its iseqs are read anew). */
int ruby_procs_fork(struct ruby_procs *p, uint32_t parent, uint32_t child);
/* The process exited or exec'd: its iseqs go. */
void ruby_procs_forget(struct ruby_procs *p, uint32_t pid);
int ruby_procs_known(const struct ruby_procs *p, uint32_t pid);
/* A process of Ruby `version` (ruby_info.version) was met: for the recording's summary. */
void ruby_procs_note_version(struct ruby_procs *p, uint32_t version);
/* The minor versions met, "3.1" or "3.1, 3.2", into buf; "" when none. */
const char *ruby_procs_versions(const struct ruby_procs *p, char *buf, size_t len);

struct ruby_location {
	const char *label; /* "inner", "block in inner", "<main>"; never NULL */
	const char *path;  /* absolute when it could be made so; never NULL */
	int first_line;	   /* where the method or block starts */
	int line;	   /* of the instruction; 0 when the tables do not say */
};

/*
 * The label, file and line of a Ruby frame of `pid`: its iseq and the VM's
 * pc. Strings stay valid until the process is forgotten. 0 (a frame past
 * the budget or of a stalled process gets a name that says so), -ENOENT
 * (not a Ruby process here, or not an iseq), -EIO (unreadable), -ENOMEM.
 */
int ruby_procs_resolve(struct ruby_procs *p, uint32_t pid, uint64_t iseq, uint64_t pc,
		       struct ruby_location *out);

#endif
