/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Feeds the model the kernel's side-band records (forks, exits, execs,
 * renames, executable mmaps) of the target processes, in time order, before
 * each drain of the BPF rings: a sample's addresses are then always decoded
 * against the mappings its process had.
 */
#ifndef BPFPROF_LIFECYCLE_FEED_H
#define BPFPROF_LIFECYCLE_FEED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../capture/sideband.h"
#include "../util/hashmap.h"
#include "../util/vec.h"

struct model;

/* One side-band record kept until its drain is sorted; `path` is owned. */
struct feed_record {
	struct sideband_record rec;
	char *path;
	uint64_t seq;
};

struct unwind_loader;

struct lifecycle_feed {
	struct sideband sb;
	bool open;
	struct model *model;
	/* Targets: every process (-a), or these tgids and, with follow_forks, their children. */
	bool all;
	bool follow_forks;
	struct hmap targets;
	/*
	 * --cgroup: a process is a target when its /proc/PID/cgroup path lies
	 * in one of these trees, when its parent is one at its fork, or when
	 * the model has it (the kernel filter let its events through: it moved
	 * in). Decisions are kept per pid (MEMBER_IN/OUT) until it exits.
	 */
	const char *const *cgroup_paths;
	size_t nr_cgroup_paths;
	struct hmap members;
	VEC(struct feed_record) pending;
	uint64_t seq;
	uint64_t applied, lost;
	struct unwind_loader *unwind; /* WIP: targets' executable mappings for the CFI unwinder */
};

/*
 * Open the side-band on the online CPUs. tgids == NULL: the whole machine.
 * Returns 0, or -errno with a one-line reason in f->sb.error (the recording
 * goes on without lifecycles then).
 */
int lifecycle_feed_open(struct lifecycle_feed *f, struct model *m, const bool *online, int nr_cpus,
			const uint32_t *tgids, size_t nr_tgids, bool follow_forks);
/* Follow only processes inside these cgroup v2 trees (paths as /proc/PID/cgroup has them). */
void lifecycle_feed_set_cgroups(struct lifecycle_feed *f, const char *const *paths, size_t n);
/* Read what the kernel wrote and apply it to the model in time order; 0 or -ENOMEM. */
int lifecycle_feed_drain(void *feed);
void lifecycle_feed_close(struct lifecycle_feed *f);

#endif
