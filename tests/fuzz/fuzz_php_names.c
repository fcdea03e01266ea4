// SPDX-License-Identifier: BSD-2-Clause
/*
 * A PHP process's memory as any process may fake it: the input is the
 * memory, read as PHP 8.2's layout; a zend_function named at several of
 * its offsets (lang/php_names.h: its name, class, file, each a zend_string
 * of any length, pointing anywhere), and the input's text read as the
 * version after "PHP/" (lang/php_layout.h).
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "lang/php_layout.h"
#include "lang/php_names.h"

#define BASE 0x100000ull

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct php_name_layout *names;
	struct fuzz_image img = { data, size, BASE };
	struct php_function fn;
	struct php_layout frames;

	if (!names && !php_layout_for(0x080200, &frames, &names))
		abort();
	php_version_parse((const char *)data, size);
	for (size_t off = 0; off < size && off < 512; off += 8) {
		php_name_function(names, fuzz_read_image, &img, BASE + off, &fn);
		/* What the profile gets: NUL-ended, no control byte. */
		for (const char *s = fn.name; *s; s++)
			if ((unsigned char)*s < 0x20)
				abort();
		if (!memchr(fn.file, '\0', sizeof(fn.file)))
			abort();
	}
	return 0;
}
