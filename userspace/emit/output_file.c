// SPDX-License-Identifier: BSD-2-Clause
/* asprintf() is a GNU extension. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "output_file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../util/log.h"
#include "../util/sudo_user.h"

/*
 * A writer closes its temporary file just before renaming it, so "nobody
 * holds it open" alone could catch another bpfprof in that instant; a live
 * writer also wrote the file within the last moment, a crashed one did not.
 */
#define STALE_TMP_MIN_AGE_S 60

/* Of output_file_open's "<dir>/.<final name>.XXXXXX": the mkostemp letters. */
#define TMP_SUFFIX_LEN 6

int output_file_remove_stale(int dirfd, const char *dir, const char *name, time_t now)
{
	struct stat st;
	int fd, removed = 0;

	/* O_NONBLOCK: fail instead of waiting should someone hold a lease on it. */
	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		if (errno != ENOENT)
			log_debug("keeping %s/%s: cannot open it: %s", dir, name, strerror(errno));
		return 0;
	}
	/* Ours until committed: another user's file is theirs, however it is named. */
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid())
		goto out;
	if (st.st_mtime > now - STALE_TMP_MIN_AGE_S) {
		log_debug("keeping %s/%s: written less than %d s ago", dir, name,
			  STALE_TMP_MIN_AGE_S);
		goto out;
	}
	/*
	 * The name holds no pid, so ask the kernel: a write lease is granted
	 * only when no other open file description refers to the file, and a
	 * live writer holds its temporary file open until just before the
	 * rename. While we hold the lease nobody can open it unnoticed.
	 */
	if (fcntl(fd, F_SETLEASE, F_WRLCK)) {
		/* EAGAIN: open elsewhere. Others: no leases here, so no way to tell. */
		log_debug("keeping %s/%s: %s", dir, name,
			  errno == EAGAIN ? "a process has it open" : strerror(errno));
		goto out;
	}
	if (!unlinkat(dirfd, name, 0))
		removed = 1;
	else if (errno != ENOENT)
		log_warn("cannot remove %s/%s, left by a bpfprof that stopped early: %s", dir, name,
			 strerror(errno));
	fcntl(fd, F_SETLEASE, F_UNLCK);
out:
	close(fd);
	return removed;
}

/* Whether `name` is ".<base>.XXXXXX" with mkostemp's letters. */
static bool is_tmp_of(const char *name, const char *base)
{
	size_t n = strlen(name), b = strlen(base);

	if (n != 1 + b + 1 + TMP_SUFFIX_LEN || name[0] != '.' || strncmp(name + 1, base, b) ||
	    name[1 + b] != '.')
		return false;
	for (const char *c = name + 2 + b; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9')))
			return false;
	return true;
}

/*
 * A bpfprof killed while writing FINAL left ".FINAL.XXXXXX" in the
 * directory open as `dirfd` (shown as `dir`): remove those.
 */
static void remove_stale_of(int dirfd, const char *dir, const char *base)
{
	time_t now = time(NULL);
	struct dirent *de;
	int removed = 0, fd;
	DIR *d;

	/* A listing of its own: readdir moves the offset of the fd it reads. */
	fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	while ((de = readdir(d)))
		if (is_tmp_of(de->d_name, base))
			removed += output_file_remove_stale(dirfd, dir, de->d_name, now);
	closedir(d);
	if (removed)
		log_info("removed %d unfinished %s file(s) from %s, left by a bpfprof that stopped "
			 "early",
			 removed, base, dir);
}

/*
 * mkostemp() relative to a directory fd: "XXXXXX" at the end of `name`
 * becomes random letters, the file is created new (never through a
 * symlink) with mode 0600. The fd, or -errno.
 */
static int make_temp_at(int dirfd, char *name)
{
	static const char letters[] =
		"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	char *x = name + strlen(name) - TMP_SUFFIX_LEN;

	for (int attempt = 0; attempt < 100; attempt++) {
		unsigned char r[TMP_SUFFIX_LEN];
		int fd;

		if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
			for (size_t i = 0; i < sizeof(r); i++)
				r[i] = (unsigned char)(rand() ^ (int)clock());
		for (size_t i = 0; i < TMP_SUFFIX_LEN; i++)
			x[i] = letters[r[i] % (sizeof(letters) - 1)];
		fd = openat(dirfd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0 || errno != EEXIST)
			return fd >= 0 ? fd : -errno;
	}
	return -EEXIST;
}

/* See output_file_set_mode(). */
static mode_t file_mode = 0600;

void output_file_set_mode(mode_t mode)
{
	file_mode = mode & 0777;
}

/* The directory part of `path` ("." when it has none), newly allocated. */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return strdup(".");
	if (slash == path)
		return strdup("/");
	return strndup(path, (size_t)(slash - path));
}

/* What follows the last '/' of `path`, or all of it. */
static const char *last_component(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && !strcmp(s + n - k, suffix);
}

/*
 * Open the temporary file of `path`, whose names are relative to dirfd:
 * with AT_FDCWD they are the paths, otherwise the last components.
 */
static int open_in(struct output_file *o, int dirfd, const char *path)
{
	const char *base;
	struct stat st;
	char *dir;
	int fd, err;

	memset(o, 0, sizeof(*o));
	o->fd = -1;
	o->dirfd = dirfd;
	if (!path || !path[0]) {
		log_error("no output file name was given; name one such as profile.json.gz");
		return -EINVAL;
	}
	base = last_component(path);
	if (!base[0] ||
	    (!fstatat(dirfd, dirfd == AT_FDCWD ? path : base, &st, 0) && S_ISDIR(st.st_mode))) {
		log_error("output path %s is a directory; add a file name such as profile.json.gz",
			  path);
		return -EISDIR;
	}
	dir = dir_of(path);
	o->final_path = strdup(path);
	/* Same directory as the final file, so the final rename is atomic (no EXDEV). */
	if (!dir || !o->final_path || asprintf(&o->tmp_path, "%s/.%s.XXXXXX", dir, base) < 0) {
		o->tmp_path = NULL;
		free(dir);
		output_file_free(o);
		return -ENOMEM;
	}
	o->final_name = dirfd == AT_FDCWD ? o->final_path : last_component(o->final_path);
	o->tmp_name = dirfd == AT_FDCWD ? o->tmp_path : last_component(o->tmp_path);
	if (dirfd == AT_FDCWD) {
		int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (dfd >= 0) {
			remove_stale_of(dfd, dir, base);
			close(dfd);
		}
	} else {
		remove_stale_of(dirfd, dir, base);
	}
	fd = make_temp_at(dirfd, (char *)o->tmp_name);
	if (fd < 0) {
		err = fd;
		log_error("cannot create output file %s (temporary file in directory %s): %s; "
			  "choose a directory that exists and is writable",
			  path, dir, strerror(-err));
		free(dir);
		free(o->tmp_path);
		o->tmp_path = NULL;
		output_file_free(o);
		return err;
	}
	free(dir);
	o->fd = fd;
	o->gzip = ends_with(path, ".gz");
	return 0;
}

int output_file_open(struct output_file *o, const char *path)
{
	return open_in(o, AT_FDCWD, path);
}

int output_file_open_at(struct output_file *o, int dirfd, const char *path)
{
	if (dirfd < 0) {
		memset(o, 0, sizeof(*o));
		o->fd = -1;
		return -EBADF;
	}
	return open_in(o, dirfd, path);
}

/*
 * Under sudo the file would belong to root and the user who asked for it
 * could not open or delete it without sudo again; give it to them.
 */
static void chown_to_sudo_user(struct output_file *o)
{
	uid_t uid;
	gid_t gid;

	if (!sudo_user_ids(&uid, &gid))
		return;
	if (fchown(o->fd, uid, gid))
		log_warn("cannot give %s to the sudo user (uid %u): %s; it stays owned by root",
			 o->final_path, uid, strerror(errno));
}

/* Make the rename itself durable; a failure here loses nothing already written. */
static void sync_dir(const struct output_file *o)
{
	char *dir;
	int fd;

	if (o->dirfd != AT_FDCWD) {
		fsync(o->dirfd);
		return;
	}
	dir = dir_of(o->final_path);
	if (!dir)
		return;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	free(dir);
}

int output_file_commit(struct output_file *o)
{
	const char *what;
	int err, fd = o->fd;

	if (fd < 0 || !o->tmp_path)
		return -EBADF;
	/* mkostemp makes the file 0600; --mode may open it to others. */
	what = "set permissions on";
	if (fchmod(fd, file_mode))
		goto fail;
	chown_to_sudo_user(o);
	what = "flush";
	if (fsync(fd))
		goto fail;
	o->fd = -1;
	what = "close";
	if (close(fd))
		goto fail;
	what = "rename the finished profile to";
	if (renameat(o->dirfd, o->tmp_name, o->dirfd, o->final_name))
		goto fail;
	sync_dir(o);
	free(o->tmp_path);
	o->tmp_path = NULL;
	return 0;
fail:
	err = -errno;
	log_error("cannot %s output file %s: %s; check free space and permissions there", what,
		  o->final_path, strerror(-err));
	output_file_abort(o);
	return err;
}

void output_file_abort(struct output_file *o)
{
	if (o->fd >= 0) {
		close(o->fd);
		o->fd = -1;
	}
	if (o->tmp_path) {
		unlinkat(o->dirfd, o->tmp_name, 0);
		free(o->tmp_path);
		o->tmp_path = NULL;
	}
}

void output_file_free(struct output_file *o)
{
	/* An uncommitted temporary file is never useful; do not leave it behind. */
	output_file_abort(o);
	free(o->final_path);
	o->final_path = NULL;
}
