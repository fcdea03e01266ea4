/* SPDX-License-Identifier: BSD-2-Clause */
/* What the interpreters' readers share: another process's memory, its script paths. */
#ifndef BPFPROF_LANG_PROC_MEM_H
#define BPFPROF_LANG_PROC_MEM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* process_vm_readv of `len` bytes at `addr` of `pid` (a python_mem_read_fn): bytes read, or -1. */
ssize_t proc_mem_read(void *ctx, uint32_t pid, uint64_t addr, void *buf, size_t len);

/*
 * `name` (malloc'd, may be NULL), a script path the process gave
 * relative, made absolute against its working directory `cwd` (NULL: not
 * known): the same or a new malloc'd string. "<string>"-style names stay,
 * and so does Ruby's "-e" (a script given on the command line).
 */
char *proc_path_absolute(const char *cwd, char *name);

#endif
