// SPDX-License-Identifier: BSD-2-Clause
/*
 * The side-band reader: the record parser and ring protocol on a ring built
 * in memory (no root), then, as root, the real kernel records of a child
 * that execs /bin/true and of a thread that renames itself.
 */
#include <errno.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "capture/cpus.h"
#include "capture/sideband.h"
#include "util/clock.h"
#include "test.h"

/* ---- building records and rings in memory ------------------------------ */

#define RING_SIZE 512 /* small, so records wrap the end */

struct fake_ring {
	struct sideband_ring ring;
	struct perf_event_mmap_page *meta;
	unsigned char data[RING_SIZE];
	unsigned char bounce[SIDEBAND_RECORD_MAX + 1];
};

/* Start a ring whose head and tail are at `pos` (a free-running byte counter). */
static struct fake_ring *fake_ring_new(uint64_t pos)
{
	struct fake_ring *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->meta = calloc(1, sizeof(*f->meta));
	if (!f->meta) {
		free(f);
		return NULL;
	}
	f->meta->data_head = f->meta->data_tail = pos;
	f->ring = (struct sideband_ring){
		.meta = f->meta, .data = f->data, .size = RING_SIZE, .fd = -1, .cpu = 3
	};
	memset(f->data, 0xee, sizeof(f->data)); /* stale bytes, as in a used ring */
	return f;
}

static void fake_ring_free(struct fake_ring *f)
{
	free(f->meta);
	free(f);
}

/* Append a record at head, wrapping at the end as the kernel does. */
static void fake_ring_put(struct fake_ring *f, const void *rec, size_t len)
{
	for (size_t i = 0; i < len; i++)
		f->data[(f->meta->data_head + i) % RING_SIZE] = ((const unsigned char *)rec)[i];
	f->meta->data_head += len;
}

struct rec_buf {
	unsigned char b[512];
	size_t len;
};

static void rb_bytes(struct rec_buf *r, const void *p, size_t n)
{
	memcpy(r->b + r->len, p, n);
	r->len += n;
}

static void rb_u32(struct rec_buf *r, uint32_t v)
{
	rb_bytes(r, &v, sizeof(v));
}

static void rb_u64(struct rec_buf *r, uint64_t v)
{
	rb_bytes(r, &v, sizeof(v));
}

/* A string padded with NULs to 8 bytes, as the kernel writes names. */
static void rb_str(struct rec_buf *r, const char *s)
{
	size_t n = strlen(s) + 1, padded = (n + 7) & ~(size_t)7;

	memset(r->b + r->len, 0, padded);
	memcpy(r->b + r->len, s, n);
	r->len += padded;
}

static void rb_begin(struct rec_buf *r, uint32_t type, uint16_t misc)
{
	struct perf_event_header h = { .type = type, .misc = misc };

	r->len = 0;
	rb_bytes(r, &h, sizeof(h));
}

/* The sample_id trailer, then the final size into the header. */
static void rb_end(struct rec_buf *r, uint32_t pid, uint32_t tid, uint64_t time)
{
	uint16_t size;

	rb_u32(r, pid);
	rb_u32(r, tid);
	rb_u64(r, time);
	size = (uint16_t)r->len;
	memcpy(r->b + offsetof(struct perf_event_header, size), &size, sizeof(size));
}

static void mk_mmap2_inode(struct rec_buf *r, const char *name, uint64_t ts)
{
	rb_begin(r, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
	rb_u32(r, 4242);
	rb_u32(r, 4243);
	rb_u64(r, 0x7f0000001000ull); /* addr */
	rb_u64(r, 0x5000);	      /* len */
	rb_u64(r, 0x2000);	      /* pgoff */
	rb_u32(r, 259);		      /* maj */
	rb_u32(r, 7);		      /* min */
	rb_u64(r, 987654321);	      /* ino */
	rb_u64(r, 12);		      /* ino_generation */
	rb_u32(r, PROT_READ | PROT_EXEC);
	rb_u32(r, MAP_PRIVATE);
	rb_str(r, name);
	rb_end(r, 4242, 4243, ts);
}

static void mk_comm(struct rec_buf *r, uint32_t pid, uint32_t tid, const char *comm, bool exec,
		    uint64_t ts)
{
	rb_begin(r, PERF_RECORD_COMM, exec ? PERF_RECORD_MISC_COMM_EXEC : 0);
	rb_u32(r, pid);
	rb_u32(r, tid);
	rb_str(r, comm);
	rb_end(r, pid, tid, ts);
}

static void mk_task(struct rec_buf *r, uint32_t type, uint32_t pid, uint32_t ppid, uint32_t tid,
		    uint32_t ptid, uint64_t body_time, uint64_t ts)
{
	rb_begin(r, type, 0);
	rb_u32(r, pid);
	rb_u32(r, ppid);
	rb_u32(r, tid);
	rb_u32(r, ptid);
	rb_u64(r, body_time);
	/* The trailer names the task the kernel ran in: the parent for FORK. */
	rb_end(r, ppid, ptid, ts);
}

static void mk_lost(struct rec_buf *r, uint64_t count, uint64_t ts)
{
	rb_begin(r, PERF_RECORD_LOST, 0);
	rb_u64(r, 99); /* id */
	rb_u64(r, count);
	rb_end(r, 0, 0, ts);
}

/* Every record delivered, deep-copied (filenames live only during the callback). */
struct collected {
	struct sideband_record r[16];
	char names[16][64];
	int n;
	int fail_at; /* return -EIO from the callback at this record (index), or -1 */
};

static int collect(const struct sideband_record *r, void *ctx)
{
	struct collected *c = ctx;

	if (c->n >= 16)
		return -ENOSPC;
	c->r[c->n] = *r;
	if (r->kind == SB_MMAP) {
		snprintf(c->names[c->n], sizeof(c->names[0]), "%s", r->mmap.filename);
		c->r[c->n].mmap.filename = c->names[c->n];
	}
	if (c->fail_at == c->n++)
		return -EIO;
	return 0;
}

/* ---- the parser, one record at a time ---------------------------------- */

static void test_parse_mmap2_inode(void)
{
	struct sideband_record r;
	struct rec_buf b;

	mk_mmap2_inode(&b, "/usr/lib/x86_64-linux-gnu/libc.so.6", 1000);
	CHECK_EQ_INT(sideband_parse(b.b, b.len, 5, &r), 1);
	CHECK_EQ_INT(r.kind, SB_MMAP);
	CHECK_EQ_INT(r.cpu, 5);
	CHECK_EQ_INT(r.pid, 4242);
	CHECK_EQ_INT(r.tid, 4243);
	CHECK_EQ_INT(r.ts, 1000);
	CHECK_EQ_INT(r.mmap.start, 0x7f0000001000ull);
	CHECK_EQ_INT(r.mmap.len, 0x5000);
	CHECK_EQ_INT(r.mmap.pgoff, 0x2000);
	CHECK_EQ_INT(r.mmap.maj, 259);
	CHECK_EQ_INT(r.mmap.min, 7);
	CHECK_EQ_INT(r.mmap.ino, 987654321);
	CHECK_EQ_INT(r.mmap.ino_generation, 12);
	CHECK_EQ_INT(r.mmap.prot, PROT_READ | PROT_EXEC);
	CHECK_EQ_INT(r.mmap.flags, MAP_PRIVATE);
	CHECK_EQ_STR(r.mmap.filename, "/usr/lib/x86_64-linux-gnu/libc.so.6");
}

/*
 * sideband_open never asks for build ids, but a record flagged as carrying
 * one (over maj..ino_generation) still parses: its device and inode are 0.
 */
static void test_parse_mmap2_build_id_bit(void)
{
	uint16_t misc = PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_BUILD_ID;
	struct sideband_record r;
	struct rec_buf b;

	mk_mmap2_inode(&b, "/usr/bin/true", 2000);
	memcpy(b.b + offsetof(struct perf_event_header, misc), &misc, sizeof(misc));
	CHECK_EQ_INT(sideband_parse(b.b, b.len, 0, &r), 1);
	CHECK_EQ_INT(r.kind, SB_MMAP);
	CHECK_EQ_INT(r.pid, 4242);
	CHECK_EQ_INT(r.ts, 2000);
	CHECK_EQ_INT(r.mmap.start, 0x7f0000001000ull);
	CHECK_EQ_INT(r.mmap.len, 0x5000);
	CHECK_EQ_INT(r.mmap.maj, 0);
	CHECK_EQ_INT(r.mmap.min, 0);
	CHECK_EQ_INT(r.mmap.ino, 0);
	CHECK_EQ_INT(r.mmap.ino_generation, 0);
	CHECK_EQ_STR(r.mmap.filename, "/usr/bin/true");
}

static void test_parse_plain_mmap(void)
{
	struct sideband_record r;
	struct rec_buf b;

	rb_begin(&b, PERF_RECORD_MMAP, PERF_RECORD_MISC_USER);
	rb_u32(&b, 10);
	rb_u32(&b, 11);
	rb_u64(&b, 0x400000);
	rb_u64(&b, 0x3000);
	rb_u64(&b, 0x1000);
	rb_str(&b, "/opt/app");
	rb_end(&b, 10, 11, 3000);
	CHECK_EQ_INT(sideband_parse(b.b, b.len, 1, &r), 1);
	CHECK_EQ_INT(r.kind, SB_MMAP);
	CHECK_EQ_INT(r.pid, 10);
	CHECK_EQ_INT(r.tid, 11);
	CHECK_EQ_INT(r.ts, 3000);
	CHECK_EQ_INT(r.mmap.start, 0x400000);
	CHECK_EQ_INT(r.mmap.len, 0x3000);
	CHECK_EQ_INT(r.mmap.pgoff, 0x1000);
	CHECK_EQ_INT(r.mmap.ino, 0);
	CHECK_EQ_STR(r.mmap.filename, "/opt/app");
}

/* A name that fills its space with no NUL ends where the trailer starts. */
static void test_parse_unterminated_name(void)
{
	struct sideband_record r;
	struct rec_buf b;
	size_t name_at;

	mk_mmap2_inode(&b, "/abcdefghijklmn", 1); /* 15 chars + NUL: exactly 16 bytes */
	name_at = b.len - 16 - 16;
	b.b[name_at + 15] = 'o'; /* overwrite the NUL */
	CHECK_EQ_INT(sideband_parse(b.b, b.len, 0, &r), 1);
	CHECK_EQ_STR(r.mmap.filename, "/abcdefghijklmno");
}

static void test_parse_comm(void)
{
	struct sideband_record r;
	struct rec_buf b;

	mk_comm(&b, 300, 300, "true", true, 4000);
	CHECK_EQ_INT(sideband_parse(b.b, b.len, 0, &r), 1);
	CHECK_EQ_INT(r.kind, SB_COMM);
	CHECK_EQ_INT(r.pid, 300);
	CHECK_EQ_INT(r.tid, 300);
	CHECK_EQ_INT(r.ts, 4000);
	CHECK_EQ_STR(r.comm.comm, "true");
	CHECK(r.comm.exec);

	mk_comm(&b, 300, 301, "renamed-thr", false, 4001);
	CHECK_EQ_INT(sideband_parse(b.b, b.len, 0, &r), 1);
	CHECK_EQ_INT(r.kind, SB_COMM);
	CHECK_EQ_INT(r.tid, 301);
	CHECK_EQ_STR(r.comm.comm, "renamed-thr");
	CHECK(!r.comm.exec);

	/* Longest name the kernel sends: 15 characters. */
	mk_comm(&b, 1, 1, "fifteen-chars-x", false, 4002);
	CHECK_EQ_INT(sideband_parse(b.b, b.len, 0, &r), 1);
	CHECK_EQ_STR(r.comm.comm, "fifteen-chars-x");
}

static void test_parse_fork_exit(void)
{
	struct sideband_record r;
	struct rec_buf b;

	mk_task(&b, PERF_RECORD_FORK, 500, 400, 501, 402, 4990, 5000);
	CHECK_EQ_INT(sideband_parse(b.b, b.len, 0, &r), 1);
	CHECK_EQ_INT(r.kind, SB_FORK);
	CHECK_EQ_INT(r.pid, 500);
	CHECK_EQ_INT(r.tid, 501);
	CHECK_EQ_INT(r.task.ppid, 400);
	CHECK_EQ_INT(r.task.ptid, 402);
	CHECK_EQ_INT(r.task.time, 4990);
	CHECK_EQ_INT(r.ts, 5000);

	mk_task(&b, PERF_RECORD_EXIT, 500, 400, 500, 400, 6000, 6001);
	CHECK_EQ_INT(sideband_parse(b.b, b.len, 0, &r), 1);
	CHECK_EQ_INT(r.kind, SB_EXIT);
	CHECK_EQ_INT(r.pid, 500);
	CHECK_EQ_INT(r.tid, 500);
	CHECK_EQ_INT(r.task.ppid, 400);
	CHECK_EQ_INT(r.task.ptid, 400);
	CHECK_EQ_INT(r.task.time, 6000);
	CHECK_EQ_INT(r.ts, 6001);
}

static void test_parse_lost_other_short(void)
{
	struct sideband_record r;
	struct rec_buf b;

	mk_lost(&b, 17, 7000);
	CHECK_EQ_INT(sideband_parse(b.b, b.len, 2, &r), 1);
	CHECK_EQ_INT(r.kind, SB_LOST);
	CHECK_EQ_INT(r.lost.count, 17);
	CHECK_EQ_INT(r.ts, 7000);
	CHECK_EQ_INT(r.cpu, 2);

	/* A type not asked for is skipped, not an error. */
	rb_begin(&b, PERF_RECORD_THROTTLE, 0);
	rb_u64(&b, 1);
	rb_u64(&b, 2);
	rb_u64(&b, 3);
	rb_end(&b, 0, 0, 1);
	CHECK_EQ_INT(sideband_parse(b.b, b.len, 0, &r), 0);

	/* FORK without room for its body and trailer. */
	rb_begin(&b, PERF_RECORD_FORK, 0);
	rb_u32(&b, 1);
	rb_u32(&b, 2);
	rb_end(&b, 0, 0, 1);
	CHECK_EQ_INT(sideband_parse(b.b, b.len, 0, &r), -EBADMSG);
	CHECK_EQ_INT(sideband_parse(b.b, 4, 0, &r), -EBADMSG);
}

/* ---- the ring protocol --------------------------------------------------- */

/*
 * Five records from a tail near the end of a 512-byte ring and far past
 * the first lap, so one straddles the end: all arrive whole, in order.
 */
static void test_ring_wraps(void)
{
	const uint64_t start = 10 * RING_SIZE + 400;
	struct fake_ring *f = fake_ring_new(start);
	struct sideband_stats st = { 0 };
	struct collected c = { .fail_at = -1 };
	struct rec_buf b;
	bool wrapped = false;

	if (!f) {
		CHECK(f);
		return;
	}
	mk_comm(&b, 300, 300, "true", true, 100);
	fake_ring_put(f, b.b, b.len); /* 400..440 */
	mk_mmap2_inode(&b, "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", 101);
	wrapped = (f->meta->data_head % RING_SIZE) + b.len > RING_SIZE;
	fake_ring_put(f, b.b, b.len);
	mk_task(&b, PERF_RECORD_FORK, 301, 300, 301, 300, 103, 103);
	fake_ring_put(f, b.b, b.len);
	mk_lost(&b, 5, 104);
	fake_ring_put(f, b.b, b.len);
	mk_task(&b, PERF_RECORD_EXIT, 301, 300, 301, 300, 105, 106);
	fake_ring_put(f, b.b, b.len);
	CHECK(wrapped); /* the test is about a record across the end */
	CHECK(f->meta->data_head - start < RING_SIZE);

	CHECK_EQ_INT(sideband_ring_drain(&f->ring, f->bounce, &st, collect, &c), 5);
	CHECK_EQ_INT(f->meta->data_tail, f->meta->data_head);
	CHECK_EQ_INT(c.n, 5);
	CHECK_EQ_INT(c.r[0].kind, SB_COMM);
	CHECK_EQ_STR(c.r[0].comm.comm, "true");
	CHECK_EQ_INT(c.r[1].kind, SB_MMAP);
	CHECK_EQ_STR(c.r[1].mmap.filename, "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2");
	CHECK_EQ_INT(c.r[1].mmap.ino, 987654321);
	CHECK_EQ_INT(c.r[1].mmap.pgoff, 0x2000);
	CHECK_EQ_INT(c.r[1].ts, 101);
	CHECK_EQ_INT(c.r[2].kind, SB_FORK);
	CHECK_EQ_INT(c.r[2].pid, 301);
	CHECK_EQ_INT(c.r[2].task.ppid, 300);
	CHECK_EQ_INT(c.r[3].kind, SB_LOST);
	CHECK_EQ_INT(c.r[3].lost.count, 5);
	CHECK_EQ_INT(c.r[4].kind, SB_EXIT);
	CHECK_EQ_INT(c.r[4].ts, 106);
	for (int i = 0; i < c.n; i++)
		CHECK_EQ_INT(c.r[i].cpu, 3);

	CHECK_EQ_INT(st.records[SB_MMAP], 1);
	CHECK_EQ_INT(st.records[SB_COMM], 1);
	CHECK_EQ_INT(st.records[SB_FORK], 1);
	CHECK_EQ_INT(st.records[SB_EXIT], 1);
	CHECK_EQ_INT(st.records[SB_LOST], 1);
	CHECK_EQ_INT(st.lost, 5);

	/* Nothing new: a second drain delivers nothing and leaves the tail. */
	CHECK_EQ_INT(sideband_ring_drain(&f->ring, f->bounce, &st, collect, &c), 0);
	CHECK_EQ_INT(f->meta->data_tail, f->meta->data_head);
	fake_ring_free(f);
}

/* Unknown and truncated records are counted and stepped over. */
static void test_ring_skips(void)
{
	struct fake_ring *f = fake_ring_new(0);
	struct sideband_stats st = { 0 };
	struct collected c = { .fail_at = -1 };
	struct rec_buf b;
	uint16_t size;

	if (!f) {
		CHECK(f);
		return;
	}
	rb_begin(&b, PERF_RECORD_THROTTLE, 0);
	rb_u64(&b, 1);
	rb_u64(&b, 2);
	rb_u64(&b, 3);
	rb_end(&b, 0, 0, 1);
	fake_ring_put(f, b.b, b.len);
	rb_begin(&b, PERF_RECORD_COMM, 0); /* pid and tid, then neither name nor trailer */
	rb_u32(&b, 1);
	rb_u32(&b, 1);
	size = (uint16_t)b.len;
	memcpy(b.b + offsetof(struct perf_event_header, size), &size, sizeof(size));
	fake_ring_put(f, b.b, b.len);
	mk_comm(&b, 9, 9, "after", false, 2);
	fake_ring_put(f, b.b, b.len);

	CHECK_EQ_INT(sideband_ring_drain(&f->ring, f->bounce, &st, collect, &c), 1);
	CHECK_EQ_INT(c.n, 1);
	CHECK_EQ_STR(c.r[0].comm.comm, "after");
	CHECK_EQ_INT(st.other, 1);
	CHECK_EQ_INT(st.malformed, 1);
	CHECK_EQ_INT(f->meta->data_tail, f->meta->data_head);

	/* A header with size 0 leaves no way to the next record: drop the rest. */
	memset(&b, 0, sizeof(b));
	b.len = 16;
	fake_ring_put(f, b.b, b.len);
	mk_comm(&b, 9, 9, "lost-to-it", false, 3);
	fake_ring_put(f, b.b, b.len);
	CHECK_EQ_INT(sideband_ring_drain(&f->ring, f->bounce, &st, collect, &c), 0);
	CHECK_EQ_INT(st.malformed, 2);
	CHECK_EQ_INT(f->meta->data_tail, f->meta->data_head);
	fake_ring_free(f);
}

/* A callback error stops the drain after that record; the rest stays for the next one. */
static void test_ring_callback_error(void)
{
	struct fake_ring *f = fake_ring_new(64);
	struct sideband_stats st = { 0 };
	struct collected c = { .fail_at = 0 };
	struct rec_buf b;
	uint64_t after_first;

	if (!f) {
		CHECK(f);
		return;
	}
	mk_comm(&b, 1, 1, "one", false, 1);
	fake_ring_put(f, b.b, b.len);
	after_first = f->meta->data_head;
	mk_comm(&b, 2, 2, "two", false, 2);
	fake_ring_put(f, b.b, b.len);

	CHECK_EQ_INT(sideband_ring_drain(&f->ring, f->bounce, &st, collect, &c), -EIO);
	CHECK_EQ_INT(f->meta->data_tail, after_first);
	c.fail_at = -1;
	CHECK_EQ_INT(sideband_ring_drain(&f->ring, f->bounce, &st, collect, &c), 1);
	CHECK_EQ_INT(c.n, 2);
	CHECK_EQ_STR(c.r[1].comm.comm, "two");
	CHECK_EQ_INT(f->meta->data_tail, f->meta->data_head);
	fake_ring_free(f);
}

/* ---- live: the kernel's records of a child and a thread (root) ------------ */

struct live {
	pid_t self, child, thr_tid;
	uint64_t t0, t1;
	char true_path[PATH_MAX];
	struct stat true_st;
	bool true_on_overlay;

	uint64_t *last_ts; /* per CPU */
	int nr_cpus, backwards, child_out_of_window;
	struct sideband_record fork, comm, exit, thr_comm;
	bool have_fork, have_comm, have_exit, have_thr_comm;
	uint64_t true_mmap_ts;
	int true_mmaps, true_identity_ok;
	bool ld_mapped, libc_mapped;
};

static void live_mmap(struct live *l, const struct sideband_record *r)
{
	const char *base = strrchr(r->mmap.filename, '/');

	if (!(r->mmap.prot & PROT_EXEC))
		return;
	base = base ? base + 1 : r->mmap.filename;
	if (!strncmp(base, "ld-linux", 8))
		l->ld_mapped = true;
	if (!strcmp(base, "libc.so.6"))
		l->libc_mapped = true;
	if (strcmp(r->mmap.filename, l->true_path))
		return;
	l->true_mmaps++;
	l->true_mmap_ts = r->ts;
	if (r->mmap.ino == l->true_st.st_ino &&
	    (l->true_on_overlay || (r->mmap.maj == major(l->true_st.st_dev) &&
				    r->mmap.min == minor(l->true_st.st_dev)))) {
		l->true_identity_ok++;
	} else {
		fprintf(stderr, "true: dev %u:%u ino %llu, stat says %u:%u ino %llu\n", r->mmap.maj,
			r->mmap.min, (unsigned long long)r->mmap.ino, major(l->true_st.st_dev),
			minor(l->true_st.st_dev), (unsigned long long)l->true_st.st_ino);
	}
}

static int live_record(const struct sideband_record *r, void *ctx)
{
	struct live *l = ctx;

	if (r->cpu < 0 || r->cpu >= l->nr_cpus)
		return -ERANGE;
	if (r->ts < l->last_ts[r->cpu])
		l->backwards++;
	l->last_ts[r->cpu] = r->ts;

	if (r->kind != SB_LOST && (pid_t)r->pid == l->child) {
		if (r->ts < l->t0 || r->ts > l->t1)
			l->child_out_of_window++;
		switch (r->kind) {
		case SB_FORK:
			l->fork = *r;
			l->have_fork = true;
			break;
		case SB_COMM:
			if (r->comm.exec) {
				l->comm = *r;
				l->have_comm = true;
			}
			break;
		case SB_MMAP:
			live_mmap(l, r);
			break;
		case SB_EXIT:
			if ((pid_t)r->tid == l->child) {
				l->exit = *r;
				l->have_exit = true;
			}
			break;
		default:
			break;
		}
	}
	if (r->kind == SB_COMM && (pid_t)r->pid == l->self && (pid_t)r->tid == l->thr_tid) {
		l->thr_comm = *r;
		l->have_thr_comm = true;
	}
	return 0;
}

static void *renaming_thread(void *arg)
{
	pid_t *tid = arg;

	*tid = gettid();
	prctl(PR_SET_NAME, "renamed-thr", 0, 0, 0);
	return NULL;
}

/* What /bin/true really is: the path the kernel names, and its inode. */
static int live_find_true(struct live *l)
{
	struct statfs fs;

	if (!realpath("/bin/true", l->true_path) || stat(l->true_path, &l->true_st))
		return -errno;
	l->true_on_overlay = !statfs(l->true_path, &fs) && fs.f_type == 0x794c7630;
	return 0;
}

static void test_live(void)
{
	struct live l = { .self = getpid(), .child = -1, .thr_tid = -1 };
	struct epoll_event ev;
	struct sideband sb;
	pthread_t thr;
	bool *online = NULL;
	int nr_possible = 0, epfd, n, status = 0;

	CHECK(cpus_online(&online, &nr_possible) > 0);
	CHECK_EQ_INT(live_find_true(&l), 0);
	if (!online)
		return;
	l.nr_cpus = nr_possible;
	l.last_ts = calloc((size_t)nr_possible, sizeof(*l.last_ts));
	CHECK(l.last_ts);
	n = sideband_open(&sb, online, nr_possible, 0);
	if (n) {
		fprintf(stderr, "sideband_open: %s\n", sb.error);
		CHECK_EQ_INT(n, 0);
		free(online);
		free(l.last_ts);
		return;
	}
	epfd = epoll_create1(EPOLL_CLOEXEC);
	CHECK(epfd >= 0);
	CHECK_EQ_INT(sideband_add_to_epoll(&sb, epfd, 0x5b), 0);
	/* Whatever happened before t0 is not ours: drain it away first. */
	CHECK(sideband_drain(&sb, live_record, &l) >= 0);
	memset(l.last_ts, 0, sizeof(*l.last_ts) * (size_t)nr_possible);

	l.t0 = clock_ns(CLOCK_MONOTONIC);
	l.child = fork();
	if (l.child == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	CHECK(l.child > 0);
	CHECK_EQ_INT(waitpid(l.child, &status, 0), l.child);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK_EQ_INT(pthread_create(&thr, NULL, renaming_thread, &l.thr_tid), 0);
	CHECK_EQ_INT(pthread_join(thr, NULL), 0);
	l.t1 = clock_ns(CLOCK_MONOTONIC);

	/* The watermark of one byte must have woken the reader already. */
	CHECK(epoll_wait(epfd, &ev, 1, 2000) == 1 && ev.data.u64 == 0x5b);
	n = sideband_drain(&sb, live_record, &l);
	CHECK(n > 0);

	CHECK_EQ_INT(l.backwards, 0);
	CHECK_EQ_INT(l.child_out_of_window, 0);
	CHECK(l.have_fork);
	CHECK_EQ_INT(l.fork.tid, l.child);
	CHECK_EQ_INT(l.fork.task.ppid, l.self);
	CHECK_EQ_INT(l.fork.task.ptid, gettid());
	CHECK(l.fork.task.time >= l.t0 && l.fork.task.time <= l.t1);
	CHECK(l.have_comm);
	CHECK_EQ_STR(l.comm.comm.comm, "true");
	CHECK_EQ_INT(l.comm.tid, l.child);
	CHECK(l.true_mmaps >= 1);
	CHECK_EQ_INT(l.true_identity_ok, l.true_mmaps);
	CHECK(l.ld_mapped);
	CHECK(l.libc_mapped);
	CHECK(l.have_exit);
	CHECK_EQ_INT(l.exit.task.ppid, l.self);
	CHECK(l.exit.task.time >= l.t0 && l.exit.task.time <= l.t1);
	/* The child's life in order, whatever CPUs it ran on. */
	CHECK(l.fork.ts <= l.comm.ts);
	CHECK(l.comm.ts <= l.true_mmap_ts);
	CHECK(l.true_mmap_ts <= l.exit.ts);
	CHECK(l.have_thr_comm);
	CHECK_EQ_STR(l.thr_comm.comm.comm, "renamed-thr");
	CHECK(!l.thr_comm.comm.exec);
	CHECK(l.thr_comm.ts >= l.t0 && l.thr_comm.ts <= l.t1);
	CHECK_EQ_INT(sb.stats.lost, 0);
	fprintf(stderr, "live: %d records, /bin/true mapped %d times\n", n, l.true_mmaps);

	sideband_close(&sb);
	sideband_close(&sb); /* twice is safe */
	close(epfd);
	free(online);
	free(l.last_ts);
}

static void test_open_bad_pages(void)
{
	bool online[1] = { true };
	struct sideband sb;

	CHECK_EQ_INT(sideband_open(&sb, online, 1, 3), -EINVAL);
	CHECK(strstr(sb.error, "power of two"));
	CHECK(!sb.rings && !sb.nr_rings);
	online[0] = false;
	CHECK_EQ_INT(sideband_open(&sb, online, 1, 0), -ENODEV);
}

int main(void)
{
	RUN(test_parse_mmap2_inode);
	RUN(test_parse_mmap2_build_id_bit);
	RUN(test_parse_plain_mmap);
	RUN(test_parse_unterminated_name);
	RUN(test_parse_comm);
	RUN(test_parse_fork_exit);
	RUN(test_parse_lost_other_short);
	RUN(test_ring_wraps);
	RUN(test_ring_skips);
	RUN(test_ring_callback_error);
	RUN(test_open_bad_pages);
	if (geteuid() == 0)
		RUN(test_live);
	else
		fprintf(stderr, "skip live (not root)\n");
	return test_summary();
}
