// SPDX-License-Identifier: BSD-2-Clause
/*
 * Finding a process's perf map: as the process sees it (its root, its
 * namespace's pid), owned by the process's user or root, and never through
 * a path another user could swap (perf_map.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "../util/safe_open.h"
#include "perf_map.h"

#ifndef FUSE_SUPER_MAGIC
#define FUSE_SUPER_MAGIC 0x65735546
#endif

/*
 * From PROC/PID/status: the pid of `pid` inside its own pid namespace (the
 * last field of "NSpid:"; the pid itself on kernels without that line), and
 * its uids ("Uid:").
 */
static int read_status(const char *proc_root, pid_t pid, struct perf_map_site *out)
{
	char path[PATH_MAX], *line = NULL;
	size_t cap = 0;
	int err = 0;
	FILE *f;

	out->nspid = pid;
	out->nuids = 0;
	if (snprintf(path, sizeof(path), "%s/%d/status", proc_root, (int)pid) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	f = fopen(path, "re");
	if (!f)
		return errno == ESRCH ? -ENOENT : -errno;
	while (!err && getline(&line, &cap, f) >= 0) {
		char *last = NULL, *tok, *save, *end;
		long v;

		if (!strncmp(line, "Uid:", 4)) {
			for (tok = strtok_r(line + 4, " \t\n", &save); tok && out->nuids < 4;
			     tok = strtok_r(NULL, " \t\n", &save)) {
				errno = 0;
				v = strtol(tok, &end, 10);
				if (*end || errno || v < 0 || (unsigned long)v > UINT32_MAX)
					break;
				out->uids[out->nuids++] = (uid_t)v;
			}
			continue;
		}
		if (strncmp(line, "NSpid:", 6))
			continue;
		for (tok = strtok_r(line + 6, " \t\n", &save); tok;
		     tok = strtok_r(NULL, " \t\n", &save))
			last = tok;
		errno = 0;
		v = last ? strtol(last, &end, 10) : 0;
		if (!last || *end || errno || v <= 0 || v > INT_MAX)
			err = -EINVAL;
		else
			out->nspid = (pid_t)v;
	}
	free(line);
	fclose(f);
	return err;
}

static bool same_mount_ns(const char *proc_root, pid_t pid)
{
	char path[PATH_MAX], theirs[256], ours[256];
	ssize_t a, b;

	if (snprintf(path, sizeof(path), "%s/%d/ns/mnt", proc_root, (int)pid) >= (int)sizeof(path))
		return false;
	a = readlink(path, theirs, sizeof(theirs));
	if (snprintf(path, sizeof(path), "%s/self/ns/mnt", proc_root) >= (int)sizeof(path))
		return false;
	b = readlink(path, ours, sizeof(ours));
	return a > 0 && a < (ssize_t)sizeof(theirs) && a == b && !memcmp(theirs, ours, a);
}

/*
 * Whose map `fd` may be: as perf, only one its process could have written
 * (owned by one of its uids) or root's. Anyone may create /tmp/perf-PID.map
 * for a PID not theirs, and the profile would show their names for that
 * process's code. -EPERM when it is neither.
 */
static int check_owner(int fd, const struct perf_map_site *ids)
{
	struct stat st;

	if (fstat(fd, &st))
		return -errno;
	if (st.st_uid == 0)
		return 0;
	for (int i = 0; i < ids->nuids; i++)
		if (st.st_uid == ids->uids[i])
			return 0;
	return -EPERM;
}

int perf_map_refuse_fuse(int fd)
{
	struct statfs fs;

	if (fstatfs(fd, &fs))
		return -errno;
	return fs.f_type == FUSE_SUPER_MAGIC ? -EMEDIUMTYPE : 0;
}

/*
 * `name` in the directory `dir_path` of `root`: the directory resolved as
 * the process resolves it (its /tmp may be a mount of its own, or a
 * symlink in a root its owner built), the map itself only in that
 * directory, on its mount: a file bind-mounted over the map's name in the
 * owner's own mount namespace (a root-only file the owner may name but not
 * read) is refused.
 */
static int open_map_file(int root, const char *dir_path, const char *name)
{
	/* Our own root (-1): the directory as we see it. */
	int dir = root >= 0 ? open_dir_at_root(root, dir_path)
			    : open(dir_path, O_PATH | O_DIRECTORY | O_CLOEXEC),
	    fd;

	if (dir < 0)
		return root >= 0 ? dir : -errno;
	/*
	 * Not on FUSE, whose server may never answer a read: its owner
	 * serves whatever directory they mount it on, /tmp in their own
	 * mount namespace included. The map is on the same mount as its
	 * directory (open_regular_beneath), so it is never looked up there.
	 */
	fd = perf_map_refuse_fuse(dir);
	if (!fd)
		fd = open_regular_beneath(dir, name, 0);
	close(dir);
	return fd;
}

int perf_map_site_read(const char *proc_root, pid_t pid, bool keep_root, struct perf_map_site *out)
{
	int err;

	memset(out, 0, sizeof(*out));
	out->pid = pid;
	out->root = -1;
	err = read_status(proc_root, pid, out);
	if (err)
		return err;
	out->same_mnt_ns = same_mount_ns(proc_root, pid);
	/*
	 * PROC/PID/root can be out of reach (the process is exiting, or it
	 * is not ours to ptrace): then only our own /tmp is left, and only
	 * when we share the process's mount namespace (below).
	 */
	if (keep_root) {
		int root = open_proc_root(proc_root, pid);

		out->root = root >= 0 ? root : -1;
	}
	return 0;
}

void perf_map_site_close(struct perf_map_site *s)
{
	if (s->root >= 0)
		close(s->root);
	s->root = -1;
}

int perf_map_site_open_fd(const struct perf_map_site *site, const char *host_tmp)
{
	char name[64];
	int fd = -ENOENT, err;

	/*
	 * A map file is a regular file only (a FIFO planted in /tmp would block
	 * the profiler, a device would feed it garbage), and no symlink as the
	 * last component: /tmp is writable by everyone and we may run as root.
	 * The path is resolved inside the process's root, as the process sees
	 * it: its owner may have made /tmp there a symlink to any host path.
	 */
	snprintf(name, sizeof(name), "perf-%d.map", (int)site->nspid);
	if (site->root >= 0)
		fd = open_map_file(site->root, "/tmp", name);
	/*
	 * Our own /tmp is the process's /tmp only when we share its mount
	 * namespace; a container's host-side namesake is a different
	 * process's map.
	 */
	if ((fd == -ENOENT || fd == -EACCES || fd == -EPERM || fd == -ESRCH) && site->same_mnt_ns) {
		snprintf(name, sizeof(name), "perf-%d.map", (int)site->pid);
		fd = open_map_file(-1, host_tmp, name);
	}
	if (fd < 0)
		return fd;
	err = check_owner(fd, site);
	if (!err)
		err = perf_map_refuse_fuse(fd);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

struct perf_map *perf_map_open_site(const struct perf_map_site *site, const char *host_tmp)
{
	int fd = perf_map_site_open_fd(site, host_tmp);

	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	return perf_map_open_fd_of(fd, site->nuids ? (uint32_t)site->uids[0] : PERF_MAP_NO_OWNER);
}

struct perf_map *perf_map_open_at(const char *proc_root, const char *host_tmp, pid_t pid)
{
	struct perf_map_site site;
	struct perf_map *pm;
	int err = perf_map_site_read(proc_root, pid, true, &site);

	if (err) {
		errno = -err;
		return NULL;
	}
	pm = perf_map_open_site(&site, host_tmp);
	err = errno;
	perf_map_site_close(&site);
	errno = err;
	return pm;
}

struct perf_map *perf_map_open(const char *proc_root, pid_t pid)
{
	return perf_map_open_at(proc_root, "/tmp", pid);
}
