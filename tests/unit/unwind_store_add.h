/* SPDX-License-Identifier: BSD-2-Clause */
/* The unwind store's unit tests' ways to add a file by path (test_unwind_store*.c). */
#ifndef BPFPROF_TEST_UNWIND_STORE_ADD_H
#define BPFPROF_TEST_UNWIND_STORE_ADD_H

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

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

/* The rows of `path`'s table, in a store of its own (0: not loaded). */
static inline uint32_t rows_of(const char *path)
{
	const struct unwind_store_file *f;
	struct unwind_store s;
	uint32_t nrows = 0;

	unwind_store_init(&s, NULL, 1u << 20);
	f = add_path(&s, path);
	CHECK(f && f->status == UNWIND_FILE_LOADED);
	if (f && f->status == UNWIND_FILE_LOADED)
		nrows = f->info.nrows;
	unwind_store_free(&s);
	return nrows;
}

#endif
