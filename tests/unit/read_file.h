/* SPDX-License-Identifier: BSD-2-Clause */
/* Reading a whole output file back in the unit tests: gzip or plain. */
#ifndef BPFPROF_TEST_READ_FILE_H
#define BPFPROF_TEST_READ_FILE_H

#include <stdlib.h>
#include <zlib.h>

static inline char *read_all_gz(const char *path, size_t *len)
{
	/* gzread passes plain files through unchanged, so this reads both kinds. */
	gzFile gz = gzopen(path, "rb");
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap + 1);
	int r = 0;

	if (!gz || !buf) {
		free(buf);
		if (gz)
			gzclose(gz);
		return NULL;
	}
	while ((r = gzread(gz, buf + n, (unsigned)(cap - n))) > 0) {
		n += (size_t)r;
		if (n == cap) {
			char *nb = realloc(buf, 2 * cap + 1);

			if (!nb) {
				r = -1;
				break;
			}
			buf = nb;
			cap *= 2;
		}
	}
	gzclose(gz);
	if (r < 0) {
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	*len = n;
	return buf;
}

#endif
