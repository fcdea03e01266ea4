/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The cgroup v2 hierarchy as the file system shows it: where it is mounted,
 * which cgroup a --cgroup argument names (its id, depth and an fd for a
 * BPF_MAP_TYPE_CGROUP_ARRAY), and which cgroup a process is in.
 *
 * Paths "relative to the v2 root" are the ones /proc/PID/cgroup writes on
 * its "0::" line: "/" for the root, "/system.slice/foo.service" below it.
 * They are exact when bpfprof runs in the initial cgroup namespace, as a
 * system-wide profiler does; inside a cgroup namespace both /proc and the
 * mount show the namespace's view, and `level` counts from its root.
 */
#ifndef BPFPROF_CGROUP_FS_H
#define BPFPROF_CGROUP_FS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CGROUP_MAX_TARGETS 8

struct cgroup_target {
	char *dir;   /* absolute directory path, e.g. "/sys/fs/cgroup/unified/test/child" */
	char *path;  /* path relative to the v2 root as /proc/PID/cgroup writes it; "/" for the root
		      */
	uint64_t id; /* cgroup id = kernfs node id (bpf_get_current_cgroup_id()) */
	uint32_t level; /* depth below the v2 root: 0 root, 1 "/test", 2 "/test/child" */
	int fd;		/* O_RDONLY|O_DIRECTORY|O_CLOEXEC fd of dir; -1 when closed */
};

/*
 * The cgroup v2 mount point from a mountinfo file (normally
 * "/proc/self/mountinfo"), octal escapes (\040) decoded; the first one when
 * there are several. 0, -ENOENT when there is none (a v1-only host),
 * -ENAMETOOLONG when it does not fit `len`, or -errno.
 */
int cgroup2_mount_from_mountinfo(const char *mountinfo_path, char *out, size_t len);

/*
 * Resolve one --cgroup argument. The rule:
 *  - an argument that is the v2 mount point or lies below it
 *    ("/sys/fs/cgroup/unified/test") is that directory;
 *  - anything else is relative to the v2 root, with or without a leading
 *    '/' ("test/child", "/test/child", "/" for the root) ...
 *  - ... except an absolute argument with no such cgroup that exists on the
 *    file system elsewhere ("/proc"): it is taken as given, so the error
 *    says what it is rather than that no cgroup has its name.
 * The directory is canonicalised (realpath), must be a directory of a
 * cgroup2 file system, and is opened. t is always initialised, so
 * cgroup_target_close(t) is safe after a failure too.
 *
 * Returns 0, or a negative errno after writing a one-line message (what,
 * why, what to do) into err: -EINVAL for an empty argument or a directory
 * that is not a cgroup v2 one, -ENOENT for no such cgroup, -ENOTDIR for a
 * file inside a cgroup, -EOPNOTSUPP when no cgroup v2 hierarchy is mounted.
 */
int cgroup_target_open(struct cgroup_target *t, const char *mountinfo_path, const char *arg,
		       char *err, size_t errlen);

/* Free and close; idempotent, and harmless on a zero-filled struct (fd 0 is left alone). */
void cgroup_target_close(struct cgroup_target *t);

/*
 * The v2 path of a process, from <proc_root>/<pid>/cgroup: its "0::/path"
 * line (hybrid hosts also have v1 lines "N:controllers:/path", skipped).
 * Malloc'd into *out. A " (deleted)" suffix (a zombie in a removed cgroup)
 * is kept as is. 0, -ENOENT (the process is gone), -ENODATA (no v2 line),
 * or -errno.
 */
int cgroup_read_proc_path(const char *proc_root, uint32_t pid, char **out);

/*
 * Who could have named the cgroup `path` (as /proc/PID/cgroup writes it)
 * under the v2 mount `mount`: 0 when its directory and every one above it
 * are root's, as a container runtime's are; else the owner of the lowest
 * that is not (a subtree delegated to a user, who can create and name
 * cgroups there, "docker-<id>.scope" too). UINT32_MAX when it cannot be
 * told (the cgroup is gone).
 */
uint32_t cgroup_path_owner(const char *mount, const char *path);

/*
 * `path` is `ancestor` or lies below it, component by component: "/a/bc" is
 * not within "/a/b"; every path is within "/". Trailing slashes of the
 * ancestor do not matter.
 */
bool cgroup_path_within(const char *path, const char *ancestor);

#endif
