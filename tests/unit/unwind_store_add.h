/* SPDX-License-Identifier: BSD-2-Clause */
/* The unwind store's unit tests' ways to add a file by path (test_unwind_store*.c). */
#ifndef BPFPROF_TEST_UNWIND_STORE_ADD_H
#define BPFPROF_TEST_UNWIND_STORE_ADD_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "symbols/proc_maps.h"
#include "test.h"
#include "unwind/table_store.h"

/* Add `path` as the kernel would name it (its st_dev in the kernel's encoding, its inode). */
static inline const struct unwind_store_file *add_path(struct unwind_store *s, const char *path)
{
	const struct unwind_store_file *f;
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	CHECK(fd >= 0);
	if (fd < 0 || fstat(fd, &st)) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	f = unwind_store_add(s, unwind_kernel_dev(major(st.st_dev), minor(st.st_dev)), st.st_ino,
			     fd);
	close(fd);
	return f;
}

/*
 * Add `path` as a process of user `uid` meets it: mapped executable here,
 * its line of /proc/self/maps added with unwind_store_add_mapping (the
 * rows charged to `uid`). NULL when it cannot be mapped so (a noexec mount).
 */
static inline const struct unwind_store_file *map_path_as(struct unwind_store *s, const char *path,
							  uint32_t uid)
{
	const struct unwind_store_file *f = NULL;
	map_entries_t maps = { 0 };
	struct stat st;
	void *p = MAP_FAILED;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	CHECK(fd >= 0);
	if (fd >= 0 && !fstat(fd, &st))
		p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	if (fd >= 0)
		close(fd);
	if (p == MAP_FAILED)
		return NULL;
	if (!proc_maps_read("/proc", getpid(), &maps))
		for (size_t i = 0; i < maps.len && !f; i++)
			if (maps.data[i].start == (uintptr_t)p)
				f = unwind_store_add_mapping(s, (uint32_t)getpid(), uid,
							     &maps.data[i]);
	map_entries_free(&maps);
	munmap(p, (size_t)st.st_size);
	return f;
}

/* The slots of `path`'s table, in a store of its own (0: not loaded). */
static inline uint32_t slots_of(const char *path)
{
	const struct unwind_store_file *f;
	struct unwind_store s;
	uint32_t nslots = 0;

	unwind_store_init(&s, NULL, 1u << 20);
	f = add_path(&s, path);
	CHECK(f && f->status == UNWIND_FILE_LOADED);
	if (f && f->status == UNWIND_FILE_LOADED)
		nslots = f->nslots;
	unwind_store_free(&s);
	return nslots;
}

/* A copy of `from` at a new path (`path`: a mkstemp template) any user may write: no package's. */
static inline void copy_for_anyone(const char *from, char *path)
{
	char cmd[512];
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
	snprintf(cmd, sizeof(cmd), "cp %s %s && chmod 0777 %s", from, path, path);
	CHECK_EQ_INT(system(cmd), 0);
}

/* A hand-over that takes the file (nothing built: completed by the test). */
static inline int defer_take(void *ctx, const struct unwind_store_file *f, int fd, const char *path,
			     const char *link, bool stale)
{
	(void)ctx, (void)f, (void)path, (void)link, (void)stale;
	close(fd);
	return 0;
}

/* `f`'s entry, to set when its table was loaded (the fake clock's). */
static inline struct unwind_store_file *entry_of(struct unwind_store *s,
						 const struct unwind_store_file *f)
{
	return &s->files.data[f - s->files.data];
}

#endif
