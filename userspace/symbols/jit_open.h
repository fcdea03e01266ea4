/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Opening a file another user controls (a perf map in their /tmp, a
 * jitdump they map) without waiting on them. Opening such a file can wait
 * for ever: on a FUSE file system whose server never answers, the lookup,
 * the open and even statfs wait in the kernel, unkillable by our SIGTERM,
 * and the caller is the thread that drains the rings or holds the lock it
 * needs. So the open runs on a worker (lang/python_reader.h's pool) and the
 * caller waits only until a deadline; a worker past it is left to its call,
 * and the file it may still open later is closed, not leaked. Each open
 * names its owner (the uid whose file it is): an owner with an open stuck
 * is refused at once until it returns, so one user never holds more than
 * one worker.
 */
#ifndef BPFPROF_JIT_OPEN_H
#define BPFPROF_JIT_OPEN_H

#include <stddef.h>
#include <stdint.h>

struct jit_opener;

struct jit_opener *jit_opener_new(unsigned deadline_ms);
void jit_opener_free(struct jit_opener *o);

/*
 * Open with `open_fn(arg)` on a worker: an fd or a negative errno from it,
 * or -ETIMEDOUT (the deadline passed), -EBUSY (`owner` has an open stuck,
 * or every worker is) or -ENOMEM. `arg` (`arg_size` bytes) is copied:
 * open_fn sees the copy, which may outlive the call; `drop(copy)` (may be
 * NULL) releases what it holds, once open_fn is done with it or will not
 * run.
 */
int jit_opener_run(struct jit_opener *o, uint32_t owner, int (*open_fn)(void *arg), const void *arg,
		   size_t arg_size, void (*drop)(void *arg));

/* Opens stuck past their deadline now. */
unsigned jit_opener_stuck(struct jit_opener *o);

#endif
