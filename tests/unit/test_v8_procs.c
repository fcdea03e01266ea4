// SPDX-License-Identifier: BSD-2-Clause
/*
 * node processes as v8_procs sees them, with a /proc of the test's making
 * (maps, and map_files leading to this machine's node, whose metadata is
 * read) and a fake heap for memory: the capture (the builtins blob where
 * the maps put node's pages, anonymous code merged into the ranges left),
 * typed and JS frames, and the read budget a process that makes every
 * frame cost a huge table runs into. Skipped where node is missing or not
 * node 20's V8.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "lang/v8_procs.h"
#include "test.h"
#include "v8_heap.h"

#define PID	   4242
#define NODE_START 0x10000000ull
#define NODE_END   0x10400000ull

static char root[64];
static struct v8_meta node_meta;
static uint64_t blob_at; /* where the fake maps put node's blob */
static struct fake_heap *heap;
static uint64_t bytes_read;

static ssize_t read_heap(void *ctx, uint32_t pid, uint64_t addr, void *buf, size_t len)
{
	(void)ctx;
	(void)pid;
	bytes_read += len;
	return fake_read(heap, addr, buf, len) ? -1 : (ssize_t)len;
}

/* A /proc with PID's maps: node's pages holding its blob, then `nanon` anonymous code mappings. */
static int make_proc_of(int pid, int nanon)
{
	char path[160];
	struct stat st;
	uint64_t pgoff = node_meta.blob_file_off & ~0xfffull;
	FILE *f;

	if (stat("/usr/bin/node", &st))
		return -1;
	snprintf(path, sizeof(path), "%s/%d", root, pid);
	if (mkdir(path, 0755) && errno != EEXIST)
		return -1;
	snprintf(path, sizeof(path), "%s/%d/map_files", root, pid);
	if (mkdir(path, 0755) && errno != EEXIST)
		return -1;
	snprintf(path, sizeof(path), "%s/%d/map_files/%llx-%llx", root, pid,
		 (unsigned long long)NODE_START, (unsigned long long)NODE_END);
	unlink(path);
	if (symlink("/usr/bin/node", path))
		return -1;
	snprintf(path, sizeof(path), "%s/%d/maps", root, pid);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fprintf(f, "%llx-%llx r-xp %08llx %02x:%02x %llu /usr/bin/node\n",
		(unsigned long long)NODE_START, (unsigned long long)NODE_END,
		(unsigned long long)pgoff, major(st.st_dev), minor(st.st_dev),
		(unsigned long long)st.st_ino);
	/* Gaps of 1, 2, ... pages between them: the largest stay gaps. */
	for (int i = 0; i < nanon; i++) {
		uint64_t lo = 0x7f0000000000ull + (uint64_t)i * (i + 17) * 0x1000;

		fprintf(f, "%llx-%llx rwxp 00000000 00:00 0\n", (unsigned long long)lo,
			(unsigned long long)(lo + 0x10000));
	}
	fclose(f);
	blob_at = NODE_START + (node_meta.blob_file_off - pgoff);
	return 0;
}

static int make_proc(int nanon)
{
	return make_proc_of(PID, nanon);
}

static struct v8_procs *open_procs(void)
{
	struct v8_procs *vp = v8_procs_new(root);
	map_entries_t maps = { 0 };

	v8_procs_set_reader(vp, read_heap, NULL);
	CHECK_EQ_INT(proc_maps_read(root, PID, &maps), 0);
	for (size_t i = 0; i < maps.len; i++)
		CHECK_EQ_INT(v8_procs_note_mapping(vp, PID, &maps.data[i]), 0);
	map_entries_free(&maps);
	CHECK(v8_procs_is_node(vp, PID));
	return vp;
}

static void test_capture(void)
{
	struct v8_capture cap;
	struct v8_procs *vp;

	CHECK_EQ_INT(make_proc(3), 0);
	vp = open_procs();
	CHECK_EQ_INT(v8_procs_capture(vp, PID, &cap), 0);
	CHECK_EQ_INT(cap.nranges, 4);
	CHECK_EQ_INT(cap.lo[0], blob_at);
	CHECK_EQ_INT(cap.hi[0], blob_at + (node_meta.blob_hi - node_meta.blob_lo));
	CHECK_EQ_INT(cap.offsets[V8_W_CONTEXT], -8);
	CHECK_EQ_INT(cap.offsets[V8_W_FUNCTION], -16);
	CHECK_EQ_INT(cap.offsets[V8_W_BYTECODE_OFFSET], -40);
	CHECK_EQ_INT(cap.offsets[V8_W_BYTECODE_ARRAY], -32);
	CHECK_EQ_INT(v8_procs_capture(vp, PID + 1, &cap), -ENOENT);
	v8_procs_free(vp);

	/* 20 mappings of code: 7 ranges, the 6 largest gaps kept, every mapping covered. */
	CHECK_EQ_INT(make_proc(20), 0);
	vp = open_procs();
	CHECK_EQ_INT(v8_procs_capture(vp, PID, &cap), 0);
	CHECK_EQ_INT(cap.nranges, V8_MAX_RANGES);
	CHECK_EQ_INT(cap.lo[1], 0x7f0000000000ull);
	CHECK_EQ_INT(cap.hi[V8_MAX_RANGES - 1], 0x7f0000000000ull + 19ull * 36 * 0x1000 + 0x10000);
	for (int i = 2; i < V8_MAX_RANGES; i++)
		CHECK(cap.lo[i] > cap.hi[i - 1]);
	v8_procs_free(vp);
}

/* The capture's runtime module: node's mappings note the process, its answer is rt_procs'. */
static void test_rt_module(void)
{
	struct v8_procs *vp = v8_procs_new(root);
	struct rt_module mod = v8_procs_rt_module(vp);
	map_entries_t maps = { 0 };
	struct map_entry other = { .start = 0x400000,
				   .end = 0x401000,
				   .executable = true,
				   .path = (char *)"/usr/bin/cat" };
	map_entries_t exec_d = { 0 };
	struct rt_proc rp;

	CHECK_EQ_INT(make_proc(3), 0);
	CHECK_EQ_INT(proc_maps_read(root, PID, &maps), 0);
	CHECK_EQ_INT(mod.capture(mod.ctx, PID, 0, &rp), -ENOENT);
	CHECK_EQ_INT(mod.note_maps(mod.ctx, PID, &maps), 1);
	CHECK(v8_procs_is_node(vp, PID));
	CHECK_EQ_INT(mod.capture(mod.ctx, PID, 0, &rp), 0);
	CHECK_EQ_INT(rp.kind, RT_KIND_V8);
	CHECK_EQ_INT(rp.nranges, 4);
	CHECK_EQ_INT(rp.ranges[0].lo, blob_at);
	CHECK_EQ_INT(rp.ranges[1].lo, 0x7f0000000000ull);
	CHECK_EQ_INT(rp.nwords, RT_WORDS);
	CHECK_EQ_INT(rp.off[V8_W_CONTEXT], -8);
	CHECK_EQ_INT(rp.off[V8_W_FUNCTION], -16);
	CHECK_EQ_INT(rp.off[V8_W_BYTECODE_OFFSET], -40);
	CHECK_EQ_INT(rp.off[V8_W_BYTECODE_ARRAY], -32);
	for (int i = 0; i < RT_WORDS; i++)
		CHECK_EQ_INT(rp.top_reg[i], RT_REG_NONE);
	/* V8 commits more code: the next ask gives its new ranges. */
	CHECK_EQ_INT(make_proc(5), 0);
	CHECK_EQ_INT(mod.capture(mod.ctx, PID, 0, &rp), 0);
	CHECK_EQ_INT(rp.nranges, 6);
	/* pid exec'd something else: not node now, and its V8 state is gone. */
	CHECK_EQ_INT(vec_push(&exec_d, other), 0);
	CHECK_EQ_INT(mod.note_maps(mod.ctx, PID, &exec_d), 0);
	CHECK(!v8_procs_is_node(vp, PID));
	CHECK_EQ_INT(mod.capture(mod.ctx, PID, 0, &rp), -ENOENT);
	vec_free(&exec_d);
	map_entries_free(&maps);
	v8_procs_free(vp);
}

static void test_frames(void)
{
	struct hotspot_frame out[V8_MAX_FRAMES];
	struct v8_procs *vp;
	uint64_t words[V8_WORDS] = { 0 }, script;
	const int64_t e[][2] = { { 0, (int64_t)raw_pos(INNER_CALL, 0) } };
	uint64_t ba;

	CHECK_EQ_INT(make_proc(3), 0);
	vp = open_procs();
	memset(heap, 0, sizeof(*heap));
	/* A typed frame: named in V8's code, left to the caller's name in the blob. */
	words[V8_W_CONTEXT] = 17 << 1; /* StubFrame */
	CHECK_EQ_INT(v8_procs_frames(vp, PID, 0, 0x7f0000000100ull, true, words, out, 4), 1);
	CHECK_EQ_STR(out[0].name, "V8::StubFrame");
	CHECK_EQ_INT(v8_procs_frames(vp, PID, 0, blob_at + 0x100, true, words, out, 4), -ENOENT);
	/* An interpreted frame, its pc in the blob (a bytecode handler). */
	script = script_of(heap);
	ba = fake_object(heap, 191, 64);
	fake_word(heap, ba, 32, table(heap, e, 1));
	words[V8_W_CONTEXT] = fake_object(heap, 100, 16);
	words[V8_W_FUNCTION] = function(heap, sfi_named(heap, script, "inner"), smi(0));
	words[V8_W_BYTECODE_OFFSET] = smi(53 + 2);
	words[V8_W_BYTECODE_ARRAY] = ba;
	CHECK_EQ_INT(v8_procs_frames(vp, PID, 0, blob_at + 0x100, true, words, out, 4), 1);
	CHECK_EQ_STR(out[0].name, "inner");
	CHECK_EQ_STR(out[0].file, "/srv/app/hot.js");
	CHECK_EQ_INT(out[0].line, 5);
	/* No node: no frames. */
	CHECK_EQ_INT(v8_procs_frames(vp, PID + 1, 0, blob_at, true, words, out, 4), -ENOENT);
	v8_procs_free(vp);
}

/* Every frame new and its position table as large as read: the budget stops the reads. */
static void test_budget(void)
{
	struct hotspot_frame out[V8_MAX_FRAMES];
	struct v8_procs *vp;
	uint64_t words[V8_WORDS] = { 0 }, ba, spt;
	int named = 0;

	CHECK_EQ_INT(make_proc(3), 0);
	vp = open_procs();
	memset(heap, 0, sizeof(*heap));
	ba = fake_object(heap, 191, 64);
	spt = fake_object(heap, 190, 16 + V8_MAX_TABLE);
	fake_word(heap, spt, 8, smi((int32_t)V8_MAX_TABLE));
	fake_word(heap, ba, 32, spt);
	words[V8_W_CONTEXT] = fake_object(heap, 100, 16);
	words[V8_W_FUNCTION] = function(heap, sfi_named(heap, script_of(heap), "f"), smi(0));
	words[V8_W_BYTECODE_ARRAY] = ba;
	bytes_read = 0;
	for (int i = 0; i < 400; i++) {
		words[V8_W_BYTECODE_OFFSET] = smi(53 + i);
		named += v8_procs_frames(vp, PID, 0, blob_at + 0x100, true, words, out, 4) == 1;
	}
	/*
	 * 400 frames would read 100 MB; a process's burst is 32 MB (and 8 MB/s
	 * more). Past it, frames keep the names already read, without lines.
	 */
	CHECK(bytes_read >= (32ull << 20) - V8_MAX_TABLE);
	CHECK(bytes_read < (48ull << 20));
	CHECK_EQ_INT(named, 400);
	fprintf(stderr, "  400 frames named, %llu MB read\n",
		(unsigned long long)(bytes_read >> 20));
	v8_procs_free(vp);
}

/*
 * More node processes than are named at once: those past the cap get the
 * caller's fallback; all of them share one read of their node's file.
 */
static void test_many_processes(void)
{
	struct hotspot_frame out[V8_MAX_FRAMES];
	struct v8_procs *vp = v8_procs_new(root);
	uint64_t words[V8_WORDS] = { 0 };
	int named = 0, fallback = 0;

	v8_procs_set_reader(vp, read_heap, NULL);
	memset(heap, 0, sizeof(*heap));
	words[V8_W_CONTEXT] = fake_object(heap, 100, 16);
	words[V8_W_FUNCTION] = function(heap, sfi_named(heap, script_of(heap), "f"), smi(0));
	for (int i = 0; i < V8_MAX_NAMED_PROCS + 20; i++) {
		map_entries_t maps = { 0 };
		int err, pid = PID + 1 + i;

		CHECK_EQ_INT(make_proc_of(pid, 1), 0);
		CHECK_EQ_INT(proc_maps_read(root, pid, &maps), 0);
		for (size_t k = 0; k < maps.len; k++)
			v8_procs_note_mapping(vp, (uint32_t)pid, &maps.data[k]);
		map_entries_free(&maps);
		err = v8_procs_frames(vp, (uint32_t)pid, 0, 0x7f0000000100ull, true, words, out, 4);
		named += err == 1;
		fallback += err == -ENOENT;
	}
	CHECK_EQ_INT(named, V8_MAX_NAMED_PROCS);
	CHECK_EQ_INT(fallback, 20);
	/* One gone: its room is another's. */
	v8_procs_forget(vp, PID + 1);
	CHECK_EQ_INT(v8_procs_frames(vp, PID + V8_MAX_NAMED_PROCS + 20, 0, 0x7f0000000100ull, true,
				     words, out, 4),
		     1);
	v8_procs_free(vp);
}

int main(void)
{
	char why[160];
	int fd = open("/usr/bin/node", O_RDONLY | O_CLOEXEC), err;

	if (fd < 0) {
		fprintf(stderr, "MISSING: /usr/bin/node; v8_procs is not tested\n");
		return 0;
	}
	err = v8_meta_read_fd(fd, &node_meta, why, sizeof(why));
	close(fd);
	if (err || node_meta.version != V8_VERSION(11, 3, 244) || !node_meta.blob_file_off) {
		fprintf(stderr, "node's V8 %u.%u is not node 20's (%s); v8_procs is not tested\n",
			node_meta.major, node_meta.minor, why);
		return 0;
	}
	snprintf(root, sizeof(root), "/tmp/test_v8_procs.XXXXXX");
	heap = calloc(1, sizeof(*heap));
	if (!mkdtemp(root) || !heap)
		return 1;
	RUN(test_capture);
	RUN(test_rt_module);
	RUN(test_frames);
	RUN(test_budget);
	RUN(test_many_processes);
	snprintf(why, sizeof(why), "rm -rf %s", root);
	if (system(why))
		fprintf(stderr, "cannot remove %s\n", root);
	free(heap);
	return test_summary();
}
