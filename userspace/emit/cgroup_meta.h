/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the profile says about cgroups, prepared before anything is written
 * (so writing cannot fail half-way on memory): each process's track label,
 * and the "more info" entries listing which processes each cgroup held.
 */
#ifndef BPFPROF_CGROUP_META_H
#define BPFPROF_CGROUP_META_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../cgroup/container_id.h"
#include "../model/model.h"

/* At most this many per-cgroup entries; the rest are only counted. */
#define CGROUP_META_MAX_ENTRIES 64
/* At most this many processes named per cgroup entry. */
#define CGROUP_META_MAX_LISTED	20

struct cgroup_meta_entry {
	char *label; /* "Cgroup /system.slice/docker-<id>.scope (container 0123456789ab)" */
	char *value; /* "2 processes: nginx (10), nginx (11)" */
};

struct cgroup_meta {
	/*
	 * Per model process: "<comm> [container <short id>]" when its cgroup
	 * names a container, "<comm> [<cgroup>]" with model.cgroup_names, or
	 * NULL for the plain name.
	 */
	char **proc_label;
	size_t nr_procs;
	struct cgroup_meta_entry *entries; /* by cgroup path */
	size_t nr_entries;
	uint64_t other_cgroups; /* distinct cgroups left out after CGROUP_META_MAX_ENTRIES */
};

/*
 * Labels always; per-cgroup entries only with model.cgroup_names or when a
 * container was recognised (a whole-machine profile stays small otherwise).
 * 0 or -ENOMEM (then nothing needs freeing).
 */
int cgroup_meta_build(struct cgroup_meta *c, const struct model *m);
void cgroup_meta_free(struct cgroup_meta *c);

/* The container of a process, from its cgroup; false when it has none that is recognised. */
bool process_container(const struct process *p, char id[CONTAINER_ID_MAX], const char **runtime);

/*
 * Whether the process's cgroup lies in a subtree a user owns (delegated),
 * where anyone may name a cgroup like a container: its container label is
 * then that user's claim, and says so.
 */
static inline bool process_cgroup_user_owned(const struct process *p)
{
	return p->cgroup_owner != 0 && p->cgroup_owner != CGROUP_OWNER_UNKNOWN;
}

#endif
