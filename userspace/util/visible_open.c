// SPDX-License-Identifier: BSD-2-Clause
#include "visible_open.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * Visible to every other user, or to the viewer as owner. Group bits are
 * not counted: a group is not "every other user". A directory any user may
 * write (/tmp) is no hazard here: whatever another user puts or swaps in it
 * is checked like the rest, on the descriptor the walk holds, and read from
 * that descriptor.
 */
static bool visible(const struct stat *st, uid_t viewer)
{
	bool dir = S_ISDIR(st->st_mode);

	if (st->st_mode & (dir ? S_IXOTH : S_IROTH))
		return true;
	return viewer != VISIBLE_NO_VIEWER && st->st_uid == viewer &&
	       (st->st_mode & (dir ? S_IXUSR : S_IRUSR));
}

/*
 * `path` without ".", "..", or repeated slashes, into `out` as components
 * separated by '\0', ending with an empty one. "a/link/.." is "a" here,
 * not what the kernel would make of it: the path walked is the text's, and
 * every component of it is checked, so no file is reached that the checks
 * did not pass.
 */
static int normalize(const char *path, char *out, size_t cap)
{
	size_t at = 0;

	if (path[0] != '/')
		return -EINVAL;
	while (*path) {
		size_t n;

		while (*path == '/')
			path++;
		n = strcspn(path, "/");
		if (!n)
			break;
		if (n == 1 && path[0] == '.') {
			/* nothing */
		} else if (n == 2 && path[0] == '.' && path[1] == '.') {
			/* Back over the previous component (and its '\0'); "/.." is "/". */
			if (at) {
				at--;
				while (at && out[at - 1])
					at--;
			}
		} else {
			if (at + n + 2 > cap)
				return -ENAMETOOLONG;
			memcpy(out + at, path, n);
			at += n;
			out[at++] = '\0';
		}
		path += n;
	}
	if (!at)
		return -EISDIR; /* "/" itself */
	out[at] = '\0';
	return 0;
}

/* `name` beneath `dir` without following it: a descriptor of what is there, and its stat. */
static int step(int dir, const char *name, struct stat *st)
{
	int fd = openat(dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (fstat(fd, st)) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

int open_visible(const char *path, uid_t viewer)
{
	char comps[PATH_MAX + 2];
	struct stat st, again;
	int dir, fd, err;
	char *c;

	err = normalize(path, comps, sizeof(comps));
	if (err)
		return err;
	dir = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return -errno;
	if (fstat(dir, &st) || !visible(&st, viewer)) {
		close(dir);
		return -EACCES;
	}
	for (c = comps;; c += strlen(c) + 1) {
		bool last = !c[strlen(c) + 1];

		fd = step(dir, c, &st);
		if (fd < 0) {
			close(dir);
			return fd;
		}
		if (S_ISLNK(st.st_mode))
			err = -ELOOP;
		else if (last ? !S_ISREG(st.st_mode) : !S_ISDIR(st.st_mode))
			err = last ? -EINVAL : -ENOTDIR;
		else if (!visible(&st, viewer))
			err = -EACCES;
		if (err || last)
			break;
		close(dir);
		dir = fd;
	}
	close(fd);
	if (err) {
		close(dir);
		return err;
	}
	/*
	 * Opened for reading only now that it is known to be a regular file.
	 * The name may have been swapped since: the same inode or nothing.
	 */
	fd = openat(dir, c, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	err = fd < 0 ? -errno : 0;
	close(dir);
	if (!err && (fstat(fd, &again) || again.st_dev != st.st_dev || again.st_ino != st.st_ino))
		err = -EAGAIN;
	if (err && fd >= 0)
		close(fd);
	return err ? err : fd;
}
