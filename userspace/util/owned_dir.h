/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Directories only we can change, for state root keeps across runs (the
 * unwind table cache): what is read back from them is trusted as far as
 * it is validated, so nobody else may put anything there, nor swap a
 * directory on the way for a link to one of theirs.
 */
#ifndef BPFPROF_UTIL_OWNED_DIR_H
#define BPFPROF_UTIL_OWNED_DIR_H

#include <stdbool.h>
#include <sys/stat.h>

/*
 * Whether `st` is a directory of our effective uid that nobody else may
 * write (no group or other write bit).
 */
bool owned_dir_ok(const struct stat *st);

/*
 * The directory `name` (one component) in `dir`, opened with O_DIRECTORY |
 * O_NOFOLLOW (a link there is refused, -ELOOP or -ENOTDIR), made at mode 0700
 * first when missing and `create`. An fd, or -errno: -EPERM when it is not
 * owned_dir_ok().
 */
int owned_dir_at(int dir, const char *name, bool create);

/*
 * The directory at absolute `path`, each component opened beneath the one
 * before it without following links: every directory on the way must be
 * root's or ours and, where others may write it, sticky (as /tmp is, so
 * that nobody else can rename what is ours there); the last is
 * owned_dir_at() (made when missing and `create`). An fd, or -errno
 * (-EINVAL: a relative path, -ELOOP: a link on the way, -EPERM: a
 * directory others could change).
 */
int owned_dir_open(const char *path, bool create);

#endif
