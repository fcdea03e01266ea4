// SPDX-License-Identifier: BSD-2-Clause
#include "jitdump.h"

#include <errno.h>
#include <string.h>

#include "../util/unaligned.h"

/* No header is this large: perf's writers emit 40 bytes. */
#define JITDUMP_HEADER_MAX 4096u

int jitdump_parse_header(const void *buf, size_t len, struct jitdump_header *out)
{
	const unsigned char *p = buf;

	if (len < 8)
		return -EAGAIN;
	/* A byte-swapped magic is a file from another machine: not ours to read. */
	if (get_u32(p) != JITDUMP_MAGIC)
		return -EINVAL;
	out->version = get_u32(p + 4);
	if (len < JITDUMP_HEADER_MIN)
		return -EAGAIN;
	out->header_size = get_u32(p + 8);
	out->elf_mach = get_u32(p + 12);
	out->pid = get_u32(p + 20);
	out->timestamp = get_u64(p + 24);
	out->flags = get_u64(p + 32);
	if (out->header_size < JITDUMP_HEADER_MIN || out->header_size > JITDUMP_HEADER_MAX)
		return -EINVAL;
	return 0;
}

int jitdump_parse_head(const void *buf, size_t len, struct jitdump_record_head *out)
{
	const unsigned char *p = buf;

	if (len < JITDUMP_RECORD_HEAD)
		return -EAGAIN;
	out->id = get_u32(p);
	out->total_size = get_u32(p + 4);
	out->timestamp = get_u64(p + 8);
	return out->total_size < JITDUMP_RECORD_HEAD ? -EINVAL : 0;
}

int jitdump_parse_load(const void *body, size_t len, uint32_t total, struct jitdump_load *out)
{
	const unsigned char *p = body, *nul;
	uint64_t room;

	if (total < JITDUMP_RECORD_HEAD + JITDUMP_LOAD_FIXED || len < JITDUMP_LOAD_FIXED)
		return -EINVAL;
	out->code_addr = get_u64(p + 16);
	out->code_size = get_u64(p + 24);
	/* The name and its NUL come before code_size bytes of code, all inside the record. */
	room = total - JITDUMP_RECORD_HEAD - JITDUMP_LOAD_FIXED;
	if (out->code_size >= room)
		return -EINVAL;
	room -= out->code_size;
	if (len - JITDUMP_LOAD_FIXED < room)
		room = len - JITDUMP_LOAD_FIXED;
	out->name = (const char *)p + JITDUMP_LOAD_FIXED;
	nul = memchr(out->name, '\0', room);
	out->name_len = nul ? (size_t)(nul - (const unsigned char *)out->name) : room;
	return 0;
}

int jitdump_parse_move(const void *body, size_t len, uint32_t total, struct jitdump_move *out)
{
	const unsigned char *p = body;

	if (total < JITDUMP_RECORD_HEAD + JITDUMP_MOVE_FIXED || len < JITDUMP_MOVE_FIXED)
		return -EINVAL;
	out->old_code_addr = get_u64(p + 16);
	out->new_code_addr = get_u64(p + 24);
	out->code_size = get_u64(p + 32);
	return 0;
}
