/* SPDX-License-Identifier: BSD-2-Clause */
/* What the fuzz targets share: the input as a file, for parsers that read files. */
#ifndef BPFPROF_FUZZ_UTIL_H
#define BPFPROF_FUZZ_UTIL_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* A memory file holding the input, at offset 0; -1 on failure. */
static inline int fuzz_memfd(const uint8_t *data, size_t size)
{
	int fd = memfd_create("fuzz", MFD_CLOEXEC);
	size_t done = 0;

	if (fd < 0)
		return -1;
	while (done < size) {
		ssize_t n = write(fd, data + done, size - done);

		if (n <= 0) {
			close(fd);
			return -1;
		}
		done += (size_t)n;
	}
	lseek(fd, 0, SEEK_SET);
	return fd;
}

/* The input as a process's memory at `base`, for parsers that read memory through a callback. */
struct fuzz_image {
	const uint8_t *data;
	size_t size;
	uint64_t base;
};

/* Reads of a fuzz_image (`ctx`): 0, or -EFAULT outside it. */
static inline int fuzz_read_image(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct fuzz_image *img = ctx;

	if (addr < img->base || addr - img->base > img->size ||
	    len > img->size - (addr - img->base))
		return -EFAULT;
	memcpy(buf, img->data + (addr - img->base), len);
	return 0;
}

#endif
