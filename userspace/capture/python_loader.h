/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Finds the Python processes among those the unwinder reads: a process
 * that maps a CPython interpreter (lang/python_layout.h) gets its
 * roots, interpreter loop and layout published to the BPF map
 * py_procs (bpf/python.bpf.h) and registered with lang/python_procs for
 * naming its code objects. Interpreter files are examined once each.
 */
#ifndef BPFPROF_CAPTURE_PYTHON_LOADER_H
#define BPFPROF_CAPTURE_PYTHON_LOADER_H

#include <stdint.h>

#include "../lang/python_layout.h"
#include "interp_files.h"
#include "proc_shares.h"
#include "../symbols/proc_maps.h"
#include "../util/glibc_tsd.h"
#include "../util/hashmap.h"
#include "../util/vec.h"

struct python_procs;

struct python_loader_file {
	struct python_info info;
	int status; /* python_info_read's answer */
};

struct python_loader {
	struct proc_shares *shares;	/* holds the BPF map py_procs; not owned */
	struct python_procs *procs;	/* not owned */
	struct interp_file_cache files; /* its interpreter files met */
	struct interp_gone gone;	/* exited, forgotten three flushes later */
	uint32_t warned_version;	/* the last version without a layout, reported once */
	struct glibc_tsd tsd;		/* bpfprof's libc: where a thread keeps its key values */
	size_t processes;		/* Python processes published */
};

/* `shares` publishes to py_procs (proc_shares_use(shares, PROC_SHARE_PY, ...)). */
void python_loader_init(struct python_loader *l, struct proc_shares *shares,
			struct python_procs *procs);
void python_loader_free(struct python_loader *l);

/*
 * Process `pid`, whose mappings are `maps` (just read): publish it when it
 * runs an interpreter bpfprof has a layout for, else withdraw it (an exec
 * to something else). `uid`: the user whose shares it takes, its owner's
 * (proc_shares_user). 0 or -ENOMEM.
 */
int python_loader_process(struct python_loader *l, uint32_t pid, uint32_t uid,
			  const map_entries_t *maps);

/* `child` was forked from `parent` (the kernel side copies the BPF entry itself). */
int python_loader_forked(struct python_loader *l, uint32_t parent, uint32_t child);

/*
 * The process exited. Its code objects stay in the cache for three more
 * flushes (one a drain): the samples it took before exiting are decoded
 * after its exit record, in this drain or, held back, after the next one.
 */
void python_loader_exited(struct python_loader *l, uint32_t pid);
void python_loader_flush(struct python_loader *l);

#endif
