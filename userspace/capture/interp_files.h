/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the interpreters' loaders (python_loader.c, php_loader.c,
 * ruby_loader.c) share:
 * examining the ELF file a process maps, opened through the mapping's own
 * link (the file mapped, not a path its owner could swap), and keeping an
 * exited process's names a few flushes for its last samples.
 */
#ifndef BPFPROF_CAPTURE_INTERP_FILES_H
#define BPFPROF_CAPTURE_INTERP_FILES_H

#include <libelf.h>
#include <stdint.h>

#include "../symbols/proc_maps.h"
#include "../util/hashmap.h"
#include "../util/vec.h"

/* The key of mapping `e`'s file in a loader's file index: its device and inode. */
struct hmap_key interp_file_key(const struct map_entry *e);

/*
 * `examine(elf, ctx)`'s answer for the file of `pid`'s mapping `e`, 0 when
 * it is no regular ELF file; -ENOENT when it cannot be opened (not ours to
 * read, or gone: maybe next time).
 */
int interp_file_examine(uint32_t pid, const struct map_entry *e, int (*examine)(Elf *, void *),
			void *ctx);

/*
 * What each interpreter file a loader met is: examined once per (device,
 * inode), kept as the loader's entry (its info and examine()'s status, at
 * the offsets given). A file that could not be opened is asked again.
 */
struct interp_file_cache {
	size_t entry_size, info_off, status_off;
	int (*examine)(Elf *elf, void *info);
	uint8_t *entries;
	size_t n, cap;
	struct hmap index; /* (dev, ino) -> entries */
};

void interp_file_cache_init(struct interp_file_cache *c, size_t entry_size, size_t info_off,
			    size_t status_off, int (*examine)(Elf *elf, void *info));
void interp_file_cache_free(struct interp_file_cache *c);
/*
 * The entry of the file of `pid`'s mapping `e`, examined on first sight;
 * NULL when it could not be opened (asked again next time) or memory ran
 * out. Valid until the next call.
 */
const void *interp_file_cache_get(struct interp_file_cache *c, uint32_t pid,
				  const struct map_entry *e);

/*
 * Exited processes, forgotten three flushes after their exit: the samples
 * it took before exiting are decoded after its exit record, in this drain
 * or, held back, after the next one.
 */
struct interp_gone_entry {
	uint32_t pid;
	uint64_t flush; /* the flush count at its exit */
};

struct interp_gone {
	VEC(struct interp_gone_entry) list;
	uint64_t flushes;
};

/* `pid` exited: 0, or -ENOMEM (the caller forgets it now rather than never). */
int interp_gone_add(struct interp_gone *g, uint32_t pid);
/* A flush: `forget(ctx, pid)` for those whose time has come. */
void interp_gone_flush(struct interp_gone *g, void (*forget)(void *ctx, uint32_t pid), void *ctx);
void interp_gone_free(struct interp_gone *g);

#endif
