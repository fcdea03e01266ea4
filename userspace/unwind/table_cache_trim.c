// SPDX-License-Identifier: BSD-2-Clause
/* See table_cache_trim.h: the table cache's bounds (table_cache.h). */
#include "table_cache_trim.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/owned_dir.h"

/*
 * Whether `name` is one entry_name makes (trims delete nothing else), or
 * one of version 1's ("BUILDID-SIZE.ut", never read now: the LRU deletes it).
 */
static bool entry_name_matches(const char *name)
{
	size_t hex = strspn(name, "0123456789abcdef"), groups = 0;

	if (hex < 2 || hex > 2 * ELF_BUILD_ID_MAX || hex % 2)
		return false;
	name += hex;
	while (*name == '-') {
		size_t n = strspn(name + 1, "0123456789abcdef");

		if (n < 1 || n > 16)
			return false;
		name += 1 + n;
		groups++;
	}
	return (groups == 1 || groups == 3) && !strcmp(name, ".ut");
}

/* A user's class ("u<uid>") as a key of user_kib; false for the system's. */
bool table_cache_user_class(const char *cls, struct hmap_key *key)
{
	char *end;
	unsigned long uid;

	if (cls[0] != 'u' || !cls[1])
		return false;
	uid = strtoul(cls + 1, &end, 10);
	*key = (struct hmap_key){ uid, 0 };
	return !*end && uid <= UINT32_MAX;
}

/*
 * A listing of `dir` of its own: a dup() would share (and leave at the end)
 * the offset of `dir`, and the next listing would find nothing.
 */
static DIR *list_dir(int dir)
{
	int fd = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;

	if (!d && fd >= 0)
		close(fd);
	return d;
}

/* An entry met by a trim. */
struct tc_entry {
	int64_t mtime_ns;
	uint64_t bytes;
	uint32_t cls; /* index into the trim's classes */
	char name[TC_NAME_MAX];
};

struct tc_class {
	char name[16];
	uint64_t bytes;
	uint64_t bytes_to; /* what a trim leaves of it */
	int dir;
};

/* The entries of `cls` (fd `dir`) appended to *entries (*n of them, room for max). */
static void list_class(int dir, uint32_t cls, struct tc_entry *entries, size_t *n, size_t max,
		       uint64_t *bytes)
{
	DIR *d = list_dir(dir);
	struct dirent *de;

	if (!d)
		return;
	while (*n < max && (de = readdir(d))) {
		struct stat st;

		if (!entry_name_matches(de->d_name) ||
		    fstatat(dir, de->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode) ||
		    strlen(de->d_name) >= sizeof(entries->name))
			continue;
		entries[*n] = (struct tc_entry){
			.mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec,
			.bytes = (uint64_t)st.st_size,
			.cls = cls,
		};
		strcpy(entries[*n].name, de->d_name);
		*bytes += (uint64_t)st.st_size;
		(*n)++;
	}
	closedir(d);
}

static int older_first(const void *a, const void *b)
{
	const struct tc_entry *x = a, *y = b;

	return x->mtime_ns < y->mtime_ns ? -1 : x->mtime_ns > y->mtime_ns;
}

/* Whether `name` is a class directory's: "system" or "u" and a uid. */
static bool class_name_matches(const char *name)
{
	size_t digits = strspn(name + 1, "0123456789");

	return !strcmp(name, "system") ||
	       (name[0] == 'u' && digits >= 1 && digits <= 10 && !name[1 + digits]);
}

void table_cache_trim(struct table_cache *c)
{
	table_cache_trim_to(c, 8);
}

/* Down to eighths/8 of each bound passed, the least recently used first. */
void table_cache_trim_to(struct table_cache *c, unsigned eighths)
{
	struct tc_class classes[64];
	struct tc_entry *entries;
	size_t n = 0, ncls = 0;
	uint64_t total = 0, total_to;
	struct dirent *de;
	DIR *d;

	if (c->dir < 0)
		return;
	entries = calloc(TABLE_CACHE_MAX_SCAN, sizeof(*entries));
	d = list_dir(c->dir);
	if (!entries || !d) {
		if (d)
			closedir(d);
		free(entries);
		return;
	}
	/* Classes past the 64th wait for a later trim: only a few dozen users build here. */
	while (ncls < 64 && (de = readdir(d))) {
		int dir;

		if (!class_name_matches(de->d_name) || strlen(de->d_name) >= sizeof(classes->name))
			continue;
		dir = owned_dir_at(c->dir, de->d_name, false);
		if (dir < 0)
			continue;
		classes[ncls] = (struct tc_class){ .dir = dir };
		strcpy(classes[ncls].name, de->d_name);
		list_class(dir, (uint32_t)ncls, entries, &n, TABLE_CACHE_MAX_SCAN,
			   &classes[ncls].bytes);
		total += classes[ncls].bytes;
		ncls++;
	}
	closedir(d);
	qsort(entries, n, sizeof(*entries), older_first);
	total_to = total > c->max_bytes ? c->max_bytes / 8 * eighths : c->max_bytes;
	for (size_t i = 0; i < ncls; i++)
		classes[i].bytes_to = classes[i].bytes > c->max_bytes / 4
					      ? c->max_bytes / 4 / 8 * eighths
					      : c->max_bytes / 4;
	/* Oldest first: each that is past a bound, the store's or its class's, goes. */
	for (size_t i = 0; i < n; i++) {
		struct tc_class *cl = &classes[entries[i].cls];
		bool user = strcmp(cl->name, "system");

		if (total <= total_to && (!user || cl->bytes <= cl->bytes_to))
			continue;
		if (unlinkat(cl->dir, entries[i].name, 0))
			continue;
		total -= entries[i].bytes;
		cl->bytes -= entries[i].bytes;
		c->trimmed++;
	}
	hmap_free(&c->user_kib);
	for (size_t i = 0; i < ncls; i++) {
		struct hmap_key key;

		if (table_cache_user_class(classes[i].name, &key))
			(void)hmap_put(&c->user_kib, key,
				       (uint32_t)((classes[i].bytes + 1023) / 1024));
		close(classes[i].dir);
	}
	c->total_bytes = total;
	free(entries);
}
