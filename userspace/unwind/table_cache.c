// SPDX-License-Identifier: BSD-2-Clause
/* See table_cache.h. */
#include "table_cache.h"
#include "table_cache_trim.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <zlib.h>

#include "util/hashmap.h"
#include "util/log.h"
#include "util/owned_dir.h"
#include "util/safe_open.h"

/*
 * An entry, little-endian as the machine that wrote it (x86_64 only, as
 * cfi_table): the header, the file's distinct rules, its rows (offset from
 * pc_base, rule index), then zlib's crc32 of all that came before, which
 * catches a torn or damaged file (the directory being ours is the defence
 * against tampering).
 */
#define TC_MAGIC   "BPFPUT\0\1"
#define TC_VERSION 2

struct tc_header {
	char magic[8];
	uint32_t version;
	uint32_t generator; /* UNWIND_TABLE_GENERATOR */
	uint64_t file_size;
	int64_t bias;
	uint64_t build_ns;  /* what the build cost, for the log */
	uint64_t rows_read; /* by the build, which a budget caps (cfi_table_stats) */
	uint64_t pc_base;   /* the first row's pc */
	uint32_t nrows, nrules;
	uint32_t status; /* UNWIND_FILE_LOADED or UNWIND_FILE_NO_CFI */
	uint32_t build_id_len;
	uint8_t build_id[ELF_BUILD_ID_MAX];
	/* The very file the table was built from, as it was (table_cache_key). */
	uint64_t dev, ino;
	int64_t ctime_ns, mtime_ns;
};

struct tc_rule {
	int32_t cfa_offset;
	int16_t fp_offset;
	uint8_t cfa, fp, plt_threshold;
	uint8_t pad[3];
};

struct tc_row {
	uint32_t pc_off;
	uint16_t rule;
	uint16_t pad;
};

_Static_assert(sizeof(struct tc_header) == 168, "entry header layout");
_Static_assert(sizeof(struct tc_rule) == 12, "entry rule layout");
_Static_assert(sizeof(struct tc_row) == 8, "entry row layout");

/* A row's rule index is 16 bits; a file's rows use a few hundred (bench/README.md). */
#define TC_MAX_RULES 65536u

static uint64_t entry_bytes(uint64_t nrules, uint64_t nrows)
{
	return sizeof(struct tc_header) + nrules * sizeof(struct tc_rule) +
	       nrows * sizeof(struct tc_row) + sizeof(uint32_t);
}

/* The largest entry a file can have: its rows are capped by any budget. */
#define TC_MAX_BYTES entry_bytes(TC_MAX_RULES, CFI_FILE_MAX_ROWS)

static void entry_name(const struct table_cache_key *k, char *buf, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;

	for (size_t i = 0; i < k->build_id_len && o + 2 < len; i++) {
		buf[o++] = hex[k->build_id[i] >> 4];
		buf[o++] = hex[k->build_id[i] & 15];
	}
	snprintf(buf + o, len - o, "-%llx-%llx-%llx.ut", (unsigned long long)k->file_size,
		 (unsigned long long)k->dev, (unsigned long long)k->ino);
}

int table_cache_open(struct table_cache *c, const char *state_dir, uint64_t max_bytes)
{
	char whose[64];
	int state, top, err;

	memset(c, 0, sizeof(*c));
	c->dir = -1;
	c->max_bytes = max_bytes;
	if (!max_bytes)
		return -ENOENT;
	state = owned_dir_open(state_dir, true);
	if (state < 0) {
		err = state;
		goto off;
	}
	top = owned_dir_at(state, "unwind-cache", true);
	close(state);
	if (top < 0) {
		err = top;
		goto off;
	}
	c->dir = owned_dir_at(top, "v1", true);
	close(top);
	if (c->dir < 0) {
		err = c->dir;
		c->dir = -1;
		goto off;
	}
	c->state_dir = strdup(state_dir); /* for the warning of a failed write; NULL: "?" */
	table_cache_trim(c);
	return 0;
off:
	if (geteuid())
		snprintf(whose, sizeof(whose), "of uid %u's that no other user can write",
			 (unsigned)geteuid());
	else
		snprintf(whose, sizeof(whose), "of root's that only root can write");
	log_warn("unwind table cache off: %s/unwind-cache: %s; tables are built each run (give "
		 "--state-dir a directory %s, or --unwind-cache 0)",
		 state_dir,
		 err == -EPERM ? "a directory on the way is another user's or writable by others"
		 : err == -ELOOP || err == -ENOTDIR
			 ? "not a directory (a symbolic link there is never followed)"
			 : strerror(-err),
		 whose);
	return err;
}

void table_cache_close(struct table_cache *c)
{
	if (c->dir >= 0)
		close(c->dir);
	c->dir = -1;
	hmap_free(&c->user_kib);
	free(c->state_dir);
	c->state_dir = NULL;
}

int table_cache_key_of(int fd, Elf *elf, struct table_cache_key *k)
{
	struct stat st;

	memset(k, 0, sizeof(*k));
	if (!elf || fstat(fd, &st))
		return -EINVAL;
	k->build_id_len = elf_build_id(elf, k->build_id);
	if (!k->build_id_len)
		k->build_id_len = elf_go_build_id(elf, k->build_id);
	if (!k->build_id_len)
		return -ENOENT;
	k->file_size = (uint64_t)st.st_size;
	k->dev = (uint64_t)st.st_dev;
	k->ino = (uint64_t)st.st_ino;
	k->ctime_ns = (int64_t)st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec;
	k->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	if (cfi_file_is_system(fd, &st))
		snprintf(k->cls, sizeof(k->cls), "system");
	else
		snprintf(k->cls, sizeof(k->cls), "u%u", (unsigned)st.st_uid);
	return 0;
}

/* The whole of an entry (at most TC_MAX_BYTES), read from fd: 0 or -errno. */
static int read_all(int fd, uint8_t *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = pread(fd, buf + got, len - got, (off_t)got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		got += (size_t)n;
	}
	return 0;
}

/* What validate says of an entry of `k`'s file as it was before a change. */
static const char stale[] = "the file changed since (ctime or mtime)";

/*
 * Whether the entry in buf (len bytes) is whole and sound, and `k`'s: the
 * reason it is not, NULL when it is (`stale` when it was built from this
 * file before it changed). Everything the table's users rely on is checked
 * (rows strictly increasing, rules within the file's and within their
 * enums), as for a file another user could have made.
 */
static const char *validate(const uint8_t *buf, size_t len, const struct table_cache_key *k)
{
	const struct tc_header *h = (const void *)buf;
	const struct tc_rule *rules;
	const struct tc_row *rows;
	uint32_t crc;

	if (len < entry_bytes(0, 0))
		return "truncated";
	if (memcmp(h->magic, TC_MAGIC, sizeof(h->magic)) || h->version != TC_VERSION)
		return "not an entry of this version";
	memcpy(&crc, buf + len - sizeof(crc), sizeof(crc));
	if (crc != (uint32_t)crc32(0, buf, (uInt)(len - sizeof(crc))))
		return "checksum mismatch";
	if (h->generator != UNWIND_TABLE_GENERATOR)
		return "built by another version of the table builders";
	if (h->nrules > TC_MAX_RULES || h->nrows > CFI_FILE_MAX_ROWS ||
	    entry_bytes(h->nrules, h->nrows) != len)
		return "sizes do not add up";
	if (h->file_size != k->file_size || h->build_id_len != k->build_id_len ||
	    memcmp(h->build_id, k->build_id, k->build_id_len))
		return "another file's (build-id or size)";
	if (h->dev != k->dev || h->ino != k->ino)
		return "another file's (device or inode)";
	if (h->ctime_ns != k->ctime_ns || h->mtime_ns != k->mtime_ns)
		return stale;
	if (h->status == UNWIND_FILE_NO_CFI ? h->nrows || h->nrules
					    : h->status != UNWIND_FILE_LOADED || !h->nrows)
		return "bad status";
	if (h->rows_read < h->nrows)
		return "fewer rows read than kept";
	rules = (const void *)(h + 1);
	rows = (const void *)(rules + h->nrules);
	for (uint32_t i = 0; i < h->nrules; i++)
		if (rules[i].cfa > UNWIND_CFA_SWITCH || rules[i].fp > UNWIND_FP_UNDEF ||
		    rules[i].plt_threshold > 15 || rules[i].pad[0] || rules[i].pad[1] ||
		    rules[i].pad[2])
			return "a rule out of range";
	for (uint32_t i = 0; i < h->nrows; i++) {
		if (rows[i].rule >= h->nrules || rows[i].pad)
			return "a row's rule out of range";
		if (i && rows[i].pc_off <= rows[i - 1].pc_off)
			return "rows not in increasing order";
	}
	if (h->nrows && h->pc_base + rows[h->nrows - 1].pc_off < h->pc_base)
		return "rows past the end of the address space";
	return NULL;
}

/* The table of a sound entry into *b. 0 or -ENOMEM. */
static int unpack(const uint8_t *buf, struct unwind_built *b)
{
	const struct tc_header *h = (const void *)buf;
	const struct tc_rule *rules = (const void *)(h + 1);
	const struct tc_row *rows = (const void *)(rules + h->nrules);

	memset(b, 0, sizeof(*b));
	b->status = (int)h->status;
	b->bias = h->bias;
	if (b->status != UNWIND_FILE_LOADED)
		return 0;
	b->t.rows = malloc(h->nrows * sizeof(*b->t.rows));
	if (!b->t.rows)
		return -ENOMEM;
	b->t.len = h->nrows;
	b->t.stats.rows_read = h->rows_read;
	for (uint32_t i = 0; i < h->nrows; i++) {
		const struct tc_rule *r = &rules[rows[i].rule];

		b->t.rows[i] = (struct cfi_row){ .pc = h->pc_base + rows[i].pc_off,
						 .cfa_offset = r->cfa_offset,
						 .fp_offset = r->fp_offset,
						 .cfa = r->cfa,
						 .fp = r->fp,
						 .plt_threshold = r->plt_threshold };
	}
	return 0;
}

static void reject(struct table_cache *c, int dir, const char *name,
		   const struct table_cache_key *k, const char *why)
{
	log_debug("unwind table cache: %s/%s: %s; removed, the table is built again", k->cls, name,
		  why);
	(void)unlinkat(dir, name, 0);
	__atomic_fetch_add(&c->rejected, 1, __ATOMIC_RELAXED);
}

/*
 * Whether open_regular_beneath's error says what is at an entry's name is
 * no entry of ours (a link, a FIFO, a device, another mount): only then is
 * it removed. Any other error (EMFILE, ENFILE, ENOMEM, EINTR, EAGAIN) is
 * the moment's, not the entry's.
 */
static bool open_refused(int err)
{
	return err == -ELOOP || err == -ENXIO || err == -EXDEV || err == -EINVAL;
}

int table_cache_load(struct table_cache *c, const struct table_cache_key *k,
		     const struct cfi_budget *budget, struct unwind_built *b)
{
	uint64_t t0 = cfi_thread_cpu_ns();
	char name[TC_NAME_MAX];
	const char *why = NULL;
	uint8_t *buf = NULL;
	struct stat st;
	int dir, fd, err;

	if (c->dir < 0)
		return -ENOENT;
	dir = owned_dir_at(c->dir, k->cls, false);
	if (dir < 0)
		return -ENOENT;
	entry_name(k, name, sizeof(name));
	fd = open_regular_beneath(dir, name, O_NOFOLLOW | O_NONBLOCK);
	if (fd == -ENOENT) {
		close(dir);
		return -ENOENT;
	}
	if (fd < 0 && !open_refused(fd)) {
		/* Out of descriptors or memory, interrupted: a miss, the entry left as it is. */
		close(dir);
		return -ENOENT;
	}
	if (fd < 0)
		why = "not a regular file";
	else if (fstat(fd, &st) || st.st_uid != geteuid() || st.st_nlink != 1)
		why = "not ours alone (owner or links)";
	else if ((uint64_t)st.st_size > TC_MAX_BYTES)
		why = "larger than any entry";
	else if (!(buf = malloc((size_t)st.st_size ? (size_t)st.st_size : 1)))
		why = "no memory";
	else if (read_all(fd, buf, (size_t)st.st_size))
		why = "unreadable";
	else
		why = validate(buf, (size_t)st.st_size, k);
	err = -EINVAL;
	if (!why) {
		const struct tc_header *h = (const void *)buf;

		/* Built under a larger budget than this recording's: build it, refused. */
		if (h->rows_read > budget->file_rows)
			err = -ENOENT;
		else if (!(err = unpack(buf, b)))
			(void)futimens(fd, NULL); /* used: the last to go */
	} else if (why == stale) {
		/* Not damage: a miss, and the slot is free for the table built now. */
		log_debug("unwind table cache: %s/%s: %s; built again", k->cls, name, why);
		(void)unlinkat(dir, name, 0);
		err = -ENOENT;
	} else if (strcmp(why, "no memory")) {
		reject(c, dir, name, k, why);
	}
	free(buf);
	if (fd >= 0)
		close(fd);
	close(dir);
	if (!err)
		b->build_ns = cfi_thread_cpu_ns() - t0;
	return err == -ENOMEM ? -ENOENT : err;
}

/* Rules by value into an index, for a file's few hundred distinct rules. */
static struct hmap_key rule_key(const struct cfi_row *r)
{
	return (struct hmap_key){
		(uint64_t)(uint32_t)r->cfa_offset | (uint64_t)(uint16_t)r->fp_offset << 32,
		(uint64_t)r->cfa | (uint64_t)r->fp << 8 | (uint64_t)r->plt_threshold << 16
	};
}

/* The entry of `b` into a new buffer (*len bytes); NULL when it cannot be kept. */
static uint8_t *pack(const struct table_cache_key *k, const struct unwind_built *b, size_t *len)
{
	const struct cfi_table *t = &b->t;
	size_t nrows = b->status == UNWIND_FILE_LOADED ? t->len : 0, nrules = 0;
	struct tc_rule *rules = NULL;
	struct tc_header *h;
	struct tc_row *rows;
	struct hmap index = { 0 };
	uint8_t *buf = NULL;
	uint32_t crc;

	if (nrows > CFI_FILE_MAX_ROWS ||
	    (nrows && t->rows[nrows - 1].pc - t->rows[0].pc > UINT32_MAX))
		return NULL; /* not a real file's: text over 4 GiB */
	rules = calloc(nrows < TC_MAX_RULES ? nrows + 1 : TC_MAX_RULES, sizeof(*rules));
	rows = malloc((nrows ? nrows : 1) * sizeof(*rows));
	if (!rules || !rows)
		goto out;
	for (size_t i = 0; i < nrows; i++) {
		const struct cfi_row *r = &t->rows[i];
		uint32_t idx;

		if (!hmap_get(&index, rule_key(r), &idx)) {
			if (nrules == TC_MAX_RULES ||
			    hmap_put(&index, rule_key(r), (uint32_t)nrules))
				goto out;
			idx = (uint32_t)nrules++;
			rules[idx] = (struct tc_rule){ .cfa_offset = r->cfa_offset,
						       .fp_offset = r->fp_offset,
						       .cfa = r->cfa,
						       .fp = r->fp,
						       .plt_threshold = r->plt_threshold };
		}
		rows[i] = (struct tc_row){ .pc_off = (uint32_t)(r->pc - t->rows[0].pc),
					   .rule = (uint16_t)idx };
	}
	*len = (size_t)entry_bytes(nrules, nrows);
	buf = calloc(1, *len);
	if (!buf)
		goto out;
	h = (void *)buf;
	memcpy(h->magic, TC_MAGIC, sizeof(h->magic));
	h->version = TC_VERSION;
	h->generator = UNWIND_TABLE_GENERATOR;
	h->file_size = k->file_size;
	h->bias = b->bias;
	h->build_ns = b->build_ns;
	h->rows_read = nrows ? (t->stats.rows_read > nrows ? t->stats.rows_read : nrows) : 0;
	h->pc_base = nrows ? t->rows[0].pc : 0;
	h->nrows = (uint32_t)nrows;
	h->nrules = (uint32_t)nrules;
	h->status = (uint32_t)b->status;
	h->build_id_len = (uint32_t)k->build_id_len;
	memcpy(h->build_id, k->build_id, k->build_id_len);
	h->dev = k->dev;
	h->ino = k->ino;
	h->ctime_ns = k->ctime_ns;
	h->mtime_ns = k->mtime_ns;
	memcpy(h + 1, rules, nrules * sizeof(*rules));
	memcpy((uint8_t *)(h + 1) + nrules * sizeof(*rules), rows, nrows * sizeof(*rows));
	crc = (uint32_t)crc32(0, buf, (uInt)(*len - sizeof(crc)));
	memcpy(buf + *len - sizeof(crc), &crc, sizeof(crc));
out:
	hmap_free(&index);
	free(rules);
	free(rows);
	return buf;
}

static int write_all(int fd, const uint8_t *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * `buf` as `name` in `dir`, whole or not at all: written unnamed
 * (O_TMPFILE) and linked in once complete; where the file system has no
 * O_TMPFILE, written under a temporary name and renamed.
 */
static int write_entry(int dir, const char *name, const uint8_t *buf, size_t len)
{
	char tmp[TC_NAME_MAX + 32], proc[64];
	int fd, err;

	fd = openat(dir, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
	if (fd >= 0) {
		err = write_all(fd, buf, len);
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
		if (!err && linkat(AT_FDCWD, proc, dir, name, AT_SYMLINK_FOLLOW))
			err = -errno;
		close(fd);
		return err == -EEXIST ? 0 : err; /* another run wrote it meanwhile */
	}
	snprintf(tmp, sizeof(tmp), ".%s.%d.tmp", name, (int)getpid());
	fd = openat(dir, tmp, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	err = write_all(fd, buf, len);
	close(fd);
	if (!err && renameat(dir, tmp, dir, name))
		err = -errno;
	if (err)
		(void)unlinkat(dir, tmp, 0);
	return err;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/*
 * A store that failed for a reason of the state directory's (read-only,
 * full, over quota, not ours alone): said once a run, in one line; the
 * recording goes on, its tables built each time.
 */
static void write_failed(struct table_cache *c, const char *cls, int err)
{
	const char *hint;

	/* Another run wrote it, or a trim of another run emptied its class, meanwhile. */
	if (err == -EEXIST || err == -ENOENT || c->write_warned)
		return;
	c->write_warned = true;
	if (err == -ENOSPC || err == -EDQUOT || err == -EFBIG)
		hint = "free room there";
	else if (err == -EPERM || err == -ELOOP || err == -ENOTDIR)
		hint = "make it a directory of ours alone, mode 0700, no link";
	else
		hint = "make it writable";
	log_warn("unwind table cache: cannot write in %s/unwind-cache/v1/%s: %s; tables are built "
		 "each run, not kept (%s, or give --state-dir a directory elsewhere, or "
		 "--unwind-cache 0)",
		 c->state_dir ? c->state_dir : "?", cls,
		 err == -EPERM ? "a directory there is another user's or writable by others"
			       : strerror(-err),
		 hint);
}

int table_cache_store(struct table_cache *c, const struct table_cache_key *k,
		      const struct unwind_built *b)
{
	char name[TC_NAME_MAX];
	struct statvfs fs;
	struct hmap_key key;
	uint8_t *buf;
	size_t len;
	bool over;
	int dir, err;

	if (c->dir < 0 || (b->status != UNWIND_FILE_LOADED && b->status != UNWIND_FILE_NO_CFI))
		return -EINVAL;
	buf = pack(k, b, &len);
	if (!buf)
		return -ENOMEM;
	/* Larger than a user's class may hold: a system file, for all of it. */
	if (len > (strcmp(k->cls, "system") ? c->max_bytes / 4 : c->max_bytes)) {
		free(buf);
		return -EFBIG;
	}
	dir = owned_dir_at(c->dir, k->cls, true);
	if (dir < 0) {
		free(buf);
		write_failed(c, k->cls, dir);
		return dir;
	}
	entry_name(k, name, sizeof(name));
	/*
	 * The state directory holds the service's snapshots too: never the
	 * last of its room. Left free: 5% of the file system, or the cache's
	 * own bound where that is less (5% of a big disk is far more).
	 */
	if (!fstatvfs(dir, &fs) &&
	    (uint64_t)fs.f_bavail * fs.f_frsize <
		    len + min_u64((uint64_t)fs.f_blocks * fs.f_frsize / 20, c->max_bytes))
		err = -ENOSPC;
	else
		err = write_entry(dir, name, buf, len);
	close(dir);
	free(buf);
	if (err) {
		write_failed(c, k->cls, err);
		return err;
	}
	__atomic_fetch_add(&c->written, 1, __ATOMIC_RELAXED);
	/* What it takes on disk, as a trim counts it: whole blocks (4 KiB, mostly). */
	len = (len + 4095) & ~(size_t)4095;
	c->total_bytes += len;
	over = c->total_bytes > c->max_bytes;
	if (table_cache_user_class(k->cls, &key)) {
		uint32_t kib = 0;

		(void)hmap_get(&c->user_kib, key, &kib);
		kib += (uint32_t)(len / 1024);
		(void)hmap_put(&c->user_kib, key, kib); /* no memory: the next trim counts it */
		over = over || (uint64_t)kib * 1024 > c->max_bytes / 4;
	}
	if (over)
		table_cache_trim_to(c, TABLE_CACHE_TRIM_FILL);
	return 0;
}
