/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Reads of another process's memory that cannot hold up the caller. A
 * page of a Python process may be backed by a file on a FUSE mount its
 * owner serves, who need never answer: process_vm_readv then waits in the
 * page fault, unkillable by our SIGTERM (issue 37). The thread that drains
 * the rings must never wait there, so every read runs on a worker thread
 * and the caller waits for it only until a deadline; past it the worker is
 * left to its read (it goes back to work if the read ever returns) and the
 * caller is told.
 *
 * Each read names its owner (the uid whose process it reads). An owner has
 * at most one read stuck at a time: while it has one, its reads are
 * refused at once, so two users with FUSE pages hold two workers, not the
 * pool, and every other owner still finds one (issue 37). The pool starts
 * workers as they are needed, up to PY_READER_MAX_WORKERS: a stuck worker
 * is replaced by a new one until then, and only as many owners as that
 * holding stuck reads at once can leave the others none.
 */
#ifndef BPFPROF_LANG_PYTHON_READER_H
#define BPFPROF_LANG_PYTHON_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PY_READER_MAX_WORKERS 32

/* Reads process memory: bytes read, or -1. */
typedef ssize_t (*python_mem_read_fn)(void *ctx, uint32_t pid, uint64_t addr, void *buf,
				      size_t len);

struct py_reader;

/* `fn(ctx, ...)` is called on worker threads, one call at a time per worker. NULL: no memory. */
struct py_reader *py_reader_new(python_mem_read_fn fn, void *ctx, unsigned deadline_ms);
/*
 * What fn answers for the read of `owner`'s process `pid`, or -ETIMEDOUT
 * (no answer by the deadline: the read is abandoned, `buf` untouched, and
 * `owner` holds a stuck read until it returns), -EBUSY (refused at once:
 * `owner` holds a stuck read, or every worker is stuck) or -ENOMEM.
 */
ssize_t py_reader_read(struct py_reader *r, uint32_t owner, uint32_t pid, uint64_t addr, void *buf,
		       size_t len);
/* Whether an abandoned read of `owner`'s is stuck still. */
bool py_reader_holds(struct py_reader *r, uint32_t owner);
/* Workers stuck in a read now. */
unsigned py_reader_stuck(struct py_reader *r);
/* Ends the idle workers; a stuck one ends (and frees what is left) when its read returns. */
void py_reader_free(struct py_reader *r);

#endif
