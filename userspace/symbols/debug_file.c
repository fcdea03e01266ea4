// SPDX-License-Identifier: BSD-2-Clause
/*
 * Finding separate debug files. A candidate is only accepted when it is
 * provably the right one: the same build-id, or the CRC the binary's
 * .gnu_debuglink recorded. A stale debug file from another build would
 * otherwise name every address wrongly, which is worse than no names.
 */
#include "debug_file.h"
#include "../util/hex.h"
#include "../util/safe_open.h"

#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
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
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
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
	fd = open_regular(path, 0);
	if (fd < 0)
		return fd;
	if (!fd_has_build_id(fd, id, len)) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

/* The CRC-32 of a whole file, as .gnu_debuglink records it (zlib's polynomial). */
static int file_crc32(int fd, uint32_t *crc)
{
	const size_t chunk = 1u << 30; /* crc32() takes a uInt length */
	struct stat st;
	unsigned char *map;
	uLong c = crc32(0L, Z_NULL, 0);

	if (fstat(fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if (st.st_size == 0) {
		*crc = (uint32_t)c;
		return 0;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED)
		return -errno;
	for (size_t off = 0; off < (size_t)st.st_size; off += chunk) {
		size_t n = (size_t)st.st_size - off;

		c = crc32(c, map + off, (uInt)(n < chunk ? n : chunk));
	}
	munmap(map, (size_t)st.st_size);
	*crc = (uint32_t)c;
	return 0;
}

/* Open `path` if its CRC is `crc`: an fd, or a negative errno. */
static int open_with_crc(const char *path, uint32_t crc)
{
	uint32_t got = 0;
	/* In the binary's directory, which its owner may fill with FIFOs. */
	int fd = open_regular(path, 0);
	int err;

	if (fd < 0)
		return fd;
	err = file_crc32(fd, &got);
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

static int find_by_build_id(Elf *elf, const char *debug_root, char *found, size_t found_size)
{
	static const char hex[] = "0123456789abcdef";
	char id[BUILD_ID_BYTES_MAX * 2 + 1];
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
	fd = debug_file_open_build_id(debug_root, id);
	if (fd >= 0 && found) {
		char path[PATH_MAX];

		snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug", debug_root, id, id + 2);
		copy_found(found, found_size, path);
	}
	return fd;
}

static int find_by_debuglink(Elf *elf, const char *path, const char *debug_root, char *found,
			     size_t found_size)
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
		fd = open_with_crc(candidate, (uint32_t)crc);
		if (fd >= 0) {
			copy_found(found, found_size, candidate);
			return fd;
		}
	}
	return -ENOENT;
}

int debug_file_find(Elf *elf, const char *path, const char *debug_root, char *found,
		    size_t found_size)
{
	int fd;

	if (!elf || elf_kind(elf) != ELF_K_ELF)
		return -ENOEXEC;
	if (!debug_root)
		debug_root = DEBUG_ROOT_DEFAULT;
	fd = find_by_build_id(elf, debug_root, found, found_size);
	if (fd >= 0)
		return fd;
	return find_by_debuglink(elf, path, debug_root, found, found_size);
}
