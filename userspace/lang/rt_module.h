/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What a runtime module (lang/hotspot_procs.h; a V8 one likewise) tells
 * the capture about its processes, for the BPF map rt_procs
 * (bpf/runtime.bpf.h): the capture (capture/rt_loader.c) holds no
 * runtime's knowledge, only these answers.
 */
#ifndef BPFPROF_LANG_RT_MODULE_H
#define BPFPROF_LANG_RT_MODULE_H

#include <stdint.h>

#include "../../bpf/bpfprof_abi.h"
#include "../symbols/proc_maps.h"

/* Runtime modules a recording has at most. */
#define RT_MAX_MODULES 4

struct rt_module {
	void *ctx; /* the module's registry */
	/*
	 * pid's mappings, just read: 1 when they show the module's runtime
	 * now (not one of an image pid exec'd away from), 0 when not, -ENOMEM.
	 */
	int (*note_maps)(void *ctx, uint32_t pid, const map_entries_t *maps);
	/*
	 * What BPF should read in pid's frames: 0 with *out filled, -EAGAIN
	 * when the runtime is not set up yet (asked again later), -ENOENT when
	 * it cannot be read.
	 */
	int (*capture)(void *ctx, uint32_t pid, uint32_t uid, struct rt_proc *out);
};

#endif
