// SPDX-License-Identifier: BSD-2-Clause
/* asprintf(), mkostemp() and F_SETLEASE are GNU extensions. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "snapshot_dir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../emit/output_file.h"
#include "../util/log.h"
#include "../util/vec.h"
#include "snapshot_dir_walk.h"

/* '#' stands for a digit; everything else must match literally. */
static const char stem_shape[] = "bpfprof-########T######.###Z";

/* Each kind's ending, by enum snapshot_kind. */
static const char *const kind_suffix[] = {
	[SNAPSHOT_FIREFOX] = ".json.gz",
	[SNAPSHOT_PPROF] = ".pb.gz",
};
#define NR_KINDS (sizeof(kind_suffix) / sizeof(kind_suffix[0]))

/* 10000-01-01T00:00:00Z in ms: names have four-digit years. */
#define YEAR_10000_MS 253402300800000.0

/*
 * output_file.c writes "<dir>/.<final name>.XXXXXX" (mkostemp) and renames it
 * when complete; this is the length of the part after our name.
 */
#define TMP_SUFFIX_LEN 6

_Static_assert(sizeof(stem_shape) - 1 == SNAPSHOT_STEM_LEN, "stem shape and length disagree");
_Static_assert(SNAPSHOT_STEM_LEN + sizeof(".json.gz") - 1 == SNAPSHOT_NAME_LEN,
	       "the longest name and SNAPSHOT_NAME_LEN disagree");

int snapshot_name(char *buf, size_t len, double wall_ms, enum snapshot_kind kind)
{
	long long ms, secs;
	struct tm tm;
	time_t t;
	int n;

	if (!isfinite(wall_ms) || wall_ms < 0 || wall_ms >= YEAR_10000_MS ||
	    (unsigned)kind >= NR_KINDS)
		return -EINVAL;
	if (len < SNAPSHOT_NAME_SIZE)
		return -ENOSPC;
	/* Truncate: the name is the window's start, never later than it. */
	ms = (long long)wall_ms;
	secs = ms / 1000;
	t = (time_t)secs;
	if (!gmtime_r(&t, &tm))
		return -EINVAL;
	n = snprintf(buf, len, "bpfprof-%04d%02d%02dT%02d%02d%02d.%03lldZ%s", tm.tm_year + 1900,
		     tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms % 1000,
		     kind_suffix[kind]);
	if (n != (int)(SNAPSHOT_STEM_LEN + strlen(kind_suffix[kind])))
		return -EINVAL;
	return 0;
}

/* The two digits at s as a number (the caller checked that they are digits). */
static int two_digits(const char *s)
{
	return (s[0] - '0') * 10 + (s[1] - '0');
}

/* Whether `s` starts with a window's stem: its digits and each field in range. */
static bool is_stem(const char *s)
{
	int month, day, hour, min, sec;
	size_t i;

	for (i = 0; i < SNAPSHOT_STEM_LEN; i++) {
		if (stem_shape[i] == '#' ? (s[i] < '0' || s[i] > '9') : s[i] != stem_shape[i])
			return false;
	}
	/* Offsets into "bpfprof-YYYYMMDDTHHMMSS...": a user's look-alike is not ours. */
	month = two_digits(s + 12);
	day = two_digits(s + 14);
	hour = two_digits(s + 17);
	min = two_digits(s + 19);
	sec = two_digits(s + 21);
	return month >= 1 && month <= 12 && day >= 1 && day <= 31 && hour <= 23 && min <= 59 &&
	       sec <= 60;
}

/* Whether the first `n` bytes of `s` are a snapshot name (no NUL needed after). */
static bool is_snapshot_name(const char *s, size_t n)
{
	if (n <= SNAPSHOT_STEM_LEN || !is_stem(s))
		return false;
	for (size_t k = 0; k < NR_KINDS; k++)
		if (n - SNAPSHOT_STEM_LEN == strlen(kind_suffix[k]) &&
		    !memcmp(s + SNAPSHOT_STEM_LEN, kind_suffix[k], n - SNAPSHOT_STEM_LEN))
			return true;
	return false;
}

bool snapshot_name_matches(const char *name)
{
	return name && is_snapshot_name(name, strlen(name));
}

/* ".<snapshot name>.XXXXXX" with mkostemp's letters: [A-Za-z0-9]. */
static bool is_snapshot_tmp_name(const char *name)
{
	size_t len = strlen(name), inner;
	const char *suffix;

	if (len < 2 + TMP_SUFFIX_LEN || name[0] != '.')
		return false;
	inner = len - 2 - TMP_SUFFIX_LEN;
	if (!is_snapshot_name(name + 1, inner) || name[1 + inner] != '.')
		return false;
	suffix = name + 2 + inner;
	for (size_t i = 0; i < TMP_SUFFIX_LEN; i++) {
		char c = suffix[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
			return false;
	}
	return true;
}

/*
 * Create and delete a file in the directory, as output_file.c creates its
 * temporary files: mode bits can say "writable" on a read-only mount, and
 * as root they say nothing at all.
 */
static int probe_writable(int dirfd)
{
	char probe[64];
	int fd, err = 0;

	snprintf(probe, sizeof(probe), ".bpfprof-probe.%d", (int)getpid());
	fd = openat(dirfd, probe, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 && errno == EEXIST) {
		/* Left by a bpfprof of this pid that was killed: the directory is ours alone. */
		unlinkat(dirfd, probe, 0);
		fd = openat(dirfd, probe, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			    0600);
	}
	if (fd < 0)
		return -errno;
	close(fd);
	if (unlinkat(dirfd, probe, 0))
		err = -errno;
	return err;
}

/*
 * A listing of the directory through its fd (no path re-resolved). The dup
 * shares its offset with d->fd: start from the top every time. NULL with
 * *err set on failure.
 */
static DIR *open_listing(struct snapshot_dir *d, int *err)
{
	int fd = dup(d->fd);
	DIR *dir;

	if (fd < 0) {
		*err = -errno;
		return NULL;
	}
	dir = fdopendir(fd);
	if (!dir) {
		*err = -errno;
		close(fd);
		return NULL;
	}
	rewinddir(dir);
	return dir;
}

/* Temporary snapshot files of crashed writers; nothing else is touched. */
static int remove_stale_temporaries(struct snapshot_dir *d)
{
	time_t now = time(NULL);
	struct dirent *de;
	int err, removed = 0;
	DIR *dir;

	if (!(dir = open_listing(d, &err)))
		return err;
	while ((de = readdir(dir)))
		if (is_snapshot_tmp_name(de->d_name))
			removed += output_file_remove_stale(d->fd, d->path, de->d_name, now);
	closedir(dir);
	if (removed)
		log_info("removed %d unfinished snapshot file(s) from %s, left by a bpfprof that "
			 "stopped early",
			 removed, d->path);
	return removed;
}

int snapshot_dir_open(struct snapshot_dir *d, const char *path)
{
	size_t len;
	int err;

	d->path = NULL;
	d->fd = -1;
	if (!path || !path[0]) {
		log_error("no snapshot directory was given; name one such as ./profiles");
		return -EINVAL;
	}
	d->path = strdup(path);
	if (!d->path)
		return -ENOMEM;
	/* "dir/" and "dir" are the same directory; keep "/" as it is. */
	len = strlen(d->path);
	while (len > 1 && d->path[len - 1] == '/')
		d->path[--len] = '\0';

	err = snapshot_dir_walk(d->path, &d->fd);
	if (err)
		goto fail;
	err = probe_writable(d->fd);
	if (err) {
		log_error("snapshot directory %s is not writable: %s; choose a directory you can "
			  "write to, or fix its permissions or mount",
			  d->path, strerror(-err));
		goto fail;
	}
	err = remove_stale_temporaries(d);
	if (err < 0)
		log_warn("cannot look for unfinished snapshots in %s: %s; they stay", d->path,
			 strerror(-err));
	return 0;
fail:
	snapshot_dir_close(d);
	return err;
}

int snapshot_dir_path(const struct snapshot_dir *d, double wall_ms, enum snapshot_kind kind,
		      char **out)
{
	char name[SNAPSHOT_NAME_SIZE];
	int err;

	*out = NULL;
	err = snapshot_name(name, sizeof(name), wall_ms, kind);
	if (err)
		return err;
	if (asprintf(out, "%s/%s", d->path, name) < 0) {
		*out = NULL;
		return -ENOMEM;
	}
	return 0;
}

struct snapshot_file {
	char name[SNAPSHOT_NAME_SIZE];
	uint64_t size;
};

/* Named so that it can be passed around; vec.h's macros work on it. */
struct snapshot_files {
	struct snapshot_file *data;
	size_t len;
	size_t cap;
};

static int cmp_snapshot_file(const void *a, const void *b)
{
	/* Fixed-width UTC fields, most significant first: name order is time order. */
	return strcmp(((const struct snapshot_file *)a)->name,
		      ((const struct snapshot_file *)b)->name);
}

/* The UTC start of the window a snapshot name holds, in seconds since the epoch. */
static time_t name_time(const char *name)
{
	struct tm tm = { 0 };
	const char *s = name + 8; /* after "bpfprof-" */

	tm.tm_year = two_digits(s) * 100 + two_digits(s + 2) - 1900;
	tm.tm_mon = two_digits(s + 4) - 1;
	tm.tm_mday = two_digits(s + 6);
	tm.tm_hour = two_digits(s + 9);
	tm.tm_min = two_digits(s + 11);
	tm.tm_sec = two_digits(s + 13);
	return timegm(&tm);
}

/*
 * The snapshots in `d` with their sizes: regular files that we own (another
 * user's file named like one is theirs, not ours to count or delete), and
 * not dated after now (a window starts in the past; a name from the future
 * would sort newest and make us delete real snapshots). 0 or -errno.
 */
static int list_snapshots(struct snapshot_dir *d, struct snapshot_files *files)
{
	time_t now = time(NULL);
	struct snapshot_file f;
	struct dirent *de;
	struct stat st;
	int err = 0;
	DIR *dir;

	if (!(dir = open_listing(d, &err)))
		return err;
	for (;;) {
		errno = 0;
		de = readdir(dir);
		if (!de) {
			err = -errno;
			break;
		}
		if (!snapshot_name_matches(de->d_name))
			continue;
		if (fstatat(d->fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW)) {
			if (errno == ENOENT)
				continue; /* deleted meanwhile */
			err = -errno;
			break;
		}
		if (!S_ISREG(st.st_mode) || !snapshot_dir_ours(st.st_uid) ||
		    name_time(de->d_name) > now)
			continue;
		/* A matching name fits: SNAPSHOT_NAME_LEN is the longest. */
		memcpy(f.name, de->d_name, strlen(de->d_name) + 1);
		f.size = (uint64_t)st.st_size;
		err = vec_push(files, f);
		if (err)
			break;
	}
	closedir(dir);
	return err;
}

/* The number of files from files->data[i] on that belong to its window. */
static size_t window_files(const struct snapshot_files *files, size_t i)
{
	size_t n = 1;

	while (i + n < files->len &&
	       !memcmp(files->data[i].name, files->data[i + n].name, SNAPSHOT_STEM_LEN))
		n++;
	return n;
}

int snapshot_dir_prune(struct snapshot_dir *d, unsigned keep, uint64_t max_bytes,
		       const char *protect)
{
	struct snapshot_files files = { 0 };
	uint64_t total = 0;
	size_t i, n, windows = 0;
	int err, deleted = 0;

	if (protect) {
		const char *slash = strrchr(protect, '/');

		protect = slash ? slash + 1 : protect;
		if (!snapshot_name_matches(protect))
			protect = NULL;
	}
	err = list_snapshots(d, &files);
	if (err) {
		log_error("cannot list snapshot directory %s: %s; check that it still exists and "
			  "is readable",
			  d->path, strerror(-err));
		goto out;
	}
	if (!files.len)
		goto out;
	vec_sort(&files, cmp_snapshot_file);
	for (i = 0; i < files.len; i += window_files(&files, i))
		windows++;
	for (i = 0; i < files.len; i++)
		total += files.data[i].size;

	/* Oldest window first, and never the newest (the last one). */
	for (i = 0; i < files.len; i += n) {
		n = window_files(&files, i);
		if (i + n == files.len)
			break;
		if (!((keep && windows > keep) || (max_bytes && total > max_bytes)))
			break;
		if (protect && !memcmp(files.data[i].name, protect, SNAPSHOT_STEM_LEN))
			continue;
		for (size_t k = i; k < i + n; k++) {
			const struct snapshot_file *f = &files.data[k];

			if (!unlinkat(d->fd, f->name, 0)) {
				deleted++;
			} else if (errno != ENOENT) {
				err = -errno;
				log_error("cannot delete old snapshot %s/%s: %s; check the "
					  "directory's permissions, or delete old snapshots by "
					  "hand",
					  d->path, f->name, strerror(-err));
				goto out;
			}
			/* Gone either way: by us, or by whoever got there first. */
			total -= f->size;
		}
		windows--;
	}
	err = deleted;
out:
	vec_free(&files);
	return err;
}

void snapshot_dir_close(struct snapshot_dir *d)
{
	if (d->fd >= 0)
		close(d->fd);
	d->fd = -1;
	free(d->path);
	d->path = NULL;
}
