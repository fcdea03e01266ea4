// SPDX-License-Identifier: BSD-2-Clause
/*
 * The plan made before a profile is written (emit_internal.h): the order
 * of processes and threads, one main thread per process, the numbers of
 * reused pids, the profile's end, and the threads shown and selected when
 * it opens. Everything that can fail on bad input fails here, so that the
 * writing itself cannot stop half-way.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../util/hashmap.h"
#include "../util/log.h"
#include "cgroup_meta.h"
#include "emit_internal.h"
#include "emitter.h"
#include "sched_markers.h"
#include "syscall_markers.h"

/*
 * Processes in the order they started, the launched command's first: a
 * process that was there before the recording (no fork or exec seen)
 * starts at 0 and keeps the order of its first event; one started during
 * it, at its fork or exec. The command's images (the held fork, then what
 * it exec'd) lead, so its children come after it, not above.
 */
struct proc_key {
	uint32_t not_command;
	uint64_t start_ts; /* 0: before the recording */
	uint64_t first_ts;
	uint32_t pid;
	uint32_t index;
};

static int cmp_proc_key(const void *a, const void *b)
{
	const struct proc_key *x = a, *y = b;
	int c = cmp2(x->not_command, x->start_ts, y->not_command, y->start_ts);

	if (!c)
		c = cmp2(x->first_ts, x->pid, y->first_ts, y->pid);
	return c ? c : cmp2(x->index, 0, y->index, 0);
}

static int cmp_thread_key(const void *a, const void *b)
{
	const struct thread_key *x = a, *y = b;
	int c = cmp2(x->proc_rank, x->not_main, y->proc_rank, y->not_main);

	if (!c)
		c = cmp2(x->first_ts, x->tid, y->first_ts, y->tid);
	return c ? c : cmp2(x->index, 0, y->index, 0);
}

void emit_plan_free(struct emit_plan *p)
{
	free(p->visible);
	free(p->order);
	free(p->main_thread);
	free(p->pid_dup);
	free(p->rows);
	cgroup_meta_free(&p->cgroups);
}

/*
 * Exactly one main thread per process: the model's choice when it is one of
 * the process's threads, else the earliest thread (model_finish should make
 * the fallback unnecessary, but the front-end drops every other "main"
 * thread of a pid, so this must hold by construction).
 */
static void choose_main_threads(struct emit_plan *p, const struct model *m)
{
	for (size_t i = 0; i < m->processes.len; i++)
		p->main_thread[i] = model_main_thread(m, (uint32_t)i);
}

/* pid strings must be unique per process; a reused pid gets "P.1", "P.2" like samply. */
static int number_reused_pids(struct emit_plan *p, const struct model *m,
			      const struct proc_key *sorted)
{
	struct hmap seen = { 0 };
	int err = 0;

	for (size_t r = 0; r < m->processes.len; r++) {
		struct hmap_key key = { sorted[r].pid, 0 };
		uint32_t n = 0;

		if (hmap_get(&seen, key, &n))
			n++;
		p->pid_dup[sorted[r].index] = n;
		err = hmap_put(&seen, key, n);
		if (err)
			break;
	}
	hmap_free(&seen);
	return err;
}

/*
 * The app shows only threads with at least 5 % of the busiest one's CPU, so
 * a thread that spent the recording blocked (a reader, a waiter: what the
 * off-CPU and syscall capture is for) started hidden. bpfprof says which to
 * show: with -p, -- COMMAND every target thread (the busiest first when
 * there are more than VISIBLE_TARGETS_MAX); with -a, the VISIBLE_ALL_MAX
 * threads with the most on-CPU plus off-CPU time. A kernel thread's waits
 * are its idle (workers waiting for work), and bpfprof's own are its poll
 * loop: neither is what a person looks for first, so only their CPU counts.
 * The selected thread is the one with the most CPU (the launched command's
 * main thread with -- COMMAND, or its busiest where the main thread all but
 * idled), never bpfprof itself when another ran.
 */
#define VISIBLE_TARGETS_MAX 256
#define VISIBLE_ALL_MAX	    24

struct thread_score {
	uint64_t score; /* CPU and off-CPU ns */
	uint32_t pos;	/* in the output */
};

/*
 * Which thread starts selected: the launched command's main thread, unless
 * it all but idled beside another thread of the command (under a fiftieth
 * of its CPU: a JVM's launcher thread waits while the thread it started
 * runs main()), then that busiest thread; without a command, the most CPU.
 * A main thread that does some work (a shell or a spawner forking its
 * children, a few percent of its busiest thread) stays the one selected.
 */
#define IDLE_MAIN_SHARE 50

struct selection {
	uint32_t pos; /* the most CPU of all; UINT32_MAX: none yet */
	uint64_t rank;
	uint32_t main_pos,
		busiest_pos; /* the command's main and busiest thread; UINT32_MAX: none */
	uint64_t main_cpu, busiest_cpu;
};

static void consider_selection(struct selection *sel, uint32_t pos, uint64_t cpu_ns,
			       bool is_command, bool is_command_main, bool is_profiler)
{
	/* Without a command: the most CPU, bpfprof last (a rank of 1 still beats none). */
	uint64_t rank = is_profiler ? 1 : cpu_ns + 2;

	if (is_command_main && (sel->main_pos == UINT32_MAX || cpu_ns > sel->main_cpu)) {
		sel->main_pos = pos;
		sel->main_cpu = cpu_ns;
	}
	if (is_command && (sel->busiest_pos == UINT32_MAX || cpu_ns > sel->busiest_cpu)) {
		sel->busiest_pos = pos;
		sel->busiest_cpu = cpu_ns;
	}
	if (sel->pos == UINT32_MAX || rank > sel->rank) {
		sel->pos = pos;
		sel->rank = rank;
	}
}

static uint32_t selected_thread(const struct selection *sel)
{
	if (sel->main_pos != UINT32_MAX && (sel->busiest_pos == sel->main_pos ||
					    sel->main_cpu >= sel->busiest_cpu / IDLE_MAIN_SHARE))
		return sel->main_pos;
	if (sel->busiest_pos != UINT32_MAX)
		return sel->busiest_pos;
	return sel->pos;
}

static int cmp_score_desc(const void *a, const void *b)
{
	const struct thread_score *x = a, *y = b;

	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * -p, -- COMMAND: a child that started and ended inside the recording,
 * lived under a fifth of it and used less than a tenth of the CPU of the
 * busiest process, starts hidden (the track menu still lists it): `make`'s
 * or a test runner's hundreds of 30 ms helpers otherwise bury the
 * processes that did the work. CPU against CPU, not against the
 * recording's length, which a loaded machine stretches (a child of 20 ms of
 * CPU lived 300 ms there). The launched command is always shown.
 */
#define LITTLE_CPU_SHARE 10 /* 1/10 of the busiest process's */
#define SHORT_LIFE_SHARE 5  /* 1/5 of the recording */

static bool short_lived(const struct emit_plan *p, const struct model *m,
			const struct profile_meta *meta, uint32_t process, const uint64_t *proc_cpu,
			uint64_t most_cpu)
{
	const struct process *proc = &m->processes.data[process];

	if (m->all_processes || !proc->started || !proc->ended || proc->end_ts < proc->start_ts)
		return false;
	if (meta->selected_pid && proc->pid == meta->selected_pid)
		return false;
	return proc->end_ts - proc->start_ts < p->end_ns / SHORT_LIFE_SHARE &&
	       proc_cpu[process] < most_cpu / LITTLE_CPU_SHARE;
}

static uint64_t thread_cpu_ns(const struct thread *th)
{
	uint64_t cpu = 0;

	for (size_t k = 0; k < th->samples.len; k++)
		cpu += th->samples.data[k].cpu_delta_ns;
	return cpu;
}

/* Per process: its threads' CPU, and whether it starts hidden as a short-lived child. */
static int mark_short_lived(struct emit_plan *p, const struct model *m,
			    const struct profile_meta *meta, bool **hidden)
{
	size_t np = m->processes.len;
	uint64_t *cpu = calloc(np ? np : 1, sizeof(*cpu)), most = 0;

	*hidden = calloc(np ? np : 1, sizeof(**hidden));
	if (!cpu || !*hidden) {
		free(cpu);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->threads.len; i++)
		cpu[m->threads.data[i].process] += thread_cpu_ns(&m->threads.data[i]);
	for (size_t i = 0; i < np; i++)
		if (!m->processes.data[i].is_idle && cpu[i] > most)
			most = cpu[i];
	for (size_t i = 0; i < np; i++) {
		(*hidden)[i] = short_lived(p, m, meta, (uint32_t)i, cpu, most);
		p->hidden_short_procs += (*hidden)[i];
	}
	free(cpu);
	return 0;
}

static int choose_initial_threads(struct emit_plan *p, const struct model *m,
				  const struct profile_meta *meta)
{
	size_t nt = m->threads.len, n = 0,
	       max = m->all_processes ? VISIBLE_ALL_MAX : VISIBLE_TARGETS_MAX;
	struct thread_score *s = calloc(nt ? nt : 1, sizeof(*s));
	struct selection sel = { UINT32_MAX, 0, UINT32_MAX, UINT32_MAX, 0, 0 };
	bool *hidden = NULL;

	p->selected = UINT32_MAX;
	p->visible = calloc(max, sizeof(*p->visible));
	if (!s || !p->visible || mark_short_lived(p, m, meta, &hidden)) {
		free(s);
		free(hidden);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nt; i++) {
		const struct thread *th = &m->threads.data[p->order[i].index];
		const struct process *proc = &m->processes.data[th->process];
		bool profiler = meta->profiler_pid && proc->pid == meta->profiler_pid, is_command;
		uint64_t cpu = thread_cpu_ns(th), score;

		/* -a: the machine's sleepers (thousands) are not what the recording was about. */
		if (proc->is_idle || (m->all_processes && th->blocked_throughout))
			continue;
		score = cpu + (proc->kernel_thread || profiler ? 0 : th->sched.offcpu_ns);
		/* -a: a thread that neither ran nor waited in view has nothing to show. */
		if (m->all_processes && !score && !th->samples.len)
			continue;
		if (hidden[th->process])
			continue;
		/* -- COMMAND: its main thread (of its busiest image, after an exec), or its
		 * busiest. */
		is_command = meta->selected_pid && proc->pid == meta->selected_pid;
		consider_selection(&sel, (uint32_t)i, cpu, is_command,
				   is_command && p->main_thread[th->process] == p->order[i].index,
				   profiler);
		s[n++] = (struct thread_score){ score + th->samples.len, (uint32_t)i };
	}
	qsort(s, n, sizeof(*s), cmp_score_desc);
	if (n > max)
		n = max;
	for (size_t i = 0; i < n; i++)
		p->visible[i] = s[i].pos;
	p->nr_visible = n;
	p->selected = selected_thread(&sel);
	/* The selected thread is shown, whatever its rank. */
	if (p->selected != UINT32_MAX) {
		bool shown = false;

		for (size_t i = 0; i < n && !shown; i++)
			shown = p->visible[i] == p->selected;
		if (!shown && n)
			p->visible[n - 1] = p->selected;
		else if (!shown)
			p->visible[p->nr_visible++] = p->selected;
	}
	qsort(p->visible, p->nr_visible, sizeof(*p->visible), cmp_u32);
	free(s);
	free(hidden);
	return 0;
}

int emit_plan_build(struct emit_plan *p, const struct model *m, const struct profile_tables *t,
		    const struct profile_meta *meta)
{
	size_t np = m->processes.len, nt = m->threads.len, max_rows = 0;
	struct proc_key *procs = NULL;
	uint32_t *rank = NULL;
	uint64_t end = m->end_ts > m->stop_ts ? m->end_ts : m->stop_ts;
	bool has_sched = profile_model_has_sched(m);
	int err = -ENOMEM;

	memset(p, 0, sizeof(*p));
	if (has_sched && t->sched_summary_marker_name == NO_INDEX) {
		log_error("internal error: the profile tables were built without scheduling data");
		return -EINVAL;
	}
	p->sched_schemas = has_sched || meta->sched_enabled;
	p->syscall_schemas = meta->syscalls_enabled || meta->syscalls_from_switch;
	p->syscall_totals = meta->syscalls_enabled;
	p->lost_schema = m->lost.len > 0;
	if (p->lost_schema && t->lost_marker_name == NO_INDEX) {
		log_error("internal error: the profile tables were built without the lost events");
		return -EINVAL;
	}
	for (size_t i = 0; i < nt; i++) {
		const struct thread *th = &m->threads.data[i];

		if (th->process >= np) {
			log_error("internal error: thread %u belongs to no known process", th->tid);
			return -EINVAL;
		}
		for (size_t k = 0; k < th->samples.len; k++) {
			uint32_t st = th->samples.data[k].stack;

			if (st != NO_INDEX && st >= t->raw_stack_map.len) {
				log_error(
					"internal error: sample of thread %u has unknown stack %u",
					th->tid, st);
				return -EINVAL;
			}
			if (th->samples.data[k].ts > end)
				end = th->samples.data[k].ts;
		}
		err = sched_markers_check(th, t, &end);
		if (err)
			return err;
		err = syscall_markers_check(th, &end);
		if (err)
			return err;
		if (thread_marker_rows_most(m, th) > max_rows)
			max_rows = thread_marker_rows_most(m, th);
	}
	err = -ENOMEM;
	p->end_ns = rel_ns(m, end);

	procs = calloc(np ? np : 1, sizeof(*procs));
	rank = calloc(np ? np : 1, sizeof(*rank));
	p->order = calloc(nt ? nt : 1, sizeof(*p->order));
	p->main_thread = calloc(np ? np : 1, sizeof(*p->main_thread));
	p->pid_dup = calloc(np ? np : 1, sizeof(*p->pid_dup));
	p->rows = calloc(max_rows ? max_rows : 1, sizeof(*p->rows));
	if (!procs || !rank || !p->order || !p->main_thread || !p->pid_dup || !p->rows)
		goto out;

	for (size_t i = 0; i < np; i++) {
		const struct process *proc = &m->processes.data[i];

		procs[i] =
			(struct proc_key){ !meta->selected_pid || proc->pid != meta->selected_pid,
					   proc->started ? proc->start_ts : 0, proc->first_ts,
					   proc->pid, (uint32_t)i };
	}
	qsort(procs, np, sizeof(*procs), cmp_proc_key);
	for (size_t r = 0; r < np; r++)
		rank[procs[r].index] = (uint32_t)r;
	err = number_reused_pids(p, m, procs);
	if (err)
		goto out;

	choose_main_threads(p, m);
	for (size_t i = 0; i < nt; i++) {
		const struct thread *th = &m->threads.data[i];

		p->order[i] =
			(struct thread_key){ rank[th->process], p->main_thread[th->process] != i,
					     th->first_ts, th->tid, (uint32_t)i };
	}
	qsort(p->order, nt, sizeof(*p->order), cmp_thread_key);
	err = choose_initial_threads(p, m, meta);
	if (!err)
		err = cgroup_meta_build(&p->cgroups, m);
out:
	free(procs);
	free(rank);
	if (err)
		emit_plan_free(p);
	return err;
}
