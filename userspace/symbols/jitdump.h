/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The records of a jitdump file (jit-PID.dump), as perf defines them in
 * tools/perf/util/jitdump.h: what `node --perf-prof` and the JVM's perf
 * agent write, one record per piece of code compiled or moved. The file is
 * a header, then records, each starting with its id, its total size and a
 * timestamp; code records carry the machine code after the name, which is
 * never read (only skipped).
 *
 * These decoders only look at bytes handed to them: a file another user
 * wrote is hostile, so every length is checked against what is there.
 */
#ifndef BPFPROF_JITDUMP_H
#define BPFPROF_JITDUMP_H

#include <stddef.h>
#include <stdint.h>

#define JITDUMP_MAGIC	    0x4A695444u /* "JiTD" in the writer's byte order */
#define JITDUMP_HEADER_MIN  40u		/* magic .. flags, version 1 */
#define JITDUMP_RECORD_HEAD 16u		/* id, total_size, timestamp */
#define JITDUMP_LOAD_FIXED  40u		/* pid, tid, vma, code_addr, code_size, code_index */
#define JITDUMP_MOVE_FIXED \
	48u /* pid, tid, vma, old_code_addr, new_code_addr, code_size, code_index */

enum jitdump_record_id {
	JITDUMP_CODE_LOAD = 0,
	JITDUMP_CODE_MOVE = 1,
	JITDUMP_CODE_DEBUG_INFO = 2,
	JITDUMP_CODE_CLOSE = 3,
	JITDUMP_CODE_UNWINDING_INFO = 4,
};

/* The first records' offset: the header's own size. */
struct jitdump_header {
	uint32_t version, header_size, elf_mach, pid;
	uint64_t timestamp, flags;
};

struct jitdump_record_head {
	uint32_t id, total_size; /* total_size includes this head */
	uint64_t timestamp;
};

struct jitdump_load {
	uint64_t code_addr, code_size;
	const char *name; /* within the bytes given, not NUL-terminated: name_len bytes */
	size_t name_len;
};

struct jitdump_move {
	uint64_t old_code_addr, new_code_addr, code_size;
};

/*
 * Decode a header from `len` bytes. 0; -EAGAIN when more bytes are needed
 * (a writer that has not written it yet); -EINVAL when it is no jitdump
 * of this host's byte order, or its size is absurd.
 */
int jitdump_parse_header(const void *buf, size_t len, struct jitdump_header *out);

/* A record's head; -EAGAIN or -EINVAL (a size below the head's own). */
int jitdump_parse_head(const void *buf, size_t len, struct jitdump_record_head *out);

/*
 * A CODE_LOAD record's body: `body` holds `len` bytes after the head (maybe
 * fewer than the record's), `total` is the record's total_size. The name
 * is the bytes up to its NUL, which must lie before the code; a name cut
 * by `len` is returned as far as it goes. -EINVAL for a record whose
 * parts do not fit in its size.
 */
int jitdump_parse_load(const void *body, size_t len, uint32_t total, struct jitdump_load *out);
int jitdump_parse_move(const void *body, size_t len, uint32_t total, struct jitdump_move *out);

#endif
