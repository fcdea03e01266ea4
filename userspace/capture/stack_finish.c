// SPDX-License-Identifier: BSD-2-Clause
#include "stack_finish.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../unwind/user_walk.h"

/*
 * A copy waiting for its file's table, with its sample. Its process's
 * mappings are read again when it is walked: at park time a process just
 * exec'd may have only its two exec-time mappings in the BPF map, and a
 * process that exec'd since has another image's. Those read at park time
 * are kept for a process gone by then (the loader keeps a few only).
 */
struct stack_parked {
	uint64_t parked_at;
	uint32_t uid;
	size_t charged; /* bytes counted against the caps */
	uint8_t parks;	/* files waited for so far */
	struct unwind_file_key waits_for;
	struct sample_event *sample; /* as it came (partial) */
	size_t sample_size;
	struct stack_copy_event *copy; /* its header and the copied bytes */
	struct unwind_mapping *maps;   /* its process's at park time */
	uint32_t nmaps;
};

void stack_finish_init(struct stack_finish *f, const struct stack_finish_ops *ops)
{
	memset(f, 0, sizeof(*f));
	f->ops = *ops;
	f->max_bytes = STACK_FINISH_MAX_BYTES;
	f->wait_ns = STACK_FINISH_WAIT_NS;
}

static struct stack_finish_uid *uid_entry(struct stack_finish *f, uint32_t uid, bool add)
{
	struct stack_finish_uid u = { uid, 0 };

	for (size_t i = 0; i < f->uids.len; i++)
		if (f->uids.data[i].uid == uid)
			return &f->uids.data[i];
	if (!add || vec_push(&f->uids, u))
		return NULL;
	return &vec_last(&f->uids);
}

static void park_free(struct stack_finish *f, struct stack_parked *p)
{
	struct stack_finish_uid *u = uid_entry(f, p->uid, false);

	f->parked_bytes -= p->charged;
	if (u)
		u->bytes -= p->charged;
	free(p->sample);
	free(p->copy);
	free(p->maps);
	free(p);
}

/* Process pid's mappings now into f->maps: how many, or -errno. */
static int read_maps(struct stack_finish *f, uint32_t pid, uint64_t ts)
{
	int n;

	if (!f->maps && !(f->maps = malloc(UNWIND_MAX_MAPPINGS * sizeof(*f->maps))))
		return -ENOMEM;
	n = f->ops.mappings(f->ops.ctx, pid, ts, f->maps, UNWIND_MAX_MAPPINGS);
	f->nmaps = n > 0 ? (uint32_t)n : 0;
	return n;
}

/* The mapping of f->maps that holds pc, or NULL. */
static const struct unwind_mapping *map_at(const struct stack_finish *f, uint64_t pc)
{
	size_t lo = 0, hi = f->nmaps;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (f->maps[mid].start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && pc < f->maps[lo - 1].end ? &f->maps[lo - 1] : NULL;
}

static void done_partial(struct stack_finish *f, const struct sample_event *e, size_t size)
{
	f->ops.done(f->ops.ctx, e, size, true);
}

/* Whether a copy of `bytes` fits what is parked, in all and for its user (root: in all only). */
static bool fits(struct stack_finish *f, uint32_t uid, size_t bytes)
{
	struct stack_finish_uid *u;

	if (f->parked_bytes + bytes > f->max_bytes)
		return false;
	if (uid == 0)
		return true;
	u = uid_entry(f, uid, true);
	return u && u->bytes + bytes <= f->max_bytes / 4;
}

/* The copied sample `e` and its copy `c` (owned from here on) parked, or done partial. */
static void park(struct stack_finish *f, const struct sample_event *e, size_t size,
		 struct stack_copy_event *c, uint64_t now)
{
	struct stack_parked *p = calloc(1, sizeof(*p));
	size_t bytes;

	f->stats.copies++;
	f->stats.copy_bytes += c->len;
	if (!p)
		goto partial;
	/*
	 * A Python sample's frames are grouped by the BPF walk's loop frames:
	 * not redone here. A process without mappings (gone): nothing to walk.
	 */
	if (e->py_len || e->ustack_len != (uint32_t)c->frame + 1 ||
	    read_maps(f, e->hdr.pid, e->hdr.ts) <= 0) {
		f->stats.skipped++;
		goto partial;
	}
	p->uid = f->ops.uid(f->ops.ctx, e->hdr.pid);
	p->nmaps = f->nmaps;
	bytes = size + offsetof(struct stack_copy_event, bytes) + c->len +
		(size_t)p->nmaps * sizeof(*p->maps);
	if (!fits(f, p->uid, bytes) || !(p->maps = malloc(p->nmaps * sizeof(*p->maps))) ||
	    !(p->sample = malloc(size)) || vec_push(&f->parked, p)) {
		f->stats.refused++;
		goto partial;
	}
	memcpy(p->maps, f->maps, p->nmaps * sizeof(*p->maps));
	memcpy(p->sample, e, size);
	p->sample_size = size;
	p->copy = c;
	p->parked_at = now;
	p->parks = 1;
	p->waits_for = c->file;
	p->charged = bytes;
	f->parked_bytes += bytes;
	uid_entry(f, p->uid, true)->bytes += bytes;
	if (f->parked_bytes > f->stats.peak_bytes)
		f->stats.peak_bytes = f->parked_bytes;
	return;
partial:
	if (p) {
		free(p->maps);
		free(p->sample);
		free(p);
	}
	free(c);
	done_partial(f, e, size);
}

static struct stack_copy_event **waiting_slot(struct stack_finish *f, uint32_t cpu)
{
	/* CPUs are few; a bogus number past the machine's gets no slot. */
	if (cpu >= 65536)
		return NULL;
	while (f->waiting.len <= cpu)
		if (vec_push(&f->waiting, NULL))
			return NULL;
	return &f->waiting.data[cpu];
}

/*
 * A copy's next record `c` added to the copy *slot holds: the sample's, its
 * bytes right after those. Any other (its first record lost, a bogus
 * offset) leaves the copy as it was: a prefix, walked as far as it goes.
 */
static void copy_append(struct stack_finish *f, struct stack_copy_event **slot,
			const struct stack_copy_event *c)
{
	struct stack_copy_event *w = *slot, *grown;
	size_t head = offsetof(struct stack_copy_event, bytes);

	if (w->hdr.ts != c->hdr.ts || w->hdr.tid != c->hdr.tid || w->hdr.pid != c->hdr.pid ||
	    c->offset != w->len || w->len + (size_t)c->len > STACK_COPY_TOTAL_MAX) {
		f->stats.orphans++;
		return;
	}
	if (!(grown = realloc(w, head + w->len + c->len)))
		return;
	/* Past the struct's array: from the record's start, as the memory goes. */
	memcpy((uint8_t *)grown + head + grown->len, c->bytes, c->len);
	grown->len += c->len;
	*slot = grown;
}

bool stack_finish_record(struct stack_finish *f, const void *data, size_t size, uint64_t now)
{
	const struct event_header *h = data;
	const struct sample_event *e = data;
	struct stack_copy_event **slot, *c;

	if (size < sizeof(*h) || (h->kind != EV_STACK_COPY && h->kind != EV_SAMPLE))
		return false;
	slot = waiting_slot(f, h->cpu);
	if (h->kind == EV_STACK_COPY) {
		c = (struct stack_copy_event *)data;
		if (size < offsetof(struct stack_copy_event, bytes) ||
		    c->len > size - offsetof(struct stack_copy_event, bytes) ||
		    c->len > STACK_COPY_MAX)
			return true;
		if (c->flags & STACK_COPY_MORE) {
			if (slot && *slot)
				copy_append(f, slot, c);
			return true;
		}
		if (slot && *slot) {
			f->stats.orphans++;
			free(*slot);
			*slot = NULL;
		}
		if (slot && (*slot = malloc(offsetof(struct stack_copy_event, bytes) + c->len)))
			memcpy(*slot, c, offsetof(struct stack_copy_event, bytes) + c->len);
		return true;
	}
	c = slot ? *slot : NULL;
	if (size < offsetof(struct sample_event, ips) || !(e->flags & SAMPLE_USTACK_COPIED)) {
		/* The CPU's next record is not the copy's sample: that one was lost. */
		if (c && size >= offsetof(struct sample_event, ips)) {
			f->stats.orphans++;
			free(c);
			*slot = NULL;
		}
		return false;
	}
	if (slot)
		*slot = NULL;
	if (!c || c->hdr.ts != h->ts || c->hdr.tid != h->tid || c->hdr.pid != h->pid) {
		if (c) {
			f->stats.orphans++;
			free(c);
		}
		f->stats.lost++;
		done_partial(f, e, size);
		return false;
	}
	park(f, e, size, c, now);
	return false;
}

/* What one walk over a copy reads and finds, and the first file it met still pending. */
struct walk_ctx {
	struct stack_finish *f;
	const struct stack_parked *p;
	bool met_pending;
	bool reread; /* the mappings were read again for a PC outside them */
	struct unwind_file_key pending;
};

int stack_copy_read(const struct stack_copy_event *c, uint64_t addr, void *buf, size_t len)
{
	if (addr < c->sp || addr - c->sp > c->len || len > c->len - (addr - c->sp))
		return -EFAULT;
	/* A copy of several records runs past the struct's array: from its start. */
	memcpy(buf, (const uint8_t *)c + offsetof(struct stack_copy_event, bytes) + (addr - c->sp),
	       len);
	return 0;
}

/*
 * The mappings `p` is walked with, into f->maps: its process's now, or
 * those read at park time when it is gone (its PCs were in them then).
 */
static void walk_maps(struct stack_finish *f, const struct stack_parked *p)
{
	if (read_maps(f, p->sample->hdr.pid, p->sample->hdr.ts) > 0 || !f->maps)
		return;
	memcpy(f->maps, p->maps, p->nmaps * sizeof(*p->maps));
	f->nmaps = p->nmaps;
}

/* The copied bytes only: past them, the stack is unreadable. */
static int copy_read(void *vctx, uint64_t addr, void *buf, size_t len)
{
	struct walk_ctx *w = vctx;

	return stack_copy_read(w->p->copy, addr, buf, len);
}

static int copy_mapping(void *vctx, uint64_t pc, struct user_walk_mapping *out)
{
	struct walk_ctx *w = vctx;
	const struct unwind_mapping *m = map_at(w->f, pc);
	int64_t bias;

	/* Mapped since they were read (the loader read /proc meanwhile): read once more. */
	if (!m && !w->reread) {
		w->reread = true;
		walk_maps(w->f, w->p);
		m = map_at(w->f, pc);
	}
	if (!m)
		return -ENOENT;
	*out = (struct user_walk_mapping){ .start = m->start, .end = m->end };
	switch (w->f->ops.file(w->f->ops.ctx, &m->file, &out->table, &bias)) {
	case STACK_FILE_READY:
		out->map_to_file = (int64_t)(m->pgoff_bytes - m->start) + bias;
		break;
	case STACK_FILE_PENDING:
		if (!w->met_pending) {
			w->met_pending = true;
			w->pending = m->file;
		}
		/* fallthrough */
	default:
		out->table = (struct compact_view){ 0 };
		break;
	}
	return 0;
}

/*
 * Walk `p`'s copy. true: done (its sample restacked, or partial when
 * nothing came of it); false: the walk met another file still pending and
 * waits for that one.
 */
static bool finish_one(struct stack_finish *f, struct stack_parked *p, bool may_wait)
{
	const struct stack_copy_event *c = p->copy;
	const struct sample_event *e = p->sample;
	struct walk_ctx w = { .f = f, .p = p };
	struct user_walk_ops ops = { copy_read, copy_mapping, &w };
	uint32_t kept = c->frame, room = BPFPROF_MAX_USTACK - kept, n, flags;
	size_t head = offsetof(struct sample_event, ips);
	struct sample_event *out;
	bool exact = c->flags & STACK_COPY_PC_EXACT;
	const struct unwind_mapping *at;
	uint8_t end;

	/*
	 * The process's mappings now, and the file the copy stopped in still
	 * where it was: else the process exec'd (or unmapped it) since, and
	 * the copy's PCs are not those mappings' (S2/S5 review, finding 10).
	 */
	walk_maps(f, p);
	if (!(at = map_at(f, c->pc)) || at->file.dev != c->file.dev ||
	    at->file.ino != c->file.ino) {
		f->stats.skipped++;
		done_partial(f, e, p->sample_size);
		return true;
	}
	out = malloc(head + sizeof(e->ips[0]) * (e->kstack_len + (size_t)BPFPROF_MAX_USTACK));
	if (!out) {
		done_partial(f, e, p->sample_size);
		return true;
	}
	memcpy(out, e, head + sizeof(e->ips[0]) * (e->kstack_len + (size_t)kept));
	/* Frame 0 is the interrupted PC; a later exact one follows a signal frame (no clone). */
	n = user_walk_from(&ops, c->pc, c->sp, c->fp, c->frame ? 1 : c->ax, c->frame && !exact,
			   (uint64_t *)out->ips + e->kstack_len + kept, room, &end);
	if (end != USTACK_END_ROOT && w.met_pending && may_wait &&
	    p->parks < STACK_FINISH_MAX_PARKS) {
		p->parks++;
		p->waits_for = w.pending;
		free(out);
		return false;
	}
	flags = e->flags &
		~(SAMPLE_USTACK_COPIED | SAMPLE_USTACK_END_MASK | SAMPLE_USTACK_TRUNCATED);
	flags |= (uint32_t)end << SAMPLE_USTACK_END_SHIFT;
	if (end == USTACK_END_LIMIT || end == USTACK_END_STUCK)
		flags |= SAMPLE_USTACK_TRUNCATED;
	out->flags = flags;
	out->ustack_len = (uint16_t)(kept + n);
	out->hdr.kind = EV_SAMPLE_RESTACK;
	out->hdr.size = (uint16_t)(head + sizeof(e->ips[0]) * (e->kstack_len + kept + n));
	f->stats.finished++;
	if (end == USTACK_END_ROOT)
		f->stats.rooted++;
	f->ops.done(f->ops.ctx, out, out->hdr.size, false);
	free(out);
	return true;
}

size_t stack_finish_poll(struct stack_finish *f, uint64_t now, bool last)
{
	size_t kept = 0;

	for (size_t i = 0; i < f->parked.len; i++) {
		struct stack_parked *p = f->parked.data[i];
		struct compact_view view;
		int64_t bias;
		enum stack_file_state st = f->ops.file(f->ops.ctx, &p->waits_for, &view, &bias);
		bool late = now - p->parked_at >= f->wait_ns;

		if (st == STACK_FILE_PENDING && !late && !last) {
			f->parked.data[kept++] = p;
			continue;
		}
		if (st == STACK_FILE_PENDING) {
			f->stats.expired++;
			done_partial(f, p->sample, p->sample_size);
		} else if (!finish_one(f, p, !late && !last)) {
			f->parked.data[kept++] = p;
			continue;
		}
		park_free(f, p);
	}
	f->parked.len = kept;
	return kept;
}

void stack_finish_free(struct stack_finish *f)
{
	for (size_t i = 0; i < f->parked.len; i++)
		park_free(f, f->parked.data[i]);
	for (size_t i = 0; i < f->waiting.len; i++)
		free(f->waiting.data[i]);
	vec_free(&f->parked);
	vec_free(&f->waiting);
	vec_free(&f->uids);
	free(f->maps);
	f->maps = NULL;
}
