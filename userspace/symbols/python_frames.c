// SPDX-License-Identifier: BSD-2-Clause
/* See python_frames.h. */
#include "python_frames.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../util/hashmap.h"
#include "../util/strtab.h"
#include "../util/vec.h"

struct entry {
	uint32_t qualname, filename, basename; /* strings */
	int first_line, line;
};

struct python_frames {
	struct strtab strings;
	VEC(struct entry) entries;
	struct hmap index; /* (qualname << 32 | filename, first_line << 32 | line) -> entries */
};

struct python_frames *python_frames_new(void)
{
	return calloc(1, sizeof(struct python_frames));
}

void python_frames_free(struct python_frames *f)
{
	if (!f)
		return;
	strtab_free(&f->strings);
	vec_free(&f->entries);
	hmap_free(&f->index);
	free(f);
}

int64_t python_frames_intern(struct python_frames *f, const char *qualname, const char *filename,
			     int first_line, int line)
{
	const char *slash = strrchr(filename, '/');
	int64_t q = strtab_intern(&f->strings, qualname), n = strtab_intern(&f->strings, filename),
		b = strtab_intern(&f->strings, slash && slash[1] ? slash + 1 : filename);
	struct hmap_key key;
	uint32_t idx;

	if (q < 0 || n < 0 || b < 0)
		return -ENOMEM;
	key = (struct hmap_key){ (uint64_t)q << 32 | (uint64_t)n,
				 (uint64_t)(uint32_t)first_line << 32 | (uint32_t)line };
	if (hmap_get(&f->index, key, &idx))
		return idx;
	if (vec_push(&f->entries,
		     ((struct entry){ (uint32_t)q, (uint32_t)n, (uint32_t)b, first_line, line })) ||
	    hmap_put(&f->index, key, (uint32_t)(f->entries.len - 1)))
		return -ENOMEM;
	return (int64_t)(f->entries.len - 1);
}

bool python_frames_resolve(const struct python_frames *f, uint64_t index,
			   struct resolved_frame *out)
{
	const struct entry *e;

	if (!f || index >= f->entries.len)
		return false;
	e = &f->entries.data[index];
	memset(out, 0, sizeof(*out));
	out->count = 1;
	out->items[0].func = strtab_get(&f->strings, e->qualname);
	out->items[0].file = strtab_get(&f->strings, e->filename);
	out->items[0].line = e->line;
	out->items[0].start_line = e->first_line;
	/* The script is the resource, as a JavaScript file is for the front-end. */
	out->resource = strtab_get(&f->strings, e->basename);
	out->address = -1;
	out->symbol_address = -1;
	out->python = true;
	return true;
}

size_t python_frames_count(const struct python_frames *f)
{
	return f ? f->entries.len : 0;
}
