// SPDX-License-Identifier: BSD-2-Clause
/*
 * jitdump files (jit-PID.dump, written by node --perf-prof and the JVM's
 * perf agent) read as perf maps: code loads and moves, a file that grows
 * while it is read, and the broken files another user can write.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "symbols/jitdump.h"
#include "symbols/perf_map.h"
#include "test.h"

static int new_file(void)
{
	return memfd_create("jitdump", MFD_CLOEXEC);
}

static void put(int fd, const void *p, size_t n)
{
	CHECK(write(fd, p, n) == (ssize_t)n);
}

static void put_header(int fd, uint32_t magic, uint32_t size)
{
	unsigned char h[64] = { 0 };
	uint32_t v[6] = { magic, 1, size, 62, 0, 4242 };

	memcpy(h, v, sizeof(v));
	put(fd, h, size < sizeof(h) ? size : sizeof(h));
}

static void put_head(int fd, uint32_t id, uint32_t total)
{
	uint32_t v[2] = { id, total };
	uint64_t ts = 1;

	put(fd, v, sizeof(v));
	put(fd, &ts, sizeof(ts));
}

/* A CODE_LOAD of `name` at [addr, addr + size) with `size` bytes of code after the name. */
static void put_load(int fd, uint64_t addr, uint64_t size, const char *name)
{
	size_t nl = strlen(name) + 1;
	uint32_t total = (uint32_t)(JITDUMP_RECORD_HEAD + JITDUMP_LOAD_FIXED + nl + size);
	uint32_t ids[2] = { 4242, 4243 };
	uint64_t f[4] = { addr, addr, size, 7 };
	char *code = calloc(1, size ? size : 1);

	put_head(fd, JITDUMP_CODE_LOAD, total);
	put(fd, ids, sizeof(ids));
	put(fd, f, sizeof(f));
	put(fd, name, nl);
	put(fd, code, size);
	free(code);
}

/* A CODE_LOAD record of `n` bytes after its fixed part, whatever they hold. */
static void put_raw_load(int fd, uint64_t addr, uint64_t code_size, const void *rest, size_t n)
{
	uint32_t ids[2] = { 1, 1 };
	uint64_t f[4] = { addr, addr, code_size, 0 };

	put_head(fd, JITDUMP_CODE_LOAD, (uint32_t)(JITDUMP_RECORD_HEAD + JITDUMP_LOAD_FIXED + n));
	put(fd, ids, sizeof(ids));
	put(fd, f, sizeof(f));
	put(fd, rest, n);
}

static void put_move(int fd, uint64_t from, uint64_t to, uint64_t size)
{
	uint32_t ids[2] = { 4242, 4243 };
	uint64_t f[5] = { to, from, to, size, 7 };

	put_head(fd, JITDUMP_CODE_MOVE, JITDUMP_RECORD_HEAD + JITDUMP_MOVE_FIXED);
	put(fd, ids, sizeof(ids));
	put(fd, f, sizeof(f));
}

static const char *name_at(struct perf_map *pm, uint64_t addr)
{
	const char *n = perf_map_lookup(pm, addr, NULL);

	return n ? n : "(none)";
}

static void test_loads_and_moves(void)
{
	int fd = new_file();
	struct perf_map *pm;

	put_header(fd, JITDUMP_MAGIC, 40);
	put_load(fd, 0x1000, 0x100, "JS:*inner /tmp/hot.js:1:15");
	put_load(fd, 0x2000, 0x80, "JS:*outer /tmp/hot.js:3:15");
	/* Debug info and other records are skipped over. */
	put_head(fd, JITDUMP_CODE_DEBUG_INFO, JITDUMP_RECORD_HEAD + 24);
	put(fd, "012345678901234567890123", 24);
	pm = perf_map_open_jitdump_fd(fd);
	CHECK(pm != NULL);
	if (!pm)
		return;
	/* Opened while the rings are drained: nothing is read before the first lookup. */
	CHECK_EQ_INT(perf_map_entries(pm), 0);
	CHECK_EQ_STR(name_at(pm, 0x1000), "JS:*inner /tmp/hot.js:1:15");
	CHECK_EQ_STR(name_at(pm, 0x10ff), "JS:*inner /tmp/hot.js:1:15");
	CHECK_EQ_STR(name_at(pm, 0x1100), "(none)");
	CHECK_EQ_STR(name_at(pm, 0x2040), "JS:*outer /tmp/hot.js:3:15");
	/* Written later: found by the lookup that misses, as a map's lines are. */
	put_move(fd, 0x1000, 0x5000, 0x100);
	put_load(fd, 0x2000, 0x40, "JS:^outer /tmp/hot.js:3:15");
	CHECK_EQ_STR(name_at(pm, 0x5010), "JS:*inner /tmp/hot.js:1:15");
	/* Newest wins where code was replaced; the rest of the old code keeps its name. */
	CHECK_EQ_STR(name_at(pm, 0x2010), "JS:^outer /tmp/hot.js:3:15");
	CHECK_EQ_STR(name_at(pm, 0x2050), "JS:*outer /tmp/hot.js:3:15");
	/* A move of code nobody loaded names nothing. */
	put_move(fd, 0x9000, 0xa000, 0x10);
	CHECK_EQ_STR(name_at(pm, 0xa000), "(none)");
	CHECK(perf_map_capped(pm) == NULL);
	CHECK_EQ_INT(perf_map_entries(pm), 4);
	perf_map_free(pm);
}

/* A record the writer has not finished is read once it is whole. */
static void test_partial_record(void)
{
	int fd = new_file(), fd2;
	struct perf_map *pm;
	char buf[4096];
	ssize_t n;
	off_t cut;

	/* The whole file, then only the first part of it, then the rest. */
	put_header(fd, JITDUMP_MAGIC, 40);
	put_load(fd, 0x1000, 0x10, "first");
	cut = lseek(fd, 0, SEEK_CUR) + 20;
	put_load(fd, 0x3000, 0x10, "second");
	n = pread(fd, buf, sizeof(buf), 0);
	CHECK(n > cut);
	fd2 = new_file();
	put(fd2, buf, cut);
	pm = perf_map_open_jitdump_fd(fd2);
	CHECK(pm != NULL);
	if (!pm) {
		close(fd);
		return;
	}
	CHECK_EQ_STR(name_at(pm, 0x1000), "first");
	CHECK_EQ_STR(name_at(pm, 0x3000), "(none)");
	put(fd2, buf + cut, n - cut);
	CHECK_EQ_STR(name_at(pm, 0x3000), "second");
	CHECK(perf_map_capped(pm) == NULL);
	perf_map_free(pm);
	close(fd);
}

/* A header not written yet: nothing read, no error; then the file is read once it is. */
static void test_empty_then_written(void)
{
	int fd = new_file();
	struct perf_map *pm = perf_map_open_jitdump_fd(fd);

	CHECK(pm != NULL);
	if (!pm)
		return;
	CHECK_EQ_STR(name_at(pm, 0x1000), "(none)");
	put_header(fd, JITDUMP_MAGIC, 40);
	put_load(fd, 0x1000, 0x10, "late");
	CHECK_EQ_STR(name_at(pm, 0x1000), "late");
	perf_map_free(pm);
}

/* Broken files: read as far as they are whole, then "format", never a crash or a hang. */
static void test_broken(void)
{
	struct perf_map *pm;
	int fd;

	/* Another machine's byte order, or no jitdump at all. */
	fd = new_file();
	put_header(fd, 0x4454694Au, 40);
	put_load(fd, 0x1000, 0x10, "x");
	pm = perf_map_open_jitdump_fd(fd);
	CHECK(pm && !perf_map_refresh(pm) && perf_map_entries(pm) == 0 && perf_map_capped(pm) &&
	      !strcmp(perf_map_capped(pm), "format"));
	perf_map_free(pm);

	/* A header claiming to be huge. */
	fd = new_file();
	put_header(fd, JITDUMP_MAGIC, 40);
	CHECK(pwrite(fd, &(uint32_t){ 1u << 30 }, 4, 8) == 4);
	pm = perf_map_open_jitdump_fd(fd);
	CHECK(pm && !perf_map_refresh(pm) && perf_map_capped(pm) &&
	      !strcmp(perf_map_capped(pm), "format"));
	perf_map_free(pm);

	/* A record smaller than its own head: no sync marks, so the reading stops there. */
	fd = new_file();
	put_header(fd, JITDUMP_MAGIC, 40);
	put_load(fd, 0x1000, 0x10, "good");
	put_head(fd, JITDUMP_CODE_LOAD, 3);
	put_load(fd, 0x2000, 0x10, "after");
	pm = perf_map_open_jitdump_fd(fd);
	CHECK(pm != NULL);
	if (pm) {
		CHECK_EQ_STR(name_at(pm, 0x1000), "good");
		CHECK_EQ_STR(name_at(pm, 0x2000), "(none)");
		CHECK(perf_map_capped(pm) && !strcmp(perf_map_capped(pm), "format"));
		perf_map_free(pm);
	}

	/* A load whose code does not fit in its record; one that claims 1 GiB. */
	fd = new_file();
	put_header(fd, JITDUMP_MAGIC, 40);
	put_raw_load(fd, 0x1000, 0x100000, "abc", 4);
	put_head(fd, JITDUMP_CODE_LOAD, 1u << 30);
	pm = perf_map_open_jitdump_fd(fd);
	CHECK(pm && !perf_map_refresh(pm) && perf_map_entries(pm) == 0 && perf_map_capped(pm) &&
	      !strcmp(perf_map_capped(pm), "format"));
	perf_map_free(pm);

	/*
	 * A name without its NUL before the code: as far as it goes. Code
	 * addresses that wrap: skipped, and the records after still read.
	 */
	fd = new_file();
	put_header(fd, JITDUMP_MAGIC, 40);
	put_raw_load(fd, 0x1000, 1, "abcd", 4);
	put_load(fd, UINT64_MAX - 4, 0x10, "wraps");
	put_load(fd, 0x3000, 0x10, "fine");
	pm = perf_map_open_jitdump_fd(fd);
	CHECK(pm != NULL);
	if (pm) {
		CHECK_EQ_STR(name_at(pm, 0x1000), "abc");
		CHECK_EQ_STR(name_at(pm, 0x3000), "fine");
		CHECK_EQ_STR(name_at(pm, UINT64_MAX - 1), "(none)");
		CHECK(perf_map_capped(pm) == NULL);
		perf_map_free(pm);
	}
}

/* The bytes read of a file: past the limit, later code stays unnamed. */
static void test_file_limit(void)
{
	struct perf_map_limits old, l;
	struct perf_map *pm;
	int fd = new_file();

	perf_map_set_limits(NULL, &old);
	l = old;
	l.max_jitdump_bytes = 4096;
	perf_map_set_limits(&l, NULL);
	put_header(fd, JITDUMP_MAGIC, 40);
	put_load(fd, 0x1000, 0x10, "early");
	put_load(fd, 0x2000, 8192, "big");
	put_load(fd, 0x9000, 0x10, "past the limit");
	pm = perf_map_open_jitdump_fd(fd);
	CHECK(pm != NULL);
	if (pm) {
		CHECK_EQ_STR(name_at(pm, 0x1000), "early");
		CHECK_EQ_STR(name_at(pm, 0x2000), "big");
		CHECK_EQ_STR(name_at(pm, 0x9000), "(none)");
		CHECK(perf_map_capped(pm) && !strcmp(perf_map_capped(pm), "file bytes"));
		perf_map_free(pm);
	}
	perf_map_set_limits(&old, NULL);
}

/*
 * Thousands of records of every size, across the read-ahead's chunks, among
 * records of no interest: each load found under its own name.
 */
static void test_many_records(void)
{
	enum { N = 200000 };
	struct perf_map *pm;
	int fd = new_file(), bad = 0;
	char name[64];

	put_header(fd, JITDUMP_MAGIC, 40);
	for (unsigned i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "JS:*f%u /srv/app.js:%u:1", i, i);
		put_load(fd, 0x100000 + (uint64_t)i * 0x100, 1 + (i * 37) % 0x100, name);
		if (i % 7 == 0) {
			put_head(fd, JITDUMP_CODE_UNWINDING_INFO,
				 JITDUMP_RECORD_HEAD + 8 * (i % 5));
			for (unsigned k = 0; k < i % 5; k++)
				put(fd, "01234567", 8);
		}
	}
	pm = perf_map_open_jitdump_fd(fd);
	CHECK(pm != NULL);
	if (!pm)
		return;
	for (unsigned i = 0; i < N; i += 1 + i % 13) {
		snprintf(name, sizeof(name), "JS:*f%u /srv/app.js:%u:1", i, i);
		bad += strcmp(name_at(pm, 0x100000 + (uint64_t)i * 0x100), name) != 0;
	}
	CHECK_EQ_INT(bad, 0);
	CHECK_EQ_INT(perf_map_entries(pm), N);
	CHECK(perf_map_capped(pm) == NULL);
	perf_map_free(pm);
}

/* Moves of moved code, in one refresh: each finds the newest name at its old address. */
static void test_move_chain(void)
{
	int fd = new_file();
	struct perf_map *pm;

	put_header(fd, JITDUMP_MAGIC, 40);
	put_load(fd, 0x1000, 0x100, "a");
	for (uint64_t i = 0; i < 100; i++)
		put_load(fd, 0x100000 + i * 0x100, 0x10, "filler");
	put_move(fd, 0x1000, 0x2000, 0x100);
	put_move(fd, 0x2010, 0x3000, 0x10); /* inside the moved code */
	put_load(fd, 0x2000, 0x100, "b");   /* new code where "a" was moved to */
	put_move(fd, 0x2000, 0x4000, 0x100);
	put_move(fd, 0x100505, 0x5000, 0x10); /* a filler's */
	pm = perf_map_open_jitdump_fd(fd);
	CHECK(pm != NULL);
	if (!pm)
		return;
	CHECK_EQ_STR(name_at(pm, 0x1000), "a");
	CHECK_EQ_STR(name_at(pm, 0x2000), "b");
	CHECK_EQ_STR(name_at(pm, 0x3000), "a");
	CHECK_EQ_STR(name_at(pm, 0x4000), "b");
	CHECK_EQ_STR(name_at(pm, 0x5000), "filler");
	perf_map_free(pm);
}

/* Records built in memory and written at once: hundreds of thousands of writes would cost seconds.
 */
struct image {
	unsigned char *data;
	size_t len, cap;
};

static void image_add(struct image *im, const void *p, size_t n)
{
	if (im->len + n > im->cap) {
		im->cap = (im->len + n) * 2;
		im->data = realloc(im->data, im->cap);
		CHECK(im->data != NULL);
	}
	memcpy(im->data + im->len, p, n);
	im->len += n;
}

/* A one-byte CODE_LOAD named "f" at addr. */
static void image_load(struct image *im, uint64_t addr)
{
	uint32_t head[2] = { JITDUMP_CODE_LOAD, JITDUMP_RECORD_HEAD + JITDUMP_LOAD_FIXED + 2 + 1 };
	uint64_t ts = 1, f[4] = { addr, addr, 1, 7 };
	uint32_t ids[2] = { 1, 1 };

	image_add(im, head, sizeof(head));
	image_add(im, &ts, sizeof(ts));
	image_add(im, ids, sizeof(ids));
	image_add(im, f, sizeof(f));
	image_add(im, "f\0\xc3", 3);
}

static void image_move(struct image *im, uint64_t from, uint64_t to)
{
	uint32_t head[2] = { JITDUMP_CODE_MOVE, JITDUMP_RECORD_HEAD + JITDUMP_MOVE_FIXED };
	uint64_t ts = 1, f[5] = { to, from, to, 1, 7 };
	uint32_t ids[2] = { 1, 1 };

	image_add(im, head, sizeof(head));
	image_add(im, &ts, sizeof(ts));
	image_add(im, ids, sizeof(ids));
	image_add(im, f, sizeof(f));
}

/* CPU seconds to read the file of `im` whole, as lookups do; its entries in *entries. */
static double read_cpu(const struct image *im, size_t *entries)
{
	struct timespec a, b;
	struct perf_map *pm;
	size_t before;
	int fd = new_file();

	put_header(fd, JITDUMP_MAGIC, 40);
	put(fd, im->data, im->len);
	pm = perf_map_open_jitdump_fd(fd);
	CHECK(pm != NULL);
	if (!pm)
		return 0;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
	/* A refresh reads a bounded part of the file: again until nothing more comes. */
	do {
		before = perf_map_entries(pm);
		CHECK_EQ_INT(perf_map_refresh(pm), 0);
	} while (perf_map_entries(pm) != before);
	(void)perf_map_lookup(pm, 0x10, NULL); /* the index built once */
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
	*entries = perf_map_entries(pm);
	CHECK(perf_map_capped(pm) == NULL);
	perf_map_free(pm);
	return (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
}

/*
 * A writer's moves cost what its loads cost, give or take, however many
 * there are: each move looks up the name at its old address among all the
 * code read so far, and a move used to rebuild the whole index to do it,
 * so a file of moves took time in the square of its size (finding 1 of
 * the issue 39 review), under the lock the ring's reader needs. N pairs
 * of a load at a fresh address and a move of it, against 2N loads: the
 * same records, the same entries. The bound is a ratio of CPU times, not a
 * time: it holds on a slow or busy machine, and the quadratic reading is
 * thousands of times over it.
 */
static void test_moves_linear(void)
{
	enum { N = 200000 };
	struct image moves = { 0 }, loads = { 0 };
	size_t n_moves = 0, n_loads = 0;
	double t_moves, t_loads;

	for (uint64_t i = 0; i < N; i++) {
		image_load(&moves, 0x100000 + i * 16);
		image_move(&moves, 0x100000 + i * 16, 0x10000000 + i * 16);
		image_load(&loads, 0x100000 + i * 16);
		image_load(&loads, 0x10000000 + i * 16);
	}
	t_loads = read_cpu(&loads, &n_loads);
	t_moves = read_cpu(&moves, &n_moves);
	CHECK_EQ_INT(n_moves, 2 * N);
	CHECK_EQ_INT(n_loads, 2 * N);
	fprintf(stderr, "test_moves_linear: %d loads and moves %.3f s, %d loads %.3f s\n", 2 * N,
		t_moves, 2 * N, t_loads);
	CHECK(t_moves <= 12 * t_loads);
	free(moves.data);
	free(loads.data);
}

int main(void)
{
	RUN(test_loads_and_moves);
	RUN(test_partial_record);
	RUN(test_empty_then_written);
	RUN(test_broken);
	RUN(test_file_limit);
	RUN(test_many_records);
	RUN(test_move_chain);
	RUN(test_moves_linear);
	return test_summary();
}
