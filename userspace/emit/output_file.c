// SPDX-License-Identifier: BSD-2-Clause
/* asprintf() and mkostemp() are GNU extensions. */
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
#include <sys/stat.h>
#include <unistd.h>

#include "../util/log.h"
#include "../util/sudo_user.h"

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

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && !strcmp(s + n - k, suffix);
}

int output_file_open(struct output_file *o, const char *path)
{
	const char *base;
	struct stat st;
	char *dir;
	int fd, err;

	memset(o, 0, sizeof(*o));
	o->fd = -1;
	if (!path || !path[0]) {
		log_error("no output file name was given; name one such as profile.json.gz");
		return -EINVAL;
	}
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	if (!base[0] || (!stat(path, &st) && S_ISDIR(st.st_mode))) {
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
	fd = mkostemp(o->tmp_path, O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
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
static void sync_dir(const char *path)
{
	char *dir = dir_of(path);
	int fd;

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
	if (rename(o->tmp_path, o->final_path))
		goto fail;
	sync_dir(o->final_path);
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
		unlink(o->tmp_path);
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
