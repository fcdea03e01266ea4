// SPDX-License-Identifier: BSD-2-Clause
/*
 * The model's lifetime: an empty model and freeing one. How a record gets
 * in is ingest.c; the registry of processes and threads is registry.c; the
 * frame and stack tables are interning.c. Everything in model/ is driven by
 * decoded events and never touches BPF, so tests feed it synthetic records.
 */
#include "model.h"
#include "sched.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void model_init(struct model *m, const struct proc_source *source, uint64_t start_ts)
{
	memset(m, 0, sizeof(*m));
	if (source)
		m->source = *source;
	m->start_ts = start_ts;
	m->end_ts = start_ts;
}

void model_free(struct model *m)
{
	for (size_t i = 0; i < m->processes.len; i++) {
		struct process *p = &m->processes.data[i];

		free(p->cmdline);
		free(p->cgroup);
		vec_free(&p->threads);
		vec_free(&p->mappings);
		vec_free(&p->before_exec);
	}
	for (size_t i = 0; i < m->threads.len; i++) {
		struct thread *t = &m->threads.data[i];

		vec_free(&t->samples);
		vec_free(&t->wait_ends);
		vec_free(&t->sched_markers);
		sched_replay_free(t->replay);
		vec_free(&t->syscall_markers);
		vec_free(&t->syscall_counts);
	}
	vec_free(&m->processes);
	vec_free(&m->threads);
	vec_free(&m->lost);
	vec_free(&m->frames);
	vec_free(&m->stacks);
	hmap_free(&m->pid_index);
	hmap_free(&m->tid_index);
	hmap_free(&m->frame_index);
	hmap_free(&m->stack_index);
}

int model_add_lost(struct model *m, uint64_t start, uint64_t end, const uint64_t count[LOST_KINDS])
{
	struct lost_interval li = { .start = start, .end = end > start ? end : start };
	uint64_t any = 0;

	for (int k = 0; k < LOST_KINDS; k++)
		any |= count[k];
	if (!any)
		return 0;
	if (m->lost.len && (start <= vec_last(&m->lost).end + LOST_MERGE_GAP_NS ||
			    m->lost.len >= LOST_MAX_INTERVALS)) {
		struct lost_interval *last = &vec_last(&m->lost);

		if (li.end > last->end)
			last->end = li.end;
		for (int k = 0; k < LOST_KINDS; k++)
			last->count[k] += count[k];
		return 0;
	}
	for (int k = 0; k < LOST_KINDS; k++)
		li.count[k] = count[k];
	return vec_push(&m->lost, li) ? -ENOMEM : 0;
}

/* Settings of the recording: the same in a snapshot, the live model and a window copy. */
void model_copy_settings(struct model *dst, const struct model *src)
{
	dst->period_is_ns = src->period_is_ns;
	dst->nominal_period_ns = src->nominal_period_ns;
	dst->sched_enabled = src->sched_enabled;
	dst->offcpu_samples = src->offcpu_samples;
	dst->offcpu_interval_ns = src->offcpu_interval_ns;
	dst->sched_min_ns = src->sched_min_ns;
	dst->syscalls_enabled = src->syscalls_enabled;
	dst->syscalls_from_switch = src->syscalls_from_switch;
	dst->syscall_min_ns = src->syscall_min_ns;
	dst->all_processes = src->all_processes;
	dst->cgroup_names = src->cgroup_names;
	dst->lifecycle = src->lifecycle;
	dst->switch_trim_lo = src->switch_trim_lo;
	dst->switch_trim_hi = src->switch_trim_hi;
}
