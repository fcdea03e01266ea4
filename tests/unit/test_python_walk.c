// SPDX-License-Identifier: BSD-2-Clause
/*
 * lang/python_walk.c, the userspace twin of the BPF walk, on a process's
 * memory faked here (addresses are offsets into one buffer): a 3.12-shaped
 * thread found by its pthread key and by its interpreter's thread list, its
 * marker frame ending the loop's group; a <= 3.10 frame chain whose
 * innermost loop has no frame yet; and hostile lists that loop (threads,
 * markers): each walk ends within its bound.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "lang/python_layout.h"
#include "lang/python_walk.h"
#include "test.h"

#define MEM    0x10000
#define BASE   0x100000
#define FS     (BASE + 0x8000) /* the thread's pthread_t */
#define TSD    0x300
#define KEYAT  (BASE + 0x100)
#define HEAD   (BASE + 0x108)
#define INTERP (BASE + 0x200)
#define TSTATE (BASE + 0x1000)
#define DECOY  (BASE + 0x1800)
#define CFRAME (BASE + 0x2000)
#define FRAMES (BASE + 0x3000) /* 0x100 apart */

static uint8_t mem[MEM];
static int reads;

static int fake_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	(void)ctx;
	reads++;
	if (addr < BASE || addr - BASE > MEM || len > MEM - (addr - BASE))
		return -EFAULT;
	memcpy(buf, mem + (addr - BASE), len);
	return 0;
}

static void put64(uint64_t addr, uint64_t v)
{
	memcpy(mem + (addr - BASE), &v, 8);
}

/* Frame i of a 3.12 chain: code 0xc0de0 + i, instr 0x1000 * (i + 1), owner `owner`, previous
 * `prev`. */
static void frame312(int i, uint8_t owner, uint64_t prev)
{
	uint64_t f = FRAMES + 0x100 * (uint64_t)i;

	put64(f + 0, 0xc0de0 + (uint64_t)i);
	put64(f + 8, prev);
	put64(f + 56, 0x1000 * (uint64_t)(i + 1));
	mem[f - BASE + 70] = owner;
}

/* 3.12's layout, as bpfprof publishes it. */
static struct py_proc proc312(bool key)
{
	struct py_proc pp = { .interp_head = HEAD,
			      .tss_key = key ? KEYAT : 0,
			      .eval_start = 0x5000,
			      .eval_end = 0x6000,
			      .tsd_offset = TSD };
	const struct python_code_layout *code;

	python_layout_for(0x030c01f0, &pp.layout, &code);
	return pp;
}

static void setup312(void)
{
	uint32_t key = 3;

	memset(mem, 0, sizeof(mem));
	memcpy(mem + (KEYAT - BASE), &key, 4);
	put64(FS + TSD + 16 * 3 + 8, TSTATE); /* its key's value */
	put64(HEAD, INTERP);
	put64(INTERP + 72, DECOY); /* the list: a decoy first, then the thread */
	put64(DECOY + 8, TSTATE);
	put64(DECOY + 136, 0x1234);
	put64(TSTATE + 136, FS);
	put64(TSTATE + 56, CFRAME);
	put64(CFRAME + 0, FRAMES);
	/* A, B, marker (C stack), D: the inner loop ran A, B; the outer D. */
	frame312(0, 0, FRAMES + 0x100);
	frame312(1, 0, FRAMES + 0x200);
	frame312(2, 3, FRAMES + 0x300);
	frame312(3, 0, 0);
}

static void walks_a_312_thread_both_ways(void)
{
	uint64_t uips[4] = { 0x401000, 0x5100, 0x402000, 0x5200 }, py[2 * BPFPROF_MAX_PYFRAMES];
	bool truncated;
	struct py_proc pp = proc312(true);

	setup312();
	CHECK_EQ_INT(python_walk_thread(&pp, FS, fake_read, NULL, uips, 4, py, &truncated), 3);
	CHECK(!truncated);
	CHECK_EQ_INT(py[0], 0xc0de0);
	CHECK_EQ_INT(py[1], 0x1000);
	CHECK_EQ_INT(py[3], 0x2000 | PY_FRAME_ENTRY); /* B entered the inner loop */
	CHECK_EQ_INT(py[4], 0xc0de3);
	CHECK(uips[1] & USTACK_PY_EVAL && uips[3] & USTACK_PY_EVAL && !(uips[0] & USTACK_PY_EVAL));
	/* No key: the list, past the decoy. */
	pp = proc312(false);
	CHECK_EQ_INT(python_walk_thread(&pp, FS, fake_read, NULL, uips, 4, py, &truncated), 3);
	/* Another thread's pthread_t: the key's value is not its state, the list has none. */
	CHECK_EQ_INT(python_walk_thread(&pp, FS + 0x10, fake_read, NULL, uips, 4, py, &truncated),
		     0);
}

static void hostile_lists_end(void)
{
	uint64_t uips[2] = { 0x5100, 0x5200 }, py[2 * BPFPROF_MAX_PYFRAMES];
	bool truncated;
	struct py_proc pp = proc312(false);

	setup312();
	/* Threads that link to each other, none of them this thread. */
	put64(DECOY + 8, DECOY + 0x100);
	put64(DECOY + 0x100 + 8, DECOY);
	reads = 0;
	CHECK_EQ_INT(python_walk_thread(&pp, FS, fake_read, NULL, uips, 2, py, &truncated), 0);
	CHECK(reads <= 3 + 2 * 64);
	/* Markers that link to themselves: no frame, the walk stops at its bound. */
	setup312();
	frame312(0, 3, FRAMES);
	pp = proc312(true);
	reads = 0;
	CHECK_EQ_INT(python_walk_thread(&pp, FS, fake_read, NULL, uips, 2, py, &truncated), 0);
	CHECK(reads <= 8 + BPFPROF_MAX_PYFRAMES + 1);
	/* Frames that link to themselves: cut at BPFPROF_MAX_PYFRAMES, said so. */
	setup312();
	frame312(0, 0, FRAMES);
	CHECK_EQ_INT(python_walk_thread(&pp, FS, fake_read, NULL, uips, 2, py, &truncated),
		     BPFPROF_MAX_PYFRAMES);
	CHECK(truncated);
}

/* <= 3.10: every frame a loop's; a loop with no frame yet (the innermost) stays a C frame. */
static void frame_objects_and_the_innermost_loop(void)
{
	struct py_proc pp = { .interp_head = HEAD,
			      .eval_start = 0x5000,
			      .eval_end = 0x6000,
			      .layout = { .interp_tstate_head = 8,
					  .tstate_next = 8,
					  .tstate_thread_id = 176,
					  .tstate_frame = 24,
					  .cframe_frame = PY_NO_CFRAME,
					  .frame_code = 32,
					  .frame_previous = 24,
					  .frame_instr = 96,
					  .entry_kind = PY_ENTRY_EVERY } };
	uint64_t uips[3] = { 0x5100, 0x5200, 0x5300 }, py[2 * BPFPROF_MAX_PYFRAMES];
	int32_t lasti = 42;
	bool truncated;

	memset(mem, 0, sizeof(mem));
	put64(HEAD, INTERP);
	put64(INTERP + 8, TSTATE);
	put64(TSTATE + 176, FS);
	put64(TSTATE + 24, FRAMES);
	put64(FRAMES + 32, 0xc0de0);
	put64(FRAMES + 24, FRAMES + 0x100);
	memcpy(mem + (FRAMES - BASE) + 96, &lasti, 4);
	put64(FRAMES + 0x100 + 32, 0xc0de1);
	CHECK_EQ_INT(python_walk_thread(&pp, FS, fake_read, NULL, uips, 3, py, &truncated), 2);
	CHECK_EQ_INT(py[1], (42u << 1) | PY_FRAME_ENTRY);
	CHECK(!(uips[0] & USTACK_PY_EVAL) && (uips[1] & USTACK_PY_EVAL) &&
	      (uips[2] & USTACK_PY_EVAL));
}

int main(void)
{
	RUN(walks_a_312_thread_both_ways);
	RUN(hostile_lists_end);
	RUN(frame_objects_and_the_innermost_loop);
	return test_summary();
}
