// SPDX-License-Identifier: BSD-2-Clause
/*
 * The unwind tables of the files met so far (see table_store.h): each file
 * built once with cfi_table_build, its rows packed into the BPF layout.
 */
#include "table_store.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "cfi_table.h"
#include "go_table.h"
#include "../symbols/proc_maps.h"
#include "../symbols/vdso.h"
#include "../util/elf_open.h"

void unwind_store_init(struct unwind_store *s, struct unwind_row *rows, size_t max_rows)
{
	memset(s, 0, sizeof(*s));
	s->max_rows = max_rows;
	if (rows) {
		/* Full capacity from the start: vec_reserve never reallocates it. */
		s->rows.data = rows;
		s->rows.cap = max_rows;
		s->rows_external = true;
	}
}

void unwind_store_share_by_owner(struct unwind_store *s)
{
	s->owner_shares = true;
}

void unwind_store_free(struct unwind_store *s)
{
	unwind_store_rebuilt(s);
	if (!s->rows_external)
		vec_free(&s->rows);
	vec_free(&s->files);
	hmap_free(&s->index);
	hmap_free(&s->owner_rows);
	memset(s, 0, sizeof(*s));
}

int unwind_store_reset(struct unwind_store *s)
{
	unwind_store_rebuilt(s);
	s->old_rows = malloc((s->rows.len ? s->rows.len : 1) * sizeof(*s->old_rows));
	if (s->old_rows) {
		memcpy(s->old_rows, s->rows.data, s->rows.len * sizeof(*s->old_rows));
		/* Both VEC(struct unwind_store_file): the same layout. */
		memcpy(&s->old_files, &s->files, sizeof(s->files));
		s->old_index = s->index;
		memset(&s->files, 0, sizeof(s->files));
	} else {
		hmap_free(&s->index);
	}
	s->rows.len = 0;
	s->dead_rows = 0;
	hmap_free(&s->owner_rows);
	memset(&s->owner_rows, 0, sizeof(s->owner_rows));
	s->files.len = 0;
	memset(&s->index, 0, sizeof(s->index));
	s->vdso_size = 0;
	return s->old_rows ? 0 : -ENOMEM;
}

void unwind_store_rebuilt(struct unwind_store *s)
{
	free(s->old_rows);
	s->old_rows = NULL;
	vec_free(&s->old_files);
	hmap_free(&s->old_index);
	memset(&s->old_index, 0, sizeof(s->old_index));
}

uint64_t unwind_kernel_dev(unsigned int major, unsigned int minor)
{
	return ((uint64_t)major << 20) | minor; /* MKDEV of include/linux/kdev_t.h */
}

static struct hmap_key file_key(uint64_t dev, uint64_t ino)
{
	return (struct hmap_key){ dev, ino };
}

const struct unwind_store_file *unwind_store_find(const struct unwind_store *s, uint64_t dev,
						  uint64_t ino)
{
	uint32_t idx;

	return hmap_get(&s->index, file_key(dev, ino), &idx) ? &s->files.data[idx] : NULL;
}

static uint32_t rows_of_owner(const struct unwind_store *s, uint32_t uid)
{
	uint32_t n = 0;

	hmap_get(&s->owner_rows, (struct hmap_key){ uid, 0 }, &n);
	return n;
}

/*
 * Whether n more rows of a file of user `uid` may be stored: UNWIND_FILE_LOADED,
 * or UNWIND_FILE_FULL for no room and, with owner_shares, for a file past a
 * quarter of the capacity (one file never takes the store) or past its
 * user's share (see owner_rows; root's processes are the system's). A
 * FULL file is built again at the next rebuild, when there may be room.
 */
static int admit(const struct unwind_store *s, uint32_t uid, size_t n)
{
	if (n > s->max_rows - s->rows.len || n > UINT32_MAX)
		return UNWIND_FILE_FULL;
	if (!s->owner_shares)
		return UNWIND_FILE_LOADED;
	if (n > s->max_rows / 4)
		return UNWIND_FILE_FULL;
	if (uid && rows_of_owner(s, uid) + n > s->max_rows / 4)
		return UNWIND_FILE_FULL;
	return UNWIND_FILE_LOADED;
}

/* n rows of user uid's file were stored; 0 or -ENOMEM. */
static int charge(struct unwind_store *s, uint32_t uid, size_t n)
{
	return hmap_put(&s->owner_rows, (struct hmap_key){ uid, 0 },
			rows_of_owner(s, uid) + (uint32_t)n);
}

/*
 * Pack the table built for an entry (of user uid's file) after the rows
 * already stored; its final status, or -ENOMEM.
 */
static int pack(struct unwind_store *s, uint32_t uid, struct unwind_built *b,
		struct unwind_file_info *info)
{
	const struct cfi_table *t = &b->t;
	int status;

	if (b->status != UNWIND_FILE_LOADED)
		return b->status;
	status = admit(s, uid, t->len);
	if (status != UNWIND_FILE_LOADED)
		return status;
	if (vec_reserve(&s->rows, t->len) || charge(s, uid, t->len))
		return -ENOMEM;
	info->first_row = (uint32_t)s->rows.len;
	info->nrows = (uint32_t)t->len;
	info->bias = b->bias;
	for (size_t i = 0; i < t->len; i++) {
		const struct cfi_row *r = &t->rows[i];

		s->rows.data[s->rows.len++] = (struct unwind_row){
			.pc = r->pc,
			.cfa_offset = r->cfa_offset,
			.fp_offset = r->fp_offset,
			.rules = UNWIND_RULES(r->cfa, r->fp, r->plt_threshold),
		};
	}
	return UNWIND_FILE_LOADED;
}

static void count_build(struct unwind_store *s, const struct unwind_built *b)
{
	s->stats.build_ns += b->build_ns;
	if (b->build_ns > s->stats.longest_ns)
		s->stats.longest_ns = b->build_ns;
}

static struct unwind_file_id id_of(const struct stat *st)
{
	return (struct unwind_file_id){
		.size = (uint64_t)st->st_size,
		.mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec,
		.ctime_ns = (int64_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec,
	};
}

static bool same_id(const struct unwind_file_id *a, const struct unwind_file_id *b)
{
	return a->size == b->size && a->mtime_ns == b->mtime_ns && a->ctime_ns == b->ctime_ns;
}

/*
 * During a rebuild: `f` (new, PENDING) takes the table it had before, when
 * it was built and is still that file. Whether it did.
 */
static bool adopt(struct unwind_store *s, struct unwind_store_file *f)
{
	const struct unwind_store_file *old;
	uint32_t idx;

	if (!s->old_rows || !hmap_get(&s->old_index, file_key(f->key.dev, f->key.ino), &idx))
		return false;
	old = &s->old_files.data[idx];
	/* Its changes keep counting across rebuilds. */
	f->changes = old->changes;
	f->changes_at = old->changes_at;
	/* FULL was for lack of room, PENDING for a build that is dropped: both built again. */
	if (old->status == UNWIND_FILE_PENDING || old->status == UNWIND_FILE_FULL ||
	    !same_id(&old->id, &f->id))
		return false;
	f->status = old->status;
	f->churning = old->churning;
	if (old->status != UNWIND_FILE_LOADED)
		return true;
	/* No room now (its owner's share): built again, and refused or not on its own. */
	if (admit(s, f->id.uid, old->info.nrows) != UNWIND_FILE_LOADED ||
	    vec_reserve(&s->rows, old->info.nrows) || charge(s, f->id.uid, old->info.nrows)) {
		f->status = UNWIND_FILE_PENDING; /* built again */
		return false;
	}
	f->info = old->info;
	f->info.first_row = (uint32_t)s->rows.len;
	memcpy(s->rows.data + s->rows.len, s->old_rows + old->info.first_row,
	       old->info.nrows * sizeof(*s->rows.data));
	s->rows.len += old->info.nrows;
	return true;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * Another file under `e`'s (dev, ino): `f` (PENDING) now, built again, the
 * old rows counted dead. A file that changes more than
 * UNWIND_STORE_MAX_CHANGES times a minute (a user touching a big binary
 * between mappings) is not: each build would cost its budget and its rows
 * again. It is OVER_BUDGET, churning (*known: nothing to build), until
 * the minute is over.
 */
static void replace(struct unwind_store *s, struct unwind_store_file *e,
		    const struct unwind_store_file *f, bool *known)
{
	uint64_t now = mono_ns();
	uint32_t changes = e->changes;
	uint64_t since = e->changes_at;

	if (e->status == UNWIND_FILE_LOADED)
		s->dead_rows += e->info.nrows;
	if (!since || now - since > UNWIND_STORE_CHANGES_WINDOW_NS) {
		changes = 0;
		since = now;
	}
	*e = *f;
	e->changes = changes + 1;
	e->changes_at = since;
	if (e->changes > UNWIND_STORE_MAX_CHANGES) {
		e->status = UNWIND_FILE_OVER_BUDGET;
		e->churning = true;
		s->stats.files[UNWIND_FILE_OVER_BUDGET]++;
		*known = true;
	}
}

/*
 * The entry of (dev, ino) for a file of identity `id`: the existing one
 * (*known set when it is of that file) or a new one, PENDING. NULL: ENOMEM.
 */
static struct unwind_store_file *entry_for(struct unwind_store *s, uint64_t dev, uint64_t ino,
					   const struct unwind_file_id *id, bool *known)
{
	struct unwind_store_file f = { .key = { dev, ino },
				       .id = *id,
				       .status = UNWIND_FILE_PENDING };
	uint32_t idx;

	*known = false;
	if (hmap_get(&s->index, file_key(dev, ino), &idx)) {
		struct unwind_store_file *e = &s->files.data[idx];

		*known = same_id(&e->id, id);
		if (*known && e->retry && e->status == UNWIND_FILE_PENDING) {
			e->retry = false; /* its build was lost: again */
			*known = false;
		} else if (!*known) {
			replace(s, e, &f, known);
		}
		return e;
	}
	*known = adopt(s, &f);
	if (vec_push(&s->files, f) ||
	    hmap_put(&s->index, file_key(dev, ino), (uint32_t)(s->files.len - 1))) {
		errno = ENOMEM;
		return NULL;
	}
	return &vec_last(&s->files);
}

/* The entry's table, built (`b`): packed, the entry final. NULL with errno ENOMEM. */
static struct unwind_store_file *settle(struct unwind_store *s, struct unwind_store_file *e,
					struct unwind_built *b)
{
	int status;

	count_build(s, b);
	status = pack(s, e->id.uid, b, &e->info);
	if (status < 0) {
		errno = -status;
		return NULL;
	}
	e->status = (uint8_t)status;
	s->stats.files[e->status]++;
	return e;
}

/* Build the entry's table now, from `elf` (ended here). */
static const struct unwind_store_file *build_now(struct unwind_store *s,
						 struct unwind_store_file *e, Elf *elf)
{
	struct unwind_built b;
	int err = unwind_file_build(elf, &cfi_default_budget, &b);

	if (err) {
		errno = -err;
		return NULL;
	}
	e = settle(s, e, &b);
	unwind_built_free(&b);
	return e;
}

const struct unwind_store_file *unwind_store_add(struct unwind_store *s, uint64_t dev, uint64_t ino,
						 int fd)
{
	struct unwind_file_id id = { 0 };
	struct unwind_store_file *e;
	struct stat st;
	bool known;

	if (!fstat(fd, &st))
		id = id_of(&st);
	e = entry_for(s, dev, ino, &id, &known);
	if (!e || known)
		return e;
	return build_now(s, e, elf_open_fd(fd));
}

const struct unwind_store_file *unwind_store_complete(struct unwind_store *s,
						      const struct unwind_file_key *key,
						      const struct unwind_file_id *id,
						      struct unwind_built *b)
{
	uint32_t idx;
	struct unwind_store_file *e;

	errno = 0;
	if (!hmap_get(&s->index, file_key(key->dev, key->ino), &idx))
		return NULL;
	e = &s->files.data[idx];
	if (e->status != UNWIND_FILE_PENDING || !same_id(&e->id, id))
		return NULL;
	return settle(s, e, b);
}

void unwind_store_retry(struct unwind_store *s, const struct unwind_file_key *key,
			const struct unwind_file_id *id)
{
	uint32_t idx;
	struct unwind_store_file *e;

	if (!hmap_get(&s->index, file_key(key->dev, key->ino), &idx))
		return;
	e = &s->files.data[idx];
	if (e->status == UNWIND_FILE_PENDING && same_id(&e->id, id))
		e->retry = true;
}

const struct unwind_store_file *unwind_store_add_vdso(struct unwind_store *s, size_t *size)
{
	const struct unwind_store_file *f = unwind_store_find(s, 0, UNWIND_VDSO_INO);
	void *image;
	int err;

	*size = 0;
	if (f) {
		*size = s->vdso_size;
		return f;
	}
	err = vdso_copy(&image, size);
	if (err) {
		errno = err == -ENOMEM ? ENOMEM : 0;
		return NULL;
	}
	{
		struct unwind_file_id id = { .size = *size };
		struct unwind_store_file *e;
		bool known;

		e = entry_for(s, 0, UNWIND_VDSO_INO, &id, &known);
		f = e && !known ? build_now(s, e, elf_memory(image, *size)) : e;
	}
	free(image);
	if (f)
		s->vdso_size = *size;
	return f;
}

const struct unwind_store_file *unwind_store_add_mapping(struct unwind_store *s, uint32_t pid,
							 uint32_t uid, const struct map_entry *e)
{
	uint64_t dev = unwind_kernel_dev(major(e->dev), minor(e->dev));
	const struct unwind_store_file *f;
	struct unwind_store_file *entry;
	struct unwind_file_id id;
	bool known, replaced;
	char link[96];
	struct stat st;
	int fd, err;

	errno = 0;
	if (!e->executable || !e->inode)
		return NULL;
	snprintf(link, sizeof(link), "/proc/%u/map_files/%" PRIx64 "-%" PRIx64, pid, e->start,
		 e->end);
	/* Known and still that file (stat follows the link to it): nothing to open. */
	if ((f = unwind_store_find(s, dev, e->inode))) {
		if (stat(link, &st))
			return f;
		id = id_of(&st);
		/* A lost build (retry) is handed over again. */
		if (same_id(&f->id, &id) && !f->retry)
			return f;
	}
	fd = open(link, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		errno = 0;
		return NULL;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return NULL;
	}
	/* What is read is what was fstat'ed: the identity kept is the descriptor's. */
	id = id_of(&st);
	id.uid = uid;
	replaced = f != NULL;
	entry = entry_for(s, dev, e->inode, &id, &known);
	/* Refused for changing too often: the old rows must still go (fd closed there). */
	if (entry && known && replaced && entry->churning && s->defer) {
		s->defer(s->defer_ctx, entry, fd, e->path, link, true);
		errno = 0;
		return entry;
	}
	if (!entry || known) {
		close(fd);
		return entry;
	}
	if (s->defer) {
		/* Not taken (a full queue, no memory): not fatal, tried again when next met. */
		err = s->defer(s->defer_ctx, entry, fd, e->path, link, replaced);
		if (err && entry->status == UNWIND_FILE_PENDING)
			entry->retry = true;
		errno = 0;
		return entry;
	}
	f = build_now(s, entry, elf_open_fd(fd));
	if (!f && errno != ENOMEM)
		errno = 0;
	close(fd);
	return f;
}
