// SPDX-License-Identifier: BSD-2-Clause
/* See owned_dir.h. */
#include "owned_dir.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bool owned_dir_ok(const struct stat *st)
{
	return S_ISDIR(st->st_mode) && st->st_uid == geteuid() && !(st->st_mode & 022);
}

int owned_dir_at(int dir, const char *name, bool create)
{
	struct stat st;
	int fd;

	fd = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT && create) {
		/* Lost to a racing maker: open what it made, checked as any. */
		if (mkdirat(dir, name, 0700) && errno != EEXIST)
			return -errno;
		fd = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !owned_dir_ok(&st)) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

/* A directory on the way: root's or ours, and sticky where others may write it. */
static bool safe_parent(const struct stat *st)
{
	return S_ISDIR(st->st_mode) && (st->st_uid == 0 || st->st_uid == geteuid()) &&
	       (!(st->st_mode & 022) || (st->st_mode & S_ISVTX));
}

int owned_dir_open(const char *path, bool create)
{
	char buf[PATH_MAX], *save = NULL, *name, *next;
	struct stat st;
	int dir, fd;

	if (path[0] != '/' || strlen(path) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, path);
	dir = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return -errno;
	name = strtok_r(buf, "/", &save);
	if (!name) {
		close(dir);
		return -EINVAL;
	}
	for (;; name = next) {
		if (fstat(dir, &st) || !safe_parent(&st)) {
			close(dir);
			return -EPERM;
		}
		next = strtok_r(NULL, "/", &save);
		if (!strcmp(name, "..") || !strcmp(name, ".")) {
			close(dir);
			return -EINVAL;
		}
		if (!next)
			break;
		fd = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(dir);
		if (fd < 0)
			return -errno;
		dir = fd;
	}
	fd = owned_dir_at(dir, name, create);
	close(dir);
	return fd;
}
