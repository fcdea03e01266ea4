// SPDX-License-Identifier: BSD-2-Clause
#include "lifecycle_feed.h"

#include "../capture/unwind_loader.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>

#include "../cgroup/cgroup_fs.h"
#include "../model/model.h"
#include "../symbols/proc_maps.h"

enum { MEMBER_IN = 1, MEMBER_OUT = 2 };

/* The model has a live image of pid: the kernel's filter let its events through. */
static bool model_has_live(const struct lifecycle_feed *f, uint32_t pid)
{
	const struct process *p = model_find_process(f->model, pid);

	return p && !p->ended;
}

static bool proc_in_cgroups(const struct lifecycle_feed *f, uint32_t pid)
{
	char *path = NULL;
	bool in = false;

	if (cgroup_read_proc_path("/proc", pid, &path))
		return false; /* gone, or no v2 line: nothing of it can be in a v2 tree */
	for (size_t i = 0; i < f->nr_cgroup_paths && !in; i++)
		in = cgroup_path_within(path, f->cgroup_paths[i]);
	free(path);
	return in;
}

/* --cgroup: decide once per process and keep the answer until it exits. */
static bool cgroup_member(struct lifecycle_feed *f, uint32_t pid)
{
	struct hmap_key key = { pid, 0 };
	bool live = model_has_live(f, pid), in;
	uint32_t v;

	/* An "out" answer gives way to the kernel filter's: the process moved in. */
	if (hmap_get(&f->members, key, &v) && (v == MEMBER_IN || !live))
		return v == MEMBER_IN;
	in = live || proc_in_cgroups(f, pid);
	hmap_put(&f->members, key,
		 in ? MEMBER_IN : MEMBER_OUT); /* a failed put only costs a re-read */
	return in;
}

static bool is_target(struct lifecycle_feed *f, uint32_t pid)
{
	struct hmap_key key = { pid, 0 };
	uint32_t v;

	if (f->all || hmap_get(&f->targets, key, &v))
		return true;
	return f->nr_cgroup_paths && cgroup_member(f, pid);
}

void lifecycle_feed_set_cgroups(struct lifecycle_feed *f, const char *const *paths, size_t n)
{
	f->cgroup_paths = paths;
	f->nr_cgroup_paths = n;
	f->all = n == 0 && f->all;
}

int lifecycle_feed_open(struct lifecycle_feed *f, struct model *m, const bool *online, int nr_cpus,
			const uint32_t *tgids, size_t nr_tgids, bool follow_forks)
{
	int err;

	memset(f, 0, sizeof(*f));
	f->model = m;
	f->all = tgids == NULL;
	f->follow_forks = follow_forks;
	for (size_t i = 0; i < nr_tgids; i++)
		if (hmap_put(&f->targets, (struct hmap_key){ tgids[i], 0 }, 1))
			return -ENOMEM;
	/* MMAP2 records carry device and inode, by which the symbolizer keys binaries. */
	err = sideband_open(&f->sb, online, nr_cpus, 0);
	if (err)
		return err;
	f->open = true;
	return 0;
}

/* Keep a copy: the record's strings live only during the callback. */
static int collect(const struct sideband_record *r, void *ctx)
{
	struct lifecycle_feed *f = ctx;
	struct feed_record fr = { .rec = *r, .seq = f->seq++ };

	if (r->kind == SB_LOST) {
		f->lost += r->lost.count;
		return 0;
	}
	if (r->kind == SB_MMAP) {
		if (!(r->mmap.prot & PROT_EXEC))
			return 0;
		fr.path = strdup(r->mmap.filename ? r->mmap.filename : "");
		if (!fr.path)
			return -ENOMEM;
		fr.rec.mmap.filename = fr.path;
	}
	if (vec_push(&f->pending, fr)) {
		free(fr.path);
		return -ENOMEM;
	}
	return 0;
}

/* Each CPU's records are in order, but one process's can sit on several CPUs. */
static int cmp_record(const void *a, const void *b)
{
	const struct feed_record *x = a, *y = b;

	if (x->rec.ts != y->rec.ts)
		return x->rec.ts < y->rec.ts ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * The mapping's path as /proc/PID/maps gives it, the convention of struct
 * map_entry: perf names memory it has no file path for "//anon" (and
 * "//toolong" or "//enomem" when the path cannot be had), where maps leaves
 * the name empty. Taken as a file, "//anon" would hide JIT code from the
 * process's perf map. No real path starts with "//".
 */
static char *maps_path(const char *perf_name)
{
	return perf_name && strncmp(perf_name, "//", 2) ? (char *)perf_name : "";
}

static int apply(struct lifecycle_feed *f, const struct sideband_record *r)
{
	struct model *m = f->model;

	switch (r->kind) {
	case SB_FORK:
		/* A target's child is a target too (the kernel side follows it the same way). */
		if (!f->all && r->pid != r->task.ppid && f->follow_forks &&
		    is_target(f, r->task.ppid) &&
		    hmap_put(&f->targets, (struct hmap_key){ r->pid, 0 }, 1))
			return -ENOMEM;
		/* A forked child starts in its parent's cgroup. */
		if (f->nr_cgroup_paths && r->pid != r->task.ppid &&
		    cgroup_member(f, r->task.ppid) &&
		    hmap_put(&f->members, (struct hmap_key){ r->pid, 0 }, MEMBER_IN))
			return -ENOMEM;
		if (!is_target(f, r->pid))
			return 0;
		if (f->unwind && r->pid != r->task.ppid && r->pid == r->tid &&
		    unwind_loader_forked(f->unwind, r->task.ppid, r->pid))
			return -ENOMEM;
		return model_fork(m, r->task.ppid, r->task.ptid, r->pid, r->tid, r->ts);
	case SB_EXIT: {
		int err = is_target(f, r->pid) ? model_exit(m, r->pid, r->tid, r->ts) : 0;

		if (f->unwind && r->tid == r->pid)
			unwind_loader_forget(f->unwind, r->pid);
		/* Its pid may come back as another process: decide that one afresh. */
		if (r->tid == r->pid)
			hmap_del(&f->members, (struct hmap_key){ r->pid, 0 });
		return err;
	}
	case SB_COMM:
		return is_target(f, r->pid)
			       ? model_comm(m, r->pid, r->tid, r->comm.comm, r->comm.exec, r->ts)
			       : 0;
	case SB_MMAP: {
		struct map_entry e = {
			.start = r->mmap.start,
			.end = r->mmap.start + r->mmap.len,
			.pgoff = r->mmap.pgoff,
			.dev = makedev(r->mmap.maj, r->mmap.min),
			.inode = r->mmap.ino,
			.readable = r->mmap.prot & PROT_READ,
			.writable = r->mmap.prot & PROT_WRITE,
			.executable = r->mmap.prot & PROT_EXEC,
			.shared = r->mmap.flags & MAP_SHARED,
			.path = maps_path(r->mmap.filename),
		};

		if (!is_target(f, r->pid))
			return 0;
		if (f->unwind && e.executable && unwind_loader_mark(f->unwind, r->pid))
			return -ENOMEM;
		return model_mmap(m, r->pid, r->ts, &e);
	}
	default:
		return 0;
	}
}

int lifecycle_feed_drain(void *feed)
{
	struct lifecycle_feed *f = feed;
	int err = 0;

	if (!f->open)
		return 0;
	f->pending.len = 0;
	err = sideband_drain(&f->sb, collect, f);
	if (err >= 0) {
		err = 0;
		vec_sort(&f->pending, cmp_record);
		for (size_t i = 0; i < f->pending.len && !err; i++) {
			err = apply(f, &f->pending.data[i].rec);
			f->applied++;
		}
	}
	for (size_t i = 0; i < f->pending.len; i++)
		free(f->pending.data[i].path);
	f->pending.len = 0;
	/* Before the records: a sample of a process that just mapped a file finds its rows. */
	if (!err && f->unwind)
		err = unwind_loader_refresh(f->unwind);
	return err;
}

void lifecycle_feed_close(struct lifecycle_feed *f)
{
	if (f->open)
		sideband_close(&f->sb);
	f->open = false;
	for (size_t i = 0; i < f->pending.len; i++)
		free(f->pending.data[i].path);
	vec_free(&f->pending);
	hmap_free(&f->targets);
	hmap_free(&f->members);
}
