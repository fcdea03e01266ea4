/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Opening (and making) the directory of `bpfprof continuous`, where root
 * writes and deletes for as long as it runs, so that nobody else can change
 * where that is.
 *
 * The path is walked from "/" (a relative one from the working directory's
 * real path) one component at a time, each opened relative to the one
 * before it, and each checked before anything below it is opened or made:
 * every directory on the way must be root's or ours and, if others may
 * write it, sticky (as /tmp is); the directory itself must be ours and
 * writable only by us, and not a symbolic link. A missing directory is made
 * with mkdirat() at mode 0700 and set up (fchmod, and under sudo fchown to
 * the sudo user) through an fd of what was made, never by path. A link in
 * the middle of the path is followed only when root or we own it (its
 * directory is checked already, so nobody else can swap it), and its
 * target is walked the same way; anyone else's link is refused.
 */
#ifndef BPFPROF_SNAPSHOT_DIR_WALK_H
#define BPFPROF_SNAPSHOT_DIR_WALK_H

#include <stdbool.h>
#include <sys/types.h>

/*
 * Walk `path` as above and open the directory as *dir_fd (O_RDONLY, for
 * listing and *at() calls). 0, or -errno with a one-line message already
 * printed: -ELOOP for a link refused, -EPERM for a directory others could
 * change, -ENOTDIR for a file on the way.
 */
int snapshot_dir_walk(const char *path, int *dir_fd);

/* Ours: the user we run as, or under sudo the user files are given to. */
bool snapshot_dir_ours(uid_t uid);

#endif
