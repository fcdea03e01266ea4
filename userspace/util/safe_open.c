// SPDX-License-Identifier: BSD-2-Clause
#include "safe_open.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* openat2 fails with EAGAIN when a rename raced its ".." checks: try again a few times. */
#define OPENAT2_RETRIES 8

/*
 * `pathfd` (O_PATH, ours to close) opened for reading only if it is a
 * regular file. Opening a device node has effects of its own (a watchdog
 * arms, a tape rewinds, a serial line raises DTR) and a FIFO may block, so
 * what a user's path names is looked at before it is opened: the type on
 * the O_PATH descriptor, then the same inode reopened through its
 * /proc/self/fd link, which names that inode and no path. A symlink there
 * (asked for with O_NOFOLLOW) is -ELOOP, as O_RDONLY would have said.
 */
static int reopen_regular(int pathfd)
{
	char link[64];
	struct stat st, again;
	int fd, err = 0;

	if (pathfd < 0)
		return -errno;
	if (fstat(pathfd, &st))
		err = -errno;
	else if (S_ISLNK(st.st_mode))
		err = -ELOOP;
	else if (!S_ISREG(st.st_mode))
		err = -EINVAL;
	if (err) {
		close(pathfd);
		return err;
	}
	snprintf(link, sizeof(link), "/proc/self/fd/%d", pathfd);
	fd = open(link, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	err = fd < 0 ? -errno : 0;
	close(pathfd);
	if (!err && (fstat(fd, &again) || again.st_dev != st.st_dev || again.st_ino != st.st_ino))
		err = -EAGAIN;
	if (err && fd >= 0)
		close(fd);
	return err ? err : fd;
}

/* The flags of the first, O_PATH open: of `extra`, only O_NOFOLLOW applies to it. */
#define PATH_FLAGS(extra) (O_PATH | O_CLOEXEC | ((extra)&O_NOFOLLOW))

int open_regular(const char *path, int extra)
{
	return reopen_regular(open(path, PATH_FLAGS(extra)));
}

/* Symlinks followed in one resolution at most, as the kernel's MAXSYMLINKS. */
#define MAX_SYMLINKS 40
/* Directories deep, at most, below the root. */
#define MAX_DEPTH    256

/* The directories from the root down to where the walk is. */
struct walk {
	int fds[MAX_DEPTH + 1];
	int depth; /* fds[0] is the root */
};

static void walk_pop_to(struct walk *w, int depth)
{
	while (w->depth > depth)
		close(w->fds[w->depth--]);
}

/* Put a symlink's `target` before what is left of the path, in `rest`: "TARGET/REST". */
static int prepend_target(char *rest, size_t cap, const char *target)
{
	size_t tail = strlen(rest), tlen = strlen(target);

	if (tlen + 1 + tail + 1 > cap)
		return -ENAMETOOLONG;
	memmove(rest + tlen + 1, rest, tail + 1);
	memcpy(rest, target, tlen);
	rest[tlen] = '/';
	if (!tail)
		rest[tlen] = '\0';
	return 0;
}

/*
 * The walk of open_regular_in_root_walk(); with `want_dir`, the last
 * component must be a directory, returned as an O_PATH fd.
 */
static int walk_in_root(int root, const char *path, int extra, bool want_dir)
{
	char rest[PATH_MAX + 1], target[PATH_MAX + 1];
	struct walk w = { .depth = 0 };
	int links = 0, fd = -1, err = 0;
	char *p;

	if (snprintf(rest, sizeof(rest), "%s", path) >= (int)sizeof(rest))
		return -ENAMETOOLONG;
	w.fds[0] = dup(root);
	if (w.fds[0] < 0)
		return -errno;
	p = rest;
	for (;;) {
		char *comp, *end;
		struct stat st;
		bool last;
		ssize_t n;
		int sub;

		while (*p == '/')
			p++;
		if (!*p) {
			err = -EISDIR; /* the path names a directory */
			break;
		}
		comp = p;
		end = strchr(p, '/');
		if (end)
			*end = '\0';
		last = !end || !end[1 + strspn(end + 1, "/")];
		p = end ? end + 1 : comp + strlen(comp);
		if (!strcmp(comp, "."))
			continue;
		if (!strcmp(comp, "..")) {
			/* Never above the root: "/.." is "/" there as here. */
			walk_pop_to(&w, w.depth > 0 ? w.depth - 1 : 0);
			continue;
		}
		/* A directory to enter, a symlink to read, or the file (not opened for reading
		 * yet). */
		sub = openat(w.fds[w.depth], comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0 || fstat(sub, &st)) {
			err = -errno;
			if (sub >= 0)
				close(sub);
			break;
		}
		if (last && (want_dir ? S_ISDIR(st.st_mode)
				      : !S_ISLNK(st.st_mode) || (extra & O_NOFOLLOW))) {
			fd = sub; /* reopen_regular() checks the type */
			break;
		}
		if (S_ISDIR(st.st_mode) && !last) {
			if (w.depth == MAX_DEPTH) {
				close(sub);
				err = -ENAMETOOLONG;
				break;
			}
			w.fds[++w.depth] = sub;
			continue;
		}
		if (!S_ISLNK(st.st_mode)) {
			close(sub);
			err = last ? -EINVAL : -ENOTDIR;
			break;
		}
		/* A symlink: its target, resolved in the root like the rest of the path. */
		n = readlinkat(sub, "", target, sizeof(target) - 1);
		close(sub);
		if (n < 0 || ++links > MAX_SYMLINKS) {
			err = n < 0 ? -errno : -ELOOP;
			break;
		}
		target[n] = '\0';
		/* Absolute: from the process's root, never ours. */
		if (target[0] == '/')
			walk_pop_to(&w, 0);
		/* What is left of the path follows the target. */
		memmove(rest, p, strlen(p) + 1);
		err = prepend_target(rest, sizeof(rest), target);
		if (err)
			break;
		p = rest;
	}
	walk_pop_to(&w, 0);
	close(w.fds[0]);
	if (err) {
		if (fd >= 0)
			close(fd);
		return err;
	}
	return want_dir ? fd : reopen_regular(fd);
}

int open_regular_in_root_walk(int root, const char *path, int extra)
{
	return walk_in_root(root, path, extra, false);
}

int open_proc_root(const char *proc_root, pid_t pid)
{
	char root_path[PATH_MAX];
	int root;

	if (snprintf(root_path, sizeof(root_path), "%s/%d/root", proc_root, (int)pid) >=
	    (int)sizeof(root_path))
		return -ENAMETOOLONG;
	/* The magic link itself is ours to follow: it is the process's root. */
	root = open(root_path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return errno == ESRCH ? -ENOENT : -errno;
	return root;
}

/* openat2(), or -ENOSYS where the kernel or a seccomp filter lacks it. */
static int try_openat2(int dir, const char *path, unsigned long long flags,
		       unsigned long long resolve)
{
#ifdef SYS_openat2
	struct open_how how = { .flags = flags, .resolve = resolve };
	int fd = -1;

	for (int i = 0; i < OPENAT2_RETRIES; i++) {
		fd = (int)syscall(SYS_openat2, dir, path, &how, sizeof(how));
		if (fd >= 0 || errno != EAGAIN)
			break;
	}
	if (fd >= 0)
		return fd;
	/*
	 * Filtered: systemd's RestrictSUIDSGID= makes it ENOSYS or EPERM,
	 * since it cannot see its flags.
	 */
	return errno == EPERM ? -ENOSYS : -errno;
#else
	(void)dir;
	(void)path;
	(void)flags;
	(void)resolve;
	return -ENOSYS;
#endif
}

/* Absolute paths are taken relative to `root` under RESOLVE_IN_ROOT. */
#define IN_ROOT (RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS)

int open_regular_at_root(int root, const char *path, int extra)
{
	int fd = try_openat2(root, path, (unsigned long long)PATH_FLAGS(extra), IN_ROOT);

	/* No openat2 (before 5.6, or filtered): the same walk, a component at a time. */
	if (fd == -ENOSYS)
		return walk_in_root(root, path, extra, false);
	if (fd < 0)
		return fd;
	return reopen_regular(fd);
}

int open_dir_at_root(int root, const char *path)
{
	int fd = try_openat2(root, path, O_PATH | O_DIRECTORY | O_CLOEXEC, IN_ROOT);

	if (fd == -ENOSYS)
		return walk_in_root(root, path, 0, true);
	return fd;
}

int open_regular_in_root(const char *proc_root, pid_t pid, const char *path, int extra)
{
	int root = open_proc_root(proc_root, pid), fd;

	if (root < 0)
		return root;
	fd = open_regular_at_root(root, path, extra);
	close(root);
	return fd;
}

/* The mount `fd` is on: statx's mount id, or -1 where the kernel (before 5.8) has none. */
static long long mount_id(int fd)
{
	struct statx stx;

	if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_MNT_ID, &stx) ||
	    !(stx.stx_mask & STATX_MNT_ID))
		return -1;
	return (long long)stx.stx_mnt_id;
}

/* Is `fd` on the filesystem and mount of `dir`? A bind mount over a name is not. */
static bool same_mount(int dir, int fd)
{
	struct stat a, b;

	if (fstat(dir, &a) || fstat(fd, &b) || a.st_dev != b.st_dev)
		return false;
	return mount_id(dir) == mount_id(fd);
}

int open_regular_beneath(int dir, const char *name, int extra)
{
	int fd;

	if (!name[0] || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
		return -EINVAL;
	fd = try_openat2(dir, name, (unsigned long long)PATH_FLAGS(O_NOFOLLOW | extra),
			 RESOLVE_BENEATH | RESOLVE_NO_XDEV | RESOLVE_NO_SYMLINKS |
				 RESOLVE_NO_MAGICLINKS);
	if (fd == -ENOSYS) {
		fd = openat(dir, name, PATH_FLAGS(O_NOFOLLOW | extra));
		if (fd < 0)
			return -errno;
	}
	if (fd < 0)
		return fd;
	/* openat2 refused crossings already; the walk's openat did not. */
	if (!same_mount(dir, fd)) {
		close(fd);
		return -EXDEV;
	}
	return reopen_regular(fd);
}
