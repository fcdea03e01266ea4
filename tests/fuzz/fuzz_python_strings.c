// SPDX-License-Identifier: BSD-2-Clause
/*
 * A CPython str as any process may fake it: the first byte picks the
 * version's layout (2.7's byte strings, 3.6-3.11's and 3.12+'s compact
 * unicode), then the object's header and its characters. What comes out
 * (lang/python_strings.h) is NUL-terminated UTF-8, well-formed whatever
 * came in, and no longer than the cap allows.
 */
#include <stdlib.h>
#include <string.h>

#include "lang/python_strings.h"

#define CAP 64

/* Whether `s` is well-formed UTF-8 with no NUL before its end. */
static int well_formed(const unsigned char *s)
{
	while (*s) {
		int more = *s < 0x80		 ? 0
			   : (*s & 0xe0) == 0xc0 ? 1
			   : (*s & 0xf0) == 0xe0 ? 2
			   : (*s & 0xf8) == 0xf0 ? 3
						 : -1;

		if (more < 0)
			return 0;
		s++;
		for (int k = 0; k < more; k++, s++)
			if ((*s & 0xc0) != 0x80)
				return 0;
	}
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint32_t versions[] = { 0x02070000, 0x03060000, 0x030b0000, 0x030c0000 };
	const struct python_code_layout *l;
	struct py_str_shape shape;
	uint8_t *copy;
	char *out;

	if (size < 1)
		return 0;
	l = python_code_layout_for(versions[data[0] % 4]);
	if (!l || size - 1 < py_str_header_size(l))
		return 0;
	copy = malloc(size - 1);
	if (!copy)
		return 0;
	memcpy(copy, data + 1, size - 1);
	if (py_str_shape_of(l, copy, CAP, &shape)) {
		if (shape.chars > CAP || (shape.unit != 1 && shape.unit != 2 && shape.unit != 4))
			abort();
		/* The characters where the object has them, as many as there are. */
		if (shape.data + shape.chars * shape.unit <= size - 1) {
			out = py_str_to_utf8(&shape, copy + shape.data);
			if (out &&
			    (!well_formed((unsigned char *)out) || strlen(out) > shape.chars * 4))
				abort();
			free(out);
		}
	}
	free(copy);
	return 0;
}
