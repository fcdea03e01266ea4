// SPDX-License-Identifier: BSD-2-Clause
/*
 * What samples tell the unwind loader (unwind_loader.h): the files their
 * user PCs fall in are in use (what eviction keeps), and the files a stack
 * that stopped early met without their table are counted and named, and
 * their builds hurried (issue 38). Out of unwind_loader.c, which builds and
 * publishes the tables, by job.
 */
#include "unwind_loader.h"

#include <bpf/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../util/hashmap.h"

/*
 * Process pid's mappings as the BPF map holds them, from its copy when that
 * was read less than `fresh_ns` of sample time ago; NULL when the map has
 * no entry (refused, or gone: read at the next refresh), there is no
 * memory for a copy, or the copy is older and `may_read` is false.
 */
static const struct unwind_proc *read_proc(struct unwind_loader *l, uint32_t pid, uint64_t ts_ns,
					   uint64_t fresh_ns, bool may_read)
{
	struct unwind_proc_copy *c = &l->proc_copies[hash_u64(pid) % UNWIND_LOADER_PROC_COPIES];

	if (c->read_ts && c->pid == pid && ts_ns >= c->read_ts && ts_ns - c->read_ts < fresh_ns)
		return c->has ? c->proc : NULL;
	if (!may_read || (!c->proc && !(c->proc = malloc(sizeof(*c->proc)))))
		return NULL;
	c->pid = pid;
	c->read_ts = ts_ns ? ts_ns : 1;
	c->has = !bpf_map_lookup_elem(l->procs_fd, &pid, c->proc);
	return c->has ? c->proc : NULL;
}

/* The basename of what process `pid` maps at `m`, for people; "" when unknown. */
static void mapped_name(uint32_t pid, const struct unwind_mapping *m, char *name, size_t size)
{
	char link[96], path[512];
	const char *base;
	ssize_t len;

	snprintf(link, sizeof(link), "/proc/%u/map_files/%llx-%llx", pid,
		 (unsigned long long)m->start, (unsigned long long)m->end);
	/* The link's text only: nothing is opened through it. */
	len = readlink(link, path, sizeof(path) - 1);
	if (len <= 0) {
		name[0] = 0;
		return;
	}
	path[len] = 0;
	base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	len = (ssize_t)strnlen(base, size - 1);
	memcpy(name, base, (size_t)len);
	name[len] = 0;
}

/*
 * A stack that stopped early: the first of its frames (innermost first)
 * in a file the BPF maps had no rows for at ts_ns is where the walk went
 * on without CFI, and that file is named (unwind_misses.h). Frames in
 * code of no known file (JIT, a process not read yet) end the search.
 */
static void note_miss(struct unwind_loader *l, uint32_t pid, uint64_t ts_ns, const uint64_t *uips,
		      size_t n)
{
	const struct unwind_proc *proc =
		read_proc(l, pid, ts_ns, UNWIND_LOADER_PROC_FRESH_NS, true);
	char name[UNWIND_MISS_NAME_LEN];
	uint64_t misses;
	bool wants_name;

	if (!proc)
		return;
	for (size_t i = 0; i < n; i++) {
		/* A caller's PC is a return address: the call is just before it. */
		const struct unwind_mapping *m =
			unwind_proc_mapping_of(proc, i ? uips[i] - 1 : uips[i]);
		const struct unwind_store_file *f;

		if (!m || !(f = unwind_store_find(&l->store, m->file.dev, m->file.ino)))
			return;
		if (f->status == UNWIND_FILE_LOADED && f->published_at && f->published_at <= ts_ns)
			continue;
		wants_name = unwind_misses_wants_name(&l->misses, &m->file);
		if (wants_name)
			mapped_name(pid, m, name, sizeof(name));
		(void)unwind_misses_note(&l->misses, &m->file, ts_ns, wants_name ? name : NULL);
		/*
		 * Its table is queued, or will be: built before those no
		 * sample waits on. Asked at its 1st, 2nd, 4th, 8th... miss,
		 * since its job may not be queued yet at the first.
		 */
		misses = unwind_misses_stacks(&l->misses, &m->file);
		if (f->status == UNWIND_FILE_PENDING && misses && !(misses & (misses - 1)))
			(void)table_worker_hurry(&l->worker, &m->file);
		return;
	}
}

/*
 * The files process pid's user PCs fall in are sampled by user `uid`: what
 * eviction goes by (and who protects them), and a file evicted is queued
 * again. Every sample's, not only the first of a process's second: the
 * files other threads run in, not on that one stack, would go stale and be
 * evicted while in use (S2 review, finding 13); the store renews a user's
 * stamp of a file at most every UNWIND_STORE_STAMP_NS. Its mappings are the
 * BPF map's (what the unwinder used), from a copy up to
 * UNWIND_LOADER_STAMP_FRESH_NS old, read again at most once a second per
 * process (`may_read`: proc_shares_sampled says when): a cost per process,
 * not per sample.
 */
static void stamp_files(struct unwind_loader *l, uint32_t pid, uint32_t uid, const uint64_t *uips,
			size_t n, uint64_t ts_ns, bool may_read)
{
	const struct unwind_proc *proc =
		n ? read_proc(l, pid, ts_ns, UNWIND_LOADER_STAMP_FRESH_NS, may_read) : NULL;
	const struct unwind_mapping *last = NULL;

	if (!proc)
		return;
	for (size_t i = 0; i < n; i++) {
		const struct unwind_mapping *m = unwind_proc_mapping_of(proc, uips[i]);

		/* A stack's frames come in runs of one file: each run looked up once. */
		if (!m || m == last)
			continue;
		last = m;
		/* Evicted (or refused) and room can be made: its mappings read again. */
		if (unwind_store_sampled(&l->store, &m->file, uid, ts_ns))
			(void)unwind_loader_mark(l, pid); /* no memory: at its next sample */
	}
}

void unwind_loader_note_miss(struct unwind_loader *l, uint32_t pid, uint64_t ts_ns,
			     unsigned ustack_end, const uint64_t *uips, size_t n)
{
	if (n && ustack_end != USTACK_END_ROOT)
		note_miss(l, pid, ts_ns, uips, n);
}

void unwind_loader_sampled(struct unwind_loader *l, uint32_t pid, uint64_t ts_ns,
			   unsigned ustack_end, const uint64_t *uips, size_t n)
{
	uint32_t uid;
	/* A sample without user PCs stamps nothing: it leaves the second to the next. */
	unsigned seen = proc_shares_sampled(&l->shares, pid, n ? ts_ns : 0, &uid);

	/* No memory to queue it: it is tried again at its next sample. */
	if (seen & PROC_SAMPLED_REFUSED)
		(void)unwind_loader_mark(l, pid);
	/* A process not known here (not read yet) stamps nothing: whose it is is not known. */
	if (seen & PROC_SAMPLED_KNOWN)
		stamp_files(l, pid, uid, uips, n, ts_ns, seen & PROC_SAMPLED_NEW_SECOND);
	if (n && ustack_end != USTACK_END_ROOT)
		note_miss(l, pid, ts_ns, uips, n);
}

void unwind_loader_miss_reason(const struct unwind_loader *l, const struct unwind_miss *miss,
			       char *buf, size_t size)
{
	const struct unwind_store_file *f =
		unwind_store_find(&l->store, miss->key.dev, miss->key.ino);

	if (!f)
		snprintf(buf, size, "not read");
	else if (f->status == UNWIND_FILE_LOADED && !f->published_at)
		snprintf(buf, size, "no room in the BPF file map");
	else if (f->published_at > miss->first_ts)
		snprintf(buf, size, "its table came %llu ms after its first sample",
			 (unsigned long long)((f->published_at - miss->first_ts) / 1000000));
	else if (f->churning)
		snprintf(buf, size, "changed too often to be read");
	else
		switch (f->status) {
		case UNWIND_FILE_NO_CFI:
			snprintf(buf, size, "no CFI");
			break;
		case UNWIND_FILE_INVALID:
			snprintf(buf, size, "CFI the unwinder cannot use");
			break;
		case UNWIND_FILE_OVER_BUDGET:
			snprintf(buf, size, "past the rows one file may take");
			break;
		case UNWIND_FILE_FULL:
			snprintf(buf, size, "%s",
				 f->evicted
					 ? "evicted from the unwind store (sampled least recently)"
					 : unwind_store_full_reason(&l->store, f));
			break;
		case UNWIND_FILE_PENDING:
			snprintf(buf, size, "its table was not built by the end");
			break;
		default:
			/* LOADED before its first miss: its rows were out while the store was
			 * compacted. */
			snprintf(buf, size, "its table was out while the store was compacted");
			break;
		}
}
