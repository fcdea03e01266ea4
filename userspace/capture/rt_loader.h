/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Publishes the processes that run a JIT runtime to the BPF map rt_procs
 * (bpf/runtime.bpf.h): each runtime module (lang/rt_module.h) that sees
 * its runtime in a process's mappings answers, once the runtime is set up,
 * where its code is and which words of its frames to read (for a JVM,
 * lang/hotspot_procs.h). A runtime still starting is asked again at each
 * refresh until it answers or exits.
 */
#ifndef BPFPROF_CAPTURE_RT_LOADER_H
#define BPFPROF_CAPTURE_RT_LOADER_H

#include <stdint.h>

#include "../lang/rt_module.h"
#include "../symbols/proc_maps.h"
#include "../util/vec.h"
#include "proc_shares.h"

struct rt_loader_pending {
	uint32_t pid, uid;
	int module; /* the one whose runtime it maps */
};

struct rt_loader {
	struct proc_shares *shares; /* holds the BPF map rt_procs; not owned */
	struct rt_module modules[RT_MAX_MODULES];
	int nmodules;
	VEC(struct rt_loader_pending) pending; /* runtimes not set up yet */
	size_t processes;		       /* published */
};

/*
 * `shares` publishes to rt_procs (proc_shares_use(shares, PROC_SHARE_RT,
 * ...)); the n modules (at most RT_MAX_MODULES are kept) are copied.
 */
void rt_loader_init(struct rt_loader *l, struct proc_shares *shares,
		    const struct rt_module *modules, int n);
void rt_loader_free(struct rt_loader *l);

/*
 * Process `pid` (its user `uid`, as proc_shares_user says), whose mappings
 * are `maps` (just read): published when a runtime answers, asked again
 * later while it starts, withdrawn otherwise. 0 or -ENOMEM.
 */
int rt_loader_process(struct rt_loader *l, uint32_t pid, uint32_t uid, const map_entries_t *maps);
/* The runtimes still starting are asked again. 0 or -ENOMEM. */
int rt_loader_refresh(struct rt_loader *l);
void rt_loader_exited(struct rt_loader *l, uint32_t pid);

#endif
