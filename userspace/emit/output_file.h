/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The output file: opened as a temporary file in the destination directory
 * before recording starts (so an unwritable path fails early, not after a
 * 10 s recording), renamed into place only when complete.
 */
#ifndef BPFPROF_OUTPUT_FILE_H
#define BPFPROF_OUTPUT_FILE_H

#include <stdbool.h>
#include <sys/types.h>
#include <time.h>

struct output_file {
	char *final_path; /* as messages show it */
	char *tmp_path;
	/*
	 * What the names are relative to: AT_FDCWD (the names are the paths),
	 * or a directory held open by the caller (the names are the last
	 * components of the paths), so that nothing is re-resolved by path.
	 */
	int dirfd;
	const char *final_name, *tmp_name; /* inside final_path and tmp_path */
	int fd;
	bool gzip; /* the final name ends in .gz */
};

/*
 * The permissions of every file committed from now on (default 0600: a
 * profile shows every process's command line); the umask does not apply.
 */
void output_file_set_mode(mode_t mode);

/* 0, or -errno with a one-line message already printed. */
int output_file_open(struct output_file *o, const char *path);
/*
 * The same for the file named by the last component of `path`, in the
 * directory open as `dirfd` (which path's directory part only names in
 * messages): the temporary file, the rename and the clean-up all happen
 * through dirfd, so that swapping a directory of the path for a symlink
 * leads nothing elsewhere. dirfd must stay open until output_file_free().
 */
int output_file_open_at(struct output_file *o, int dirfd, const char *path);
/* fsync + rename over the final path. 0 or -errno. */
int output_file_commit(struct output_file *o);
/*
 * Remove the temporary file `name` in the directory open as `dirfd` (shown
 * as `dir`) if the bpfprof that wrote it is gone: ours, not written to for a
 * minute, and open nowhere (a write lease is granted). output_file_open()
 * does this for the temporaries of its own final name. 1 removed, 0 kept.
 */
int output_file_remove_stale(int dirfd, const char *dir, const char *name, time_t now);

/* Remove the temporary file. */
void output_file_abort(struct output_file *o);
void output_file_free(struct output_file *o);

#endif
