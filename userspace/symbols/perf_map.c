// SPDX-License-Identifier: BSD-2-Clause
/*
 * Perf map files (/tmp/perf-PID.map), read incrementally.
 *
 * Every valid line becomes an entry, numbered in file order, so a higher
 * number is a newer line. Lookups go to a sorted array of disjoint segments,
 * each naming the newest entry that covers it; it is rebuilt only when a
 * lookup finds entries it does not hold yet, by merging the new entries
 * (sorted) into the old segments, which are already sorted and disjoint.
 * Names live in blocks that are never moved, so a name handed out stays
 * valid while more of the file is read.
 */
#include "perf_map.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/vec.h"
#include "../util/hex.h"
#include "../util/safe_open.h"
#include "jitdump.h"
#include "perf_map_index.h"
#include "perf_map_users.h"

/* Bytes read per pread(); a node map of a large app is tens of MB. */
#define READ_CHUNK	(64u * 1024)
/*
 * The records of a jitdump one refresh reads at most: a lookup that misses
 * refreshes, under the lock the ring's reader needs, and a jitdump may be
 * 1 GiB of records (their code is skipped, not read), so it is read over
 * several refreshes. A map's lines are read up to max_file_bytes at once.
 */
#define REFRESH_RECORDS (64u * 1024)
/* Longer lines are garbage (no symbol name is this long): skipped, not buffered. */
#define MAX_LINE	(64u * 1024)
#define NAME_BLOCK_SIZE (64u * 1024)

/*
 * Any user can write a map of any size, and root reads it: a 390 MB map took
 * a 3 s recording to 2.9 GB and 17 s. Real runtimes write far less (a big
 * JVM or node app: a few hundred thousand lines, tens of MB), so beyond these
 * a map is not read further and its later code shows as addresses.
 */
static struct perf_map_limits limits = {
	.max_file_bytes = 64ull << 20,
	.max_entries = 1u << 20,
	.max_name_bytes = 64ull << 20,
	.max_total_entries = 4u << 20,
	.max_total_name_bytes = 256ull << 20,
	/* A jitdump holds the code too (node: 2 MB a second at start); it is skipped, not read. */
	.max_jitdump_bytes = 1ull << 30,
	/* A user's share of the totals: one map as large as a map may be, not more. */
	.max_user_entries = 1u << 20,
	.max_user_name_bytes = 64ull << 20,
	/*
	 * Bytes read a second, per user and for all: a user's one largest map
	 * at once (a JVM's or node's map is read in a burst at its first
	 * sample), then about what real runtimes append; the same file under
	 * many pids, or swept and read again, waits its turn.
	 */
	.user_bytes_per_s = 16ull << 20,
	.user_bytes_burst = 128ull << 20,
	.total_bytes_per_s = 64ull << 20,
	.total_bytes_burst = 512ull << 20,
};
/* What every open map holds, against the max_total_* limits. */
static size_t total_entries, total_name_bytes;

struct name_block {
	struct name_block *next;
	size_t used, cap;
	char data[];
};

struct perf_map {
	int fd;
	struct pm_user *user;	      /* whose map it is: their share of the limits */
	off_t read_off;		      /* bytes of the file read so far, partial line included */
	VEC(char) buf;		      /* the incomplete last line, then the bytes being parsed */
	bool skipping;		      /* inside an over-long line: drop bytes up to its newline */
	VEC(struct pm_entry) entries; /* file order: a higher index is newer */
	struct pm_index index;	      /* of the entries, by address */
	off_t seen_size;	      /* the file's size at the last refresh; -1 before */
	bool pending;		      /* the last refresh stopped at its share: more to read */
	struct name_block *names;
	size_t name_bytes;
	size_t bad_lines;
	const char *capped;	 /* the limit that stopped the reading, or NULL */
	bool jitdump;		 /* a jitdump file (jitdump.h), not text lines */
	uint32_t jitdump_header; /* its header's size once read, records start there; 0 before */
	off_t win_off;		 /* a jitdump's bytes in buf start there */
};

/* ---- names ------------------------------------------------------------------ */

static const char *name_store(struct perf_map *pm, const char *s, size_t len)
{
	struct name_block *b = pm->names;
	char *out;

	if (!b || b->cap - b->used < len + 1) {
		size_t cap = len + 1 > NAME_BLOCK_SIZE ? len + 1 : NAME_BLOCK_SIZE;

		if (pm->name_bytes + sizeof(*b) + cap > limits.max_name_bytes) {
			pm->capped = "name bytes";
			return NULL;
		}
		if (pm->user->name_bytes + sizeof(*b) + cap > limits.max_user_name_bytes) {
			pm->capped = "name bytes of its user's maps";
			return NULL;
		}
		if (total_name_bytes + sizeof(*b) + cap > limits.max_total_name_bytes) {
			pm->capped = "name bytes of all maps";
			return NULL;
		}
		b = malloc(sizeof(*b) + cap);
		if (!b)
			return NULL;
		b->used = 0;
		b->cap = cap;
		/* The old block's tail is wasted; blocks are large and names short. */
		b->next = pm->names;
		pm->names = b;
		pm->name_bytes += sizeof(*b) + cap;
		total_name_bytes += sizeof(*b) + cap;
		pm->user->name_bytes += sizeof(*b) + cap;
	}
	out = b->data + b->used;
	memcpy(out, s, len);
	out[len] = '\0';
	b->used += len + 1;
	return out;
}

/* ---- parsing ---------------------------------------------------------------- */

/* An entry [start, start + size) named by `len` bytes at `name`; 0, -E2BIG (a limit) or -ENOMEM. */
static int add_entry(struct perf_map *pm, uint64_t start, uint64_t size, const char *name,
		     size_t len)
{
	struct pm_entry e = { start, start + size, NULL };

	if (pm->entries.len >= limits.max_entries) {
		pm->capped = "entries";
		return -E2BIG;
	}
	if (pm->user->entries >= limits.max_user_entries) {
		pm->capped = "entries of its user's maps";
		return -E2BIG;
	}
	if (total_entries >= limits.max_total_entries) {
		pm->capped = "entries of all maps";
		return -E2BIG;
	}
	e.name = name_store(pm, name, len);
	if (!e.name)
		return pm->capped ? -E2BIG : -ENOMEM;
	if (vec_push(&pm->entries, e))
		return -ENOMEM;
	total_entries++;
	pm->user->entries++;
	return 0;
}

/*
 * One hex field, "0x" optional, followed by a space or tab. strtoull would
 * also take signs and leading blanks, which no writer emits.
 */
static bool parse_hex_field(const char **p, const char *end, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;
	int digits = 0, d;

	if (end - s >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	for (; s < end && (d = hex_digit(*s)) >= 0; s++) {
		if (++digits > 16)
			return false;
		v = v << 4 | (uint64_t)d;
	}
	if (!digits || s == end || (*s != ' ' && *s != '\t'))
		return false;
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	*p = s;
	*out = v;
	return true;
}

/*
 * One line without its newline. 0 when it was added or is blank or empty
 * (SIZE 0); 1 when it is malformed; -ENOMEM.
 */
static int parse_line(struct perf_map *pm, const char *line, size_t len)
{
	const char *p = line, *end = line + len;
	struct pm_entry e;
	uint64_t size;

	while (end > p && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
		end--;
	if (end == p)
		return 0;
	if (memchr(p, '\0', end - p))
		return 1;
	if (!parse_hex_field(&p, end, &e.start) || !parse_hex_field(&p, end, &size) || p == end)
		return 1;
	if (size == 0)
		return 0;
	if (size > UINT64_MAX - e.start)
		return 1;
	return add_entry(pm, e.start, size, p, end - p);
}

/*
 * Parse the complete lines of pm->buf and keep the incomplete rest for the
 * next read. 0 or -ENOMEM (the lines from the failed one on are kept).
 */
static int parse_buffered(struct perf_map *pm)
{
	char *data = pm->buf.data;
	size_t len = pm->buf.len, pos = 0, rest;
	char *nl;
	int r = 0;

	while (pos < len && (nl = memchr(data + pos, '\n', len - pos))) {
		size_t n = nl - (data + pos);

		if (pm->skipping) {
			pm->skipping = false;
		} else {
			r = parse_line(pm, data + pos, n);
			/*
			 * Keep the line that failed, so that a later refresh
			 * retries it alone (out of memory; a limit stays reached).
			 */
			if (r < 0)
				break;
			pm->bad_lines += r;
		}
		pos += n + 1;
	}
	rest = len - pos;
	if (r == 0 && pm->skipping) {
		rest = 0;
	} else if (r == 0 && rest > MAX_LINE) {
		pm->bad_lines++;
		pm->skipping = true;
		rest = 0;
	}
	memmove(data, data + pos, rest);
	pm->buf.len = rest;
	return r < 0 ? r : 0;
}

static int refresh_jitdump(struct perf_map *pm, off_t size);

int perf_map_refresh(struct perf_map *pm)
{
	struct stat st;
	ssize_t n;
	int err;

	/* A limit reached stays reached: what was read is what the map holds. */
	if (pm->capped)
		return 0;
	if (fstat(pm->fd, &st))
		return -errno;
	pm->seen_size = st.st_size;
	pm->pending = false;
	if (pm->jitdump)
		return refresh_jitdump(pm, st.st_size);
	if (st.st_size < pm->read_off) {
		/*
		 * Truncated and rewritten: read it again from the start. The
		 * entries read before stay, older than anything read now.
		 */
		pm->read_off = 0;
		pm->buf.len = 0;
		pm->skipping = false;
	}
	while (pm->read_off < st.st_size) {
		size_t want = READ_CHUNK;

		if ((uint64_t)pm->read_off >= limits.max_file_bytes) {
			pm->capped = "file bytes";
			break;
		}
		if ((off_t)want > st.st_size - pm->read_off)
			want = st.st_size - pm->read_off;
		/* Bad lines cost what good ones do: every byte read counts. */
		if (!pm_user_take_bytes(pm->user, want, &limits)) {
			pm->pending = true;
			break;
		}
		if (vec_reserve(&pm->buf, want))
			return -ENOMEM;
		n = pread(pm->fd, pm->buf.data + pm->buf.len, want, pm->read_off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break; /* truncated since the fstat */
		pm->buf.len += n;
		pm->read_off += n;
		err = parse_buffered(pm);
		if (err == -E2BIG)
			break; /* pm->capped says which limit */
		if (err)
			return err;
	}
	return 0;
}

/* ---- jitdump files ----------------------------------------------------------- */

/*
 * Of a code record, the fixed part and this much of the name: no runtime
 * names a function in more, and the code after it is never read.
 */
#define JITDUMP_NAME_MAX   4096u
/*
 * A record claiming more is corrupt: the largest JIT functions are a few
 * MB of code. The file ends being read there.
 */
#define JITDUMP_RECORD_MAX (64u << 20)

/*
 * Code moved from old to new: the name it had, now at its new address.
 * Writers move code all the time (V8's GC), so a move must not cost a
 * rebuild of the whole index (pm_index_newest).
 */
static int jitdump_move(struct perf_map *pm, const struct jitdump_move *mv)
{
	const char *name;
	int64_t entry;

	if (pm_index_newest(&pm->index, pm->entries.data, pm->entries.len, mv->old_code_addr,
			    &entry))
		return -ENOMEM;
	/* A move of code never loaded (or past a limit): nothing to name it by. */
	if (entry < 0 || !mv->code_size || mv->code_size > UINT64_MAX - mv->new_code_addr)
		return 0;
	name = pm->entries.data[entry].name;
	return add_entry(pm, mv->new_code_addr, mv->code_size, name, strlen(name));
}

/*
 * File bytes [off, off + need) in pm->buf, read ahead in READ_CHUNKs so
 * that small records cost no system call each; *p points at them and
 * *avail says how many of them the file has now (fewer near its end).
 */
static int jitdump_window(struct perf_map *pm, off_t off, size_t need, off_t size,
			  const unsigned char **p, size_t *avail)
{
	size_t want = need > READ_CHUNK ? need : READ_CHUNK;
	ssize_t n;

	if (off >= pm->win_off && (uint64_t)(off - pm->win_off) + need <= pm->buf.len) {
		*p = (const unsigned char *)pm->buf.data + (off - pm->win_off);
		*avail = need;
		return 0;
	}
	if ((uint64_t)want > (uint64_t)(size - off))
		want = size - off;
	if (vec_reserve(&pm->buf, want))
		return -ENOMEM;
	do
		n = pread(pm->fd, pm->buf.data, want, off);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		pm->buf.len = 0;
		return -errno;
	}
	pm->buf.len = n;
	pm->win_off = off;
	*p = (const unsigned char *)pm->buf.data;
	*avail = (size_t)n < need ? (size_t)n : need;
	return 0;
}

/*
 * The record at pm->read_off, whose head is `head`: 0 (read, or nothing in
 * it to name code by), -EAGAIN while the writer has not appended all of it,
 * -EINVAL when it is broken, -E2BIG at a limit, or -ENOMEM.
 */
static int jitdump_record(struct perf_map *pm, const struct jitdump_record_head *head, off_t size)
{
	size_t want = head->total_size - JITDUMP_RECORD_HEAD, avail;
	const unsigned char *body;
	struct jitdump_load load;
	struct jitdump_move mv;
	int err;

	if ((uint64_t)size - (uint64_t)pm->read_off < head->total_size)
		return -EAGAIN;
	if (head->id != JITDUMP_CODE_LOAD && head->id != JITDUMP_CODE_MOVE)
		return 0; /* debug and unwinding info, close: nothing to name code by */
	/* The fixed part and the name; the code after them is never read. */
	if (want > JITDUMP_MOVE_FIXED + JITDUMP_NAME_MAX)
		want = JITDUMP_MOVE_FIXED + JITDUMP_NAME_MAX;
	err = jitdump_window(pm, pm->read_off + JITDUMP_RECORD_HEAD, want, size, &body, &avail);
	if (err)
		return err;
	if (avail < want)
		return -EAGAIN; /* truncated since the fstat */
	if (head->id == JITDUMP_CODE_MOVE) {
		if (jitdump_parse_move(body, avail, head->total_size, &mv))
			return -EINVAL;
		return jitdump_move(pm, &mv);
	}
	if (jitdump_parse_load(body, avail, head->total_size, &load))
		return -EINVAL;
	if (!load.code_size || load.code_size > UINT64_MAX - load.code_addr || !load.name_len ||
	    memchr(load.name, '\n', load.name_len)) {
		pm->bad_lines++;
		return 0;
	}
	return add_entry(pm, load.code_addr, load.code_size, load.name, load.name_len);
}

/*
 * A record's cost against the reading budget of the map's user: the bytes
 * parsed (its code is skipped, not read), and no less than a record's
 * worth of work, so that tiny records are not free.
 */
static bool take_record(struct perf_map *pm, const struct jitdump_record_head *head)
{
	uint64_t bytes = head->total_size;

	if (bytes > JITDUMP_RECORD_HEAD + JITDUMP_MOVE_FIXED + JITDUMP_NAME_MAX)
		bytes = JITDUMP_RECORD_HEAD + JITDUMP_MOVE_FIXED + JITDUMP_NAME_MAX;
	return pm_user_take_bytes(pm->user, bytes < 64 ? 64 : bytes, &limits);
}

static int refresh_jitdump(struct perf_map *pm, off_t size)
{
	struct jitdump_record_head head;
	struct jitdump_header hdr;
	const unsigned char *p;
	size_t avail;
	int err;

	if (!pm->jitdump_header) {
		err = jitdump_window(pm, 0, JITDUMP_HEADER_MIN, size, &p, &avail);
		if (err)
			return err;
		err = jitdump_parse_header(p, avail, &hdr);
		if (err == -EAGAIN)
			return 0; /* not written yet */
		if (err) {
			pm->capped = "format";
			return 0;
		}
		pm->jitdump_header = hdr.header_size;
		pm->read_off = hdr.header_size;
	}
	for (unsigned records = 0; pm->read_off < size; records++) {
		if ((uint64_t)pm->read_off >= limits.max_jitdump_bytes) {
			pm->capped = "file bytes";
			break;
		}
		if (records >= REFRESH_RECORDS) {
			pm->pending = true;
			break;
		}
		err = jitdump_window(pm, pm->read_off, JITDUMP_RECORD_HEAD, size, &p, &avail);
		if (err)
			return err;
		err = jitdump_parse_head(p, avail, &head);
		if (err == -EAGAIN)
			break;
		if (!err && head.total_size > JITDUMP_RECORD_MAX)
			err = -EINVAL;
		if (!err && !take_record(pm, &head)) {
			pm->pending = true;
			break;
		}
		if (!err)
			err = jitdump_record(pm, &head, size);
		if (err == -EAGAIN)
			break;
		if (err == -E2BIG)
			break; /* pm->capped says which limit */
		if (err == -EINVAL) {
			/* Records have no sync marks: past a broken one, nothing can be trusted. */
			pm->capped = "format";
			break;
		}
		if (err)
			return err;
		pm->read_off += head.total_size;
	}
	return 0;
}

/* ---- lookups ---------------------------------------------------------------- */

const char *perf_map_lookup(struct perf_map *pm, uint64_t addr, uint64_t *start_out)
{
	const struct pm_segment *seg;
	const struct pm_entry *e;
	struct stat st;

	/* On -ENOMEM the older index still answers for what it holds. */
	pm_index_rebuild(&pm->index, pm->entries.data, pm->entries.len);
	seg = pm_index_find(&pm->index.segments, addr);
	/*
	 * A miss refreshes only when the file grew since the last refresh,
	 * or that refresh left some to read: a file ending in a record not
	 * written whole would be read again at every miss.
	 */
	if (!seg && !fstat(pm->fd, &st) && (pm->pending || st.st_size != pm->seen_size) &&
	    !perf_map_refresh(pm)) {
		pm_index_rebuild(&pm->index, pm->entries.data, pm->entries.len);
		seg = pm_index_find(&pm->index.segments, addr);
	}
	if (!seg)
		return NULL;
	e = &pm->entries.data[seg->entry];
	if (start_out)
		*start_out = e->start;
	return e->name;
}

static struct perf_map *open_fd(int fd, bool jitdump, uint32_t owner)
{
	struct perf_map *pm = calloc(1, sizeof(*pm));
	int err;

	if (!pm) {
		close(fd);
		errno = ENOMEM;
		return NULL;
	}
	pm->fd = fd;
	pm->jitdump = jitdump;
	pm->seen_size = -1;
	pm->user = pm_user_of(owner);
	/*
	 * A jitdump is read at its first lookup, not here: it is opened as
	 * the process maps it, while the rings are drained, and one that
	 * ran for hours holds hundreds of MB to skip through.
	 */
	err = jitdump ? 0 : perf_map_refresh(pm);
	if (err) {
		perf_map_free(pm);
		errno = -err;
		return NULL;
	}
	return pm;
}

struct perf_map *perf_map_open_fd(int fd)
{
	return open_fd(fd, false, PERF_MAP_NO_OWNER);
}

struct perf_map *perf_map_open_fd_of(int fd, uint32_t owner)
{
	return open_fd(fd, false, owner);
}

struct perf_map *perf_map_open_jitdump_fd(int fd)
{
	return open_fd(fd, true, PERF_MAP_NO_OWNER);
}

struct perf_map *perf_map_open_jitdump_fd_of(int fd, uint32_t owner)
{
	return open_fd(fd, true, owner);
}

size_t perf_map_entries(const struct perf_map *pm)
{
	return pm->entries.len;
}

size_t perf_map_bad_lines(const struct perf_map *pm)
{
	return pm->bad_lines;
}

const char *perf_map_capped(const struct perf_map *pm)
{
	return pm->capped;
}

void perf_map_set_limits(const struct perf_map_limits *l, struct perf_map_limits *old)
{
	if (old)
		*old = limits;
	if (l)
		limits = *l;
}

void perf_map_refill_budgets(void)
{
	pm_users_refill();
}

size_t perf_map_bytes(const struct perf_map *pm)
{
	return sizeof(*pm) + pm->buf.cap + pm->entries.cap * sizeof(*pm->entries.data) +
	       pm_index_bytes(&pm->index) + pm->name_bytes;
}

void perf_map_free(struct perf_map *pm)
{
	struct name_block *b, *next;

	if (!pm)
		return;
	if (pm->fd >= 0)
		close(pm->fd);
	for (b = pm->names; b; b = next) {
		next = b->next;
		free(b);
	}
	total_name_bytes -= pm->name_bytes;
	total_entries -= pm->entries.len;
	pm->user->name_bytes -= pm->name_bytes;
	pm->user->entries -= pm->entries.len;
	vec_free(&pm->buf);
	vec_free(&pm->entries);
	pm_index_free(&pm->index);
	free(pm);
}
