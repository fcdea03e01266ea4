/* SPDX-License-Identifier: BSD-2-Clause */
/* Writing a small fixture file in the unit tests. */
#ifndef BPFPROF_TEST_WRITE_FILE_H
#define BPFPROF_TEST_WRITE_FILE_H

#include <stdio.h>

#include "test.h"

/* `text` as the whole of `path` (created or emptied); a failure is a failed check. */
static inline void write_file_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	CHECK(f != NULL);
	if (!f)
		return;
	fputs(text, f);
	CHECK_EQ_INT(fclose(f), 0);
}

#endif
