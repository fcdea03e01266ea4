/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Separate debug information. Distributions strip their binaries and ship
 * the .symtab and DWARF in another file, which is found either by the
 * binary's GNU build-id, as DEBUG_ROOT/.build-id/xx/rest.debug, or by the
 * name and CRC in its .gnu_debuglink section, looked up where GDB looks:
 * DIR/NAME, DIR/.debug/NAME and DEBUG_ROOT/DIR/NAME, DIR being the
 * binary's directory.
 */
#ifndef BPFPROF_DEBUG_FILE_H
#define BPFPROF_DEBUG_FILE_H

#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../util/hashmap.h"

/* Where Debian's -dbgsym packages (and most distributions) install debug files. */
#define DEBUG_ROOT_DEFAULT "/usr/lib/debug"

/*
 * How large a debug file may be for a binary of `binary_bytes`. Any user
 * can name a debug file (a debug link in their binary, a file beside it)
 * and make it a terabyte of holes for free; its CRC reads all of it. DWARF
 * at -O2 -g is some 3-15 times the stripped code it describes (libLLVM:
 * 120 MB and 1.6 GB), so 32 times leaves a margin of two; small programs
 * get at least 256 MiB (headers make their DWARF large relative to their
 * code); nothing is larger than 8 GiB.
 */
#define DEBUG_FILE_RATIO     32
#define DEBUG_FILE_MIN_CAP   (256ull << 20)
#define DEBUG_FILE_MAX_BYTES (8ull << 30)
uint64_t debug_file_max_bytes(uint64_t binary_bytes);

/*
 * CRCs of debug-link candidates, computed once per file (by identity:
 * file_id.h) and within a time budget: each file at most
 * DEBUG_CRC_FILE_NS of reading, all of them DEBUG_CRC_TOTAL_NS. A file
 * whose CRC ran out of time is not a match, and not read again.
 */
#define DEBUG_CRC_FILE_NS   (2ull * 1000000000)
#define DEBUG_CRC_TOTAL_NS  (10ull * 1000000000)
/* Remembered identities, at most; then the cache starts afresh. */
#define DEBUG_CRC_CACHE_MAX 4096

struct debug_crc_cache {
	struct hmap crcs;   /* identity -> CRC */
	struct hmap failed; /* identity -> 0: unreadable, or out of time */
	uint64_t file_ns, left_ns;
	bool spent_reported;
	uint64_t computed; /* CRCs computed (not from the cache), for tests */
};

void debug_crc_cache_init(struct debug_crc_cache *c);
void debug_crc_cache_free(struct debug_crc_cache *c);
/* A new profile: the whole DEBUG_CRC_TOTAL_NS again (what was computed or refused stays known). */
void debug_crc_cache_new_profile(struct debug_crc_cache *c);

/* Where and for which binary a debug file is looked for. */
struct debug_file_rules {
	/* The process's root (an O_PATH directory fd) paths are resolved in; -1: ours. */
	int root;
	uint64_t binary_bytes;	      /* the binary's size: the debug file's cap */
	uid_t binary_uid;	      /* its owner: with root and us, the owners accepted */
	struct debug_crc_cache *crcs; /* NULL: no cache, the default budget */
};

/*
 * May `fd` serve as a debug file under `r` (NULL: no binary, the absolute
 * cap; owners root and us)? 0, or -EINVAL (not a regular file), -EFBIG
 * (over the cap), -EPERM (another owner).
 */
int debug_file_check(int fd, const struct debug_file_rules *r);

/* Does the ELF file at `fd` carry the build-id `hex` (lowercase)? */
bool debug_file_has_build_id(int fd, const char *hex);

/*
 * Open DEBUG_ROOT/.build-id/xx/rest.debug for `build_id` (lowercase hex)
 * if that file carries the same build-id. An fd the caller closes, or a
 * negative errno (-ENOENT: no such file, -ESTALE: another build-id).
 */
int debug_file_open_build_id(const char *debug_root, const char *build_id);

/*
 * The separate debug file of `elf`: by build-id first, then by debug link
 * (checked by CRC), each candidate checked by debug_file_check() and
 * resolved inside `r->root` (`r` NULL: our root, the absolute cap, no
 * cache). `path` is where the binary is as its process sees it, for the
 * debug link's directories (NULL: build-id only). On success returns an fd
 * the caller closes and, when `found` is not NULL, copies the path opened
 * there; otherwise -ENOENT or a negative errno.
 */
int debug_file_find(Elf *elf, const char *path, const char *debug_root,
		    const struct debug_file_rules *r, char *found, size_t found_size);

#endif
