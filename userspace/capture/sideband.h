/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The kernel's perf side-band records: every executable mmap, comm change
 * (exec or rename), fork and exit of every task, system-wide. Sampling
 * alone cannot name the code of a process that lived 20 ms (it is gone
 * before /proc/PID/maps is read); these records are written by the kernel
 * as it happens, so nothing is missed short of a full ring (counted as
 * lost). One dummy software event per online CPU carries them; its clock is
 * CLOCK_MONOTONIC, the clock of bpf_ktime_get_ns(), so record times and
 * sample times compare directly.
 *
 * Records come per CPU, each CPU's in time order; records of one process
 * can sit on several CPUs (it migrates), so a consumer that needs a global
 * order sorts or merges by `ts`.
 */
#ifndef BPFPROF_SIDEBAND_H
#define BPFPROF_SIDEBAND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct perf_event_mmap_page;

#define SIDEBAND_COMM_LEN      16    /* TASK_COMM_LEN, NUL included */
#define SIDEBAND_DEFAULT_PAGES 128   /* data pages per CPU when the caller passes 0 */
#define SIDEBAND_RECORD_MAX    65536 /* header.size is a u16 */

enum sideband_kind {
	SB_MMAP, /* a new executable mapping */
	SB_COMM, /* a task's name changed: exec, or prctl(PR_SET_NAME) */
	SB_FORK, /* a task (process or thread) was created */
	SB_EXIT, /* a task ended */
	SB_LOST, /* the ring was full: `lost.count` records were dropped */
	SB_NR_KINDS,
};

struct sideband_record {
	enum sideband_kind kind;
	int cpu;	   /* whose ring held it */
	uint32_t pid, tid; /* the task it is about (for FORK/EXIT: the child / the ending task) */
	uint64_t ts;	   /* CLOCK_MONOTONIC ns, from the sample_id trailer */
	union {
		struct {
			uint64_t start, len, pgoff;
			/*
			 * Device and inode (MMAP2); all 0 for MMAP, and for an
			 * MMAP2 whose build id (never asked for) takes their place.
			 */
			uint32_t maj, min;
			uint64_t ino, ino_generation;
			uint32_t prot, flags; /* PROT_*, MAP_* */
			/* NUL-terminated; valid only during the callback. */
			const char *filename;
		} mmap;
		struct {
			char comm[SIDEBAND_COMM_LEN]; /* NUL-terminated */
			bool exec;		      /* PERF_RECORD_MISC_COMM_EXEC */
		} comm;
		/*
		 * FORK and EXIT. For FORK, ppid/ptid are the forking thread's
		 * process and thread; for EXIT, the parent process (kernel 5.7+).
		 * `time` is the body's own timestamp: same clock as `ts`, read
		 * separately (a few hundred ns apart were seen, either way).
		 */
		struct {
			uint32_t ppid, ptid;
			uint64_t time;
		} task;
		struct {
			uint64_t count;
		} lost;
	};
};

/* Called for each record; 0 to go on, a negative errno stops the drain with it. */
typedef int (*sideband_fn)(const struct sideband_record *r, void *ctx);

struct sideband_stats {
	uint64_t records[SB_NR_KINDS]; /* delivered, per kind */
	uint64_t lost;		       /* records the kernel dropped (sum of LOST counts) */
	uint64_t other;		       /* record types not asked for, skipped */
	uint64_t malformed;	       /* shorter than their type needs, skipped */
};

/* One CPU's ring: the control page and the power-of-two data area after it. */
struct sideband_ring {
	struct perf_event_mmap_page *meta;
	unsigned char *data;
	uint64_t size; /* bytes of data, a power of two */
	int fd;	       /* -1 for a ring that is only memory (tests) */
	int cpu;
	void *map; /* the whole mapping, for munmap; NULL for memory rings */
	size_t map_len;
};

struct sideband {
	struct sideband_ring *rings; /* one per online CPU, in CPU order */
	int nr_rings;
	struct sideband_stats stats;
	unsigned char *bounce; /* SIDEBAND_RECORD_MAX + 1 bytes: one record, copied out */
	char error[256];       /* why sideband_open failed, one line for the caller to log */
};

/*
 * Open the side-band on every CPU flagged in online[0, nr_cpus), with
 * `ring_pages` data pages per CPU (a power of two; 0 for the default).
 * MMAP2 records carry device and inode, never a build id in their place.
 * Returns 0 or -errno (-EACCES/-EPERM without root or CAP_PERFMON); on
 * error `sb->error` says what failed and nothing stays open.
 */
int sideband_open(struct sideband *sb, const bool *online, int nr_cpus, size_t ring_pages);

/*
 * Register every ring's fd with `epfd` for EPOLLIN, each with `data` as its
 * epoll_data (u64). The kernel wakes the reader at every record. 0 or -errno.
 */
int sideband_add_to_epoll(struct sideband *sb, int epfd, uint64_t data);

/*
 * Read every ring up to its current head, CPU after CPU, handing each
 * record to `fn`. Returns the number of records delivered or -errno (the
 * callback's error; the records before it are consumed).
 */
int sideband_drain(struct sideband *sb, sideband_fn fn, void *ctx);

/* Unmap and close; safe after a failed open and twice. */
void sideband_close(struct sideband *sb);

/*
 * The parts under sideband_drain, exposed so that tests can run them on
 * memory. sideband_ring_drain() consumes one ring from data_tail to
 * data_head (copying each record into `bounce`, SIDEBAND_RECORD_MAX + 1
 * bytes, so records that wrap the ring end read whole) and advances
 * data_tail; it returns records delivered or -errno.
 */
int sideband_ring_drain(struct sideband_ring *ring, unsigned char *bounce,
			struct sideband_stats *stats, sideband_fn fn, void *ctx);

/*
 * Decode one contiguous record of `size` bytes (header included) laid out
 * with sample_id_all and PERF_SAMPLE_TID | PERF_SAMPLE_TIME. `rec` must be
 * writable and have one spare byte past `size`: strings are terminated in
 * place. Returns 1 with `out` filled, 0 for a type not asked for, or
 * -EBADMSG when the record is too short for its type. Any bytes are safe
 * to pass; an MMAP2 carrying a build id (PERF_RECORD_MISC_MMAP_BUILD_ID)
 * parses with maj/min/ino/ino_generation 0.
 */
int sideband_parse(unsigned char *rec, size_t size, int cpu, struct sideband_record *out);

#endif
