// SPDX-License-Identifier: BSD-2-Clause
/*
 * Perf maps and jitdumps by user (issue 39 review, finding 8): one user's
 * maps may take a share of the entries all maps may hold, not all of them,
 * and read so many bytes at once, bad lines included; another user's map
 * is read whole all the same, until the budget of all users is spent.
 * Budgets refill at rate 0 here: what a test sees does not depend on time.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "symbols/perf_map.h"
#include "test.h"

enum { USER_A = 1001, USER_B = 1002 };

/* A map of `n` lines "ADDR 10 fn_I", from first on, as an fd; its bytes in *bytes. */
static int lines_file(unsigned first, unsigned n, size_t *bytes)
{
	int fd = memfd_create("perf_map", MFD_CLOEXEC);
	char line[64];

	*bytes = 0;
	CHECK(fd >= 0);
	for (unsigned i = first; i < first + n; i++) {
		int len = snprintf(line, sizeof(line), "%x 10 fn_%u\n", 0x100000 + i * 16, i);

		CHECK(write(fd, line, len) == len);
		*bytes += len;
	}
	return fd;
}

static void set(struct perf_map_limits *l)
{
	perf_map_set_limits(l, NULL);
	perf_map_refill_budgets();
}

static struct perf_map_limits base(void)
{
	struct perf_map_limits l;

	perf_map_set_limits(NULL, &l);
	l.user_bytes_per_s = l.total_bytes_per_s = 0;
	return l;
}

/* Entries: a user's second map gets what its first left of the user's share; another user's is read
 * whole. */
static void test_entry_share(void)
{
	struct perf_map_limits old, l;
	struct perf_map *a1, *a2, *b;
	size_t bytes;

	perf_map_set_limits(NULL, &old);
	l = base();
	l.max_user_entries = 1000;
	set(&l);
	a1 = perf_map_open_fd_of(lines_file(0, 600, &bytes), USER_A);
	a2 = perf_map_open_fd_of(lines_file(1000, 600, &bytes), USER_A);
	b = perf_map_open_fd_of(lines_file(2000, 600, &bytes), USER_B);
	CHECK(a1 && a2 && b);
	if (a1 && a2 && b) {
		CHECK_EQ_INT(perf_map_entries(a1), 600);
		CHECK(perf_map_capped(a1) == NULL);
		CHECK_EQ_INT(perf_map_entries(a2), 400);
		CHECK_EQ_STR(perf_map_capped(a2), "entries of its user's maps");
		CHECK_EQ_INT(perf_map_entries(b), 600);
		CHECK(perf_map_capped(b) == NULL);
	}
	perf_map_free(a1);
	perf_map_free(a2);
	perf_map_free(b);
	/* Freed maps give the user's share back. */
	a2 = perf_map_open_fd_of(lines_file(1000, 600, &bytes), USER_A);
	CHECK(a2 && perf_map_entries(a2) == 600 && !perf_map_capped(a2));
	perf_map_free(a2);
	set(&old);
}

/*
 * Bytes: the user's budget spent by a map of bad lines, its next map reads
 * nothing and is read later; another user reads; the budget of all users
 * spent, nobody reads.
 */
static void test_byte_budget(void)
{
	static const char line[] =
		"this is no perf map line at all, and it costs what a good one does\n";
	struct perf_map_limits old, l;
	struct perf_map *junk, *a, *b, *b2;
	size_t bytes, b_bytes;
	int fd;

	perf_map_set_limits(NULL, &old);
	l = base();
	l.user_bytes_burst = 256 * 1024;
	l.total_bytes_burst = (256 + 64) * 1024;
	set(&l);
	/* 256 KiB of lines that are not "START SIZE name". */
	fd = memfd_create("junk", MFD_CLOEXEC);
	CHECK(fd >= 0);
	for (size_t n = 0; n < 256 * 1024; n += sizeof(line) - 1)
		CHECK(write(fd, line, sizeof(line) - 1) == (ssize_t)(sizeof(line) - 1));
	junk = perf_map_open_fd_of(fd, USER_A);
	CHECK(junk != NULL && perf_map_bad_lines(junk) > 1000);
	a = perf_map_open_fd_of(lines_file(0, 1000, &bytes), USER_A);
	CHECK(a != NULL);
	if (a) {
		CHECK_EQ_INT(perf_map_entries(a), 0);
		/* Not a limit: the map is read once the user's budget refills. */
		CHECK(perf_map_capped(a) == NULL);
		CHECK(perf_map_lookup(a, 0x100000, NULL) == NULL);
	}
	/* Another user's map is read whole. */
	b = perf_map_open_fd_of(lines_file(0, 1000, &b_bytes), USER_B);
	CHECK(b_bytes < 64 * 1024);
	CHECK(b && perf_map_entries(b) == 1000);
	/*
	 * All users' budget: 320 KiB, 256 KiB and b_bytes of it spent; what is
	 * left is less than the first read of user B's next map, although
	 * user B has budget enough.
	 */
	b2 = perf_map_open_fd_of(lines_file(5000, 20000, &bytes), USER_B);
	CHECK(b2 && perf_map_entries(b2) == 0 && !perf_map_capped(b2));
	perf_map_free(b2);
	perf_map_free(b);
	perf_map_free(junk);
	/* Refilled (here: by hand), user A's map is read where it stopped. */
	set(&l);
	if (a) {
		CHECK_EQ_STR(perf_map_lookup(a, 0x100000 + 999 * 16, NULL), "fn_999");
		CHECK_EQ_INT(perf_map_entries(a), 1000);
	}
	perf_map_free(a);
	set(&old);
}

/* A jitdump's records cost at least 64 bytes each, however small: 5000 of them for 320000. */
static void test_jitdump_budget(void)
{
	uint32_t header[10] = { 0x4A695444, 1, 40, 62, 0, 1 };
	struct perf_map_limits old, l;
	struct perf_map *pm;
	int fd = memfd_create("jitdump", MFD_CLOEXEC);

	perf_map_set_limits(NULL, &old);
	l = base();
	l.user_bytes_burst = 5000 * 64;
	set(&l);
	CHECK(write(fd, header, sizeof(header)) == sizeof(header));
	for (uint64_t i = 0; i < 10000; i++) {
		/* A CODE_LOAD of one byte named "f": 59 bytes. */
		uint32_t head[4] = { 0, 16 + 40 + 3 };
		uint32_t ids[2] = { 1, 1 };
		uint64_t f[4] = { 0x100000 + i * 16, 0x100000 + i * 16, 1, i };

		CHECK(write(fd, head, sizeof(head)) == sizeof(head));
		CHECK(write(fd, ids, sizeof(ids)) == sizeof(ids));
		CHECK(write(fd, f, sizeof(f)) == sizeof(f));
		CHECK(write(fd, "f\0\xc3", 3) == 3);
	}
	pm = perf_map_open_jitdump_fd_of(fd, USER_A);
	CHECK(pm != NULL);
	if (pm) {
		CHECK_EQ_STR(perf_map_lookup(pm, 0x100000, NULL), "f");
		CHECK(perf_map_lookup(pm, 0x100000 + 9999 * 16, NULL) == NULL);
		CHECK_EQ_INT(perf_map_entries(pm), 5000);
		CHECK(perf_map_capped(pm) == NULL);
		set(&old);
		CHECK_EQ_STR(perf_map_lookup(pm, 0x100000 + 9999 * 16, NULL), "f");
		CHECK_EQ_INT(perf_map_entries(pm), 10000);
	}
	perf_map_free(pm);
	set(&old);
}

int main(void)
{
	RUN(test_entry_share);
	RUN(test_byte_budget);
	RUN(test_jitdump_budget);
	return test_summary();
}
