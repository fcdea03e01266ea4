// SPDX-License-Identifier: BSD-2-Clause
/*
 * What a hostile Python process can make bpfprof spend (issue 37), no
 * root, no BPF, against a fake process memory:
 *   - memory: code objects with 200 KiB line tables, thousands of them:
 *     a process keeps its share of the cache and no more, the code objects
 *     past it are not read at all and are named so, another uid's process
 *     is read still, and a forgotten process gives its bytes back;
 *   - time: a read that never returns (a page on a FUSE file its owner
 *     does not serve) costs the caller the deadline once: the process is
 *     read no more, its uid after two such processes, other processes are
 *     read still, and at most PY_READER_WORKERS threads are ever stuck.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lang/python_procs.h"
#include "test.h"

#define CODE_TYPE  0x7000
#define BASE	   0x100000
#define N_CODES	   512 /* code objects at BASE + k * CODE_SIZE */
#define CODE_SIZE  0x100
#define NAME_AT	   (N_CODES * CODE_SIZE)
#define FILE_AT	   (NAME_AT + 0x100)
#define TABLE_AT   (NAME_AT + 0x200)
#define TABLE_LEN  (200 * 1024)
#define MEM_SIZE   (TABLE_AT + 0x40 + TABLE_LEN)
#define STALL_BASE 0x40000000 /* code objects here never answer, until released */

/* A process memory shared by every pid: N_CODES code objects, one name, one file, one table. */
struct fake {
	uint8_t *mem;
	pthread_mutex_t lock;
	pthread_cond_t released_cond;
	bool released;
	unsigned reads, blocked, most_blocked;
};

static ssize_t fake_read(void *ctx, uint32_t pid, uint64_t addr, void *buf, size_t len)
{
	struct fake *f = ctx;

	(void)pid;
	pthread_mutex_lock(&f->lock);
	f->reads++;
	if (addr >= STALL_BASE) {
		f->blocked++;
		if (f->blocked > f->most_blocked)
			f->most_blocked = f->blocked;
		while (!f->released)
			pthread_cond_wait(&f->released_cond, &f->lock);
		f->blocked--;
		pthread_cond_broadcast(&f->released_cond); /* the test waits for none blocked */
		pthread_mutex_unlock(&f->lock);
		return -1;
	}
	pthread_mutex_unlock(&f->lock);
	if (addr < BASE || addr - BASE > MEM_SIZE || len > MEM_SIZE - (addr - BASE))
		return -1;
	memcpy(buf, f->mem + (addr - BASE), len);
	return (ssize_t)len;
}

static void put64(uint8_t *at, uint64_t v)
{
	memcpy(at, &v, 8);
}

static void fake_init(struct fake *f, const struct python_code_layout *l)
{
	uint32_t state = (1u << 2) | (1u << 5) | (1u << 6); /* compact ASCII */

	memset(f, 0, sizeof(*f));
	pthread_mutex_init(&f->lock, NULL);
	pthread_cond_init(&f->released_cond, NULL);
	f->mem = calloc(1, MEM_SIZE);
	for (int k = 0; k < N_CODES; k++) {
		uint8_t *c = f->mem + k * CODE_SIZE;
		int32_t first = 1;

		put64(c + l->ob_type, CODE_TYPE);
		memcpy(c + l->co_firstlineno, &first, 4);
		put64(c + l->co_qualname, BASE + NAME_AT);
		put64(c + l->co_filename, BASE + FILE_AT);
		put64(c + l->co_linetable, BASE + TABLE_AT);
	}
	put64(f->mem + NAME_AT + l->str_length, 3);
	memcpy(f->mem + NAME_AT + l->str_state, &state, 4);
	memcpy(f->mem + NAME_AT + l->str_ascii_data, "run", 3);
	put64(f->mem + FILE_AT + l->str_length, 6);
	memcpy(f->mem + FILE_AT + l->str_state, &state, 4);
	memcpy(f->mem + FILE_AT + l->str_ascii_data, "/a.py", 6);
	/* Every entry: one unit, the next line (one-line form, +1, two column bytes). */
	put64(f->mem + TABLE_AT + l->bytes_size, TABLE_LEN);
	for (size_t i = 0; i + 3 <= TABLE_LEN; i += 3)
		f->mem[TABLE_AT + l->bytes_data + i] = 0x80 | (11 << 3);
}

/* Reads so far (workers count them). */
static unsigned fake_reads(struct fake *f)
{
	unsigned n;

	pthread_mutex_lock(&f->lock);
	n = f->reads;
	pthread_mutex_unlock(&f->lock);
	return n;
}

/* The owner of the stalled page lets go: returns once no read waits on it. */
static void fake_release(struct fake *f)
{
	pthread_mutex_lock(&f->lock);
	f->released = true;
	pthread_cond_broadcast(&f->released_cond);
	while (f->blocked)
		pthread_cond_wait(&f->released_cond, &f->lock);
	pthread_mutex_unlock(&f->lock);
}

static void fake_free(struct fake *f)
{
	free(f->mem);
}

/* A python_procs reading `f` (3.11's layout in *info), with these limits. */
static struct python_procs *setup(struct fake *f, struct python_info *info, size_t proc_share,
				  unsigned deadline_ms)
{
	struct python_procs *p = python_procs_new();
	const struct python_code_layout *l;

	memset(info, 0, sizeof(*info));
	info->code_type = CODE_TYPE;
	python_layout_for(0x030b02f0, &info->frames, &l);
	info->code = l;
	fake_init(f, l);
	python_procs_set_reader(p, fake_read, f);
	python_procs_set_limits(p, 4 * proc_share, 2 * proc_share, proc_share, deadline_ms);
	return p;
}

static uint64_t code_at(int k)
{
	return BASE + (uint64_t)k * CODE_SIZE;
}

static void memory_share(void)
{
	const size_t share = 4u << 20; /* about 20 code objects of this process */
	static struct fake f;
	struct python_info info;
	struct python_procs *p = setup(&f, &info, share, 1000);
	const struct python_code_layout *l = info.code;
	struct python_procs_stats st;
	struct python_location loc;
	int named = 0, over = 0;
	unsigned reads;

	CHECK_EQ_INT(python_procs_add(p, 42, 1000, &info, 0, NULL), 0);
	for (int k = 0; k < N_CODES; k++) {
		uint64_t code = code_at(k);

		CHECK_EQ_INT(python_procs_resolve(p, 42, code,
						  code + l->co_code_adaptive + 2 * 1000, &loc),
			     0);
		if (!strcmp(loc.qualname, "run")) {
			named++;
			CHECK_EQ_INT(loc.line, 1 + 1001); /* unit 1000: 1001 entries of +1 */
		} else {
			over++;
			CHECK_EQ_STR(loc.qualname, "[Python code past bpfprof's memory budget]");
		}
	}
	python_procs_get_stats(p, &st);
	fprintf(stderr, "  %d code objects read, %d past the share; %zu KiB kept\n", named, over,
		st.bytes >> 10);
	CHECK(named >= 10 && over > N_CODES / 2);
	CHECK(st.bytes <= share + TABLE_LEN * 2);
	CHECK_EQ_INT(st.over_budget_frames, over);
	/* Past the share nothing is read, not even the code object's head. */
	reads = fake_reads(&f);
	CHECK_EQ_INT(python_procs_resolve(p, 42, code_at(N_CODES - 1), 0, &loc), 0);
	CHECK_EQ_INT(fake_reads(&f), reads);
	/* A process of the same uid has the uid's share left; another uid's the whole. */
	CHECK_EQ_INT(python_procs_add(p, 43, 1000, &info, 0, NULL), 0);
	CHECK_EQ_INT(python_procs_add(p, 44, 2000, &info, 0, NULL), 0);
	CHECK_EQ_INT(python_procs_resolve(p, 44, code_at(0), 0, &loc), 0);
	CHECK_EQ_STR(loc.qualname, "run");
	/* A forgotten process gives its bytes back. */
	python_procs_forget(p, 42);
	python_procs_forget(p, 43);
	python_procs_forget(p, 44);
	python_procs_get_stats(p, &st);
	CHECK_EQ_INT(st.bytes, 0);
	python_procs_free(p);
	fake_free(&f);
}

/*
 * A read of STALLED's memory that does not return (an error for its frame),
 * after which PID's frame at CODE is said unread without a read tried.
 */
#define CHECK_STALL_THEN_UNREAD(p, f, stalled, pid, code)                                      \
	do {                                                                                   \
		struct python_location unread_loc;                                             \
		unsigned reads_before;                                                         \
                                                                                               \
		CHECK_EQ_INT(                                                                  \
			python_procs_resolve(p, stalled, STALL_BASE, STALL_BASE, &unread_loc), \
			-EIO);                                                                 \
		reads_before = fake_reads(f);                                                  \
		CHECK_EQ_INT(python_procs_resolve(p, pid, code, 0, &unread_loc), 0);           \
		CHECK_EQ_STR(unread_loc.qualname,                                              \
			     "[Python frame unread: its process's memory stalled]");           \
		CHECK_EQ_INT(fake_reads(f), reads_before);                                     \
	} while (0)

static void stalled_reads(void)
{
	static struct fake f;
	struct python_info info;
	/*
	 * The deadline must be one no answered read reaches, however loaded the
	 * machine (ctest -j, ASan): a read the fake blocks never answers at all.
	 */
	struct python_procs *p = setup(&f, &info, 16u << 20, 1000);
	struct python_procs_stats st;
	struct python_location loc;

	CHECK_EQ_INT(python_procs_add(p, 42, 1000, &info, 0, NULL), 0);
	CHECK_EQ_INT(python_procs_add(p, 43, 1000, &info, 0, NULL), 0);
	CHECK_EQ_INT(python_procs_add(p, 44, 1000, &info, 0, NULL), 0);
	CHECK_EQ_INT(python_procs_add(p, 50, 0, &info, 0, NULL), 0);

	/* The read that does not return: an error for this frame, the process read no more. */
	CHECK_STALL_THEN_UNREAD(p, &f, 42, 42, code_at(0));
	/* Another process of the uid is read still; after its own stall, no process of the uid. */
	CHECK_EQ_INT(python_procs_resolve(p, 43, code_at(0), 0, &loc), 0);
	CHECK_EQ_STR(loc.qualname, "run");
	CHECK_STALL_THEN_UNREAD(p, &f, 43, 44, code_at(1));
	/* Code objects read before the stall keep their names. */
	CHECK_EQ_INT(python_procs_resolve(p, 43, code_at(0), 0, &loc), 0);
	CHECK_EQ_STR(loc.qualname, "run");
	/* Another uid's process is read. */
	CHECK_EQ_INT(python_procs_resolve(p, 50, code_at(0), 0, &loc), 0);
	CHECK_EQ_STR(loc.qualname, "run");

	/* Stalls of many uids: no more than PY_READER_WORKERS threads stuck, then no waiting. */
	for (uint32_t pid = 100; pid < 110; pid++) {
		CHECK_EQ_INT(python_procs_add(p, pid, pid, &info, 0, NULL), 0);
		CHECK_EQ_INT(python_procs_resolve(p, pid, STALL_BASE, STALL_BASE, &loc), -EIO);
	}
	pthread_mutex_lock(&f.lock);
	CHECK(f.most_blocked <= PY_READER_WORKERS);
	CHECK(f.most_blocked >= 2);
	pthread_mutex_unlock(&f.lock);
	python_procs_get_stats(p, &st);
	CHECK_EQ_INT(st.stalled_procs, 2 + PY_READER_WORKERS - 2);
	CHECK(st.stalled_frames >= 1);
	/* The owner of the stalled page lets go: the workers are free again. */
	fake_release(&f);
	python_procs_free(p);
	fake_free(&f);
}

/* Freed while a worker is stuck: the caller does not wait; the worker ends when released. */
static void freed_while_stuck(void)
{
	static struct fake f;
	struct python_info info;
	struct python_procs *p = setup(&f, &info, 16u << 20, 1000);
	struct python_location loc;

	CHECK_EQ_INT(python_procs_add(p, 42, 1000, &info, 0, NULL), 0);
	CHECK_EQ_INT(python_procs_resolve(p, 42, STALL_BASE, STALL_BASE, &loc), -EIO);
	python_procs_free(p);
	fake_release(&f);
	fake_free(&f);
}

int main(void)
{
	RUN(memory_share);
	RUN(stalled_reads);
	RUN(freed_while_stuck);
	return test_summary();
}
