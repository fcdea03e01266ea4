// SPDX-License-Identifier: BSD-2-Clause
/*
 * Finding separate debug files. A candidate is only accepted when it is
 * provably the right one: the same build-id, or the CRC the binary's
 * .gnu_debuglink recorded. A stale debug file from another build would
 * otherwise name every address wrongly, which is worse than no names.
 */
#include "debug_file.h"
#include "../util/clock.h"
#include "../util/file_id.h"
#include "../util/hex.h"
#include "../util/log.h"
#include "../util/safe_open.h"
#include "../util/elf_open.h"

#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* Build-ids are 20 bytes (sha1) in practice; anything longer is not trusted. */
#define BUILD_ID_BYTES_MAX 64

/* Bytes of a hex build-id; their count, or -EINVAL. */
static int build_id_bytes(const char *hex, unsigned char *out)
{
	size_t len = strlen(hex);

	if (len < 4 || len % 2 || len / 2 > BUILD_ID_BYTES_MAX)
		return -EINVAL;
	for (size_t i = 0; i < len / 2; i++) {
		int hi = hex_digit(hex[2 * i]), lo = hex_digit(hex[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -EINVAL;
		out[i] = (unsigned char)(hi << 4 | lo);
	}
	return (int)(len / 2);
}

/* Does the ELF file at `fd` carry this build-id? */
static bool fd_has_build_id(int fd, const unsigned char *id, int len)
{
	Elf *elf = elf_open_fd(fd);
	const void *found = NULL;
	ssize_t n;
	bool same;

	if (!elf)
		return false;
	n = elf_kind(elf) == ELF_K_ELF ? dwelf_elf_gnu_build_id(elf, &found) : -1;
	same = n == len && found && !memcmp(found, id, (size_t)len);
	elf_end(elf);
	return same;
}

bool debug_file_has_build_id(int fd, const char *hex)
{
	unsigned char id[BUILD_ID_BYTES_MAX];
	int len = build_id_bytes(hex, id);

	if (len < 0 || elf_version(EV_CURRENT) == EV_NONE)
		return false;
	return fd_has_build_id(fd, id, len);
}

uint64_t debug_file_max_bytes(uint64_t binary_bytes)
{
	uint64_t cap = binary_bytes > DEBUG_FILE_MAX_BYTES / DEBUG_FILE_RATIO
			       ? DEBUG_FILE_MAX_BYTES
			       : binary_bytes * DEBUG_FILE_RATIO;

	return cap < DEBUG_FILE_MIN_CAP ? DEBUG_FILE_MIN_CAP : cap;
}

int debug_file_check(int fd, const struct debug_file_rules *r)
{
	struct stat st;

	if (fstat(fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if ((uint64_t)st.st_size > debug_file_max_bytes(r ? r->binary_bytes : UINT64_MAX))
		return -EFBIG;
	/* Root's files, ours, or those of whoever could have built the binary. */
	if (st.st_uid != 0 && st.st_uid != geteuid() && (!r || st.st_uid != r->binary_uid))
		return -EPERM;
	return 0;
}

/* Open `path` inside the root of `r` (or ours), if debug_file_check() allows it. */
static int open_candidate(const char *path, const struct debug_file_rules *r)
{
	/* In directories their owners may fill with FIFOs and symlinks. */
	int fd = r && r->root >= 0 ? open_regular_at_root(r->root, path, 0) : open_regular(path, 0);
	int err;

	if (fd < 0)
		return fd;
	err = debug_file_check(fd, r);
	if (err) {
		log_debug("debug file candidate %s refused: %s", path,
			  err == -EFBIG	  ? "larger than its binary's debug file can be"
			  : err == -EPERM ? "owned by neither root nor the binary's owner"
					  : strerror(-err));
		close(fd);
		return err;
	}
	return fd;
}

/*
 * The same in our own root, after the process's: the debug root is the
 * admin's (--debug-root, or the host's /usr/lib/debug, root's to fill), so
 * its files serve the processes of every root, checked by build-id or CRC.
 */
static int open_in_ours(const char *path, const struct debug_file_rules *r)
{
	struct debug_file_rules ours;

	if (!r || r->root < 0)
		return -ENOENT;
	ours = *r;
	ours.root = -1;
	return open_candidate(path, &ours);
}

int debug_file_open_build_id(const char *debug_root, const char *build_id)
{
	unsigned char id[BUILD_ID_BYTES_MAX];
	char path[PATH_MAX];
	int len = build_id_bytes(build_id, id);
	int fd;

	if (len < 0)
		return len;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ELIBBAD;
	if (snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug", debug_root, build_id,
		     build_id + 2) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	fd = open_candidate(path, NULL);
	if (fd < 0)
		return fd;
	if (!fd_has_build_id(fd, id, len)) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

void debug_crc_cache_init(struct debug_crc_cache *c)
{
	*c = (struct debug_crc_cache){ .file_ns = DEBUG_CRC_FILE_NS,
				       .left_ns = DEBUG_CRC_TOTAL_NS };
}

void debug_crc_cache_new_profile(struct debug_crc_cache *c)
{
	c->left_ns = DEBUG_CRC_TOTAL_NS;
	c->spent_reported = false;
}

void debug_crc_cache_free(struct debug_crc_cache *c)
{
	hmap_free(&c->crcs);
	hmap_free(&c->failed);
}

/* Bytes read at a time: the file is streamed, never mapped whole. */
#define CRC_CHUNK (1u << 20)

/*
 * The CRC-32 of the whole file at `fd` (size `size`), as .gnu_debuglink
 * records it (zlib's polynomial), read by the chunk until `budget_ns` is
 * spent (-ETIME); the time taken in *spent_ns.
 */
static int stream_crc32(int fd, uint64_t size, uint64_t budget_ns, uint32_t *crc,
			uint64_t *spent_ns)
{
	uint64_t t0 = clock_ns(CLOCK_MONOTONIC), now = t0;
	unsigned char *buf = malloc(CRC_CHUNK);
	uLong c = crc32(0L, Z_NULL, 0);
	uint64_t off = 0;
	int err = 0;

	if (!buf)
		return -ENOMEM;
	while (off < size) {
		ssize_t n = pread(fd, buf, CRC_CHUNK, (off_t)off);

		if (n <= 0) {
			/* Shorter than it said: not the file its fstat described. */
			err = n < 0 ? -errno : -ESTALE;
			break;
		}
		c = crc32(c, buf, (uInt)n);
		off += (uint64_t)n;
		now = clock_ns(CLOCK_MONOTONIC);
		if (now - t0 >= budget_ns && off < size) {
			err = -ETIME;
			break;
		}
	}
	free(buf);
	*spent_ns = now - t0;
	*crc = (uint32_t)c;
	return err;
}

/* The CRC of `fd`: from the cache when this file (unchanged) was read before. */
static int file_crc32(int fd, struct debug_crc_cache *cache, uint32_t *crc)
{
	struct debug_crc_cache local;
	struct file_id id;
	struct hmap_key key;
	struct stat st;
	uint64_t spent = 0, budget;
	int err;

	if (fstat(fd, &st))
		return -errno;
	id = file_id_of(&st);
	key = file_id_key(&id);
	if (!cache) {
		debug_crc_cache_init(&local);
		cache = &local;
	}
	if (hmap_get(&cache->crcs, key, crc))
		return 0;
	if (hmap_get(&cache->failed, key, NULL))
		return -ETIME;
	if (!cache->left_ns) {
		if (!cache->spent_reported)
			log_warn("the %.0f s a profile may spend checking debug files by CRC are "
				 "spent; "
				 "binaries whose debug file is found only by its debug link keep "
				 "unnamed functions (install debug files by build-id)",
				 (double)DEBUG_CRC_TOTAL_NS / 1e9);
		cache->spent_reported = true;
		return -ETIME;
	}
	budget = cache->file_ns < cache->left_ns ? cache->file_ns : cache->left_ns;
	err = stream_crc32(fd, (uint64_t)st.st_size, budget, crc, &spent);
	cache->computed++;
	cache->left_ns -= spent < cache->left_ns ? spent : cache->left_ns;
	if (err == -ETIME)
		log_debug("CRC of a %" PRIu64 " byte debug file candidate not done in %.1f s: "
			  "not used",
			  (uint64_t)st.st_size, (double)budget / 1e9);
	if (cache->crcs.len + cache->failed.len >= DEBUG_CRC_CACHE_MAX) {
		hmap_free(&cache->crcs);
		hmap_free(&cache->failed);
	}
	if (err == -ETIME || err == -ESTALE)
		(void)hmap_put(&cache->failed, key, 0);
	else if (!err)
		(void)hmap_put(&cache->crcs, key, *crc);
	if (cache == &local)
		debug_crc_cache_free(&local);
	return err;
}

/* Open `path` if its CRC is `crc`: an fd, or a negative errno. */
static int open_with_crc(const char *path, uint32_t crc, const struct debug_file_rules *r)
{
	uint32_t got = 0;
	int fd = open_candidate(path, r);
	int err;

	if (fd < 0)
		return fd;
	err = file_crc32(fd, r ? r->crcs : NULL, &got);
	if (!err && got != crc)
		err = -ESTALE;
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

static void copy_found(char *found, size_t size, const char *path)
{
	if (found && size)
		snprintf(found, size, "%s", path);
}

static int find_by_build_id(Elf *elf, const char *debug_root, const struct debug_file_rules *r,
			    char *found, size_t found_size)
{
	static const char hex[] = "0123456789abcdef";
	char id[BUILD_ID_BYTES_MAX * 2 + 1], path[PATH_MAX];
	const unsigned char *bytes = NULL;
	ssize_t n = dwelf_elf_gnu_build_id(elf, (const void **)&bytes);
	int fd;

	if (n <= 0 || n > BUILD_ID_BYTES_MAX || !bytes)
		return -ENOENT;
	for (ssize_t i = 0; i < n; i++) {
		id[2 * i] = hex[bytes[i] >> 4];
		id[2 * i + 1] = hex[bytes[i] & 15];
	}
	id[2 * n] = '\0';
	if (snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug", debug_root, id, id + 2) >=
	    (int)sizeof(path))
		return -ENAMETOOLONG;
	fd = open_candidate(path, r);
	if (fd < 0)
		fd = open_in_ours(path, r);
	if (fd < 0)
		return fd;
	if (!fd_has_build_id(fd, bytes, (int)n)) {
		close(fd);
		return -ESTALE;
	}
	copy_found(found, found_size, path);
	return fd;
}

static int find_by_debuglink(Elf *elf, const char *path, const char *debug_root,
			     const struct debug_file_rules *r, char *found, size_t found_size)
{
	GElf_Word crc = 0;
	const char *name = dwelf_elf_gnu_debuglink(elf, &crc);
	const char *slash = path ? strrchr(path, '/') : NULL;
	char candidate[PATH_MAX];
	int dirlen, fd;

	/* A name with a slash would escape the directories GDB searches. */
	if (!name || !name[0] || strchr(name, '/') || !slash || path[0] != '/')
		return -ENOENT;
	/* DIR without its trailing slash: "" for a binary in "/". */
	dirlen = (int)(slash - path);
	for (int i = 0; i < 3; i++) {
		int n;

		if (i == 0)
			n = snprintf(candidate, sizeof(candidate), "%.*s/%s", dirlen, path, name);
		else if (i == 1)
			n = snprintf(candidate, sizeof(candidate), "%.*s/.debug/%s", dirlen, path,
				     name);
		else
			n = snprintf(candidate, sizeof(candidate), "%s%.*s/%s", debug_root, dirlen,
				     path, name);
		/* Never the binary itself: reading it for a CRC that cannot match is waste. */
		if (n < 0 || n >= (int)sizeof(candidate) || !strcmp(candidate, path))
			continue;
		fd = open_with_crc(candidate, (uint32_t)crc, r);
		if (fd < 0 && i == 2 && r && r->root >= 0) {
			struct debug_file_rules ours = *r;

			ours.root = -1;
			fd = open_with_crc(candidate, (uint32_t)crc, &ours);
		}
		if (fd >= 0) {
			copy_found(found, found_size, candidate);
			return fd;
		}
	}
	return -ENOENT;
}

int debug_file_find(Elf *elf, const char *path, const char *debug_root,
		    const struct debug_file_rules *r, char *found, size_t found_size)
{
	int fd;

	if (!elf || elf_kind(elf) != ELF_K_ELF)
		return -ENOEXEC;
	if (!debug_root)
		debug_root = DEBUG_ROOT_DEFAULT;
	fd = find_by_build_id(elf, debug_root, r, found, found_size);
	if (fd >= 0)
		return fd;
	return find_by_debuglink(elf, path, debug_root, r, found, found_size);
}
