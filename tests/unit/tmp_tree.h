/* SPDX-License-Identifier: BSD-2-Clause */
/* A unit test's own directory tree under /tmp: paths in it, and removing it. */
#ifndef BPFPROF_TEST_TMP_TREE_H
#define BPFPROF_TEST_TMP_TREE_H

#include <ftw.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/stat.h>

/* "dir/name" in one of a ring of buffers: valid for the next few calls only. */
static inline char *path_in(const char *dir, const char *name)
{
	static char buf[16][512];
	static int next;
	char *p = buf[next++ % 16];

	snprintf(p, sizeof(buf[0]), "%s/%s", dir, name);
	return p;
}

/* Whether `path` exists, a dangling link included. */
static inline bool exists(const char *path)
{
	struct stat st;

	return !lstat(path, &st);
}

/* Best effort: one entry that cannot go must not keep the rest. */
static inline int tmp_tree_remove_entry(const char *path, const struct stat *st, int flag,
					struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	remove(path);
	return 0;
}

/* Remove `dir` and everything in it, links not followed. */
static inline void tmp_tree_remove(const char *dir)
{
	nftw(dir, tmp_tree_remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

#endif
