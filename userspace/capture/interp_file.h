/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the interpreters' loaders (python_loader.h, ruby_loader.h) share:
 * a mapped file examined as its process maps it, once per (device, inode).
 */
#ifndef BPFPROF_CAPTURE_INTERP_FILE_H
#define BPFPROF_CAPTURE_INTERP_FILE_H

#include <libelf.h>
#include <stdint.h>

#include "../symbols/proc_maps.h"
#include "../util/hashmap.h"
#include "../util/vec.h"

/*
 * Processes that exited, each forgotten three flushes (one a drain) after
 * its exit: the samples it took before exiting are decoded after its exit
 * record, in this drain or, held back, after the next one.
 */
struct interp_gone_pid {
	uint32_t pid;
	uint64_t flush; /* the flush count at its exit */
};
struct interp_gone {
	VEC(struct interp_gone_pid) pids;
	uint64_t flushes;
};

/* `pid` exited: 0, or -ENOMEM (the caller forgets it now rather than never). */
int interp_gone_add(struct interp_gone *g, uint32_t pid);
/* A flush: forget(ctx, pid) for each process whose time came. */
void interp_gone_flush(struct interp_gone *g, void (*forget)(void *ctx, uint32_t pid), void *ctx);

/* The key of mapping `e`'s file in a loader's file index. */
struct hmap_key interp_file_key(const struct map_entry *e);

/*
 * `read(elf, out)`'s answer for the file of mapping `e` of `pid`, opened
 * through /proc/PID/map_files (the mapped file itself, not a path its
 * owner could swap); 0 for a file that is no regular ELF file; -EBADF when
 * it cannot be opened (not ours to read, or gone: maybe next time).
 */
int interp_file_examine(uint32_t pid, const struct map_entry *e, int (*read)(Elf *, void *),
			void *out);

#endif
