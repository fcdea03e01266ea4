/* SPDX-License-Identifier: BSD-2-Clause */
/* Parsing of /proc/PID/maps. */
#ifndef BPFPROF_PROC_MAPS_H
#define BPFPROF_PROC_MAPS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "../util/vec.h"

struct map_entry {
	uint64_t start, end, pgoff;
	dev_t dev; /* makedev(major, minor) */
	uint64_t inode;
	bool readable, writable, executable, shared;
	char *path; /* "" for anonymous; "[vdso]", "[stack]", ... kept as is; " (deleted)" stripped */
	bool deleted; /* the path had a " (deleted)" suffix */
};

typedef VEC(struct map_entry) map_entries_t;

/* Parse maps text from `f` and append to `out`; 0, or -EINVAL/-ENOMEM. */
int proc_maps_parse(FILE *f, map_entries_t *out);
/*
 * Read /proc/PID/maps (proc_root is normally "/proc"); -ENOENT when the
 * process is gone. On any error `out` is left empty (freed).
 */
int proc_maps_read(const char *proc_root, pid_t pid, map_entries_t *out);
void map_entries_free(map_entries_t *v);

#endif
