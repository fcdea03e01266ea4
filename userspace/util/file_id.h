/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Which file, and which version of it: device and inode alone name a slot
 * that is reused once the file is deleted, so the size and the change time
 * (which every write, chmod and rename moves) are kept with them. Two
 * identities that are equal are the same file, unchanged, for all that
 * caching by identity needs.
 */
#ifndef BPFPROF_FILE_ID_H
#define BPFPROF_FILE_ID_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "hashmap.h"

struct file_id {
	uint64_t dev, ino, size;
	int64_t ctime_sec, ctime_nsec;
};

static inline struct file_id file_id_of(const struct stat *st)
{
	return (struct file_id){ (uint64_t)st->st_dev, (uint64_t)st->st_ino, (uint64_t)st->st_size,
				 (int64_t)st->st_ctim.tv_sec, (int64_t)st->st_ctim.tv_nsec };
}

static inline bool file_id_same(const struct file_id *a, const struct file_id *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->ctime_sec == b->ctime_sec && a->ctime_nsec == b->ctime_nsec;
}

/* A hash map key for the identity (the inode whole, the rest hashed). */
static inline struct hmap_key file_id_key(const struct file_id *id)
{
	return (struct hmap_key){ hash_u64(id->dev) ^ hash_u64(id->size + 0x9e3779b97f4a7c15ull) ^
					  hash_u64((uint64_t)id->ctime_sec * 1000000007ull +
						   (uint64_t)id->ctime_nsec),
				  id->ino };
}

#endif
