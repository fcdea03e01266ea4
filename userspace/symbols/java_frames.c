// SPDX-License-Identifier: BSD-2-Clause
/* See java_frames.h. */
#include "java_frames.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/hashmap.h"
#include "../util/log.h"
#include "../util/strtab.h"
#include "../util/uid_owner.h"
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
	struct hmap index; /* hash of the chain's text -> entries index (chained through `next`) */
	VEC(uint32_t) next;
	size_t bytes, max_bytes, max_user_bytes;
	struct hmap by_user; /* user (folded) -> bytes of its chains */
	struct uid_owners owners;
	bool owners_read, said_over;
	int64_t over_budget_entry; /* -1 until first needed */
};

struct java_frames *java_frames_new(void)
{
	struct java_frames *f = calloc(1, sizeof(struct java_frames));

	if (f) {
		f->max_bytes = JAVA_FRAMES_MAX_BYTES;
		f->max_user_bytes = JAVA_FRAMES_USER_BYTES;
		f->over_budget_entry = -1;
	}
	return f;
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
	hmap_free(&f->by_user);
	free(f);
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h;
}

static const char *name_of(const struct hotspot_frame *fr, enum java_frames_lang lang)
{
	return fr->name[0]		  ? fr->name
	       : lang == JAVA_FRAMES_JAVA ? "[unknown Java method]"
					  : "[unknown JS function]";
}

/* Add the chain of `count` frames (outermost first: frames[n - 1 - i]), of hash h. */
static int64_t intern_new(struct java_frames *f, const struct hotspot_frame *frames, int n,
			  uint32_t count, uint64_t h, enum java_frames_lang lang)
{
	struct item it[RESOLVED_MAX_DEPTH];
	struct hmap_key key = { h, count };
	uint32_t idx, head;

	for (uint32_t i = 0; i < count; i++) {
		const struct hotspot_frame *fr = &frames[n - 1 - i];
		int64_t name = strtab_intern(&f->strings, name_of(fr, lang));
		int64_t file = fr->file[0] ? strtab_intern(&f->strings, fr->file) : UINT32_MAX;

		if (name < 0 || file < 0)
			return -ENOMEM;
		it[i] = (struct item){ (uint32_t)name, (uint32_t)file, fr->line };
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
	if (hmap_get(&f->index, key, &head))
		f->next.data[idx] = head;
	if (hmap_put(&f->index, key, idx))
		return -ENOMEM;
	return idx;
}

/* Whether entry e is the chain of `count` frames (outermost first: frames[n - 1 - i]). */
static bool same_chain(const struct java_frames *f, const struct entry *e,
		       const struct hotspot_frame *frames, int n, uint32_t count,
		       enum java_frames_lang lang)
{
	if (e->count != count || e->lang != lang)
		return false;
	for (uint32_t i = 0; i < count; i++) {
		const struct item *a = &f->items.data[e->first + i];
		const struct hotspot_frame *fr = &frames[n - 1 - i];

		if (a->line != fr->line ||
		    strcmp(strtab_get(&f->strings, a->name), name_of(fr, lang)) ||
		    (a->file == UINT32_MAX ? fr->file[0] != '\0'
					   : strcmp(strtab_get(&f->strings, a->file), fr->file)))
			return false;
	}
	return true;
}

/* Bytes a user's chains hold (an estimate: their strings counted as if each were new). */
static uint32_t user_bytes(const struct java_frames *f, uint32_t user)
{
	uint32_t b = 0;

	hmap_get(&f->by_user, (struct hmap_key){ user, 0 }, &b);
	return b;
}

/* The one entry of chains past the memory budget (counted to no one). */
static int64_t over_budget(struct java_frames *f, uint32_t user)
{
	struct hotspot_frame fr = { .line = 0 };

	if (!f->said_over) {
		f->said_over = true;
		log_info(
			"Java frames past bpfprof's memory budget for them (%u MiB, %u MiB a user; "
			"first uid %u): shown as %s",
			(unsigned)(f->max_bytes >> 20), (unsigned)(f->max_user_bytes >> 20), user,
			JAVA_FRAMES_OVER_BUDGET);
	}
	if (f->over_budget_entry >= 0)
		return f->over_budget_entry;
	snprintf(fr.name, sizeof(fr.name), "%s", JAVA_FRAMES_OVER_BUDGET);
	f->over_budget_entry = intern_new(f, &fr, 1, 1, 0, JAVA_FRAMES_JAVA);
	return f->over_budget_entry;
}

int64_t java_frames_intern_lang(struct java_frames *f, uint32_t user,
				const struct hotspot_frame *frames, int n,
				enum java_frames_lang lang)
{
	struct hmap_key key;
	uint64_t h = lang, cost;
	uint32_t idx, count;
	int64_t got;

	if (n < 1)
		return -EINVAL;
	/* Outermost first, as a resolved frame lists inlined functions; the innermost cut past the
	 * max. */
	count = n > RESOLVED_MAX_DEPTH ? RESOLVED_MAX_DEPTH : (uint32_t)n;
	cost = sizeof(struct entry) + sizeof(uint32_t) + 2 * sizeof(struct hmap_slot);
	for (uint32_t i = 0; i < count; i++) {
		const struct hotspot_frame *fr = &frames[n - 1 - i];
		const char *name = name_of(fr, lang);
		size_t nl = strlen(name), fl = strlen(fr->file);

		h = mix(mix(mix(h, hash_bytes(name, nl)), hash_bytes(fr->file, fl)),
			(uint32_t)fr->line);
		cost += sizeof(struct item) + nl + 1 + (fl ? fl + 1 : 0);
	}
	key = (struct hmap_key){ h, count };
	for (bool found = hmap_get(&f->index, key, &idx); found;) {
		if (same_chain(f, &f->entries.data[idx], frames, n, count, lang))
			return idx;
		idx = f->next.data[idx];
		found = idx != UINT32_MAX;
	}
	/* A new chain: within the budget of all, and of its user (a user's subordinate uids its).
	 */
	if (user != JAVA_FRAMES_NO_USER) {
		if (!f->owners_read) {
			f->owners_read = true;
			uid_owners_read(&f->owners, NULL);
		}
		user = uid_owner_of(&f->owners, user);
	}
	if (f->bytes + cost > f->max_bytes ||
	    (user != JAVA_FRAMES_NO_USER && user_bytes(f, user) + cost > f->max_user_bytes))
		return over_budget(f, user);
	got = intern_new(f, frames, n, count, h, lang);
	if (got < 0)
		return got;
	f->bytes += cost;
	if (user != JAVA_FRAMES_NO_USER)
		(void)hmap_put(&f->by_user, (struct hmap_key){ user, 0 },
			       user_bytes(f, user) + (uint32_t)cost);
	return got;
}

int64_t java_frames_intern_user(struct java_frames *f, uint32_t user,
				const struct hotspot_frame *frames, int n)
{
	return java_frames_intern_lang(f, user, frames, n, JAVA_FRAMES_JAVA);
}

int64_t java_frames_intern(struct java_frames *f, const struct hotspot_frame *frames, int n)
{
	return java_frames_intern_user(f, JAVA_FRAMES_NO_USER, frames, n);
}

void java_frames_set_caps(struct java_frames *f, size_t max_bytes, size_t max_user_bytes)
{
	f->max_bytes = max_bytes;
	f->max_user_bytes = max_user_bytes;
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
	out->php = e->lang == JAVA_FRAMES_PHP;
	out->javascript = !out->java && !out->php;
	out->is_js = e->lang == JAVA_FRAMES_JS;
	return true;
}

size_t java_frames_count(const struct java_frames *f)
{
	return f->entries.len;
}
