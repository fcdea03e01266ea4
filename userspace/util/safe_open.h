/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Opening files that other users control. bpfprof runs as root and reads
 * binaries, debug files and JIT maps wherever a process maps or names them:
 * in directories any user may write. A FIFO there would block the profiler
 * for good, a device would feed it garbage, and a symlink could lead root to
 * a file the process's owner may not read. Every such open goes through here.
 */
#ifndef BPFPROF_SAFE_OPEN_H
#define BPFPROF_SAFE_OPEN_H

#include <sys/types.h>

/*
 * Open `path` read-only if it is a regular file. What is there is looked at
 * first, through an O_PATH descriptor, and opened for reading only when it
 * is a regular file (the same inode, reopened through /proc/self/fd): a
 * device node is never opened, so none is armed, rewound or blocked on, and
 * a FIFO is refused without a reader ever showing up. Never our controlling
 * terminal, closed on exec. `extra` adds flags such as
 * O_NOFOLLOW. An fd the caller closes, or -errno (-EINVAL: not a regular
 * file).
 */
int open_regular(const char *path, int extra);

/*
 * Open the file the process `pid` calls `path` (absolute, as that process
 * sees it), resolving it inside the process's root directory
 * (`proc_root`/PID/root) the way the process itself would: symlinks,
 * absolute ones included, and ".." cannot lead out of that root
 * (openat2 RESOLVE_IN_ROOT), and /proc magic links are not followed. Regular
 * files only, as open_regular(). Without openat2 (before 5.6, or filtered by
 * seccomp as systemd does) the same rules are applied by a walk of our own,
 * never by a plain open of PROC/PID/root/PATH, which resolves absolute
 * symlinks against our root.
 */
int open_regular_in_root(const char *proc_root, pid_t pid, const char *path, int extra);

/* PROC/PID/root as an O_PATH directory fd, or -errno (-ENOENT: no such process). */
int open_proc_root(const char *proc_root, pid_t pid);

/* open_regular_in_root() from a root already open (open_proc_root(), or any directory). */
int open_regular_at_root(int root, const char *path, int extra);

/* The directory `path` inside `root`, by the same rules, as an O_PATH fd; or -errno. */
int open_dir_at_root(int root, const char *path);

/*
 * The regular file `name` (one component) in the directory `dir`, only if
 * it is on the same mount: no symlink, no "..", and no mount crossed, so
 * that a file bind-mounted over the name (any user may, in a mount
 * namespace of their own) is refused (-EXDEV) rather than read as root.
 * openat2 RESOLVE_BENEATH | RESOLVE_NO_XDEV where the kernel has it; the
 * mount is compared again afterwards (statx's mount id, st_dev), which is
 * what a kernel without openat2 relies on. Otherwise as open_regular().
 */
int open_regular_beneath(int dir, const char *name, int extra);

/*
 * That walk, from the directory `root`: each component opened with
 * O_NOFOLLOW beneath the previous, ".." never above `root`, each symlink's
 * target read and resolved again from `root` when absolute (at most 40).
 * With O_NOFOLLOW in `extra`, a symlink as the last component is refused
 * (-ELOOP). Exposed for tests; open_regular_in_root() is the interface.
 */
int open_regular_in_root_walk(int root, const char *path, int extra);

#endif
