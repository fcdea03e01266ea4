// SPDX-License-Identifier: BSD-2-Clause
#include "elf_open.h"

#include <errno.h>
#include <linux/magic.h>
#include <stddef.h>
#include <sys/vfs.h>

#ifndef FUSE_SUPER_MAGIC
#define FUSE_SUPER_MAGIC 0x65735546
#endif

/*
 * Owned by root and writable by nobody else: mode bits, and a POSIX ACL's
 * grants, which show in the group bits as its mask. A memfd (mode 0777) or
 * a file in /dev/shm that another user may write fails that already. A FUSE
 * file is never mapped: its server, maybe the attacker's, says what its
 * size and owner are.
 */
bool elf_fd_mappable(int fd, const struct stat *st)
{
	struct statfs fs;

	if (!S_ISREG(st->st_mode) || st->st_uid != 0 || (st->st_mode & (S_IWGRP | S_IWOTH)))
		return false;
	return !fstatfs(fd, &fs) && fs.f_type != FUSE_SUPER_MAGIC;
}

Elf *elf_open_fd(int fd)
{
	struct stat st;

	if (fstat(fd, &st))
		return NULL;
	return elf_open_fd_stat(fd, &st);
}

Elf *elf_open_fd_stat(int fd, const struct stat *st)
{
	if (!S_ISREG(st->st_mode)) {
		errno = EINVAL;
		return NULL;
	}
	if (elf_fd_mappable(fd, st))
		return elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if ((unsigned long long)st->st_size > ELF_OPEN_READ_MAX_BYTES) {
		errno = EFBIG;
		return NULL;
	}
	/* pread of what is asked for, never mmap (elfutils' read_file()). */
	return elf_begin(fd, ELF_C_READ, NULL);
}
