/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The output directory of `bpfprof continuous`: one profile per interval,
 * named after the UTC start of its window so that names sort like times,
 * with the oldest deleted to stay within --keep N files and --max-bytes SIZE.
 *
 * Only files whose names match the snapshot pattern exactly are ever
 * listed or deleted, so a directory shared with other files is safe.
 */
#ifndef BPFPROF_SNAPSHOT_DIR_H
#define BPFPROF_SNAPSHOT_DIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * What one window is written as: --format firefox, pprof or both (then the
 * window has two files with one stem, which count and go together).
 */
enum snapshot_kind {
	SNAPSHOT_FIREFOX, /* bpfprof-YYYYMMDDTHHMMSS.mmmZ.json.gz */
	SNAPSHOT_PPROF,	  /* bpfprof-YYYYMMDDTHHMMSS.mmmZ.pb.gz */
};

/* strlen("bpfprof-YYYYMMDDTHHMMSS.mmmZ"): the window's start, shared by its files */
#define SNAPSHOT_STEM_LEN  28
/* The longest name: strlen("bpfprof-YYYYMMDDTHHMMSS.mmmZ.json.gz") */
#define SNAPSHOT_NAME_LEN  36
/* A buffer that holds any snapshot name and its terminating NUL. */
#define SNAPSHOT_NAME_SIZE (SNAPSHOT_NAME_LEN + 1)

struct snapshot_dir {
	char *path; /* as given, trailing slashes removed */
	int fd;	    /* the directory, for *at() calls that do not re-resolve path */
};

/*
 * Format the name of a window's `kind` of file, the window starting at
 * `wall_ms` (milliseconds since the Unix epoch, UTC; fractions are
 * truncated), e.g. bpfprof-20261122T101500.123Z.json.gz. 0; -EINVAL when
 * wall_ms is negative, not finite or past year 9999, or kind is unknown;
 * -ENOSPC when `len` < SNAPSHOT_NAME_SIZE.
 */
int snapshot_name(char *buf, size_t len, double wall_ms, enum snapshot_kind kind);

/*
 * True when `name` (a bare file name, no directory) is exactly a name that
 * snapshot_name() can produce, of either kind: digits where digits belong and
 * each date and time field in its range.
 */
bool snapshot_name_matches(const char *name);

/*
 * Open `path` as the snapshot directory, creating it and its missing parents
 * with mode 0700 (under sudo they are given to the sudo user, as the profiles
 * are). An existing directory keeps its mode. The path is walked from "/"
 * through directory fds and checked on the way (snapshot_dir_walk.h), and
 * everything after works through d->fd, never the path again. Fails when
 * the path is not a directory, cannot be created, is not safe (a link at
 * its end or of another user's, or a directory others can change), or a
 * real probe (create and unlink a file) shows that it is not writable. Then removes temporary files
 * that a crashed writer left (see snapshot_dir.c: only output_file.c's temporaries of snapshot
 * names that no process holds open and that are older than a minute). 0, or -errno with a one-line
 * message already printed; on failure `d` needs no snapshot_dir_close().
 */
int snapshot_dir_open(struct snapshot_dir *d, const char *path);

/*
 * The full path of the window's `kind` of file, the window starting at
 * `wall_ms`, newly allocated into *out (free() it), for messages and for
 * output_file_open_at(d->fd, ...), which uses only its last component.
 * 0 or -errno (see snapshot_name()).
 */
int snapshot_dir_path(const struct snapshot_dir *d, double wall_ms, enum snapshot_kind kind,
		      char **out);

/*
 * Delete the oldest snapshots (by name, which is by time) while there are
 * more than `keep` windows (0: no count limit) or their files total more
 * than `max_bytes` bytes (0: no size limit). A window's files (its .json.gz
 * and .pb.gz) count as one snapshot and are deleted together. Never deletes
 * the window of `protect` (a file just written: a bare name or a path, or
 * NULL) nor the newest window, so a max_bytes smaller than one snapshot
 * keeps just the newest. A file that vanishes meanwhile is not an error.
 * Returns the number of files deleted, or -errno with a one-line message
 * already printed.
 */
int snapshot_dir_prune(struct snapshot_dir *d, unsigned keep, uint64_t max_bytes,
		       const char *protect);

/* Release `d`; safe to call twice and after a zero-initialised struct. */
void snapshot_dir_close(struct snapshot_dir *d);

#endif
