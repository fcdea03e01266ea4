// SPDX-License-Identifier: BSD-2-Clause
/*
 * The way to the snapshot directory, walked from "/" one component at a
 * time through directory fds (see snapshot_dir_walk.h): issue 27 showed
 * that checking a path after making it by path loses a race to whoever can
 * write one of its directories.
 */
/* asprintf() is a GNU extension. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "snapshot_dir_walk.h"

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

/* How many symbolic links one path may pass through, as the kernel allows. */
#define MAX_LINKS 40

bool snapshot_dir_ours(uid_t uid)
{
	uid_t sudo_uid;
	gid_t gid;

	return uid == geteuid() || (sudo_user_ids(&sudo_uid, &gid) && uid == sudo_uid);
}

/* A directory that someone else can change: neither root's nor ours, or open to writers
 * without the sticky bit (which stops them renaming what is not theirs). */
static bool others_can_change(const struct stat *st)
{
	return (st->st_uid != 0 && !snapshot_dir_ours(st->st_uid)) ||
	       ((st->st_mode & (S_IWGRP | S_IWOTH)) && !(st->st_mode & S_ISVTX));
}

/*
 * The walk from "/" to the snapshot directory, one component at a time,
 * each opened relative to the one before it and checked before anything
 * below it is opened or made: what was checked is what is used, whatever
 * anyone renames meanwhile.
 */
struct walk {
	const char *path;     /* as given, for messages */
	char *buf;	      /* owns what `todo` points into */
	char *todo;	      /* the components still to walk, '/'-separated */
	char where[PATH_MAX]; /* the directory `fd` is, for messages */
	int fd;		      /* the directory reached so far (O_PATH) */
	int links;
};

/* Append `name` to w->where, or go up for ".."; messages only, so a long path is cut. */
static void where_step(struct walk *w, const char *name)
{
	size_t len = strlen(w->where);

	if (!strcmp(name, "..")) {
		char *slash = strrchr(w->where, '/');

		if (slash)
			slash[slash == w->where ? 1 : 0] = '\0';
		return;
	}
	snprintf(w->where + len, sizeof(w->where) - len, "%s%s", len > 1 ? "/" : "", name);
}

/* The next component of w->todo into *name (NUL-terminated in place); false at the end. */
static bool next_component(struct walk *w, char **name)
{
	char *p = w->todo;

	for (;;) {
		while (*p == '/')
			p++;
		if (!*p) {
			w->todo = p;
			return false;
		}
		*name = p;
		p += strcspn(p, "/");
		if (*p)
			*p++ = '\0';
		w->todo = p;
		if (strcmp(*name, "."))
			return true;
	}
}

/* Whether only "/" and "." are left to walk. */
static bool at_last(const struct walk *w)
{
	for (const char *p = w->todo; *p;) {
		size_t n;

		p += strspn(p, "/");
		n = strcspn(p, "/");
		if (n && !(n == 1 && p[0] == '.'))
			return false;
		p += n;
	}
	return true;
}

/* Whether the directory open as `fd` may be passed through; -EPERM with a message if not. */
static int check_parent(const struct walk *w, int fd)
{
	struct stat st;

	if (fstat(fd, &st))
		return -errno;
	if (others_can_change(&st)) {
		if (st.st_uid != 0 && !snapshot_dir_ours(st.st_uid))
			log_error(
				"snapshot directory %s is inside %s, which uid %u owns and can "
				"change; use a directory whose parents only root or you can modify",
				w->path, w->where, st.st_uid);
		else
			log_error("snapshot directory %s is inside %s, which other users can "
				  "change (mode %04o, not sticky); use a directory whose parents "
				  "only root or you can modify",
				  w->path, w->where, st.st_mode & 07777);
		return -EPERM;
	}
	return 0;
}

/*
 * bpfprof writes and deletes in the snapshot directory as root, for as long
 * as it runs: nobody else may plant files in it. So it must be ours and
 * writable only by us. 0 or -EPERM with a message.
 */
static int check_final(const struct walk *w, int fd)
{
	struct stat st;

	if (fstat(fd, &st))
		return -errno;
	if (!snapshot_dir_ours(st.st_uid)) {
		log_error("snapshot directory %s belongs to uid %u, not to you (uid %u); bpfprof "
			  "writes and deletes files there as root: use a directory you own",
			  w->path, st.st_uid, geteuid());
		return -EPERM;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		log_error("snapshot directory %s can be written by other users (mode %04o), who "
			  "could plant files that bpfprof deletes: chmod go-w it, or use another "
			  "directory",
			  w->path, st.st_mode & 07777);
		return -EPERM;
	}
	return 0;
}

/*
 * A link in the middle of the path, in a directory nobody else can change
 * (checked): followed only when root or we own it (a system's /var/run ->
 * /run, a /home that is a link), and its target is walked with the same
 * checks. Another user's link could lead root's writes and deletes into any
 * directory. 0, or -errno with a message.
 */
static int follow_link(struct walk *w, const char *name, const struct stat *st)
{
	char target[PATH_MAX], link[PATH_MAX], *todo;
	ssize_t n;

	snprintf(link, sizeof(link), "%s%s%s", w->where, strcmp(w->where, "/") ? "/" : "", name);
	if (st->st_uid != 0 && !snapshot_dir_ours(st->st_uid)) {
		log_error("snapshot directory %s: %s is a symbolic link of uid %u, who could point "
			  "it anywhere; give the path without it (links in the path are followed "
			  "only "
			  "when root or you own them)",
			  w->path, link, st->st_uid);
		return -ELOOP;
	}
	if (++w->links > MAX_LINKS) {
		log_error("snapshot directory %s: more than %d symbolic links in the path; give "
			  "the real path",
			  w->path, MAX_LINKS);
		return -ELOOP;
	}
	n = readlinkat(w->fd, name, target, sizeof(target) - 1);
	if (n <= 0) {
		log_error("snapshot directory %s: cannot read the link %s: %s; give the real path",
			  w->path, link, n ? strerror(errno) : "it is empty");
		return n ? -errno : -ENOENT;
	}
	target[n] = '\0';
	if (asprintf(&todo, "%s/%s", target, w->todo) < 0)
		return -ENOMEM;
	free(w->buf);
	w->buf = w->todo = todo;
	if (target[0] == '/') {
		int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);

		if (root < 0)
			return -errno;
		close(w->fd);
		w->fd = root;
		strcpy(w->where, "/");
		return check_parent(w, w->fd);
	}
	return 0;
}

/*
 * Under sudo, root would own the new directory and, at 0700, the user who
 * asked for the profiles could not even list them; output_file.c gives each
 * profile to the sudo user for the same reason.
 */
static void chown_to_sudo_user(int fd, const char *where)
{
	uid_t uid;
	gid_t gid;

	if (!sudo_user_ids(&uid, &gid))
		return;
	if (fchown(fd, uid, gid))
		log_warn("cannot give directory %s to the sudo user (uid %u): %s; it stays owned "
			 "by root",
			 where, uid, strerror(errno));
}

/*
 * Make `name` in w->fd: mode 0700 from the start (the umask cannot open it
 * wider nor stop us opening it), then set up through an fd of what we made,
 * never by path. The new directory's O_PATH fd, or -errno (-EEXIST: someone
 * made it first; walk it as an existing one).
 */
static int make_dir(struct walk *w, const char *name)
{
	mode_t old = umask(077);
	struct stat st;
	int fd, err;

	err = mkdirat(w->fd, name, 0700) ? -errno : 0;
	umask(old);
	if (err)
		return err;
	fd = openat(w->fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ENOTDIR || errno == ELOOP ? -EEXIST : -errno;
	/* Ours, or not what we made (whoever swapped it could only be root or us). */
	if (fstat(fd, &st) || st.st_uid != geteuid()) {
		close(fd);
		return -EEXIST;
	}
	where_step(w, name);
	if (fchmod(fd, 0700))
		log_warn("cannot set mode 0700 on new directory %s: %s", w->where, strerror(errno));
	chown_to_sudo_user(fd, w->where);
	return fd;
}

/* The message for a component that could not be opened or made. */
static void say_cannot(const struct walk *w, const char *name, int err)
{
	if (err == -ENOTDIR)
		log_error("snapshot directory %s is not a directory (%s%s%s is not one); choose "
			  "another path or move that file away",
			  w->path, w->where, strcmp(w->where, "/") ? "/" : "", name);
	else
		log_error("cannot create or open snapshot directory %s (at %s%s%s): %s; choose a "
			  "path whose parent exists or can be created, and is writable",
			  w->path, w->where, strcmp(w->where, "/") ? "/" : "", name,
			  strerror(-err));
}

/*
 * One step of the walk: the component `name` of w->fd opened (or made, when
 * missing) and checked, as a parent or, when `last`, as the snapshot
 * directory. 0 (w->fd is now that directory, or the link was followed), or
 * -errno with a message.
 */
static int step(struct walk *w, char *name, bool last)
{
	struct stat st;
	int fd, err;

	for (int tries = 0;; tries++) {
		if (fstatat(w->fd, name, &st, AT_SYMLINK_NOFOLLOW)) {
			err = -errno;
			if (err != -ENOENT || tries > 2) {
				say_cannot(w, name, err);
				return err;
			}
			fd = make_dir(w, name);
			if (fd == -EEXIST)
				continue;
			if (fd < 0) {
				say_cannot(w, name, fd);
				return fd;
			}
			break; /* ours and new: nothing below it to check */
		}
		if (S_ISLNK(st.st_mode)) {
			if (last) {
				log_error("snapshot directory %s is a symbolic link; give the "
					  "directory it points to (bpfprof does not follow links "
					  "where it deletes files as root)",
					  w->path);
				return -ELOOP;
			}
			return follow_link(w, name, &st);
		}
		if (!S_ISDIR(st.st_mode)) {
			say_cannot(w, name, -ENOTDIR);
			return -ENOTDIR;
		}
		/* O_PATH: a parent we may only search is still walked through. */
		fd = openat(w->fd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 && (errno == ENOENT || errno == ENOTDIR || errno == ELOOP) && tries < 2)
			continue; /* changed since the fstatat: look again */
		if (fd < 0) {
			err = -errno;
			say_cannot(w, name, err);
			return err;
		}
		where_step(w, name);
		err = last ? 0 : check_parent(w, fd);
		if (err) {
			close(fd);
			return err;
		}
		break;
	}
	close(w->fd);
	w->fd = fd;
	return 0;
}

int snapshot_dir_walk(const char *path, int *dir_fd)
{
	struct walk w = { .path = path, .fd = -1 };
	char cwd[PATH_MAX], *name;
	int err;

	if (path[0] == '/') {
		w.buf = strdup(path);
	} else if (!getcwd(cwd, sizeof(cwd))) {
		err = -errno;
		log_error("snapshot directory %s is relative, and the working directory is gone "
			  "(%s); give an absolute path",
			  path, strerror(-err));
		return err;
	} else if (asprintf(&w.buf, "%s/%s", cwd, path) < 0) {
		w.buf = NULL;
	}
	if (!w.buf)
		return -ENOMEM;
	w.todo = w.buf;
	strcpy(w.where, "/");
	w.fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	err = w.fd < 0 ? -errno : 0;
	if (!err && !at_last(&w))
		err = check_parent(&w, w.fd);
	while (!err && next_component(&w, &name)) {
		if (!strcmp(name, "..")) {
			int up = openat(w.fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);

			if (up < 0) {
				err = -errno;
				say_cannot(&w, name, err);
				break;
			}
			close(w.fd);
			w.fd = up;
			where_step(&w, name);
			if (!at_last(&w))
				err = check_parent(&w, w.fd);
			continue;
		}
		err = step(&w, name, at_last(&w));
	}
	if (!err)
		err = check_final(&w, w.fd);
	if (!err) {
		/* Reopened for reading: "." of what we hold re-resolves nothing. */
		*dir_fd = openat(w.fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (*dir_fd < 0) {
			err = -errno;
			log_error("cannot open snapshot directory %s: %s; check its permissions",
				  path, strerror(-err));
		}
	}
	if (w.fd >= 0)
		close(w.fd);
	free(w.buf);
	return err;
}
