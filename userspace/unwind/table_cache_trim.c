// SPDX-License-Identifier: BSD-2-Clause
/* See table_cache_trim.h: the table cache's bounds (table_cache.h). */
#include "table_cache_trim.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
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
	uint64_t bytes; /* on disk: its blocks */
	uint32_t cls;	/* index into the trim's classes */
	char name[TC_NAME_MAX];
};

struct tc_class {
	char name[16];
	uint64_t bytes;
	uint64_t bytes_to; /* what a trim leaves of it */
	size_t entries;
	int dir;
};

/*
 * The oldest entries a listing met, at most max of them (a max-heap on
 * mtime: the newest of them on top, the first to give way): what a pass of
 * the trim may delete, in memory bounded however many entries there are.
 */
struct tc_oldest {
	struct tc_entry *e;
	size_t n, max;
};

static bool newer(const struct tc_entry *a, const struct tc_entry *b)
{
	return a->mtime_ns > b->mtime_ns;
}

static void oldest_offer(struct tc_oldest *h, const struct tc_entry *e)
{
	size_t i;

	if (h->n < h->max) {
		for (i = h->n++; i && newer(e, &h->e[(i - 1) / 2]); i = (i - 1) / 2)
			h->e[i] = h->e[(i - 1) / 2];
		h->e[i] = *e;
		return;
	}
	if (!h->n || !newer(&h->e[0], e))
		return;
	for (i = 0;;) {
		size_t l = 2 * i + 1, m = i;
		const struct tc_entry *top = e;

		if (l < h->n && newer(&h->e[l], top))
			top = &h->e[m = l];
		if (l + 1 < h->n && newer(&h->e[l + 1], top))
			top = &h->e[m = l + 1];
		if (m == i)
			break;
		h->e[i] = h->e[m];
		i = m;
	}
	h->e[i] = *e;
}

/* A temporary file a crashed write left is deleted when older than this. */
#define TC_TMP_STALE_NS (60 * 1000000000ll)

/* Whether `name` is a temporary name of write_entry's: ".ENTRY.PID.tmp". */
static bool tmp_name_matches(const char *name)
{
	size_t len = strlen(name);

	return name[0] == '.' && len > 5 && len < TC_NAME_MAX + 32 &&
	       !strcmp(name + len - 4, ".tmp");
}

static int64_t ns_of(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec;
}

/*
 * Class `ci` counted: each of its entries by the blocks it takes (an entry
 * of 140 bytes takes 4 KiB and an inode), and offered to `h`; temporary
 * files left by a crash (older than a minute) deleted.
 */
static void scan_class(struct tc_class *cl, uint32_t ci, struct tc_oldest *h, int64_t now_ns)
{
	DIR *d = list_dir(cl->dir);
	struct dirent *de;

	cl->bytes = 0;
	cl->entries = 0;
	while (d && (de = readdir(d))) {
		struct tc_entry e;
		struct stat st;

		if (tmp_name_matches(de->d_name)) {
			if (!fstatat(cl->dir, de->d_name, &st, AT_SYMLINK_NOFOLLOW) &&
			    S_ISREG(st.st_mode) && ns_of(&st.st_mtim) < now_ns - TC_TMP_STALE_NS)
				(void)unlinkat(cl->dir, de->d_name, 0);
			continue;
		}
		if (!entry_name_matches(de->d_name) || strlen(de->d_name) >= sizeof(e.name) ||
		    fstatat(cl->dir, de->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		e = (struct tc_entry){ .mtime_ns = ns_of(&st.st_mtim),
				       .bytes = (uint64_t)st.st_blocks * 512,
				       .cls = ci };
		strcpy(e.name, de->d_name);
		cl->bytes += e.bytes;
		cl->entries++;
		oldest_offer(h, &e);
	}
	if (d)
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

/* Every class directory, opened, into *out: how many (0 with *out NULL when none or no memory). */
static size_t open_classes(int top, struct tc_class **out)
{
	struct tc_class *classes = NULL, *more;
	size_t n = 0, room = 0;
	struct dirent *de;
	DIR *d = list_dir(top);

	while (d && (de = readdir(d))) {
		int dir;

		if (!class_name_matches(de->d_name) || strlen(de->d_name) >= sizeof(classes->name))
			continue;
		if (n == room) {
			room = room ? 2 * room : 64;
			more = realloc(classes, room * sizeof(*classes));
			if (!more)
				break;
			classes = more;
		}
		dir = owned_dir_at(top, de->d_name, false);
		if (dir < 0)
			continue;
		classes[n] = (struct tc_class){ .dir = dir };
		strcpy(classes[n].name, de->d_name);
		n++;
	}
	if (d)
		closedir(d);
	*out = classes;
	return n;
}

/*
 * The oldest in `h` deleted, each while it is past a bound: the store's
 * (total against total_to) or, for a user's, its class's.
 */
static void delete_oldest(struct table_cache *c, struct tc_class *classes, struct tc_oldest *h,
			  uint64_t *total, uint64_t total_to)
{
	qsort(h->e, h->n, sizeof(*h->e), older_first);
	for (size_t i = 0; i < h->n; i++) {
		struct tc_class *cl = &classes[h->e[i].cls];
		bool user = strcmp(cl->name, "system");

		if (*total <= total_to && (!user || cl->bytes <= cl->bytes_to))
			continue;
		if (unlinkat(cl->dir, h->e[i].name, 0))
			continue;
		*total -= h->e[i].bytes;
		cl->bytes -= h->e[i].bytes;
		cl->entries--;
		c->trimmed++;
	}
	h->n = 0;
}

/* Passes of a trim, each deleting at most TABLE_CACHE_MAX_SCAN entries. */
#define TC_TRIM_PASSES 8

/*
 * Down to eighths/8 of each bound passed, the least recently used first.
 * Every class and every entry is counted; a pass deletes from the oldest
 * TABLE_CACHE_MAX_SCAN it met, and another follows while a bound is still
 * passed (at most TC_TRIM_PASSES): memory stays bounded, and the count of
 * entries is too, as each takes a block at least.
 */
void table_cache_trim_to(struct table_cache *c, unsigned eighths)
{
	struct tc_oldest h = { .max = TABLE_CACHE_MAX_SCAN };
	struct tc_class *classes = NULL;
	uint64_t total = 0, total_to = c->max_bytes;
	struct timespec now;
	size_t ncls;
	int64_t now_ns;

	if (c->dir < 0)
		return;
	clock_gettime(CLOCK_REALTIME, &now);
	now_ns = ns_of(&now);
	h.e = calloc(h.max, sizeof(*h.e));
	ncls = h.e ? open_classes(c->dir, &classes) : 0;
	for (unsigned pass = 0; pass < TC_TRIM_PASSES; pass++) {
		bool over = false;

		total = 0;
		for (size_t i = 0; i < ncls; i++) {
			scan_class(&classes[i], (uint32_t)i, &h, now_ns);
			total += classes[i].bytes;
		}
		if (!pass) {
			total_to = total > c->max_bytes ? c->max_bytes / 8 * eighths : c->max_bytes;
			for (size_t i = 0; i < ncls; i++)
				classes[i].bytes_to = classes[i].bytes > c->max_bytes / 4
							      ? c->max_bytes / 4 / 8 * eighths
							      : c->max_bytes / 4;
		}
		for (size_t i = 0; i < ncls; i++)
			over = over || (strcmp(classes[i].name, "system") &&
					classes[i].bytes > classes[i].bytes_to);
		if (total <= total_to && !over)
			break;
		over = h.n == h.max; /* some were not among those met: another pass may be needed */
		delete_oldest(c, classes, &h, &total, total_to);
		if (!over)
			break;
	}
	/* A user's class still past its bound after the passes: its own oldest, pass by pass. */
	for (size_t i = 0; i < ncls; i++) {
		struct tc_class *cl = &classes[i];

		for (unsigned pass = 0; strcmp(cl->name, "system") && cl->bytes > cl->bytes_to &&
					pass < TC_TRIM_PASSES;
		     pass++) {
			uint64_t before = cl->bytes;

			total -= cl->bytes;
			scan_class(cl, (uint32_t)i, &h, now_ns);
			total += cl->bytes;
			delete_oldest(c, classes, &h, &total, UINT64_MAX);
			if (cl->bytes == before)
				break;
		}
	}
	hmap_free(&c->user_kib);
	for (size_t i = 0; i < ncls; i++) {
		struct hmap_key key;

		if (table_cache_user_class(classes[i].name, &key)) {
			(void)hmap_put(&c->user_kib, key,
				       (uint32_t)((classes[i].bytes + 1023) / 1024));
			/* Emptied: the directory goes too (a store makes it again). */
			if (!classes[i].entries)
				(void)unlinkat(c->dir, classes[i].name, AT_REMOVEDIR);
		}
		close(classes[i].dir);
	}
	c->total_bytes = total;
	free(classes);
	free(h.e);
}
