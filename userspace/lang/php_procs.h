/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The recording's PHP processes and the functions their samples name. A
 * sample carries, per PHP frame, the address of its zend_function and the
 * line its opline is at (bpf/php.bpf.h); here the function becomes
 * "Class::method" and its file (lang/php_names.h), read from the process
 * while it lives and kept per process by address (a function lives as
 * long as its script, the whole run for the CLI and a worker's request).
 *
 * Reads go through a reader with a deadline (python_reader.h: a page on
 * a FUSE mount its owner never answers holds a worker, not the caller),
 * within a read budget per user (read_budget.h); what is kept has a count
 * per process and a byte budget over all: past them, a frame is named so.
 */
#ifndef BPFPROF_LANG_PHP_PROCS_H
#define BPFPROF_LANG_PHP_PROCS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "php_layout.h"
#include "php_names.h"
#include "python_reader.h"
#include "read_budget.h"

/* Functions kept per process, and the bytes all processes' take at most. */
#define PHP_PROC_MAX_FUNCS  8192
#define PHP_PROCS_MAX_BYTES (64u << 20)
#define PHP_OVER_BUDGET	    "[PHP function past bpfprof's memory budget]"
#define PHP_UNREAD	    "[PHP function unread: read budget or deadline]"

struct php_procs;

struct php_procs *php_procs_new(void);
void php_procs_free(struct php_procs *p);
/* Tests: read memory through `fn` (on worker threads) instead of process_vm_readv. */
void php_procs_set_reader(struct php_procs *p, python_mem_read_fn fn, void *ctx);
/* Tests: the read budget's limits (read_budget.h) in place of the recording's; 0 or -ENOMEM. */
int php_procs_set_read_limits(struct php_procs *p, const struct read_budget_limits *limits);

/* Process `pid` of user `uid` runs PHP `info`. Forgets an earlier image's. 0 or -ENOMEM. */
int php_procs_add(struct php_procs *p, uint32_t pid, uint32_t uid, const struct php_info *info);
/* `child` was forked from `parent`: the same PHP (its functions are read anew). 0 or -ENOMEM. */
int php_procs_fork(struct php_procs *p, uint32_t parent, uint32_t child);
/* The process exited or exec'd: its functions go. */
void php_procs_forget(struct php_procs *p, uint32_t pid);
bool php_procs_known(const struct php_procs *p, uint32_t pid);
/* The PHP version of a known process (php_layout.h), 0 when none. */
uint32_t php_procs_version(const struct php_procs *p, uint32_t pid);
/*
 * The versions of the PHP processes met ("8.2", "8.2 8.3"), into buf: for
 * the recording's frame-quality line. "" when none.
 */
const char *php_procs_versions(const struct php_procs *p, char *buf, size_t size);
/* The user a known process's frames are charged to, into *uid; false when unknown. */
bool php_procs_uid(const struct php_procs *p, uint32_t pid, uint32_t *uid);

struct php_location {
	const char *name; /* "Class::method", "function", "{main}"; never NULL */
	const char *file; /* "" for an internal function; never NULL */
	int line;	  /* of the frame's opline; 0 when unknown */
	bool internal;
};

/*
 * The function, file and line of a PHP frame of `pid`: its zend_function
 * `func` and the word BPF sent with it ((line << 1) | entry). Strings stay
 * valid until the process is forgotten. 0 (possibly with a name that says
 * why it is unknown), -ENOENT (not a PHP process here), -ENOMEM.
 */
int php_procs_resolve(struct php_procs *p, uint32_t pid, uint64_t func, uint64_t instr,
		      struct php_location *out);

struct php_procs_stats {
	uint64_t functions_read, reads_refused, over_budget;
	size_t bytes;
};
void php_procs_get_stats(const struct php_procs *p, struct php_procs_stats *out);

#endif
