// SPDX-License-Identifier: BSD-2-Clause
/*
 * The registry of processes and threads: one process per exec'd image of a
 * pid (chained newest first), one thread per tid and image, found by pid or
 * tid at a time; names, mappings and cgroups read from the proc source.
 * The handlers (sched.c, syscalls.c, lifecycle.c, cut.c) and ingest.c use
 * it; it uses nothing above it.
 */
#include "model.h"
#include "model_internal.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/log.h"

/* Idle (tid 0) exists once per CPU; every other tid is unique system-wide. */
static struct hmap_key thread_key(uint32_t tid, int cpu)
{
	return (struct hmap_key){ tid, tid == 0 ? (uint64_t)(cpu + 1) : 0 };
}

int model_index_process(struct model *m, uint32_t idx)
{
	return hmap_put(&m->pid_index, (struct hmap_key){ m->processes.data[idx].pid, 0 }, idx);
}

int model_index_thread(struct model *m, uint32_t idx)
{
	const struct thread *t = &m->threads.data[idx];

	return hmap_put(&m->tid_index, thread_key(t->tid, t->cpu), idx);
}

/* The image of `pid` that was running at ts: the newest one started at or before ts. */
static struct process *image_at(struct model *m, uint32_t idx, uint64_t ts)
{
	struct process *p = &m->processes.data[idx];

	while (p->started && ts < p->start_ts && p->prev != NO_INDEX)
		p = &m->processes.data[p->prev];
	return p;
}

struct process *model_process(struct model *m, uint32_t pid, uint64_t ts)
{
	struct hmap_key key = { pid, 0 };
	uint32_t idx;

	if (hmap_get(&m->pid_index, key, &idx))
		return image_at(m, idx, ts);
	return model_new_image(m, pid, ts);
}

bool model_is_latest_image(const struct model *m, const struct process *p)
{
	struct hmap_key key = { p->pid, 0 };
	uint32_t idx;

	return hmap_get(&m->pid_index, key, &idx) && &m->processes.data[idx] == p;
}

struct process *model_new_image(struct model *m, uint32_t pid, uint64_t ts)
{
	struct hmap_key key = { pid, 0 };
	struct process p = { 0 }, *np;
	uint32_t idx, prev = NO_INDEX;

	if (hmap_get(&m->pid_index, key, &prev))
		hmap_del(&m->pid_index, key);
	p.pid = pid;
	p.main_thread = NO_INDEX;
	p.cgroup_owner = CGROUP_OWNER_UNKNOWN;
	p.uid = PROCESS_UID_UNKNOWN;
	p.first_ts = p.last_ts = ts;
	p.is_idle = pid == 0;
	p.prev = prev;
	idx = (uint32_t)m->processes.len;
	if (vec_push(&m->processes, p) || hmap_put(&m->pid_index, key, idx)) {
		if (m->processes.len > idx)
			m->processes.len--;
		if (prev != NO_INDEX)
			hmap_put(&m->pid_index, key, prev);
		return NULL;
	}
	np = &m->processes.data[idx];
	if (p.is_idle) {
		snprintf(np->name, sizeof(np->name), "swapper");
	} else if (m->source.read_info &&
		   m->source.read_info(m->source.ctx, pid, np->name, &np->cmdline) == -ENOENT) {
		np->gone = true;
	} else {
		model_read_cgroup(m, np);
		model_read_uid(m, np);
		if (m->source.read_kernel_thread)
			np->kernel_thread = m->source.read_kernel_thread(m->source.ctx, pid) == 1;
	}
	return np;
}

void model_read_uid(struct model *m, struct process *p)
{
	uint32_t uid;

	/* A process gone leaves what was known. */
	if (m->source.read_uid && !m->source.read_uid(m->source.ctx, p->pid, &uid))
		p->uid = uid;
}

void model_read_cgroup(struct model *m, struct process *p)
{
	uint32_t owner = CGROUP_OWNER_UNKNOWN;
	char *path = NULL;

	/* Only a label: a process gone (or any failure) leaves what was known. */
	if (!m->source.read_cgroup || m->source.read_cgroup(m->source.ctx, p->pid, &path, &owner))
		return;
	free(p->cgroup);
	p->cgroup = path;
	p->cgroup_owner = owner;
}

/*
 * The thread `tid` of `pid` at ts, following the chain of threads that had
 * this tid; NULL when none of them fits (the tid is reused by another
 * process, or belongs to an image that ended before ts).
 */
static struct thread *thread_at(struct model *m, uint32_t idx, uint32_t pid, uint64_t ts)
{
	struct thread *t = &m->threads.data[idx];

	while (t->registered && ts < t->register_ts && t->prev != NO_INDEX)
		t = &m->threads.data[t->prev];
	return t->pid == pid ? t : NULL;
}

struct thread *model_thread(struct model *m, uint32_t pid, uint32_t tid, int cpu, uint64_t ts)
{
	struct hmap_key key = thread_key(tid, cpu);
	struct thread *t;
	uint32_t idx;

	if (hmap_get(&m->tid_index, key, &idx) && (t = thread_at(m, idx, pid, ts)))
		return t;
	return model_new_thread(m, pid, tid, cpu, ts);
}

struct thread *model_thread_at(struct model *m, uint32_t pid, uint32_t tid, uint64_t ts)
{
	uint32_t idx;

	if (tid == 0 || !hmap_get(&m->tid_index, (struct hmap_key){ tid, 0 }, &idx))
		return NULL;
	return thread_at(m, idx, pid, ts);
}

struct thread *model_find_thread(struct model *m, uint32_t tid)
{
	uint32_t idx;

	if (tid == 0 || !hmap_get(&m->tid_index, (struct hmap_key){ tid, 0 }, &idx))
		return NULL;
	return &m->threads.data[idx];
}

struct process *model_find_process(struct model *m, uint32_t pid)
{
	uint32_t idx;

	if (!hmap_get(&m->pid_index, (struct hmap_key){ pid, 0 }, &idx))
		return NULL;
	return &m->processes.data[idx];
}

struct thread *model_new_thread(struct model *m, uint32_t pid, uint32_t tid, int cpu, uint64_t ts)
{
	struct hmap_key key = thread_key(tid, cpu);
	struct thread t = { 0 }, *nt;
	struct process *p;
	uint32_t idx, pidx, prev = NO_INDEX;

	p = model_process(m, pid, ts);
	if (!p)
		return NULL;
	pidx = (uint32_t)(p - m->processes.data);
	if (hmap_get(&m->tid_index, key, &prev))
		hmap_del(&m->tid_index, key);
	t.pid = pid;
	t.tid = tid;
	t.process = pidx;
	t.cpu = tid == 0 ? cpu : -1;
	t.first_ts = t.last_ts = ts;
	t.prev = prev;
	idx = (uint32_t)m->threads.len;
	if (vec_push(&m->threads, t))
		goto fail;
	if (hmap_put(&m->tid_index, key, idx) || vec_push(&m->processes.data[pidx].threads, idx)) {
		hmap_del(&m->tid_index, key);
		m->threads.len--;
		goto fail;
	}
	nt = &m->threads.data[idx];
	if (tid == 0 && cpu >= 0)
		snprintf(nt->name, sizeof(nt->name), "swapper/%u", (unsigned)cpu % 1000000u);
	return nt;
fail:
	if (prev != NO_INDEX)
		hmap_put(&m->tid_index, key, prev);
	return NULL;
}

void model_read_maps(struct model *m, struct process *p, uint64_t ts)
{
	int err;

	/* /proc shows the newest image only; an older one keeps what it had. */
	if (p->gone || p->is_idle || !m->source.read_maps || !model_is_latest_image(m, p))
		return;
	p->maps_read = true;
	p->maps_read_ts = ts;
	err = m->source.read_maps(m->source.ctx, m, p);
	if (err == -ENOENT)
		p->gone = true;
	else if (err)
		log_debug("reading maps of pid %u: %s", p->pid, strerror(-err));
}

void model_read_process_maps(struct model *m, uint32_t pid, uint64_t ts)
{
	struct process *p = model_process(m, pid, ts);

	if (p)
		model_read_maps(m, p, ts);
}

void note_event_ts(struct model *m, struct thread *t, uint64_t ts)
{
	struct process *p = &m->processes.data[t->process];

	if (ts < t->first_ts)
		t->first_ts = ts;
	if (ts > t->last_ts)
		t->last_ts = ts;
	if (ts < p->first_ts)
		p->first_ts = ts;
	if (ts > p->last_ts)
		p->last_ts = ts;
	if (ts > m->end_ts)
		m->end_ts = ts;
}

void model_name_thread(struct thread *t, const char *comm, uint64_t ts)
{
	size_t n = strnlen(comm, sizeof(t->name) - 1);

	if (t->name[0] && ts < t->name_ts)
		return;
	memcpy(t->name, comm, n);
	t->name[n] = '\0';
	t->name_ts = ts;
}

int model_ensure_main_thread(struct model *m, uint32_t pidx)
{
	struct process *p = &m->processes.data[pidx];
	struct thread *t;
	uint32_t tidx;

	if (p->main_thread != NO_INDEX)
		return 0;
	if (p->is_idle) {
		/* Idle has one thread per CPU; the process track gets an empty main thread. */
		struct thread main = {
			.pid = 0, .tid = 0, .process = pidx, .cpu = -1, .prev = NO_INDEX
		};

		main.first_ts = main.last_ts = p->first_ts;
		snprintf(main.name, sizeof(main.name), "swapper");
		tidx = (uint32_t)m->threads.len;
		if (vec_push(&m->threads, main) || vec_push(&m->processes.data[pidx].threads, tidx))
			return -ENOMEM;
		m->processes.data[pidx].main_thread = tidx;
		return 0;
	}
	t = model_thread(m, p->pid, p->pid, -1, p->first_ts);
	if (!t)
		return -ENOMEM;
	p = &m->processes.data[pidx];
	p->main_thread = (uint32_t)(t - m->threads.data);
	/* A main thread we never saw running is named after the process. */
	if (!t->name[0])
		memcpy(t->name, p->name, sizeof(t->name));
	return 0;
}

uint32_t model_main_thread(const struct model *m, uint32_t pidx)
{
	const struct process *p = &m->processes.data[pidx];
	uint32_t best = NO_INDEX;

	if (p->main_thread < m->threads.len && m->threads.data[p->main_thread].process == pidx)
		return p->main_thread;
	for (size_t i = 0; i < p->threads.len; i++) {
		uint32_t ti = p->threads.data[i];
		const struct thread *t, *b;

		if (ti >= m->threads.len || m->threads.data[ti].process != pidx)
			continue;
		t = &m->threads.data[ti];
		b = best == NO_INDEX ? NULL : &m->threads.data[best];
		if (!b || t->first_ts < b->first_ts ||
		    (t->first_ts == b->first_ts && t->tid < b->tid))
			best = ti;
	}
	return best;
}
