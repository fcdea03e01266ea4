// SPDX-License-Identifier: BSD-2-Clause
/*
 * cli/snapshot_dir_walk.c: links in the middle of the snapshot directory's
 * path (issue 27). Root's own links are followed, relative or absolute;
 * another user's link, or any link in a directory others can change, is
 * refused before anything is made through it; a relative path is walked
 * from the working directory's real path.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/snapshot_dir_walk.h"
#include "test.h"
#include "tmp_tree.h"

static char base[] = "/tmp/test_snapshot_dir_walk.XXXXXX";

/* base/name (see path_in()). */
static const char *in_base(const char *name)
{
	return path_in(base, name);
}

/* snapshot_dir_walk() of `path`: its result, the fd closed. */
static int walk(const char *path)
{
	int fd = -1, err = snapshot_dir_walk(path, &fd);

	if (!err) {
		CHECK(fd >= 0);
		close(fd);
	}
	return err;
}

static void test_own_links_followed(void)
{
	CHECK_EQ_INT(mkdir(in_base("real"), 0755), 0);
	/* Absolute and relative, as /var/run -> /run and /var/lock -> ../run/lock are. */
	CHECK_EQ_INT(symlink(in_base("real"), in_base("abs")), 0);
	CHECK_EQ_INT(symlink("real", in_base("rel")), 0);
	CHECK_EQ_INT(walk(in_base("abs/a")), 0);
	CHECK(exists(in_base("real/a")));
	CHECK_EQ_INT(walk(in_base("rel/b/c")), 0);
	CHECK(exists(in_base("real/b/c")));
	CHECK_EQ_INT(walk(in_base("rel/../real/./b/c/")), 0);
	/* The last component is never followed, whoever owns it. */
	CHECK_EQ_INT(walk(in_base("rel")), -ELOOP);
	/* A loop ends. */
	CHECK_EQ_INT(symlink("loop", in_base("loop")), 0);
	CHECK_EQ_INT(walk(in_base("loop/x")), -ELOOP);
}

static void test_foreign_links_refused(void)
{
	if (geteuid() != 0) {
		fprintf(stderr, "  (not root: other users' links not tested)\n");
		return;
	}
	unsetenv("SUDO_UID");
	CHECK_EQ_INT(mkdir(in_base("target"), 0755), 0);
	/* Sticky and open to all, as /tmp: another user's link there. */
	CHECK_EQ_INT(mkdir(in_base("sticky"), 01777), 0);
	CHECK_EQ_INT(chmod(in_base("sticky"), 01777), 0);
	CHECK_EQ_INT(symlink(in_base("target"), in_base("sticky/link")), 0);
	CHECK_EQ_INT(lchown(in_base("sticky/link"), 4242, 4242), 0);
	CHECK_EQ_INT(walk(in_base("sticky/link/snaps")), -ELOOP);
	CHECK(!exists(in_base("target/snaps")));
	/* Root's link in the same place is root's choice. */
	CHECK_EQ_INT(symlink(in_base("target"), in_base("sticky/rootlink")), 0);
	CHECK_EQ_INT(walk(in_base("sticky/rootlink/snaps")), 0);
	CHECK(exists(in_base("target/snaps")));
	/* Under sudo, the sudo user's link is ours. */
	setenv("SUDO_UID", "4242", 1);
	CHECK_EQ_INT(walk(in_base("sticky/link/snaps")), 0);
	unsetenv("SUDO_UID");
	/* Any link inside another user's directory: refused at that directory. */
	CHECK_EQ_INT(mkdir(in_base("theirs"), 0755), 0);
	CHECK_EQ_INT(chown(in_base("theirs"), 4242, 4242), 0);
	CHECK_EQ_INT(symlink(in_base("target"), in_base("theirs/link")), 0);
	CHECK_EQ_INT(walk(in_base("theirs/link/new")), -EPERM);
	CHECK(!exists(in_base("target/new")));
	/* A link to another user's directory: its target is checked like any path. */
	CHECK_EQ_INT(symlink(in_base("theirs"), in_base("to_theirs")), 0);
	CHECK_EQ_INT(walk(in_base("to_theirs/new")), -EPERM);
	CHECK(!exists(in_base("theirs/new")));
}

static void test_relative_path(void)
{
	char old[512];

	CHECK(getcwd(old, sizeof(old)) != NULL);
	CHECK_EQ_INT(mkdir(in_base("cwd"), 0755), 0);
	CHECK_EQ_INT(chdir(in_base("cwd")), 0);
	CHECK_EQ_INT(walk("snaps"), 0);
	CHECK_EQ_INT(walk("./snaps/../snaps2"), 0);
	CHECK_EQ_INT(chdir(old), 0);
	CHECK(exists(in_base("cwd/snaps")));
	CHECK(exists(in_base("cwd/snaps2")));
	/* "/" walks no component, and "/proc/self" ends in a link. */
	CHECK_EQ_INT(walk("/proc/self"), -ELOOP);
}

int main(void)
{
	int rc;

	if (!mkdtemp(base)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(test_own_links_followed);
	RUN(test_foreign_links_refused);
	RUN(test_relative_path);
	rc = test_summary();
	tmp_tree_remove(base);
	return rc;
}
