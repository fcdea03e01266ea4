/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Opening a file for someone to look at only when they could have read it
 * anyway. `bpfprof view` shows the source files and libraries a profile
 * names, and the profile names whatever a profiled binary's debug info
 * says: a hostile binary names the admin's ~/.ssh/id_rsa or a 0644 file in
 * root's 0700 directory. The file's own mode bits are not enough: what
 * guards a file is the whole path to it.
 */
#ifndef BPFPROF_VISIBLE_OPEN_H
#define BPFPROF_VISIBLE_OPEN_H

#include <sys/types.h>

/* No viewer: only what every other user may read is shown. */
#define VISIBLE_NO_VIEWER ((uid_t)-1)

/*
 * Open the absolute `path` read-only when every directory on it, "/"
 * included, may be searched and the file read by every other user (o+x,
 * o+r), or, one component at a time, by `viewer` as their owner (u+x, u+r;
 * VISIBLE_NO_VIEWER: nobody). Walked from "/" one component at a time
 * beneath the previous one, never following a symlink (one anywhere on the
 * path: -ELOOP), so the checks are made on what is opened and no rename or
 * swap between them changes what is read. "." and ".." are resolved in the
 * text first ("a/b/.." is "a", even where b is a symlink: what is walked is
 * checked).
 * Regular files only (-EINVAL), opened without side effects (a FIFO or a
 * device is never opened for reading). An fd the caller closes, or -errno:
 * -EACCES when a component is not visible.
 */
int open_visible(const char *path, uid_t viewer);

#endif
