// SPDX-License-Identifier: BSD-2-Clause
/* See java_frames.h. */
#include "java_frames.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../util/hashmap.h"
#include "../util/strtab.h"
#include "../util/vec.h"

struct item {
	uint32_t name, file; /* strings; file UINT32_MAX: none */
	int line;
};

struct entry {
	uint32_t first; /* in items, outermost first */
	uint32_t count;
	enum java_frames_lang lang;
};

struct java_frames {
	struct strtab strings;
	VEC(struct item) items;
	VEC(struct entry) entries;
	struct hmap index; /* hash of the chain -> entries index (chained through `next`) */
	VEC(uint32_t) next;
};

struct java_frames *java_frames_new(void)
{
	return calloc(1, sizeof(struct java_frames));
}

void java_frames_free(struct java_frames *f)
{
	if (!f)
		return;
	strtab_free(&f->strings);
	vec_free(&f->items);
	vec_free(&f->entries);
	vec_free(&f->next);
	hmap_free(&f->index);
	free(f);
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h;
}

static bool same_chain(const struct java_frames *f, const struct entry *e, const struct item *it,
		       uint32_t n, enum java_frames_lang lang)
{
	if (e->count != n || e->lang != lang)
		return false;
	for (uint32_t i = 0; i < n; i++) {
		const struct item *a = &f->items.data[e->first + i];

		if (a->name != it[i].name || a->file != it[i].file || a->line != it[i].line)
			return false;
	}
	return true;
}

int64_t java_frames_intern(struct java_frames *f, const struct hotspot_frame *frames, int n)
{
	return java_frames_intern_lang(f, frames, n, JAVA_FRAMES_JAVA);
}

int64_t java_frames_intern_lang(struct java_frames *f, const struct hotspot_frame *frames, int n,
				enum java_frames_lang lang)
{
	struct item it[RESOLVED_MAX_DEPTH];
	struct hmap_key key;
	uint64_t h = lang;
	uint32_t idx, count;

	if (n < 1)
		return -EINVAL;
	/* Outermost first, as a resolved frame lists inlined functions; the innermost cut past the
	 * max. */
	count = n > RESOLVED_MAX_DEPTH ? RESOLVED_MAX_DEPTH : (uint32_t)n;
	for (uint32_t i = 0; i < count; i++) {
		const struct hotspot_frame *fr = &frames[n - 1 - i];
		int64_t name = strtab_intern(&f->strings, fr->name[0] ? fr->name
							  : lang == JAVA_FRAMES_JAVA
								  ? "[unknown Java method]"
								  : "[unknown JS function]");
		int64_t file = fr->file[0] ? strtab_intern(&f->strings, fr->file) : UINT32_MAX;

		if (name < 0 || file < 0)
			return -ENOMEM;
		it[i] = (struct item){ (uint32_t)name, (uint32_t)file, fr->line };
		h = mix(mix(mix(h, it[i].name), it[i].file), (uint32_t)it[i].line);
	}
	key = (struct hmap_key){ h, count };
	for (bool found = hmap_get(&f->index, key, &idx); found;) {
		if (same_chain(f, &f->entries.data[idx], it, count, lang))
			return idx;
		idx = f->next.data[idx];
		found = idx != UINT32_MAX;
	}
	if (vec_reserve(&f->items, count) || vec_push(&f->next, UINT32_MAX))
		return -ENOMEM;
	idx = (uint32_t)f->entries.len;
	if (vec_push(&f->entries, ((struct entry){ (uint32_t)f->items.len, count, lang }))) {
		f->next.len--;
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < count; i++)
		f->items.data[f->items.len++] = it[i];
	/* Chained behind an entry of the same hash, newest first. */
	{
		uint32_t head;

		if (hmap_get(&f->index, key, &head))
			f->next.data[idx] = head;
		if (hmap_put(&f->index, key, idx))
			return -ENOMEM;
	}
	return idx;
}

bool java_frames_resolve(const struct java_frames *f, uint64_t index, struct resolved_frame *out)
{
	const struct entry *e;

	if (!f || index >= f->entries.len)
		return false;
	e = &f->entries.data[index];
	memset(out, 0, sizeof(*out));
	out->count = e->count;
	for (uint32_t i = 0; i < e->count; i++) {
		const struct item *it = &f->items.data[e->first + i];

		out->items[i].func = strtab_get(&f->strings, it->name);
		out->items[i].file =
			it->file == UINT32_MAX ? NULL : strtab_get(&f->strings, it->file);
		out->items[i].line = it->line;
	}
	/* The outermost method's source file is the resource, as a script's is. */
	out->resource = out->items[0].file;
	out->address = -1;
	out->symbol_address = -1;
	out->java = e->lang == JAVA_FRAMES_JAVA;
	out->javascript = !out->java;
	out->is_js = e->lang == JAVA_FRAMES_JS;
	return true;
}

size_t java_frames_count(const struct java_frames *f)
{
	return f->entries.len;
}
