// SPDX-License-Identifier: BSD-2-Clause
/*
 * The snapshot directory of `bpfprof continuous`: names that sort like
 * times, creating and checking the directory, pruning by count and size
 * without touching anything but snapshots, removing crashed writers'
 * temporary files (made by the real output_file.c).
 */
#include "cli/snapshot_dir.h"
#include "emit/output_file.h"
#include "test.h"
#include "tmp_tree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char base[] = "/tmp/test_snapshot_dir.XXXXXX";

/* ms since the epoch of a UTC calendar time, computed independently of the code under test. */
static double utc_ms(int year, int month, int day, int hour, int min, int sec, int ms)
{
	struct tm tm = { .tm_year = year - 1900,
			 .tm_mon = month - 1,
			 .tm_mday = day,
			 .tm_hour = hour,
			 .tm_min = min,
			 .tm_sec = sec };

	return (double)timegm(&tm) * 1000.0 + ms;
}

static unsigned mode_of(const char *path)
{
	struct stat st;

	if (stat(path, &st))
		return 0;
	return st.st_mode & 07777;
}

static void write_file(const char *path, size_t size)
{
	char chunk[256];
	FILE *f = fopen(path, "w");

	CHECK(f != NULL);
	if (!f)
		return;
	memset(chunk, 'x', sizeof(chunk));
	while (size) {
		size_t n = size < sizeof(chunk) ? size : sizeof(chunk);

		CHECK_EQ_INT(fwrite(chunk, 1, n, f), n);
		size -= n;
	}
	CHECK_EQ_INT(fclose(f), 0);
}

/* A fresh, empty directory under base for one case; its path stays valid. */
static char *case_dir(const char *name)
{
	static char dirs[16][512];
	static int next;
	char *p = dirs[next++ % 16];

	snprintf(p, sizeof(dirs[0]), "%s/%s", base, name);
	CHECK_EQ_INT(mkdir(p, 0755), 0);
	return p;
}

static int count_entries(const char *dir)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

/* Names the planted-files case keeps for its checks. */
static char series_buf[4][SNAPSHOT_NAME_SIZE];

/* The i-th window's `kind` of file, in a series one minute apart. */
static const char *series_file(int i, enum snapshot_kind kind)
{
	static char buf[16][SNAPSHOT_NAME_SIZE];
	static int next;
	char *p = buf[next++ % 16];

	CHECK_EQ_INT(snapshot_name(p, SNAPSHOT_NAME_SIZE,
				   utc_ms(2026, 11, 22, 10, 15, 0, 123) + i * 60000.0, kind),
		     0);
	return p;
}

/* The i-th snapshot name of a series one minute apart. */
static const char *series_name(int i)
{
	return series_file(i, SNAPSHOT_FIREFOX);
}

/* The i-th window's pprof file (--format both writes it beside series_name(i)). */
static const char *series_pb_name(int i)
{
	return series_file(i, SNAPSHOT_PPROF);
}

static void test_name_format(void)
{
	char buf[SNAPSHOT_NAME_SIZE];

	CHECK_EQ_INT(snapshot_name(buf, sizeof(buf), utc_ms(2026, 11, 22, 10, 15, 0, 123),
				   SNAPSHOT_FIREFOX),
		     0);
	CHECK_EQ_STR(buf, "bpfprof-20261122T101500.123Z.json.gz");
	CHECK_EQ_INT(strlen(buf), SNAPSHOT_NAME_LEN);
	CHECK_EQ_INT(snapshot_name(buf, sizeof(buf), 0, SNAPSHOT_FIREFOX), 0);
	CHECK_EQ_STR(buf, "bpfprof-19700101T000000.000Z.json.gz");
	/* Fractions of a ms are cut, never rounded up past the window's start. */
	CHECK_EQ_INT(snapshot_name(buf, sizeof(buf), 1999.9, SNAPSHOT_FIREFOX), 0);
	CHECK_EQ_STR(buf, "bpfprof-19700101T000001.999Z.json.gz");
	CHECK_EQ_INT(snapshot_name(buf, sizeof(buf), utc_ms(9999, 12, 31, 23, 59, 59, 999),
				   SNAPSHOT_FIREFOX),
		     0);
	CHECK_EQ_STR(buf, "bpfprof-99991231T235959.999Z.json.gz");

	CHECK_EQ_INT(snapshot_name(buf, sizeof(buf), -1, SNAPSHOT_FIREFOX), -EINVAL);
	CHECK_EQ_INT(snapshot_name(buf, sizeof(buf), NAN, SNAPSHOT_FIREFOX), -EINVAL);
	CHECK_EQ_INT(snapshot_name(buf, sizeof(buf), INFINITY, SNAPSHOT_FIREFOX), -EINVAL);
	CHECK_EQ_INT(
		snapshot_name(buf, sizeof(buf), utc_ms(10000, 1, 1, 0, 0, 0, 0), SNAPSHOT_FIREFOX),
		-EINVAL);
	CHECK_EQ_INT(snapshot_name(buf, SNAPSHOT_NAME_LEN, 0, SNAPSHOT_FIREFOX), -ENOSPC);

	/* pprof: the same stem, its own ending; an unknown kind is refused. */
	CHECK_EQ_INT(snapshot_name(buf, sizeof(buf), utc_ms(2026, 11, 22, 10, 15, 0, 123),
				   SNAPSHOT_PPROF),
		     0);
	CHECK_EQ_STR(buf, "bpfprof-20261122T101500.123Z.pb.gz");
	CHECK_EQ_INT(snapshot_name(buf, sizeof(buf), 0, (enum snapshot_kind)7), -EINVAL);
}

static void test_names_sort_like_times(void)
{
	/* Increasing instants across ms digits, a day, a month and a year. */
	const double t[] = {
		utc_ms(2025, 2, 28, 23, 59, 59, 9),    utc_ms(2025, 2, 28, 23, 59, 59, 10),
		utc_ms(2025, 2, 28, 23, 59, 59, 100),  utc_ms(2025, 2, 28, 23, 59, 59, 999),
		utc_ms(2025, 3, 1, 0, 0, 0, 0),	       utc_ms(2025, 3, 1, 9, 59, 59, 999),
		utc_ms(2025, 3, 1, 10, 0, 0, 0),       utc_ms(2025, 3, 2, 0, 0, 0, 0),
		utc_ms(2025, 12, 31, 23, 59, 59, 999), utc_ms(2026, 1, 1, 0, 0, 0, 0),
		utc_ms(2026, 1, 1, 0, 0, 0, 1),	       utc_ms(2026, 10, 1, 0, 0, 0, 0),
	};
	char prev[SNAPSHOT_NAME_SIZE] = "", cur[SNAPSHOT_NAME_SIZE];
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		CHECK_EQ_INT(snapshot_name(cur, sizeof(cur), t[i], SNAPSHOT_FIREFOX), 0);
		CHECK(snapshot_name_matches(cur));
		if (i && strcmp(prev, cur) >= 0)
			fprintf(stderr, "  not increasing: %s then %s\n", prev, cur);
		CHECK(!i || strcmp(prev, cur) < 0);
		memcpy(prev, cur, sizeof(cur));
	}
	CHECK_EQ_INT(
		snapshot_name(cur, sizeof(cur), utc_ms(2026, 1, 1, 0, 0, 0, 0), SNAPSHOT_FIREFOX),
		0);
	CHECK_EQ_STR(cur, "bpfprof-20260101T000000.000Z.json.gz");
}

static void test_name_matching(void)
{
	CHECK(snapshot_name_matches("bpfprof-20261122T101500.123Z.json.gz"));
	CHECK(!snapshot_name_matches(NULL));
	CHECK(!snapshot_name_matches(""));
	CHECK(!snapshot_name_matches("notes.txt"));
	CHECK(!snapshot_name_matches("bpfprof-20261122T101500.123Z.json.gz.tmp"));
	CHECK(!snapshot_name_matches(".bpfprof-20261122T101500.123Z.json.gz.abcDE1"));
	CHECK(!snapshot_name_matches("bpfprof-20261122T101500.123Z.json"));
	CHECK(!snapshot_name_matches("xbpfprof-20261122T101500.123Z.json.gz"));
	CHECK(!snapshot_name_matches("bpfprof-2026112aT101500.123Z.json.gz"));
	CHECK(!snapshot_name_matches("bpfprof-20261122t101500.123Z.json.gz"));
	CHECK(!snapshot_name_matches("bpfprof-20261322T101500.123Z.json.gz")); /* month 13 */
	CHECK(!snapshot_name_matches("bpfprof-20261100T101500.123Z.json.gz")); /* day 0 */
	CHECK(!snapshot_name_matches("bpfprof-20261122T241500.123Z.json.gz")); /* hour 24 */
	CHECK(!snapshot_name_matches("bpfprof-20261122T106000.123Z.json.gz")); /* minute 60 */
	CHECK(!snapshot_name_matches("bpfprof-profile.json.gz"));
	CHECK(snapshot_name_matches("bpfprof-20261122T101500.123Z.pb.gz"));
	CHECK(!snapshot_name_matches("bpfprof-20261122T101500.123Z.pb"));
	CHECK(!snapshot_name_matches("bpfprof-20261122T101500.123Z.pb.gzz"));
	CHECK(!snapshot_name_matches("bpfprof-20261122T101500.123Z"));
	CHECK(!snapshot_name_matches("bpfprof-20261122T101500.123Z.gz"));
	CHECK(!snapshot_name_matches("bpfprof-20261322T101500.123Z.pb.gz")); /* month 13 */
}

static void test_open_creates_nested_0700(void)
{
	struct snapshot_dir d;
	mode_t old_umask;
	char want[600];
	char *file;

	/* A umask that would strip the owner's write bit: the mode is still 0700. */
	old_umask = umask(0277);
	CHECK_EQ_INT(snapshot_dir_open(&d, path_in(base, "made/a/b/")), 0);
	umask(old_umask);
	CHECK_EQ_INT(mode_of(path_in(base, "made")), 0700);
	CHECK_EQ_INT(mode_of(path_in(base, "made/a")), 0700);
	CHECK_EQ_INT(mode_of(path_in(base, "made/a/b")), 0700);
	/* The write probe leaves nothing behind. */
	CHECK_EQ_INT(count_entries(path_in(base, "made/a/b")), 0);

	CHECK_EQ_INT(snapshot_dir_path(&d, utc_ms(2026, 11, 22, 10, 15, 0, 123), SNAPSHOT_FIREFOX,
				       &file),
		     0);
	snprintf(want, sizeof(want), "%s/made/a/b/bpfprof-20261122T101500.123Z.json.gz", base);
	CHECK_EQ_STR(file, want);
	free(file);
	CHECK_EQ_INT(snapshot_dir_path(&d, -5, SNAPSHOT_PPROF, &file), -EINVAL);
	CHECK(file == NULL);
	snapshot_dir_close(&d);
	snapshot_dir_close(&d); /* twice is harmless */
	CHECK(d.path == NULL && d.fd == -1);

	/* An existing directory keeps its mode. */
	CHECK_EQ_INT(mkdir(path_in(base, "existing"), 0751), 0);
	CHECK_EQ_INT(chmod(path_in(base, "existing"), 0751), 0);
	CHECK_EQ_INT(snapshot_dir_open(&d, path_in(base, "existing")), 0);
	CHECK_EQ_INT(mode_of(path_in(base, "existing")), 0751);
	snapshot_dir_close(&d);
}

static void test_open_rejects_files_and_bad_paths(void)
{
	struct snapshot_dir d;

	write_file(path_in(base, "plain"), 10);
	CHECK_EQ_INT(snapshot_dir_open(&d, path_in(base, "plain")), -ENOTDIR);
	CHECK(d.path == NULL && d.fd == -1);
	/* A file in the middle of the path. */
	CHECK_EQ_INT(snapshot_dir_open(&d, path_in(base, "plain/sub/dir")), -ENOTDIR);
	CHECK(!exists(path_in(base, "plain/sub")));
	CHECK_EQ_INT(snapshot_dir_open(&d, ""), -EINVAL);
	CHECK_EQ_INT(snapshot_dir_open(&d, NULL), -EINVAL);
	/* Unwritable even for root: /proc takes no new files or directories. */
	CHECK(snapshot_dir_open(&d, "/proc/self") < 0);
	CHECK(d.path == NULL && d.fd == -1);
	CHECK(snapshot_dir_open(&d, "/proc/bpfprof-no-such-dir/snapshots") < 0);
	CHECK(!exists("/proc/bpfprof-no-such-dir"));
}

/* snapshot_dir_open() of `path` as user `uid` when root, or as ourselves: its result. */
static int open_as(uid_t uid, const char *path)
{
	struct snapshot_dir d;
	pid_t pid;
	int status, err;

	if (geteuid() != 0) {
		err = snapshot_dir_open(&d, path);
		if (!err)
			snapshot_dir_close(&d);
		return err;
	}
	pid = fork();
	if (pid == 0) {
		if (setgid(uid) || setuid(uid))
			_exit(100);
		err = snapshot_dir_open(&d, path);
		_exit(err < 0 ? -err : 0);
	}
	CHECK(pid > 0);
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return 1;
	CHECK(WEXITSTATUS(status) != 100);
	return -WEXITSTATUS(status);
}

static void test_open_rejects_unwritable(void)
{
	/* As root, mode bits stop nothing: ask as an unprivileged user instead. */
	uid_t who = geteuid() == 0 ? 65534 : geteuid();
	char *ro = case_dir("readonly");

	CHECK_EQ_INT(chmod(base, 0755), 0); /* let that user reach it */
	/* Theirs, so that only the mode stops them (another's directory is refused anyway). */
	if (geteuid() == 0)
		CHECK_EQ_INT(chown(ro, who, who), 0);
	CHECK_EQ_INT(chmod(ro, 0555), 0);
	CHECK_EQ_INT(open_as(who, ro), -EACCES);
	CHECK_EQ_INT(open_as(who, path_in(ro, "new/deeper")), -EACCES);
	CHECK_EQ_INT(count_entries(ro), 0);
	/* The same user can use a directory it may write (sticky, as /tmp is). */
	CHECK_EQ_INT(chmod(ro, 01777), 0);
	CHECK_EQ_INT(open_as(who, path_in(ro, "mine")), 0);
	CHECK_EQ_INT(mode_of(path_in(ro, "mine")), 0700);
	CHECK_EQ_INT(chmod(base, 0700), 0);
}

static void test_open_under_sudo_gives_dirs_to_user(void)
{
	struct snapshot_dir d;
	struct stat st;
	char *old_uid = getenv("SUDO_UID"), *old_gid = getenv("SUDO_GID");

	if (geteuid() != 0) {
		fprintf(stderr, "  (not root: chown to the sudo user not tested)\n");
		return;
	}
	old_uid = old_uid ? strdup(old_uid) : NULL;
	old_gid = old_gid ? strdup(old_gid) : NULL;
	setenv("SUDO_UID", "4242", 1);
	setenv("SUDO_GID", "4343", 1);
	CHECK_EQ_INT(mkdir(path_in(base, "sudo"), 0755), 0);
	CHECK_EQ_INT(snapshot_dir_open(&d, path_in(base, "sudo/new/dir")), 0);
	snapshot_dir_close(&d);
	CHECK_EQ_INT(stat(path_in(base, "sudo/new/dir"), &st), 0);
	CHECK_EQ_INT(st.st_uid, 4242);
	CHECK_EQ_INT(st.st_gid, 4343);
	CHECK_EQ_INT(stat(path_in(base, "sudo/new"), &st), 0);
	CHECK_EQ_INT(st.st_uid, 4242);
	/* Only what it created: the existing parent stays root's. */
	CHECK_EQ_INT(stat(path_in(base, "sudo"), &st), 0);
	CHECK_EQ_INT(st.st_uid, 0);
	if (old_uid)
		setenv("SUDO_UID", old_uid, 1);
	else
		unsetenv("SUDO_UID");
	if (old_gid)
		setenv("SUDO_GID", old_gid, 1);
	else
		unsetenv("SUDO_GID");
	free(old_uid);
	free(old_gid);
}

/*
 * Where bpfprof would write and delete as root, nobody else may change what
 * the directory is: a symlink (planted where the directory was to be), a
 * directory of another user, or one open to other writers is refused, and
 * so is one inside a directory that others can change.
 */
static void test_open_rejects_unsafe_dirs(void)
{
	char *real = case_dir("real"), *open_dir = case_dir("writable"), *theirs;
	char *shared = case_dir("shared");
	struct snapshot_dir d;

	CHECK_EQ_INT(symlink(real, path_in(base, "link")), 0);
	CHECK_EQ_INT(snapshot_dir_open(&d, path_in(base, "link")), -ELOOP);
	CHECK_EQ_INT(snapshot_dir_open(&d, path_in(base, "link/")), -ELOOP);
	CHECK_EQ_INT(count_entries(real), 0);
	/* Through a symlinked parent of our own making: the real path is what counts. */
	CHECK_EQ_INT(snapshot_dir_open(&d, real), 0);
	snapshot_dir_close(&d);

	CHECK_EQ_INT(chmod(open_dir, 0777), 0);
	CHECK_EQ_INT(snapshot_dir_open(&d, open_dir), -EPERM);
	CHECK_EQ_INT(chmod(open_dir, 0770), 0);
	CHECK_EQ_INT(snapshot_dir_open(&d, open_dir), -EPERM);
	CHECK_EQ_INT(chmod(open_dir, 0750), 0);
	CHECK_EQ_INT(snapshot_dir_open(&d, open_dir), 0);
	snapshot_dir_close(&d);

	/* Inside a directory others may write to: only if it is sticky. */
	CHECK_EQ_INT(chmod(shared, 0777), 0);
	CHECK_EQ_INT(snapshot_dir_open(&d, path_in(shared, "mine")), -EPERM);
	CHECK_EQ_INT(chmod(shared, 01777), 0);
	CHECK_EQ_INT(snapshot_dir_open(&d, path_in(shared, "mine")), 0);
	snapshot_dir_close(&d);

	if (geteuid() != 0) {
		fprintf(stderr, "  (not root: directories of other users not tested)\n");
		return;
	}
	unsetenv("SUDO_UID");
	theirs = case_dir("theirs");
	CHECK_EQ_INT(chown(theirs, 4242, 4242), 0);
	CHECK_EQ_INT(snapshot_dir_open(&d, theirs), -EPERM);
	CHECK_EQ_INT(count_entries(theirs), 0);
	/* Our directory inside theirs: they could swap it for another. */
	CHECK_EQ_INT(chmod(theirs, 0755), 0);
	CHECK_EQ_INT(mkdir(path_in(theirs, "ours"), 0700), 0);
	CHECK_EQ_INT(snapshot_dir_open(&d, path_in(theirs, "ours")), -EPERM);
	/* Under sudo, the sudo user's directory is ours. */
	setenv("SUDO_UID", "4242", 1);
	CHECK_EQ_INT(snapshot_dir_open(&d, theirs), 0);
	snapshot_dir_close(&d);
	unsetenv("SUDO_UID");
}

/*
 * Files named like snapshots that we did not write: another user's (as a
 * user with write access to the directory could plant), and names dated
 * after now, which would sort newest and make the real ones go. Neither is
 * counted nor deleted; real snapshots are kept as --keep says.
 */
static void test_prune_ignores_planted(void)
{
	char *dir = case_dir("planted");
	char future[SNAPSHOT_NAME_SIZE];
	struct snapshot_dir d;
	time_t now = time(NULL);
	int i;

	for (i = 0; i < 4; i++) {
		char name[SNAPSHOT_NAME_SIZE];

		/* Real ones, minutes in the past. */
		CHECK_EQ_INT(snapshot_name(name, sizeof(name), ((double)now - 600 + i * 60) * 1000,
					   SNAPSHOT_FIREFOX),
			     0);
		write_file(path_in(dir, name), 10);
		snprintf(series_buf[i], sizeof(series_buf[i]), "%s", name);
	}
	for (i = 1; i <= 3; i++) {
		CHECK_EQ_INT(snapshot_name(future, sizeof(future), ((double)now + i * 86400) * 1000,
					   SNAPSHOT_FIREFOX),
			     0);
		write_file(path_in(dir, future), 10);
	}
	if (geteuid() == 0) {
		unsetenv("SUDO_UID");
		/* Another user's, dated between ours. */
		write_file(path_in(dir, "bpfprof-20000101T000000.000Z.json.gz"), 10);
		CHECK_EQ_INT(
			chown(path_in(dir, "bpfprof-20000101T000000.000Z.json.gz"), 4242, 4242), 0);
	}
	CHECK_EQ_INT(snapshot_dir_open(&d, dir), 0);
	/* Four real ones, --keep 2: the two oldest real ones go, nothing else. */
	CHECK_EQ_INT(snapshot_dir_prune(&d, 2, 0, series_buf[3]), 2);
	CHECK(!exists(path_in(dir, series_buf[0])));
	CHECK(!exists(path_in(dir, series_buf[1])));
	CHECK(exists(path_in(dir, series_buf[2])));
	CHECK(exists(path_in(dir, series_buf[3])));
	CHECK(exists(path_in(dir, future)));
	if (geteuid() == 0)
		CHECK(exists(path_in(dir, "bpfprof-20000101T000000.000Z.json.gz")));
	CHECK_EQ_INT(count_entries(dir), geteuid() == 0 ? 6 : 5);
	snapshot_dir_close(&d);
}

/* Files that prune must never touch, whatever the limits. */
static void make_bystanders(const char *dir)
{
	char target[600];

	write_file(path_in(dir, "notes.txt"), 5000);
	write_file(path_in(dir, "bpfprof-profile.json.gz"), 5000);
	write_file(path_in(dir, "bpfprof-20001122T101500.123Z.json.gz.bak"), 5000);
	write_file(path_in(dir, "bpfprof-20001322T101500.123Z.json.gz"), 5000); /* month 13 */
	/* Named like old snapshots, but not regular files: a directory and a symlink. */
	CHECK_EQ_INT(mkdir(path_in(dir, "bpfprof-20001122T101500.123Z.json.gz"), 0755), 0);
	write_file(path_in(dir, "target.dat"), 5000);
	snprintf(target, sizeof(target), "%s/target.dat", dir);
	CHECK_EQ_INT(symlink(target, path_in(dir, "bpfprof-20001122T101501.123Z.json.gz")), 0);
}

static void check_bystanders(const char *dir)
{
	CHECK(exists(path_in(dir, "notes.txt")));
	CHECK(exists(path_in(dir, "bpfprof-profile.json.gz")));
	CHECK(exists(path_in(dir, "bpfprof-20001122T101500.123Z.json.gz.bak")));
	CHECK(exists(path_in(dir, "bpfprof-20001322T101500.123Z.json.gz")));
	CHECK(exists(path_in(dir, "bpfprof-20001122T101500.123Z.json.gz")));
	CHECK(exists(path_in(dir, "bpfprof-20001122T101501.123Z.json.gz")));
	CHECK(exists(path_in(dir, "target.dat")));
}

static void test_prune_by_count(void)
{
	char *dir = case_dir("keep");
	struct snapshot_dir d;
	int i;

	make_bystanders(dir);
	/* Created newest first: the order on disk must not matter. */
	for (i = 5; i >= 0; i--)
		write_file(path_in(dir, series_name(i)), 10);
	CHECK_EQ_INT(snapshot_dir_open(&d, dir), 0);
	CHECK_EQ_INT(snapshot_dir_prune(&d, 0, 0, path_in(dir, series_name(5))), 0);
	CHECK_EQ_INT(snapshot_dir_prune(&d, 6, 0, series_name(5)), 0);
	CHECK_EQ_INT(snapshot_dir_prune(&d, 2, 0, series_name(5)), 4);
	for (i = 0; i < 4; i++)
		CHECK(!exists(path_in(dir, series_name(i))));
	CHECK(exists(path_in(dir, series_name(4))));
	CHECK(exists(path_in(dir, series_name(5))));
	check_bystanders(dir);
	/* Already within the limit: nothing more. */
	CHECK_EQ_INT(snapshot_dir_prune(&d, 2, 0, NULL), 0);
	CHECK_EQ_INT(snapshot_dir_prune(&d, 1, 0, NULL), 1);
	CHECK(exists(path_in(dir, series_name(5))));
	CHECK_EQ_INT(count_entries(dir), 8);
	snapshot_dir_close(&d);
}

static void test_prune_by_size(void)
{
	char *dir = case_dir("bytes");
	struct snapshot_dir d;
	int i;

	make_bystanders(dir);
	for (i = 0; i < 4; i++)
		write_file(path_in(dir, series_name(i)), 100 * (i + 1)); /* 100..400: 1000 */
	CHECK_EQ_INT(snapshot_dir_open(&d, dir), 0);
	CHECK_EQ_INT(snapshot_dir_prune(&d, 0, 1000, series_name(3)), 0);
	/* 1000 > 701: drop 100 (900), drop 200 (700), stop. */
	CHECK_EQ_INT(snapshot_dir_prune(&d, 0, 701, series_name(3)), 2);
	CHECK(!exists(path_in(dir, series_name(0))));
	CHECK(!exists(path_in(dir, series_name(1))));
	CHECK(exists(path_in(dir, series_name(2))));
	CHECK(exists(path_in(dir, series_name(3))));
	check_bystanders(dir);

	/* Both limits: whichever asks for more deletions wins. */
	write_file(path_in(dir, series_name(4)), 100);
	CHECK_EQ_INT(snapshot_dir_prune(&d, 1, 1 << 20, series_name(4)), 2);
	CHECK(exists(path_in(dir, series_name(4))));
	CHECK(!exists(path_in(dir, series_name(3))));

	/* A budget below one snapshot keeps just the newest, protected or not. */
	write_file(path_in(dir, series_name(5)), 1000);
	write_file(path_in(dir, series_name(6)), 1000);
	CHECK_EQ_INT(snapshot_dir_prune(&d, 0, 10, NULL), 2);
	CHECK(exists(path_in(dir, series_name(6))));
	CHECK(!exists(path_in(dir, series_name(5))));
	CHECK(!exists(path_in(dir, series_name(4))));
	check_bystanders(dir);
	snapshot_dir_close(&d);
}

static void test_prune_never_deletes_protected(void)
{
	char *dir = case_dir("protect");
	struct snapshot_dir d;

	/*
	 * The file just written sorts oldest (the clock was set back): it
	 * survives, and so does the newest, even if the limits say otherwise.
	 */
	write_file(path_in(dir, series_name(0)), 1000);
	write_file(path_in(dir, series_name(1)), 1000);
	write_file(path_in(dir, series_name(2)), 1000);
	CHECK_EQ_INT(snapshot_dir_open(&d, dir), 0);
	CHECK_EQ_INT(snapshot_dir_prune(&d, 1, 1, path_in(dir, series_name(0))), 1);
	CHECK(exists(path_in(dir, series_name(0))));
	CHECK(!exists(path_in(dir, series_name(1))));
	CHECK(exists(path_in(dir, series_name(2))));
	CHECK_EQ_INT(snapshot_dir_prune(&d, 1, 1, series_name(0)), 0);
	CHECK_EQ_INT(count_entries(dir), 2);
	snapshot_dir_close(&d);
}

/* --format both: a window's two files count as one snapshot and go together. */
static void test_prune_windows_of_both_formats(void)
{
	char *dir = case_dir("both");
	struct snapshot_dir d;
	int i;

	make_bystanders(dir);
	for (i = 0; i < 4; i++) {
		write_file(path_in(dir, series_name(i)), 300);
		write_file(path_in(dir, series_pb_name(i)), 100);
	}
	/* A window that has only its pprof file (the other failed to write). */
	write_file(path_in(dir, series_pb_name(4)), 100);
	CHECK_EQ_INT(snapshot_dir_open(&d, dir), 0);
	/* Five windows: keeping 5 deletes nothing, though there are nine files. */
	CHECK_EQ_INT(snapshot_dir_prune(&d, 5, 0, series_pb_name(4)), 0);
	/* Keeping 3 deletes the two oldest windows, both files of each. */
	CHECK_EQ_INT(snapshot_dir_prune(&d, 3, 0, series_pb_name(4)), 4);
	for (i = 0; i < 2; i++) {
		CHECK(!exists(path_in(dir, series_name(i))));
		CHECK(!exists(path_in(dir, series_pb_name(i))));
	}
	CHECK(exists(path_in(dir, series_name(2))) && exists(path_in(dir, series_pb_name(2))));
	/* Bytes count every file: 400 + 400 + 100 > 499 drops windows 2 and 3. */
	CHECK_EQ_INT(snapshot_dir_prune(&d, 0, 499, series_pb_name(4)), 4);
	CHECK(!exists(path_in(dir, series_pb_name(3))));
	CHECK(exists(path_in(dir, series_pb_name(4))));
	/* The protected window keeps both its files, whichever of them is named. */
	write_file(path_in(dir, series_name(5)), 300);
	write_file(path_in(dir, series_pb_name(5)), 100);
	write_file(path_in(dir, series_name(6)), 300);
	CHECK_EQ_INT(snapshot_dir_prune(&d, 1, 0, path_in(dir, series_pb_name(5))), 1);
	CHECK(!exists(path_in(dir, series_pb_name(4))));
	CHECK(exists(path_in(dir, series_name(5))) && exists(path_in(dir, series_pb_name(5))));
	CHECK(exists(path_in(dir, series_name(6))));
	check_bystanders(dir);
	snapshot_dir_close(&d);
}

/* The temporary file output_file.c made in `dir`, or NULL. */
static char *find_tmp_of(const char *dir, const char *final_name)
{
	static char found[600];
	struct dirent *de;
	DIR *dd = opendir(dir);
	char prefix[SNAPSHOT_NAME_SIZE + 2];
	bool hit = false;

	if (!dd)
		return NULL;
	snprintf(prefix, sizeof(prefix), ".%s.", final_name);
	while ((de = readdir(dd))) {
		if (!strncmp(de->d_name, prefix, strlen(prefix))) {
			snprintf(found, sizeof(found), "%s/%s", dir, de->d_name);
			hit = true;
			break;
		}
	}
	closedir(dd);
	return hit ? found : NULL;
}

/* As a bpfprof that died mid-window: open the output file, write, and vanish. */
static char *crashed_writer(const char *dir, const char *name)
{
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		struct output_file o;

		if (output_file_open(&o, path_in(dir, name)) || write(o.fd, "partial", 7) != 7)
			_exit(1);
		_exit(0); /* no commit, no abort: what a crash leaves */
	}
	CHECK(pid > 0);
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && !WEXITSTATUS(status));
	return find_tmp_of(dir, name);
}

static void backdate(const char *path, int seconds)
{
	struct timespec ts[2];

	clock_gettime(CLOCK_REALTIME, &ts[0]);
	ts[0].tv_sec -= seconds;
	ts[1] = ts[0];
	CHECK_EQ_INT(utimensat(AT_FDCWD, path, ts, AT_SYMLINK_NOFOLLOW), 0);
}

static void test_open_removes_stale_temporaries(void)
{
	char *dir = case_dir("stale"), *stale, *recent, *live_tmp;
	char stale_copy[600], recent_copy[600], live_copy[600], stale_pb[600];
	const char *others[] = {
		".notes.txt.ABCDEF",
		".bpfprof-20261122T101500.123Z.json.gz.ABCDE",	/* 5 letters */
		".bpfprof-20261122T101500.123Z.json.gz.ABC-EF", /* not mkostemp's */
		".bpfprof-20261122T101500.123Z.json.gz.tmp.ABCDEF",
		".bpfprof-profile.json.gz.ABCDEF",	   /* another output, not a snapshot */
		".bpfprof-20261122T101500.123Z.pb.ABCDEF", /* not a snapshot's ending */
	};
	struct snapshot_dir d;
	struct output_file live;
	size_t i;

	/* A crashed pprof writer's file goes the same way. */
	stale = crashed_writer(dir, series_pb_name(3));
	CHECK(stale != NULL);
	if (!stale)
		return;
	snprintf(stale_pb, sizeof(stale_pb), "%s", stale);
	backdate(stale_pb, 2 * 3600);
	stale = crashed_writer(dir, series_name(0));
	CHECK(stale != NULL);
	if (!stale)
		return;
	snprintf(stale_copy, sizeof(stale_copy), "%s", stale);
	backdate(stale_copy, 2 * 3600);
	/* Crashed a moment ago: too recent to be sure, kept until the next start. */
	recent = crashed_writer(dir, series_name(1));
	CHECK(recent != NULL);
	if (!recent)
		return;
	snprintf(recent_copy, sizeof(recent_copy), "%s", recent);
	/* A writer that is still running: old, but open. */
	CHECK_EQ_INT(output_file_open(&live, path_in(dir, series_name(2))), 0);
	live_tmp = find_tmp_of(dir, series_name(2));
	CHECK(live_tmp != NULL);
	if (!live_tmp) {
		output_file_free(&live);
		return;
	}
	snprintf(live_copy, sizeof(live_copy), "%s", live_tmp);
	CHECK_EQ_INT(write(live.fd, "running", 7), 7);
	backdate(live_copy, 2 * 3600);
	for (i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
		write_file(path_in(dir, others[i]), 10);
		backdate(path_in(dir, others[i]), 2 * 3600);
	}

	CHECK_EQ_INT(snapshot_dir_open(&d, dir), 0);
	CHECK(!exists(stale_copy));
	CHECK(!exists(stale_pb));
	CHECK(exists(recent_copy));
	CHECK(exists(live_copy));
	for (i = 0; i < sizeof(others) / sizeof(others[0]); i++)
		CHECK(exists(path_in(dir, others[i])));

	/* The live writer finishes undisturbed. */
	CHECK_EQ_INT(output_file_commit(&live), 0);
	output_file_free(&live);
	CHECK(exists(path_in(dir, series_name(2))));
	CHECK(!exists(live_copy));
	snapshot_dir_close(&d);
}

int main(void)
{
	int rc;

	if (!mkdtemp(base)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(test_name_format);
	RUN(test_names_sort_like_times);
	RUN(test_name_matching);
	RUN(test_open_creates_nested_0700);
	RUN(test_open_rejects_files_and_bad_paths);
	RUN(test_open_rejects_unwritable);
	RUN(test_open_under_sudo_gives_dirs_to_user);
	RUN(test_prune_by_count);
	RUN(test_prune_by_size);
	RUN(test_prune_never_deletes_protected);
	RUN(test_prune_windows_of_both_formats);
	RUN(test_open_rejects_unsafe_dirs);
	RUN(test_prune_ignores_planted);
	RUN(test_open_removes_stale_temporaries);
	rc = test_summary();
	chmod(path_in(base, "readonly"), 0700);
	tmp_tree_remove(base);
	return rc;
}
