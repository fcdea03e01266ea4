// SPDX-License-Identifier: BSD-2-Clause
/*
 * util/uid_owner.c: the subordinate uids /etc/subuid gives a user fold to
 * that user, every other uid is its own; malformed lines, names that are
 * no user, overflowing ranges and overlong lines give nothing; what is read
 * is bounded; a file another user could have written is not believed.
 * Needs no root (the file is ours); as root one more case: a file owned by
 * another user.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/uid_owner.h"
#include "test.h"

static char file[] = "/tmp/bpfprof-uid-owner-XXXXXX";

/* `file` holds `text` (mode 0644, ours). */
static void write_file(const char *text)
{
	FILE *f = fopen(file, "w");

	CHECK(f != NULL);
	if (!f)
		return;
	fputs(text, f);
	fclose(f);
	CHECK_EQ_INT(chmod(file, 0644), 0);
}

static void ranges_fold_to_their_owner(void)
{
	struct uid_owners o;

	write_file("4242:100000:65536\n"
		   "root:300000:10\n"
		   "5000:400000:1"); /* the last line has no newline */
	/* root's range is not kept: its uids are users of their own, never root. */
	CHECK_EQ_INT(uid_owners_read(&o, file), 2);
	CHECK_EQ_INT(uid_owner_of(&o, 100000), 4242);
	CHECK_EQ_INT(uid_owner_of(&o, 165535), 4242);
	CHECK_EQ_INT(uid_owner_of(&o, 165536), 165536);
	CHECK_EQ_INT(uid_owner_of(&o, 99999), 99999);
	CHECK_EQ_INT(uid_owner_of(&o, 300009), 300009);
	CHECK_EQ_INT(uid_owner_of(&o, 300010), 300010);
	CHECK_EQ_INT(uid_owner_of(&o, 400000), 5000);
	CHECK_EQ_INT(uid_owner_of(&o, 400001), 400001);
	/* Owners themselves and everyone else are who they are. */
	CHECK_EQ_INT(uid_owner_of(&o, 4242), 4242);
	CHECK_EQ_INT(uid_owner_of(&o, 0), 0);
	CHECK_EQ_INT(uid_owner_of(NULL, 100000), 100000);
}

static void malformed_lines_give_nothing(void)
{
	struct uid_owners o;
	char text[4096];
	int n;

	n = snprintf(text, sizeof(text),
		     "# a comment\n"
		     "\n"
		     "broken\n"
		     "4242:100000\n"
		     "4242:100000:65536:1\n"
		     "4242:-5:10\n"
		     "4242:x100:10\n"
		     "4242:100:10x\n"
		     "4242:100:0\n"
		     "4242:4294967295:2\n" /* past the last uid */
		     "4242:4294967296:1\n" /* no uid */
		     "nobody-such-user-here:500000:10\n"
		     "::\n"
		     "4242:100::5\n" /* an empty field */
		     "4242::100:5\n"
		     ":100:5\n"
		     "0:600000:10\n"	 /* root's, by number */
		     "%0600d:1:1\n"	 /* too long: neither it nor its tail counts */
		     "7:4294967295:1\n", /* the very last uid: fine */
		     0);
	CHECK(n > 0 && (size_t)n < sizeof(text));
	write_file(text);
	CHECK_EQ_INT(uid_owners_read(&o, file), 1);
	CHECK_EQ_INT(uid_owner_of(&o, 4294967295u), 7);
	CHECK_EQ_INT(uid_owner_of(&o, 100), 100);
	CHECK_EQ_INT(uid_owner_of(&o, 1), 1);
	CHECK_EQ_INT(uid_owner_of(&o, 500000), 500000);
	CHECK_EQ_INT(uid_owner_of(&o, 600000), 600000);
	/* A line ending in CRLF is read as its owner meant. */
	write_file("4242:100000:10\r\n");
	CHECK_EQ_INT(uid_owners_read(&o, file), 1);
	CHECK_EQ_INT(uid_owner_of(&o, 100005), 4242);
}

static void what_is_read_is_bounded(void)
{
	struct uid_owners o;
	FILE *f = fopen(file, "w");

	CHECK(f != NULL);
	if (!f)
		return;
	/* More ranges than are kept: the first ones are. */
	for (unsigned i = 0; i < UID_OWNER_RANGES + 10; i++)
		fprintf(f, "%u:%u:1\n", 1000 + i, 1000000 + i);
	fclose(f);
	CHECK_EQ_INT(uid_owners_read(&o, file), UID_OWNER_RANGES);
	CHECK_EQ_INT(uid_owner_of(&o, 1000000), 1000);
	CHECK_EQ_INT(uid_owner_of(&o, 1000000 + UID_OWNER_RANGES), 1000000 + UID_OWNER_RANGES);

	/* Past the lines read, nothing more is. */
	f = fopen(file, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	for (unsigned i = 0; i < UID_OWNER_LINES; i++)
		fputs("#\n", f);
	fputs("4242:100000:65536\n", f);
	fclose(f);
	CHECK_EQ_INT(uid_owners_read(&o, file), 0);
	CHECK_EQ_INT(uid_owner_of(&o, 100000), 100000);
}

static void a_file_others_could_write_is_not_believed(void)
{
	struct uid_owners o;

	write_file("4242:100000:65536\n");
	CHECK_EQ_INT(chmod(file, 0646), 0);
	CHECK_EQ_INT(uid_owners_read(&o, file), 0);
	CHECK_EQ_INT(uid_owner_of(&o, 100000), 100000);
	/* Group-writable is another user's hand, the root group's too (it may hold users). */
	CHECK_EQ_INT(chmod(file, 0664), 0);
	CHECK_EQ_INT(uid_owners_read(&o, file), 0);
	CHECK_EQ_INT(uid_owner_of(&o, 100000), 100000);
	CHECK_EQ_INT(chmod(file, 0620), 0);
	CHECK_EQ_INT(uid_owners_read(&o, file), 0);
	/* The control: writable by its owner only, it is believed. */
	CHECK_EQ_INT(chmod(file, 0644), 0);
	CHECK_EQ_INT(uid_owners_read(&o, file), 1);
	if (geteuid() == 0) {
		/* Root's file in root's group, group-writable: still refused. */
		CHECK_EQ_INT(chown(file, 0, 0), 0);
		CHECK_EQ_INT(chmod(file, 0664), 0);
		CHECK_EQ_INT(uid_owners_read(&o, file), 0);
		CHECK_EQ_INT(chmod(file, 0644), 0);
		CHECK_EQ_INT(chown(file, 4242, 0), 0);
		CHECK_EQ_INT(uid_owners_read(&o, file), 0);
		CHECK_EQ_INT(chown(file, 0, 0), 0);
	}
	CHECK_EQ_INT(uid_owners_read(&o, "/nonexistent/subuid"), 0);
	/* A directory is no file. */
	CHECK_EQ_INT(uid_owners_read(&o, "/"), 0);
}

static void the_test_knob_names_the_file(void)
{
	struct uid_owners o;

	write_file("4242:100000:65536\n");
	setenv("BPFPROF_TEST_SUBUID", file, 1);
	CHECK_EQ_INT(uid_owners_read(&o, NULL), 1);
	CHECK_EQ_INT(uid_owner_of(&o, 100001), 4242);
	/* A path given wins over the knob. */
	CHECK_EQ_INT(uid_owners_read(&o, "/nonexistent/subuid"), 0);
	unsetenv("BPFPROF_TEST_SUBUID");
}

int main(void)
{
	int fd = mkstemp(file);

	CHECK(fd >= 0);
	if (fd < 0)
		return test_summary();
	close(fd);
	RUN(ranges_fold_to_their_owner);
	RUN(malformed_lines_give_nothing);
	RUN(what_is_read_is_bounded);
	RUN(a_file_others_could_write_is_not_believed);
	RUN(the_test_knob_names_the_file);
	unlink(file);
	return test_summary();
}
