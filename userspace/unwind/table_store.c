// SPDX-License-Identifier: BSD-2-Clause
/*
 * The unwind tables of the files met so far (see table_store.h): each file
 * built once with cfi_table_build, its rows packed into the BPF layout
 * (compact_table).
 */
#include "table_store.h"
#include "table_store_impl.h"

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
#include "../util/clock.h"
#include "../util/elf_open.h"

void unwind_store_init(struct unwind_store *s, union unwind_slot *slots, size_t max_slots)
{
	memset(s, 0, sizeof(*s));
	s->max_slots = max_slots;
	s->slots_external = slots != NULL;
	/* Without the caller's: memory of our own, mapped as it is written (calloc). */
	s->slots.data = slots ? slots : calloc(max_slots ? max_slots : 1, sizeof(*slots));
	s->slots.cap = s->slots.data ? max_slots : 0;
	/* No memory: no room, every file FULL. */
	if (!s->slots.data ||
	    slot_alloc_init(&s->alloc,
			    s->slots.cap > UINT32_MAX ? UINT32_MAX : (uint32_t)s->slots.cap))
		s->max_slots = 0;
	/* No memory: room for no rule (but NONE), every file FULL. */
	(void)compact_rules_init(&s->rules, NULL, UNWIND_MAX_RULES);
}

int unwind_store_rules_in(struct unwind_store *s, struct unwind_rule *rules, size_t max)
{
	compact_rules_free(&s->rules);
	return compact_rules_init(&s->rules, rules, max);
}

struct compact_view unwind_store_view(const struct unwind_store *s,
				      const struct unwind_store_file *f)
{
	return compact_view_of(s->slots.data + f->info.first_slot, f->info.base, f->info.npages,
			       s->rules.data);
}

void unwind_store_free(struct unwind_store *s)
{
	if (!s->slots_external)
		vec_free(&s->slots);
	slot_alloc_free(&s->alloc);
	vec_free(&s->files);
	hmap_free(&s->index);
	hmap_free(&s->owner_slots);
	hmap_free(&s->owner_files);
	hmap_free(&s->owner_rules);
	compact_rules_free(&s->rules);
	memset(s, 0, sizeof(*s));
}

uint64_t unwind_kernel_dev(unsigned int major, unsigned int minor)
{
	return ((uint64_t)major << 20) | minor; /* MKDEV of include/linux/kdev_t.h */
}

struct hmap_key store_file_key(uint64_t dev, uint64_t ino)
{
	return (struct hmap_key){ dev, ino };
}

const struct unwind_store_file *unwind_store_find(const struct unwind_store *s, uint64_t dev,
						  uint64_t ino)
{
	uint32_t idx;

	return hmap_get(&s->index, store_file_key(dev, ino), &idx) ? &s->files.data[idx] : NULL;
}

/*
 * Code pages past a table's rows, at most (beyond one a row): a file
 * whose few rows lie far apart (crafted: a real file's pages hold
 * thousands) would spend a share on empty pages.
 */
#define SPARSE_PAGES 64

/* Whether the table `t` would take more pages than rows + SPARSE_PAGES. */
static bool sparse(const struct cfi_table *t, size_t nslots)
{
	size_t row_slots = (t->len + 1) / 2;

	return nslots != SIZE_MAX && nslots - row_slots > t->len + SPARSE_PAGES;
}

/* The compact table `c` into the extent at `start`: its pages, then its rows two a slot. */
static void lay_out(struct unwind_store *s, const struct compact_table *c, uint32_t start)
{
	union unwind_slot *at = s->slots.data + start;
	size_t n = compact_table_slots(c->npages, c->nrows);

	memcpy(at, c->pages, c->npages * sizeof(*c->pages));
	/* An odd count leaves half a slot: zero, not what the slot held before. */
	memset(at + n - (c->nrows & 1), 0, (c->nrows & 1) * sizeof(*at));
	memcpy(at[c->npages].row, c->rows, c->nrows * sizeof(*c->rows));
	s->slots.len += n;
}

/*
 * Pack the table built for entry `e` into the lowest free extent that
 * holds it (slot_alloc); its final status (FULL: e->want_slots, the slots
 * it needs, for no room, or no extent free yet, and e->want_rules when
 * its rules do not fit), or -ENOMEM. Its slots are charged to its payer,
 * whose uid it takes.
 */
static int pack(struct unwind_store *s, struct unwind_store_file *e, struct unwind_built *b)
{
	size_t n = compact_table_slots_of(&b->t), rules_before, room;
	struct compact_table c;
	uint32_t uid, start;
	int status, err;

	if (b->status != UNWIND_FILE_LOADED)
		return b->status;
	if (sparse(&b->t, n))
		return UNWIND_FILE_OVER_BUDGET;
	/* Room first: the rules of a file that does not fit are not added. */
	status = store_admit(s, e->id.uid, e->id.system, n);
	if (status == UNWIND_FILE_FULL)
		e->want_slots = n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
	if (status != UNWIND_FILE_LOADED)
		return status;
	uid = store_payer(s, e->id.uid, e->id.system, n);
	if (store_open_counts(s, uid))
		return -ENOMEM;
	/* Room in all, but no free extent holds it now (in quarantine, or in pieces). */
	if (slot_alloc_get(&s->alloc, (uint32_t)n, (uint32_t)s->max_slots,
			   clock_ns(CLOCK_MONOTONIC), &start)) {
		e->want_slots = (uint32_t)n;
		return UNWIND_FILE_FULL;
	}
	rules_before = s->rules.len;
	room = store_rules_room(s, uid);
	s->rules.file_max = room;
	err = compact_table_build(&b->t, &s->rules, n, &c);
	s->rules.file_max = COMPACT_FILE_MAX_RULES;
	/* Never published: what the table does not use is free at once (no memory: lost). */
	(void)slot_alloc_unget(
		&s->alloc, start + (err ? 0 : (uint32_t)compact_table_slots(c.npages, c.nrows)),
		(uint32_t)n - (err ? 0 : (uint32_t)compact_table_slots(c.npages, c.nrows)));
	switch (err) {
	case 0:
		n = compact_table_slots(c.npages, c.nrows); /* at most what was admitted */
		break;
	case -ENOSPC:
		/*
		 * Its slots and the rule room it lacked kept: a user with more
		 * rule room who maps it takes it (readmit).
		 */
		s->stats.rules_full++;
		e->want_slots = n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
		e->want_rules = (uint32_t)room + 1;
		return UNWIND_FILE_FULL;
	case -EINVAL:
		return UNWIND_FILE_INVALID; /* rows out of order: a builder's bug */
	default:
		return -ENOMEM;
	}
	/* Cannot fail: both keys are there (open_counts). */
	(void)store_charge(s, uid, n, true);
	(void)store_charge_rules(s, uid, s->rules.len - rules_before);
	e->loaded_by = e->id.uid;
	e->id.uid = uid;
	e->info = (struct unwind_file_info){
		.base = c.base, .bias = b->bias, .first_slot = start, .npages = c.npages
	};
	e->nslots = (uint32_t)n;
	e->nrows = c.nrows;
	e->loaded_at = clock_ns(CLOCK_MONOTONIC);
	lay_out(s, &c, start);
	compact_table_free(&c);
	return UNWIND_FILE_LOADED;
}

static void count_build(struct unwind_store *s, const struct unwind_built *b)
{
	s->stats.build_ns += b->build_ns;
	if (b->build_ns > s->stats.longest_ns)
		s->stats.longest_ns = b->build_ns;
}

/* The identity of the file open at `fd` (stat `st`); fd -1: `system` unknown, false. */
static struct unwind_file_id id_of(int fd, const struct stat *st)
{
	return (struct unwind_file_id){
		.size = (uint64_t)st->st_size,
		.mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec,
		.ctime_ns = (int64_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec,
		.system = cfi_file_is_system(fd, st),
	};
}

bool store_same_id(const struct unwind_file_id *a, const struct unwind_file_id *b)
{
	return a->size == b->size && a->mtime_ns == b->mtime_ns && a->ctime_ns == b->ctime_ns;
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
	uint64_t now = clock_ns(CLOCK_MONOTONIC);
	uint32_t changes = e->changes;
	uint64_t since = e->changes_at;

	if (e->status == UNWIND_FILE_LOADED)
		store_dead(s, e, now);
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
	if (hmap_get(&s->index, store_file_key(dev, ino), &idx)) {
		struct unwind_store_file *e = &s->files.data[idx];

		*known = store_same_id(&e->id, id);
		if (*known && e->retry && e->status == UNWIND_FILE_PENDING) {
			/* Its build was lost: built now. */
			e->retry = false;
			*known = false;
		} else if (*known && store_readmit(s, e, id->uid)) {
			/*
			 * Refused for another user's share (or room), or evicted:
			 * this one has room, or evicting others makes it.
			 */
			e->status = UNWIND_FILE_PENDING;
			e->evicted = false;
			e->id.uid = id->uid;
			e->want_slots = 0;
			e->want_rules = 0;
			*known = false;
		} else if (!*known) {
			replace(s, e, &f, known);
		}
		return e;
	}
	if (vec_push(&s->files, f) ||
	    hmap_put(&s->index, store_file_key(dev, ino), (uint32_t)(s->files.len - 1))) {
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
	e->retry = false;
	e->want_slots = 0;
	e->want_rules = 0;
	status = pack(s, e, b);
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
	struct cfi_budget budget;
	int err;

	unwind_store_budget(s, &budget);
	budget = cfi_budget_pick(&budget, e->id.system);
	err = unwind_file_build(elf, &budget, &b);

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
		id = id_of(fd, &st);
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
	if (!hmap_get(&s->index, store_file_key(key->dev, key->ino), &idx))
		return NULL;
	e = &s->files.data[idx];
	if (e->status != UNWIND_FILE_PENDING || !store_same_id(&e->id, id))
		return NULL;
	return settle(s, e, b);
}

void unwind_store_retry_now(struct unwind_store *s, const struct unwind_store_file *f)
{
	struct unwind_store_file *e = &s->files.data[f - s->files.data];

	if (e->status != UNWIND_FILE_FULL)
		return;
	/* Its build is taken again (unwind_store_complete), counted once. */
	s->stats.files[UNWIND_FILE_FULL]--;
	if (e->want_rules && s->stats.rules_full)
		s->stats.rules_full--;
	e->status = UNWIND_FILE_PENDING;
	e->retry = true;
}

void unwind_store_retry(struct unwind_store *s, const struct unwind_file_key *key,
			const struct unwind_file_id *id)
{
	uint32_t idx;
	struct unwind_store_file *e;

	if (!hmap_get(&s->index, store_file_key(key->dev, key->ino), &idx))
		return;
	e = &s->files.data[idx];
	if (e->status == UNWIND_FILE_PENDING && store_same_id(&e->id, id))
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
		id = id_of(-1, &st); /* to compare only */
		/*
		 * A lost build (retry) is handed over again, and a file refused for
		 * lack of room is taken by a user who has room for it.
		 */
		if (store_same_id(&f->id, &id) && !f->retry && !store_readmit(s, f, uid))
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
	id = id_of(fd, &st);
	id.uid = uid;
	/* Another file under its (dev, ino): the old rows must go (not so for a retry). */
	replaced = f && !store_same_id(&f->id, &id);
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

/*
 * `e` stamped by user `uid` at `now`: whether the stamp was renewed (not
 * within UNWIND_STORE_STAMP_NS of that user's last). A new user takes a
 * free stamp, or the oldest's place.
 */
static bool stamp(struct unwind_store_file *e, uint32_t uid, uint64_t now)
{
	struct unwind_stamp *st = &e->stamps[0];

	for (size_t i = 0; i < UNWIND_STORE_STAMPS; i++) {
		struct unwind_stamp *t = &e->stamps[i];

		if (t->at && t->uid == uid) {
			if (t->at <= now && now - t->at < UNWIND_STORE_STAMP_NS)
				return false;
			st = t;
			break;
		}
		if (!t->at || (st->at && t->at < st->at))
			st = t;
	}
	*st = (struct unwind_stamp){ .uid = uid, .at = now ? now : 1 };
	return true;
}

bool unwind_store_sampled(struct unwind_store *s, const struct unwind_file_key *key, uint32_t uid,
			  uint64_t now)
{
	uint32_t idx;
	struct unwind_store_file *e;

	if (!hmap_get(&s->index, store_file_key(key->dev, key->ino), &idx))
		return false;
	e = &s->files.data[idx];
	/* Every sample's files come here: the rest only at a user's first in a while. */
	if (!stamp(e, uid, now))
		return false;
	if (now > e->sampled_at)
		e->sampled_at = now;
	/* Its build was lost: the sampling process's mappings, read again, hand it over. */
	if (e->retry && e->status == UNWIND_FILE_PENDING)
		return true;
	if (e->status != UNWIND_FILE_FULL ||
	    (e->asked_at && e->asked_at <= now && now - e->asked_at < UNWIND_STORE_ASK_NS))
		return false;
	e->asked_at = now;
	/* An eviction gives back slots, not rules: one refused for its rules does not ask. */
	return store_room_by_eviction(s, e, uid, now);
}

void unwind_store_published(struct unwind_store *s, const struct unwind_store_file *f, uint64_t now)
{
	struct unwind_store_file *e = &s->files.data[f - s->files.data];

	if (!e->published_at)
		e->published_at = now;
}
