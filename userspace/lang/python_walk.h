/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A thread's Python frames read from userspace, as bpf/python.bpf.h reads
 * them in BPF: for a thread asleep since before the recording began, which
 * no sample or switch-out ever caught (capture/task_stacks.c walks its
 * stacks at the end). Same routes (its pthread key, else its interpreter's
 * thread list), same bounds, same output: two words a frame, innermost
 * first, and the interpreter loop's user frames tagged USTACK_PY_EVAL.
 */
#ifndef BPFPROF_LANG_PYTHON_WALK_H
#define BPFPROF_LANG_PYTHON_WALK_H

#include <stddef.h>
#include <stdint.h>

#include "../../bpf/bpfprof_abi.h"

/* Reads len bytes at addr of the process: 0, or -errno (the process's memory is hostile). */
typedef int (*python_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);

/*
 * The Python frames of the thread whose fs base is `fsbase` in the process
 * `pp` describes, into py (2 * BPFPROF_MAX_PYFRAMES words); its user frames
 * uips[0 .. un) (innermost first) in the loop get USTACK_PY_EVAL. Returns
 * the number of frames (0: none found); *truncated when cut.
 */
uint32_t python_walk_thread(const struct py_proc *pp, uint64_t fsbase, python_read_fn read,
			    void *ctx, uint64_t *uips, uint32_t un, uint64_t *py, bool *truncated);

#endif
