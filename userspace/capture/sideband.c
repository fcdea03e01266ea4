// SPDX-License-Identifier: BSD-2-Clause
#include "sideband.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../util/unaligned.h"
#include "../util/log.h"

/* sample_id_all with PERF_SAMPLE_TID | PERF_SAMPLE_TIME: { u32 pid, tid; u64 time; } at the end. */
#define SAMPLE_ID_SIZE 16

/* Where each record's variable part starts, header included. */
#define MMAP_FIXED_SIZE	 40 /* header, pid, tid, addr, len, pgoff */
#define MMAP2_FIXED_SIZE 72 /* ... maj, min, ino, ino_generation; prot, flags */
#define COMM_FIXED_SIZE	 16 /* header, pid, tid */
#define TASK_BODY_SIZE	 32 /* header, pid, ppid, tid, ptid, time */
#define LOST_BODY_SIZE	 24 /* header, id, lost */

static bool wanted_type(uint32_t type)
{
	switch (type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
	case PERF_RECORD_COMM:
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
	case PERF_RECORD_LOST:
		return true;
	default:
		return false;
	}
}

static size_t fixed_size(uint32_t type)
{
	switch (type) {
	case PERF_RECORD_MMAP:
		return MMAP_FIXED_SIZE;
	case PERF_RECORD_MMAP2:
		return MMAP2_FIXED_SIZE;
	case PERF_RECORD_COMM:
		return COMM_FIXED_SIZE;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		return TASK_BODY_SIZE;
	default:
		return LOST_BODY_SIZE;
	}
}

static void parse_mmap(unsigned char *rec, const struct perf_event_header *h, size_t body_end,
		       struct sideband_record *out)
{
	size_t name_at = h->type == PERF_RECORD_MMAP2 ? MMAP2_FIXED_SIZE : MMAP_FIXED_SIZE;

	out->kind = SB_MMAP;
	out->mmap.start = get_u64(rec + 16);
	out->mmap.len = get_u64(rec + 24);
	out->mmap.pgoff = get_u64(rec + 32);
	if (h->type == PERF_RECORD_MMAP2) {
		/*
		 * With PERF_RECORD_MISC_MMAP_BUILD_ID a build id overlays
		 * maj..ino_generation (never asked for); they stay 0 then.
		 */
		if (!(h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID)) {
			out->mmap.maj = get_u32(rec + 40);
			out->mmap.min = get_u32(rec + 44);
			out->mmap.ino = get_u64(rec + 48);
			out->mmap.ino_generation = get_u64(rec + 56);
		}
		out->mmap.prot = get_u32(rec + 64);
		out->mmap.flags = get_u32(rec + 68);
	}
	/*
	 * The kernel pads the name with NULs, but a NUL where the trailer
	 * starts (already read) bounds it whatever the record holds.
	 */
	rec[body_end] = '\0';
	out->mmap.filename = (const char *)rec + name_at;
}

int sideband_parse(unsigned char *rec, size_t size, int cpu, struct sideband_record *out)
{
	struct perf_event_header h;
	uint32_t trailer_pid, trailer_tid;
	size_t body_end;

	if (size < sizeof(h))
		return -EBADMSG;
	memcpy(&h, rec, sizeof(h));
	if (!wanted_type(h.type))
		return 0;
	if (size < fixed_size(h.type) + SAMPLE_ID_SIZE)
		return -EBADMSG;
	body_end = size - SAMPLE_ID_SIZE;
	trailer_pid = get_u32(rec + body_end);
	trailer_tid = get_u32(rec + body_end + 4);

	memset(out, 0, sizeof(*out));
	out->cpu = cpu;
	out->ts = get_u64(rec + body_end + 8);
	/* Every type but LOST names its task in the body, right after the header. */
	out->pid = get_u32(rec + 8);
	out->tid = get_u32(rec + 12);

	switch (h.type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		parse_mmap(rec, &h, body_end, out);
		break;
	case PERF_RECORD_COMM: {
		size_t room = body_end - COMM_FIXED_SIZE;
		size_t n = strnlen((const char *)rec + COMM_FIXED_SIZE,
				   room < SIDEBAND_COMM_LEN - 1 ? room : SIDEBAND_COMM_LEN - 1);

		out->kind = SB_COMM;
		memcpy(out->comm.comm, rec + COMM_FIXED_SIZE, n);
		out->comm.exec = h.misc & PERF_RECORD_MISC_COMM_EXEC;
		break;
	}
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		/* { u32 pid, ppid; u32 tid, ptid; u64 time; } */
		out->kind = h.type == PERF_RECORD_FORK ? SB_FORK : SB_EXIT;
		out->task.ppid = get_u32(rec + 12);
		out->tid = get_u32(rec + 16);
		out->task.ptid = get_u32(rec + 20);
		out->task.time = get_u64(rec + 24);
		break;
	default: /* PERF_RECORD_LOST: { u64 id; u64 lost; } */
		out->kind = SB_LOST;
		out->pid = trailer_pid;
		out->tid = trailer_tid;
		out->lost.count = get_u64(rec + 16);
		break;
	}
	return 1;
}

/* Copy `len` bytes at ring position `pos` out, in two parts when they wrap the end. */
static void ring_copy(const struct sideband_ring *ring, uint64_t pos, void *dst, size_t len)
{
	size_t off = (size_t)(pos & (ring->size - 1));
	size_t first = len < ring->size - off ? len : (size_t)(ring->size - off);

	memcpy(dst, ring->data + off, first);
	memcpy((unsigned char *)dst + first, ring->data, len - first);
}

static void account(struct sideband_stats *stats, const struct sideband_record *r)
{
	stats->records[r->kind]++;
	if (r->kind == SB_LOST)
		stats->lost += r->lost.count;
}

int sideband_ring_drain(struct sideband_ring *ring, unsigned char *bounce,
			struct sideband_stats *stats, sideband_fn fn, void *ctx)
{
	/* Acquire: the records before head must be visible before we read them. */
	uint64_t head = __atomic_load_n(&ring->meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = ring->meta->data_tail; /* only this reader writes it */
	int delivered = 0;

	while (tail < head) {
		struct sideband_record rec;
		struct perf_event_header h;
		int ret;

		if (head - tail < sizeof(h)) {
			stats->malformed++;
			tail = head;
			break;
		}
		ring_copy(ring, tail, &h, sizeof(h));
		if (h.size < sizeof(h) || h.size > head - tail) {
			/* Cannot find the next record: give up on what is there. */
			stats->malformed++;
			tail = head;
			break;
		}
		ring_copy(ring, tail, bounce, h.size);
		tail += h.size;
		/*
		 * Release: our reads of the record are done before the kernel
		 * may overwrite it. Freed before the callback, which sees the copy.
		 */
		__atomic_store_n(&ring->meta->data_tail, tail, __ATOMIC_RELEASE);

		ret = sideband_parse(bounce, h.size, ring->cpu, &rec);
		if (ret < 0) {
			stats->malformed++;
			continue;
		}
		if (ret == 0) {
			stats->other++;
			continue;
		}
		account(stats, &rec);
		delivered++;
		ret = fn(&rec, ctx);
		if (ret < 0)
			return ret;
	}
	__atomic_store_n(&ring->meta->data_tail, tail, __ATOMIC_RELEASE);
	return delivered;
}

int sideband_drain(struct sideband *sb, sideband_fn fn, void *ctx)
{
	int total = 0;

	for (int i = 0; i < sb->nr_rings; i++) {
		int n = sideband_ring_drain(&sb->rings[i], sb->bounce, &sb->stats, fn, ctx);

		if (n < 0)
			return n;
		total += n;
	}
	return total;
}

static int open_dummy(int cpu)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_DUMMY,
		.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME,
		.sample_id_all = 1,
		.mmap = 1,  /* without mmap_data: executable mappings only */
		.mmap2 = 1, /* device and inode; no attr.build_id, which would replace them */
		.comm = 1,
		.comm_exec = 1,
		.task = 1,
		.use_clockid = 1,
		.clockid = CLOCK_MONOTONIC,
		/*
		 * wakeup_events counts only PERF_RECORD_SAMPLE, which a dummy
		 * event never writes; a 1-byte watermark wakes at every record.
		 */
		.watermark = 1,
		.wakeup_watermark = 1,
	};
	int fd = (int)syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

static int read_paranoid(void)
{
	int level = -100;
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");

	if (f) {
		if (fscanf(f, "%d", &level) != 1)
			level = -100;
		fclose(f);
	}
	return level;
}

static int fail(struct sideband *sb, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct sideband *sb, int err, const char *fmt, ...)
{
	char what[96]; /* leaves room for the reason and the hint */
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	sideband_close(sb);
	if (err == -EACCES || err == -EPERM)
		snprintf(sb->error, sizeof(sb->error),
			 "%s: %s (needs root or CAP_PERFMON; kernel.perf_event_paranoid is %d)",
			 what, strerror(-err), read_paranoid());
	else
		snprintf(sb->error, sizeof(sb->error), "%s: %s", what, strerror(-err));
	return err;
}

static int map_ring(struct sideband_ring *ring, size_t pages, size_t page)
{
	struct perf_event_mmap_page *meta;

	ring->map_len = (pages + 1) * page;
	ring->map = mmap(NULL, ring->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, ring->fd, 0);
	if (ring->map == MAP_FAILED) {
		ring->map = NULL;
		return -errno;
	}
	meta = ring->map;
	ring->meta = meta;
	/* data_offset/data_size exist since Linux 4.1; before, data follows the first page. */
	ring->data = (unsigned char *)ring->map + (meta->data_offset ? meta->data_offset : page);
	ring->size = meta->data_size ? meta->data_size : pages * page;
	return 0;
}

int sideband_open(struct sideband *sb, const bool *online, int nr_cpus, size_t ring_pages)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	int nr_online = 0;

	memset(sb, 0, sizeof(*sb));
	if (!ring_pages)
		ring_pages = SIDEBAND_DEFAULT_PAGES;
	if (ring_pages & (ring_pages - 1))
		return fail(sb, -EINVAL, "side-band ring of %zu pages (not a power of two)",
			    ring_pages);
	for (int cpu = 0; cpu < nr_cpus; cpu++)
		nr_online += online[cpu];
	if (!nr_online)
		return fail(sb, -ENODEV, "no online CPU to open the side-band on");
	sb->rings = calloc((size_t)nr_online, sizeof(*sb->rings));
	sb->bounce = malloc(SIDEBAND_RECORD_MAX + 1);
	if (!sb->rings || !sb->bounce)
		return fail(sb, -ENOMEM, "side-band rings");

	for (int cpu = 0; cpu < nr_cpus; cpu++) {
		struct sideband_ring *ring = &sb->rings[sb->nr_rings];
		int fd, err;

		if (!online[cpu])
			continue;
		fd = open_dummy(cpu);
		if (fd == -ENODEV) /* went offline meanwhile */
			continue;
		if (fd < 0)
			return fail(sb, fd, "cannot open the side-band perf event on CPU %d", cpu);
		ring->fd = fd;
		ring->cpu = cpu;
		sb->nr_rings++;
		err = map_ring(ring, ring_pages, page);
		if (err)
			return fail(sb, err, "cannot map the %zu KiB side-band ring of CPU %d",
				    (ring_pages + 1) * page / 1024, cpu);
	}
	if (!sb->nr_rings)
		return fail(sb, -ENODEV, "every CPU went offline while opening the side-band");
	log_debug("side-band on %d CPUs, %zu KiB each", sb->nr_rings, ring_pages * page / 1024);
	return 0;
}

int sideband_add_to_epoll(struct sideband *sb, int epfd, uint64_t data)
{
	for (int i = 0; i < sb->nr_rings; i++) {
		struct epoll_event ev = { .events = EPOLLIN, .data.u64 = data };

		if (epoll_ctl(epfd, EPOLL_CTL_ADD, sb->rings[i].fd, &ev))
			return -errno;
	}
	return 0;
}

void sideband_close(struct sideband *sb)
{
	for (int i = 0; sb->rings && i < sb->nr_rings; i++) {
		if (sb->rings[i].map)
			munmap(sb->rings[i].map, sb->rings[i].map_len);
		if (sb->rings[i].fd >= 0)
			close(sb->rings[i].fd);
	}
	free(sb->rings);
	free(sb->bounce);
	sb->rings = NULL;
	sb->bounce = NULL;
	sb->nr_rings = 0;
}
