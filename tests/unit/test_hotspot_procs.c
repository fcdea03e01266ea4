// SPDX-License-Identifier: BSD-2-Clause
/*
 * A JVM built in memory (hotspot_image.h) met as bpfprof meets one: a
 * process maps libjvm.so, its code cache is found through its tables, an
 * address in its code is looked up through the heap's segment map, and
 * the answers kept are checked again against the code they named (an
 * nmethod freed and its space reused by another method), kept a short
 * while only when read in part, and forgotten with the process.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>

#include "hotspot_image.h"
#include "lang/hotspot_procs.h"
#include "test.h"
#include "tmp_tree.h"

#define PID 4242u
#define UID 1000u

static ssize_t read_mem(void *ctx, uint32_t pid, uint64_t addr, void *buf, size_t len)
{
	/* Every pid from PID on is the same JVM image. */
	if (pid < PID)
		return -1;
	return hs_image_read(ctx, addr, buf, len) ? -1 : (ssize_t)len;
}

static struct map_entry libjvm(uint64_t start)
{
	struct map_entry e = { 0 };

	e.start = start;
	e.end = start + 0x1000;
	e.executable = true;
	e.path = (char *)"/usr/lib/jvm/x/lib/server/libjvm.so";
	return e;
}

static struct hotspot_procs *new_jvm(struct hs_image *img)
{
	struct hotspot_procs *hp = hotspot_procs_new("/nonexistent");
	struct map_entry e = libjvm(0x7f0000000000ull);

	hotspot_procs_set_reader(hp, read_mem, img);
	CHECK_EQ_INT(hotspot_procs_note_mapping(hp, PID, &e), 0);
	CHECK_EQ_INT(hotspot_procs_set_exports(hp, PID, img->exports), 0);
	return hp;
}

/* Frames at pc, and what the caller makes of them kept as value (as proc_source does). */
static int frames(struct hotspot_procs *hp, uint64_t pc, bool is_return, struct hotspot_frame *f,
		  uint32_t value)
{
	int n = hotspot_procs_frames(hp, PID, UID, pc, is_return, f, HOTSPOT_MAX_FRAMES);

	if (n > 0)
		hotspot_procs_cache(hp, PID, pc, value);
	return n;
}

static void test_named_through_the_code_cache(void)
{
	struct hotspot_frame f[HOTSPOT_MAX_FRAMES];
	struct hs_image img;
	struct hotspot_procs *hp;
	uint32_t v;

	CHECK_EQ_INT(hs_image_build(&img), 0);
	hp = new_jvm(&img);
	CHECK(hotspot_procs_is_jvm(hp, PID));
	CHECK_EQ_INT(frames(hp, img.nm_code + 16, true, f, 11), 2);
	CHECK_EQ_STR(f[0].name, "pkg.Outer.work");
	CHECK_EQ_STR(f[1].name, "pkg.Outer.run");
	CHECK(hotspot_procs_cached(hp, PID, img.nm_code + 16, &v) && v == 11);
	/* A stub: its blob's name. */
	CHECK_EQ_INT(frames(hp, img.stub_code + 8, false, f, 12), 1);
	CHECK_EQ_STR(f[0].name, "StubRoutines (1)");
	/* Free code cache space, and no code at all. */
	CHECK_EQ_INT(frames(hp, img.code_lo + HS_IMG_CODE - 64, false, f, 13), 0);
	CHECK_EQ_INT(frames(hp, 0x1234, false, f, 13), 0);
	hotspot_procs_free(hp);
	hs_image_free(&img);
}

/*
 * The nmethod at a kept pc is flushed and another method compiled into its
 * space: the kept answer is dropped at its next check, and the pc named
 * anew.
 */
static void test_reused_code_renamed(void)
{
	struct hotspot_frame f[HOTSPOT_MAX_FRAMES];
	struct hs_image img;
	struct hotspot_procs *hp;
	uint32_t v = 0;

	CHECK_EQ_INT(hs_image_build(&img), 0);
	hp = new_jvm(&img);
	hotspot_procs_set_verify_period(hp, 0);
	CHECK_EQ_INT(frames(hp, img.nm_code + 16, true, f, 11), 2);
	CHECK(hotspot_procs_cached(hp, PID, img.nm_code + 16, &v) && v == 11);
	hs_recompile(&img, 9, img.other);
	CHECK(!hotspot_procs_cached(hp, PID, img.nm_code + 16, &v));
	CHECK_EQ_INT(frames(hp, img.nm_code + 16, true, f, 21), 1);
	CHECK_EQ_STR(f[0].name, "pkg.Outer.other");
	CHECK(hotspot_procs_cached(hp, PID, img.nm_code + 16, &v) && v == 21);
	hotspot_procs_free(hp);
	hs_image_free(&img);
}

/* An answer read only in part (the PcDescs unreadable): not kept as final. */
static void test_partial_not_kept(void)
{
	struct hotspot_frame f[HOTSPOT_MAX_FRAMES];
	struct hs_image img;
	struct hotspot_procs *hp;
	uint32_t v = 0;

	CHECK_EQ_INT(hs_image_build(&img), 0);
	hp = new_jvm(&img);
	img.fail_lo = img.pcs;
	img.fail_hi = img.pcs + 32;
	CHECK_EQ_INT(frames(hp, img.nm_code + 16, true, f, 11), 1);
	CHECK_EQ_STR(f[0].name, "pkg.Outer.run");
	img.fail_hi = 0;
	/* Kept a second at most: here, asked again until it is. */
	for (int i = 0; i < 30 && hotspot_procs_cached(hp, PID, img.nm_code + 16, &v); i++) {
		struct timespec ts = { 0, 100 * 1000 * 1000 };

		nanosleep(&ts, NULL);
	}
	CHECK(!hotspot_procs_cached(hp, PID, img.nm_code + 16, &v));
	CHECK_EQ_INT(frames(hp, img.nm_code + 16, true, f, 12), 2);
	CHECK(hotspot_procs_cached(hp, PID, img.nm_code + 16, &v) && v == 12);
	hotspot_procs_free(hp);
	hs_image_free(&img);
}

/* The pid exits and is reused, or exec's another JVM: the old JVM's state goes. */
static void test_pid_reuse_and_exec(void)
{
	struct hotspot_frame f[HOTSPOT_MAX_FRAMES];
	struct hs_image img;
	struct hotspot_procs *hp;
	struct map_entry e;
	uint32_t v = 0;

	CHECK_EQ_INT(hs_image_build(&img), 0);
	hp = new_jvm(&img);
	CHECK_EQ_INT(frames(hp, img.nm_code + 16, true, f, 11), 2);
	/* The same mapping seen again (maps read anew): nothing forgotten. */
	e = libjvm(0x7f0000000000ull);
	CHECK_EQ_INT(hotspot_procs_note_mapping(hp, PID, &e), 0);
	CHECK(hotspot_procs_cached(hp, PID, img.nm_code + 16, &v) && v == 11);
	/* Another executable piece of the same file: the same JVM. */
	e = libjvm(0x7f0000100000ull);
	e.pgoff = 0x100000;
	CHECK_EQ_INT(hotspot_procs_note_mapping(hp, PID, &e), 0);
	CHECK(hotspot_procs_cached(hp, PID, img.nm_code + 16, &v) && v == 11);
	/* Another libjvm.so image in the same pid (an exec): a new JVM, nothing kept. */
	e = libjvm(0x7f1000000000ull);
	CHECK_EQ_INT(hotspot_procs_note_mapping(hp, PID, &e), 0);
	CHECK(hotspot_procs_is_jvm(hp, PID));
	CHECK(!hotspot_procs_cached(hp, PID, img.nm_code + 16, &v));
	CHECK_EQ_INT(hotspot_procs_set_exports(hp, PID, img.exports), 0);
	CHECK_EQ_INT(frames(hp, img.nm_code + 16, true, f, 12), 2);
	/* Exited, and the pid reused by a JVM at once: the new one is noted and read. */
	hotspot_procs_exited(hp, PID);
	CHECK_EQ_INT(hotspot_procs_note_mapping(hp, PID, &e), 0);
	CHECK(!hotspot_procs_cached(hp, PID, img.nm_code + 16, &v));
	CHECK_EQ_INT(hotspot_procs_set_exports(hp, PID, img.exports), 0);
	CHECK_EQ_INT(frames(hp, img.nm_code + 16, true, f, 13), 2);
	hotspot_procs_free(hp);
	hs_image_free(&img);
}

/*
 * An address that names nothing is not read again at once (the caller
 * keeps no answer for it), and a segment map's long way back to a block's
 * start is read a window at a time, not a byte a step.
 */
static void test_misses_read_once(void)
{
	struct hotspot_frame f[HOTSPOT_MAX_FRAMES];
	struct hs_image img;
	struct hotspot_procs *hp;
	unsigned long before;
	uint64_t pc;

	CHECK_EQ_INT(hs_image_build(&img), 0);
	hp = new_jvm(&img);
	/* Loaded, the tables read. */
	CHECK_EQ_INT(frames(hp, img.nm_code + 16, true, f, 11), 2);
	/* Segments 40 to 100 each say "one back", segment 39 is free. */
	memset(hs_at(&img, img.segmap + 40), 1, 61);
	pc = img.code_lo + (100u << HS_IMG_LOG2) + 8;
	before = img.reads;
	CHECK_EQ_INT(frames(hp, pc, false, f, 12), 0);
	CHECK(img.reads - before <= 2);
	before = img.reads;
	CHECK_EQ_INT(frames(hp, pc, false, f, 12), 0);
	CHECK_EQ_INT(img.reads - before, 0);
	/* A return address there is another question, asked once too. */
	CHECK_EQ_INT(frames(hp, pc, true, f, 12), 0);
	CHECK(img.reads - before <= 2);
	hotspot_procs_free(hp);
	hs_image_free(&img);
}

/*
 * What bpfprof said while `hp` loaded pid's JVM from the file at its
 * libjvm.so mapping's link: stderr caught in `said`.
 */
static void load_said(const char *proc_root, char *said, size_t size)
{
	struct hotspot_frame f[HOTSPOT_MAX_FRAMES];
	struct hotspot_procs *hp = hotspot_procs_new(proc_root);
	struct map_entry e = libjvm(0x7f0000000000ull);
	char *log = path_in(proc_root, "stderr");
	int saved = dup(2), fd = open(log, O_RDWR | O_CREAT | O_TRUNC, 0600);
	ssize_t n;

	fflush(stderr);
	dup2(fd, 2);
	CHECK_EQ_INT(hotspot_procs_note_mapping(hp, PID, &e), 0);
	CHECK_EQ_INT(hotspot_procs_frames(hp, PID, UID, 0x1234, false, f, HOTSPOT_MAX_FRAMES), 0);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	n = pread(fd, said, size - 1, 0);
	said[n > 0 ? n : 0] = '\0';
	close(fd);
	hotspot_procs_free(hp);
}

/*
 * libjvm.so is its owner's file, parsed on the thread that drains the
 * rings: one far larger than any libjvm.so is refused before it is read,
 * as is a link to no regular file.
 */
static void test_exports_file_bounded(void)
{
	char dir[] = "/tmp/test_hotspot_procs.XXXXXX", said[1024];
	const char *file;
	int fd;

	CHECK(mkdtemp(dir) != NULL);
	CHECK_EQ_INT(mkdir(path_in(dir, "4242"), 0700), 0);
	CHECK_EQ_INT(mkdir(path_in(dir, "4242/map_files"), 0700), 0);
	file = path_in(dir, "4242/map_files/7f0000000000-7f0000001000");
	fd = open(file, O_RDWR | O_CREAT, 0600);
	CHECK(fd >= 0);
	/* Sparse: 1 GiB of nothing, within ELF_OPEN_READ_MAX_BYTES but no libjvm.so's size. */
	CHECK_EQ_INT(ftruncate(fd, 1ll << 30), 0);
	close(fd);
	load_said(dir, said, sizeof(said));
	CHECK(strstr(said, "is not read (File too large)") != NULL);
	CHECK_EQ_INT(unlink(file), 0);
	CHECK_EQ_INT(mkdir(file, 0700), 0);
	load_said(dir, said, sizeof(said));
	CHECK(strstr(said, "is not read (Invalid argument)") != NULL);
	tmp_tree_remove(dir);
}

/*
 * Met between ld.so's mapping of libjvm.so and its relocations: the table
 * pointer read is not an address yet (the read faults). The JVM is asked
 * again, and named once it is loaded.
 */
static void test_unrelocated_tables_asked_again(void)
{
	struct hotspot_frame f[HOTSPOT_MAX_FRAMES];
	struct timespec ts = { 0, 300 * 1000 * 1000 };
	struct hs_image img;
	struct hotspot_procs *hp;
	uint64_t structs;

	CHECK_EQ_INT(hs_image_build(&img), 0);
	hp = new_jvm(&img);
	memcpy(&structs, hs_at(&img, img.exports[HS_STRUCTS]), 8);
	hs_put64(&img, img.exports[HS_STRUCTS], 0x1f48);
	CHECK_EQ_INT(frames(hp, img.nm_code + 16, true, f, 11), 0);
	hs_put64(&img, img.exports[HS_STRUCTS], structs);
	nanosleep(&ts, NULL);
	CHECK_EQ_INT(frames(hp, img.nm_code + 16, true, f, 11), 2);
	hotspot_procs_free(hp);
	hs_image_free(&img);
}

/* pid (a JVM of uid) caches the leaf answers at the first n pcs of the nmethod's code. */
static void cache_pcs(struct hotspot_procs *hp, struct hs_image *img, uint32_t pid, uint32_t uid,
		      unsigned n)
{
	struct hotspot_frame f[HOTSPOT_MAX_FRAMES];

	for (unsigned i = 0; i < n; i++) {
		uint64_t pc = img->nm_code + i;

		if (hotspot_procs_frames(hp, pid, uid, pc, false, f, HOTSPOT_MAX_FRAMES) > 0)
			hotspot_procs_cache(hp, pid, pc | (1ull << 63), i);
	}
}

static unsigned cached_of(struct hotspot_procs *hp, struct hs_image *img, uint32_t pid, unsigned n)
{
	unsigned got = 0;
	uint32_t v;

	for (unsigned i = 0; i < n; i++)
		got += hotspot_procs_cached(hp, pid, (img->nm_code + i) | (1ull << 63), &v) &&
		       v == i;
	return got;
}

/*
 * Answers kept are shared out per user: a user's JVMs past their share
 * make room among their own answers (the newest kept), and another user's
 * JVM still keeps its own.
 */
static void test_cache_shares(void)
{
	struct hs_image img;
	struct hotspot_procs *hp = hotspot_procs_new("/nonexistent");
	struct map_entry e = libjvm(0x7f0000000000ull);
	uint32_t v;

	CHECK_EQ_INT(hs_image_build(&img), 0);
	hotspot_procs_set_reader(hp, read_mem, &img);
	hotspot_procs_set_cache_caps(hp, 100, 150, 400);
	for (uint32_t pid = PID; pid < PID + 3; pid++) {
		CHECK_EQ_INT(hotspot_procs_note_mapping(hp, pid, &e), 0);
		CHECK_EQ_INT(hotspot_procs_set_exports(hp, pid, img.exports), 0);
	}
	/* One JVM: its 100, the newest among them. */
	cache_pcs(hp, &img, PID, UID, 120);
	CHECK_EQ_INT(cached_of(hp, &img, PID, 120), 100);
	CHECK(hotspot_procs_cached(hp, PID, (img.nm_code + 119) | (1ull << 63), &v));
	/* The same user's second JVM: the two together at the user's 150. */
	cache_pcs(hp, &img, PID + 1, UID, 120);
	CHECK_EQ_INT(cached_of(hp, &img, PID, 120) + cached_of(hp, &img, PID + 1, 120), 150);
	CHECK(hotspot_procs_cached(hp, PID + 1, (img.nm_code + 119) | (1ull << 63), &v));
	/* Another user's JVM: a share of its own. */
	cache_pcs(hp, &img, PID + 2, UID + 1, 120);
	CHECK_EQ_INT(cached_of(hp, &img, PID + 2, 120), 100);
	/* A JVM gone gives its user's share back. */
	hotspot_procs_forget(hp, PID);
	cache_pcs(hp, &img, PID + 1, UID, 120);
	CHECK_EQ_INT(cached_of(hp, &img, PID + 1, 120), 100);
	hotspot_procs_free(hp);
	hs_image_free(&img);
}

/* Many pcs of one blob: its segment map and header read once, not once a pc. */
static void test_blob_read_once(void)
{
	struct hotspot_frame f[HOTSPOT_MAX_FRAMES];
	struct hs_image img;
	struct hotspot_procs *hp;
	unsigned long header;

	CHECK_EQ_INT(hs_image_build(&img), 0);
	hp = new_jvm(&img);
	/* The stub's header: its code's bounds and its name's pointer, read once. */
	img.watch_lo = img.stub;
	img.watch_hi = img.stub + 104;
	CHECK_EQ_INT(frames(hp, img.stub_code, false, f, 1), 1);
	header = img.watched;
	CHECK(header > 0);
	for (unsigned i = 1; i < 20; i++)
		CHECK_EQ_INT(hotspot_procs_frames(hp, PID, UID, img.stub_code + 3 * i, false, f,
						  HOTSPOT_MAX_FRAMES),
			     1);
	CHECK_EQ_INT(img.watched, header);
	hotspot_procs_free(hp);
	hs_image_free(&img);
}

/*
 * Issue 39: what BPF steps the JVM's compiled frames by (struct
 * rt_hotspot) is published with the interpreted frames' words: its code
 * heap and segment map, where a blob keeps its frame size, HeapBlock's
 * size, the interpreter's code (AbstractInterpreter::_code's buffer) and
 * the sender SP's slot. An interpreter not generated yet is asked again;
 * one whose bounds do not hold is left out (the walk then steps the
 * interpreter as any frame-size-0 blob, by its frame pointer).
 */
static void test_capture_step(void)
{
	struct hotspot_frame f[HOTSPOT_MAX_FRAMES];
	struct hs_image img;
	struct hotspot_procs *hp;
	struct rt_proc p;
	int n;

	CHECK_EQ_INT(hs_image_build(&img), 0);
	hp = new_jvm(&img);
	CHECK_EQ_INT(hotspot_procs_capture(hp, PID, UID, &p), -EAGAIN); /* not read yet */
	CHECK_EQ_INT(frames(hp, img.nm_code + 16, true, f, 11), 2);
	/* The interpreter not generated yet: asked again. */
	hs_put64(&img, img.interp_q + 48, 0);
	CHECK_EQ_INT(hotspot_procs_capture(hp, PID, UID, &p), -EAGAIN);
	hs_put64(&img, img.interp_q + 48, img.interp_q);
	memset(&p, 0xa5, sizeof(p));
	CHECK_EQ_INT(hotspot_procs_capture(hp, PID, UID, &p), 0);
	CHECK_EQ_INT(p.kind, RT_KIND_HOTSPOT);
	CHECK_EQ_INT(p.hs.nheaps, 1);
	CHECK(p.hs.code_lo == img.code_lo && p.hs.code_hi == img.code_lo + HS_IMG_CODE);
	CHECK(p.hs.heaps[0].lo == img.code_lo && p.hs.heaps[0].hi == img.code_lo + HS_IMG_CODE);
	CHECK(p.hs.heaps[0].segmap == img.segmap);
	CHECK_EQ_INT(p.hs.heaps[0].log2, HS_IMG_LOG2);
	CHECK(p.hs.heaps[1].lo == 0 && p.hs.heaps[1].hi == 0); /* the rest zeroed */
	CHECK_EQ_INT(p.hs.heap_block, 16);
	CHECK_EQ_INT(p.hs.blob_frame_size, 28);
	CHECK_EQ_INT(p.hs.sender_sp_off, -8);
	CHECK(p.hs.interp_lo == img.interp_code && p.hs.interp_hi == img.interp_code + 256);
	/* Records for the interpreter's frames alone, and "in the interpreter" is that range. */
	CHECK_EQ_INT(p.nranges, 1);
	CHECK(p.ranges[0].lo == img.interp_code && p.ranges[0].hi == img.interp_code + 256);
	CHECK(hotspot_procs_in_interpreter(hp, PID, UID, img.interp_code + 255));
	CHECK(!hotspot_procs_in_interpreter(hp, PID, UID, img.interp_code + 256));
	CHECK(!hotspot_procs_in_interpreter(hp, PID, UID, img.nm_code + 16));
	hotspot_procs_free(hp);

	/* An interpreter outside the code cache: asked LOAD_TRIES (25) times, then left out. */
	hp = new_jvm(&img);
	CHECK_EQ_INT(frames(hp, img.nm_code + 16, true, f, 11), 2);
	hs_put64(&img, img.interp_q + 8, HS_IMG_BASE);
	for (n = 0; n < 100 && hotspot_procs_capture(hp, PID, UID, &p) == -EAGAIN; n++)
		;
	CHECK_EQ_INT(n, 24);
	CHECK(p.hs.interp_lo == 0 && p.hs.interp_hi == 0);
	CHECK_EQ_INT(p.hs.nheaps, 1);
	/* Without it: the whole code cache, each pc asked by its blob's name. */
	CHECK(p.ranges[0].lo == img.code_lo && p.ranges[0].hi == img.code_lo + HS_IMG_CODE);
	hotspot_procs_free(hp);
	hs_image_free(&img);
}

int main(void)
{
	RUN(test_named_through_the_code_cache);
	RUN(test_reused_code_renamed);
	RUN(test_partial_not_kept);
	RUN(test_pid_reuse_and_exec);
	RUN(test_misses_read_once);
	RUN(test_exports_file_bounded);
	RUN(test_unrelocated_tables_asked_again);
	RUN(test_cache_shares);
	RUN(test_blob_read_once);
	RUN(test_capture_step);
	return test_summary();
}
