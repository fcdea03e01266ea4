/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unwind tables kept across runs (issue 38): a file's table (its CFI and Go
 * rows, file_table.h) is built once per build-id and read back by the next
 * recording, in a fraction of the time (README.md: cost per MiB of
 * .eh_frame), so that a program's first samples find its table.
 *
 * Where: STATE_DIR/unwind-cache/v1/CLASS/BUILDID-SIZE-DEV-INO.ut, where
 * CLASS is "system" for a file only root can change (cfi_file_is_system)
 * and "u<uid>" (its owner) for any other. An entry serves only the very
 * file it was built from, unchanged: its device and inode are in the name,
 * and they, the file's size, build-id, ctime and mtime (in ns) in its
 * header are checked at each load. A build-id alone proves nothing: it can
 * be crafted, and Go's -buildid=redacted (rules_go, nixpkgs) gives many
 * binaries the same one; a file changed in place keeps its inode, not its
 * ctime (which no one but the kernel sets). So a crafted file, or one that
 * shares its build-id and size with another, gets only its own table, in
 * any class. A file changed since its entry was built is a miss (the entry
 * is replaced), not damage. The build-id: the GNU note, else Go's
 * (util/elf_build_id.h); files with neither are not cached.
 *
 * Every directory from the state directory down is ours alone (owned by
 * our euid, no group or other write, opened without following links:
 * util/owned_dir.h), else the cache is off, with one warning. Entries are
 * opened beneath their directory without following links, and only a
 * regular file of ours with one link, within the size an entry can have,
 * is read. Each is checked in full before use (table_cache.c: validate):
 * anything amiss and it is unlinked (said at -v) and the table built again.
 *
 * Bounded: at most max_bytes in all, a user's class a quarter of it,
 * counted in the blocks the entries take on disk (a file without CFI has
 * an entry of 172 bytes, and it takes 4 KiB); the least recently used
 * entries (mtime, set at each load) go first. A trim counts every class and
 * every entry, deletes temporary files a crashed write left, and removes a
 * user's class it empties. A write that would leave the file system less
 * than 5% free (or max_bytes, where that is less) is not made.
 *
 * Used by one thread at a time (the table worker's); open and close by its owner.
 */
#ifndef BPFPROF_UNWIND_TABLE_CACHE_H
#define BPFPROF_UNWIND_TABLE_CACHE_H

#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cfi_table.h"
#include "file_table.h"
#include "util/elf_build_id.h"
#include "util/hashmap.h"

/* The default --unwind-cache, and where the state is kept (the unit's StateDirectory). */
#define TABLE_CACHE_DEFAULT_BYTES (256ull << 20)
#define TABLE_CACHE_DEFAULT_STATE "/var/lib/bpfprof"
/* What a trim after a write leaves of a bound passed, in eighths. */
#define TABLE_CACHE_TRIM_FILL	  7
/* Entries a pass of a trim may delete: the oldest it met (table_cache_trim.c). */
#define TABLE_CACHE_MAX_SCAN	  10000

struct table_cache {
	int dir;	   /* STATE/unwind-cache/v1; -1: off */
	char *state_dir;   /* STATE, for a warning */
	bool write_warned; /* a write failed: said once a run */
	uint64_t max_bytes;
	/*
	 * Bytes of the entries in all, and KiB of each user's class (uid ->
	 * KiB), as the last trim found them plus what was written since: a
	 * write looks at no directory unless a bound is passed, and then the
	 * trim goes down to TABLE_CACHE_TRIM_FILL eighths of it, so that a
	 * user who keeps writing at its bound costs a scan every so many
	 * writes, not each.
	 */
	uint64_t total_bytes;
	struct hmap user_kib;
	/* Counted on the cache's thread; read when it is idle or gone. */
	size_t written, rejected, trimmed;
};

/* What an entry is looked up by: the file's class, build-id, size and identity. */
struct table_cache_key {
	char cls[16]; /* "system" or "u<uid>" */
	uint64_t file_size;
	uint64_t dev, ino;	    /* which file */
	int64_t ctime_ns, mtime_ns; /* as it was: a change makes a new key */
	size_t build_id_len;
	uint8_t build_id[ELF_BUILD_ID_MAX];
};

/*
 * The cache under `state_dir` (absolute; made at 0700 when missing, with
 * the cache's own directories), at most max_bytes (0: off), trimmed to it.
 * 0, or -errno when it is off (c->dir -1): a warning was printed then,
 * except for max_bytes 0.
 */
int table_cache_open(struct table_cache *c, const char *state_dir, uint64_t max_bytes);
void table_cache_close(struct table_cache *c);

/*
 * The key of the file open at `fd` (read as `elf`). 0, or -ENOENT when it
 * has no build-id (not cached), -errno when it cannot be looked at.
 */
int table_cache_key_of(int fd, Elf *elf, struct table_cache_key *k);

/*
 * The table of `k` into *b (status LOADED or NO_CFI; b->build_ns: the CPU
 * time of this load). 0; -ENOENT when there is none, or its build read more
 * rows than `budget` allows now, or the file changed since (the entry is
 * removed); -EINVAL when the entry was bad (unlinked).
 */
int table_cache_load(struct table_cache *c, const struct table_cache_key *k,
		     const struct cfi_budget *budget, struct unwind_built *b);

/*
 * Keep `b` (LOADED or NO_CFI; other outcomes depend on the budget, not the
 * file, and are not kept) as `k`'s table, then trim. 0 or -errno.
 */
int table_cache_store(struct table_cache *c, const struct table_cache_key *k,
		      const struct unwind_built *b);

/* Delete the least recently used entries past the bounds (max_bytes, a user's quarter). */
void table_cache_trim(struct table_cache *c);

#endif
