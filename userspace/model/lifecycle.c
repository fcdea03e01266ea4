// SPDX-License-Identifier: BSD-2-Clause
/*
 * Processes over time: forks, exits, execs, renames and executable mappings,
 * from the kernel's side-band records, applied in time order. They give the
 * profile its register/unregister and startup/shutdown times, split a pid
 * into one process per exec'd image, and keep every image's mappings as
 * they were, so a process that lived 20 ms is symbolized like any other.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../symbols/proc_maps.h"
#include "model_internal.h"
#include "sched.h"

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static void copy_comm(char dst[BPFPROF_COMM_LEN], const char *src)
{
	size_t n = strnlen(src, BPFPROF_COMM_LEN - 1);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* A thread of the model with this tid, or NULL; never creates one. */
static struct thread *known_thread(struct model *m, uint32_t pid, uint32_t tid, uint64_t ts)
{
	return model_find_thread(m, tid) ? model_thread(m, pid, tid, -1, ts) : NULL;
}

/* A process of the model with this pid (its image at ts), or NULL; never creates one. */
static struct process *known_process(struct model *m, uint32_t pid, uint64_t ts)
{
	return model_find_process(m, pid) ? model_process(m, pid, ts) : NULL;
}

static void mark_started(struct process *p, uint64_t ts)
{
	p->started = true;
	p->start_ts = ts;
	p->first_ts = min_u64(p->first_ts, ts);
	/* Its mappings come from the fork and the side-band, not from a late /proc read. */
	p->maps_read = true;
	p->maps_read_ts = ts;
}

static void mark_registered(struct thread *t, uint64_t ts)
{
	t->registered = true;
	t->register_ts = ts;
	t->first_ts = min_u64(t->first_ts, ts);
}

static void end_thread(struct thread *t, uint64_t ts)
{
	if (t->exited)
		return;
	t->exited = true;
	t->unregister_ts = ts;
}

/* The image ends (exit of its last thread, or an exec): so do its threads. */
static void end_image(struct model *m, struct process *p, uint64_t ts)
{
	p->ended = true;
	p->end_ts = ts;
	for (size_t i = 0; i < p->threads.len; i++)
		end_thread(&m->threads.data[p->threads.data[i]], ts);
}

/*
 * The entry the BPF rings already made for a task whose fork record comes
 * later (the rings and the side-band are read one after the other, so a new
 * thread's first sample can arrive first): an entry of the same pid that has
 * no start of its own and was first seen after the fork.
 */
static struct thread *early_thread(struct model *m, uint32_t pid, uint32_t tid, uint64_t ts)
{
	struct thread *t = model_find_thread(m, tid);

	return t && t->pid == pid && !t->registered && !t->exited && t->first_ts >= ts ? t : NULL;
}

static struct process *early_process(struct model *m, uint32_t pid, uint64_t ts)
{
	struct hmap_key key = { pid, 0 };
	struct process *p;
	uint32_t idx;

	if (!hmap_get(&m->pid_index, key, &idx))
		return NULL;
	p = &m->processes.data[idx];
	return !p->started && !p->ended && p->first_ts >= ts ? p : NULL;
}

/*
 * A child starts in its parent's cgroup (fork) and an exec does not move
 * it, so when /proc could not tell (the process was already gone), the
 * parent's or the previous image's is right. 0 or -ENOMEM.
 */
static int inherit_cgroup(struct process *p, const struct process *from)
{
	if (p->cgroup || !from->cgroup)
		return 0;
	p->cgroup_owner = from->cgroup_owner;
	p->cgroup = strdup(from->cgroup);
	return p->cgroup ? 0 : -ENOMEM;
}

int model_fork(struct model *m, uint32_t ppid, uint32_t ptid, uint32_t pid, uint32_t tid,
	       uint64_t ts)
{
	char name[BPFPROF_COMM_LEN] = "";
	struct thread *parent_thread, *t;
	struct process *parent, *p;

	if (pid == 0 || tid == 0)
		return 0;
	/* A clone inherits its parent's comm; so does a forked process. */
	parent_thread = ptid ? known_thread(m, ppid, ptid, ts) : NULL;
	if (parent_thread)
		copy_comm(name, parent_thread->name);
	if (pid != ppid) {
		uint32_t parent_idx = NO_INDEX, idx;

		parent = ppid ? (m->all_processes ? model_process(m, ppid, ts)
						  : known_process(m, ppid, ts))
			      : NULL;
		if (parent) {
			/* A parent from before the recording: its mappings are what the child gets.
			 */
			if (!parent->maps_read && !parent->started)
				model_read_maps(m, parent, ts);
			parent_idx = (uint32_t)(parent - m->processes.data);
			if (!name[0])
				copy_comm(name, parent->name);
		}
		p = early_process(m, pid, ts);
		if (!p)
			p = model_new_image(m, pid, ts);
		if (!p)
			return -ENOMEM;
		idx = (uint32_t)(p - m->processes.data);
		mark_started(p, ts);
		if (parent_idx != NO_INDEX) {
			const struct process *pp = &m->processes.data[parent_idx];

			/* An early entry's /proc view is replaced by the fork's copy. */
			m->processes.data[idx].mappings.len = 0;
			for (size_t i = 0; i < pp->mappings.len; i++)
				if (vec_push(&m->processes.data[idx].mappings,
					     pp->mappings.data[i]))
					return -ENOMEM;
		}
		p = &m->processes.data[idx];
		if (name[0])
			copy_comm(p->name, name);
		if (parent_idx != NO_INDEX && inherit_cgroup(p, &m->processes.data[parent_idx]))
			return -ENOMEM;
		/* kthreadd's children are kernel threads, also when gone before /proc was read. */
		if (parent_idx != NO_INDEX && m->processes.data[parent_idx].kernel_thread)
			p->kernel_thread = true;
	}
	t = early_thread(m, pid, tid, ts);
	if (!t)
		t = model_new_thread(m, pid, tid, -1, ts);
	if (!t)
		return -ENOMEM;
	mark_registered(t, ts);
	/* The parent's name at the fork, unless the child's own records told a later one. */
	if (name[0])
		model_name_thread(t, name, ts);
	return 0;
}

int model_exit(struct model *m, uint32_t pid, uint32_t tid, uint64_t ts)
{
	struct thread *t;
	struct process *p;
	bool all_gone = true;

	if (pid == 0 || tid == 0)
		return 0;
	t = model_thread(m, pid, tid, -1, ts);
	if (!t)
		return -ENOMEM;
	end_thread(t, ts);
	p = &m->processes.data[t->process];
	/* The process ends with its last thread (the leader may go first, via pthread_exit). */
	for (size_t i = 0; i < p->threads.len && all_gone; i++)
		all_gone = m->threads.data[p->threads.data[i]].exited;
	if (all_gone && (tid == pid || p->ended)) {
		p->ended = true;
		p->end_ts = ts;
		if (m->source.process_exit)
			m->source.process_exit(m->source.ctx, pid);
	}
	return 0;
}

/*
 * A thread first seen after `ts` with no fork record of its own before it:
 * its records were drained before the exec's side-band record (the rings
 * and the side-band are read one after the other). It cannot be a thread
 * of the image the exec ended, whose other threads the kernel killed
 * (de_thread): it is the new program's.
 */
static bool seen_only_after(const struct thread *t, uint64_t ts)
{
	return !t->registered && t->first_ts >= ts;
}

/*
 * No sample of the image's own code before the exec at ts (queued for the
 * replay or final): threads first seen after it are the new program's.
 */
static bool image_ran_no_code(const struct model *m, const struct process *p, uint64_t ts)
{
	for (size_t i = 0; i < p->threads.len; i++) {
		const struct thread *t = &m->threads.data[p->threads.data[i]];

		if (seen_only_after(t, ts))
			continue;
		if (t->samples.len)
			return false;
		for (size_t k = 0; t->replay && k < t->replay->pending.len; k++)
			if (t->replay->pending.data[k].type == SCHED_EV_SAMPLE)
				return false;
	}
	return true;
}

/*
 * The threads of image `old_idx` first seen after the exec at ts go to the
 * new image `new_idx`, alive: they were put in the old one only because
 * the exec's record came late. 0 or -ENOMEM.
 */
static int adopt_early_threads(struct model *m, uint32_t old_idx, uint32_t new_idx, uint64_t ts)
{
	struct process *old = &m->processes.data[old_idx];
	size_t kept = 0;

	for (size_t i = 0; i < old->threads.len; i++) {
		uint32_t ti = old->threads.data[i];
		struct thread *t = &m->threads.data[ti];

		if (!seen_only_after(t, ts)) {
			old->threads.data[kept++] = ti;
			continue;
		}
		t->process = new_idx;
		t->exited = false;
		t->unregister_ts = 0;
		if (vec_push(&m->processes.data[new_idx].threads, ti))
			return -ENOMEM;
		old = &m->processes.data[old_idx];
	}
	old->threads.len = kept;
	return 0;
}

/*
 * fork + exec, as shells and `bpfprof -- cmd` do: the image between them ran
 * none of its code that we saw, so it becomes the new program instead of an
 * empty process of its own (it keeps its fork as its start).
 */
static int reuse_image(struct model *m, struct process *p, uint32_t tid, const char *comm,
		       uint64_t ts)
{
	struct thread *t;

	if (!p->started)
		mark_started(p, ts);
	vec_free(&p->before_exec);
	p->before_exec.data = p->mappings.data;
	p->before_exec.len = p->mappings.len;
	p->before_exec.cap = p->mappings.cap;
	memset(&p->mappings, 0, sizeof(p->mappings));
	p->exec_ts = ts;
	p->maps_read = true;
	p->maps_read_ts = ts;
	copy_comm(p->name, comm);
	free(p->cmdline);
	p->cmdline = NULL;
	/* Only a user process comes out of an exec (a usermode helper leaves the kernel's). */
	p->kernel_thread = false;
	if (m->source.read_info)
		m->source.read_info(m->source.ctx, p->pid, p->name, &p->cmdline);
	model_read_cgroup(m, p);
	/* A setuid program, or setpriv's: the old image's uid says nothing of the new one. */
	p->uid = PROCESS_UID_UNKNOWN;
	model_read_uid(m, p);
	copy_comm(p->name, comm);
	/* de_thread: every other thread is gone; the exec'ing one is the leader now. */
	for (size_t i = 0; i < p->threads.len; i++) {
		t = &m->threads.data[p->threads.data[i]];
		if (t->tid != tid && !seen_only_after(t, ts))
			end_thread(t, ts);
	}
	t = model_thread(m, p->pid, tid, -1, ts);
	if (!t)
		return -ENOMEM;
	model_name_thread(t, comm, ts);
	return 0;
}

int model_comm(struct model *m, uint32_t pid, uint32_t tid, const char *comm, bool exec,
	       uint64_t ts)
{
	uint32_t old_idx = NO_INDEX, new_idx;
	struct process *p;
	struct thread *t;

	if (pid == 0 || tid == 0)
		return 0;
	if (!exec) {
		t = model_thread(m, pid, tid, -1, ts);
		if (!t)
			return -ENOMEM;
		model_name_thread(t, comm, ts);
		if (tid == pid)
			copy_comm(m->processes.data[t->process].name, comm);
		return 0;
	}
	/* A new program in this pid: the old image ends here and a new process begins. */
	p = known_process(m, pid, ts);
	if (p && image_ran_no_code(m, p, ts))
		return reuse_image(m, p, tid, comm, ts);
	if (p) {
		end_image(m, p, ts);
		old_idx = (uint32_t)(p - m->processes.data);
	}
	p = model_new_image(m, pid, ts);
	if (!p)
		return -ENOMEM;
	new_idx = (uint32_t)(p - m->processes.data);
	if (old_idx != NO_INDEX && (inherit_cgroup(p, &m->processes.data[old_idx]) ||
				    adopt_early_threads(m, old_idx, new_idx, ts)))
		return -ENOMEM;
	p = &m->processes.data[new_idx];
	mark_started(p, ts);
	copy_comm(p->name, comm);
	/* After an exec the thread that made it has the pid as tid (the kernel's de_thread). */
	t = model_new_thread(m, pid, tid, -1, ts);
	if (!t)
		return -ENOMEM;
	mark_registered(t, ts);
	model_name_thread(t, comm, ts);
	return 0;
}

/*
 * Put [pm.start, pm.end) into p's sorted mappings. A new mapping replaces
 * whatever it overlaps (the kernel unmapped it), trimming or splitting the
 * older ones.
 */
static int insert_mapping(struct process *p, struct proc_mapping pm)
{
	VEC(struct proc_mapping) out = { 0 };
	bool placed = false;
	int err = 0;

	for (size_t i = 0; i < p->mappings.len && !err; i++) {
		struct proc_mapping old = p->mappings.data[i];

		if (!placed && old.start >= pm.start) {
			err = vec_push(&out, pm);
			placed = true;
		}
		if (old.end <= pm.start || old.start >= pm.end) {
			err = err ?: vec_push(&out, old);
			continue;
		}
		if (old.start < pm.start) {
			struct proc_mapping head = old;

			head.end = pm.start;
			err = err ?: vec_push(&out, head);
		}
		if (old.end > pm.end) {
			struct proc_mapping tail = old;

			tail.pgoff += pm.end - old.start;
			tail.start = pm.end;
			if (!placed) {
				err = err ?: vec_push(&out, pm);
				placed = true;
			}
			err = err ?: vec_push(&out, tail);
		}
	}
	if (!err && !placed)
		err = vec_push(&out, pm);
	if (err) {
		vec_free(&out);
		return -ENOMEM;
	}
	vec_free(&p->mappings);
	p->mappings.data = out.data;
	p->mappings.len = out.len;
	p->mappings.cap = out.cap;
	return 0;
}

int model_mmap(struct model *m, uint32_t pid, uint64_t ts, const struct map_entry *e)
{
	struct proc_mapping pm = { e->start, e->end, e->pgoff, NO_INDEX };
	struct process *p;
	uint32_t idx;
	int64_t obj;

	if (pid == 0 || !e->executable || e->end <= e->start)
		return 0;
	p = model_process(m, pid, ts);
	if (!p)
		return -ENOMEM;
	/* A process from before the recording: /proc has this mapping and all the older ones. */
	if (!p->started && !p->maps_read) {
		model_read_maps(m, p, ts);
		if (p->maps_read && !p->gone)
			return 0;
	}
	idx = (uint32_t)(p - m->processes.data);
	obj = m->source.object_for_mapping ? m->source.object_for_mapping(m->source.ctx, pid, e)
					   : -ENOENT;
	if (obj >= 0)
		pm.object = (uint32_t)obj;
	return insert_mapping(&m->processes.data[idx], pm);
}
