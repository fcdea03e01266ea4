/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The --cgroup arguments of a recording, resolved once: what the kernel
 * filter needs (fd, id, level), what the lifecycle feed compares
 * (/proc/PID/cgroup paths), and how the profile names them.
 */
#ifndef BPFPROF_CGROUP_TARGETS_H
#define BPFPROF_CGROUP_TARGETS_H

#include <stddef.h>
#include <stdint.h>

#include "../../bpf/bpfprof_abi.h"
#include "../capture/session.h"
#include "../cgroup/cgroup_fs.h"

struct cgroup_targets {
	size_t n;
	struct cgroup_target target[BPFPROF_MAX_CGROUPS];
	struct session_cgroup session[BPFPROF_MAX_CGROUPS]; /* for session_config */
	const char *path[BPFPROF_MAX_CGROUPS];		    /* target[i].path */
	char *desc[BPFPROF_MAX_CGROUPS];		    /* "/a/b (id 1234)", for the meta */
};

/* Resolve every argument; 0, or 1 after a one-line error (nothing is left open then). */
int cgroup_targets_open(struct cgroup_targets *c, const char *const *args, size_t n);
void cgroup_targets_close(struct cgroup_targets *c);
/*
 * Call fn for every process in the target trees now (each cgroup.procs, sub-
 * cgroups included); a process listed twice (nested targets) is passed twice.
 * 0, or the first non-zero fn returned.
 */
int cgroup_targets_for_each_process(const struct cgroup_targets *c,
				    int (*fn)(void *ctx, uint32_t pid), void *ctx);

#endif
