// SPDX-License-Identifier: BSD-2-Clause
/*
 * A CPython line table as any process may fake it: the first byte picks
 * the format (2.7's and 3.6's co_lnotab, 3.10's co_linetable, 3.11's
 * location table), the next four the first line, the rest is the table.
 * The index (lang/python_linetable.h) must answer what the whole walk
 * does, for units in and past the table.
 */
#include <stdlib.h>
#include <string.h>

#include "lang/python_linetable.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct py_line_index x;
	enum py_line_format fmt;
	int32_t first;
	uint8_t *table;
	size_t len;

	if (size < 5)
		return 0;
	fmt = (enum py_line_format)(data[0] % 4);
	memcpy(&first, data + 1, 4);
	len = size - 5;
	/* Its own allocation: a read past the table is ASan's to tell. */
	table = malloc(len ? len : 1);
	if (!table)
		return 0;
	memcpy(table, data + 5, len);
	if (py_line_index_build_format(&x, fmt, table, len, first)) {
		free(table);
		return 0;
	}
	for (int64_t unit = -1; unit < (int64_t)x.end_unit + 3; unit += 1 + unit / 7) {
		if (python_line_of_format(fmt, table, len, first, unit) !=
		    py_line_index_lookup(&x, unit))
			abort();
	}
	(void)py_line_index_lookup(&x, INT64_MAX);
	py_line_index_free(&x);
	free(table);
	return 0;
}
