/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libelf handles on files that other users may change. With ELF_C_READ_MMAP
 * libelf maps the whole file at the size fstat gave; a user who owns the
 * file (or any file they mapped, a memfd included: only execve makes a file
 * busy) can ftruncate it at any time, and the next access to a page past the
 * new end raises SIGBUS, which kills root's profiler and its whole recording.
 * So only files that nobody but root can change are mapped; every other one
 * is read: ELF_C_READ takes each section libelf is asked for into memory
 * with pread, where a truncated file is a short read and an error.
 */
#ifndef BPFPROF_UTIL_ELF_OPEN_H
#define BPFPROF_UTIL_ELF_OPEN_H

#include <gelf.h>
#include <stdbool.h>
#include <sys/stat.h>

/*
 * Largest file, not root's alone, that is read into memory: 1 GiB. Mapped,
 * a root-owned file costs page cache the kernel may drop; read, a user's
 * file costs root's process anonymous memory it keeps. Each section libelf
 * reads is at most the file's size at open (libelf checks every section
 * against it); a DWARF reader takes only the debug sections, within its own
 * cap (symbols/dwarf_image.h). The largest binaries shipped here (libLLVM, libclang-cpp: 100 to
 * 130 MB) fit eight times over; a user's full-DWARF build beyond 1 GiB is
 * refused (EFBIG) and its frames keep their addresses.
 */
#define ELF_OPEN_READ_MAX_BYTES (1ull << 30)

/*
 * May `fd` (stat `st`) be mapped: a regular file only root can change. The
 * one rule for a file no user makes (unwind's system files too).
 */
bool elf_fd_mappable(int fd, const struct stat *st);

/*
 * elf_begin() for reading `fd`: ELF_C_READ_MMAP where elf_fd_mappable(),
 * else ELF_C_READ within ELF_OPEN_READ_MAX_BYTES. NULL with errno set
 * (EINVAL: not a regular file, EFBIG: over the cap) or a handle the caller
 * frees with elf_end(); `fd` stays the caller's, open while the handle is
 * used (or until elf_cntl(ELF_C_FDREAD)).
 */
Elf *elf_open_fd(int fd);

/*
 * elf_open_fd() on the caller's fstat of `fd` (`st`): a caller that checks
 * what it reads against the file's size must check against the size the
 * cap was checked on. With an fstat of each, the file's owner may make it
 * huge for the first and small for the second (ftruncate of a sparse file).
 */
Elf *elf_open_fd_stat(int fd, const struct stat *st);

#endif
