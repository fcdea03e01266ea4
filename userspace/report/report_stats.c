// SPDX-License-Identifier: BSD-2-Clause
/*
 * One pass over every selected thread's samples and markers. A sample whose
 * leaf is bpfprof's synthetic "off-CPU: REASON" frame is waiting time, the
 * others are on-CPU time; a function's total counts each sample once, however
 * often it recurses in that stack.
 */
#include "report_stats.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define OFFCPU_PREFIX "off-CPU: "

/* The sum named `key` in `v`, added when missing; NULL when out of memory. */
static struct report_sum *sum_of(report_sum_vec *v, const char *key, const char *name)
{
	struct report_sum add = { .name = name, .key = key };

	for (size_t i = 0; i < v->len; i++)
		if (!strcmp(v->data[i].key, key))
			return &v->data[i];
	return vec_push(v, add) ? NULL : &vec_last(v);
}

static void add_to(struct report_sum *s, uint64_t count, double ms)
{
	s->count += count;
	s->ms += ms;
	if (ms > s->max_ms)
		s->max_ms = ms;
}

/* The string `key` of object `o`, or `dflt`. */
static const char *string_or(json_t *o, const char *key, const char *dflt)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : dflt;
}

static int64_t thread_tid(json_t *t)
{
	json_t *tid = json_object_get(t, "tid");

	if (json_is_integer(tid))
		return json_integer_value(tid);
	return json_is_string(tid) ? strtoll(json_string_value(tid), NULL, 10) : -1;
}

static bool selected(const struct report_filter *f, const char *pid, int64_t tid)
{
	if (f->pid >= 0 && strtoll(pid, NULL, 10) != f->pid)
		return false;
	return f->tid < 0 || tid == f->tid;
}

/*
 * A row of the samples table that stands for `weight` samples (bpfprof's
 * off-CPU rows hold a run of them, one per interval): that many samples'
 * time, and counted as that many.
 */
static void count_sample(struct report_stats *s, const struct report_profile *p,
			 struct report_thread *th, uint32_t stack, double weight, uint32_t stamp)
{
	double ms = p->interval_ms * weight;
	uint64_t count = weight >= 0 && weight < 4294967296.0 ? (uint64_t)(weight + 0.5) : 1;
	uint32_t leaf = p->frame_func[p->stack_frame[stack]];
	const char *name = report_func_name(p, leaf);
	bool off = !strncmp(name, OFFCPU_PREFIX, strlen(OFFCPU_PREFIX));
	struct report_sum *reason;
	uint16_t langs = 0;

	if (off) {
		th->off_ms += ms;
		s->off_ms += ms;
		s->samples_off += count;
		reason = sum_of(&s->reasons, name + strlen(OFFCPU_PREFIX),
				name + strlen(OFFCPU_PREFIX));
		if (reason)
			add_to(reason, count, ms);
		stack = p->stack_parent[stack];
	} else {
		th->on_ms += ms;
		s->on_ms += ms;
		s->samples_on += count;
		s->funcs[leaf].self_on_ms += ms;
	}
	for (; stack != REPORT_NO_PARENT; stack = p->stack_parent[stack]) {
		struct report_func *fn = &s->funcs[p->frame_func[p->stack_frame[stack]]];

		langs |= p->frame_lang[p->stack_frame[stack]];
		if (fn->seen == stamp)
			continue;
		fn->seen = stamp;
		if (off)
			fn->total_off_ms += ms;
		else
			fn->total_on_ms += ms;
	}
	if (!off)
		frame_lang_count(&s->lang, langs, count);
}

static int count_samples(struct report_stats *s, const struct report_profile *p, json_t *t,
			 struct report_thread *th, uint32_t *stamp)
{
	json_t *samples = json_object_get(t, "samples");
	json_t *stacks = json_object_get(samples, "stack");
	bool have_delta =
		p->cpu_unit_ms > 0 && json_is_array(json_object_get(samples, "threadCPUDelta"));
	size_t n = json_array_size(stacks);

	for (size_t i = 0; i < n; i++) {
		json_t *sv = json_array_get(stacks, i);
		double weight = report_column_number(samples, "weight", i, 1);

		if (have_delta)
			th->cpu_ms += report_column_number(samples, "threadCPUDelta", i, 0) *
				      p->cpu_unit_ms;
		if (!json_is_integer(sv) || json_integer_value(sv) < 0 ||
		    (size_t)json_integer_value(sv) >= p->nr_stacks)
			continue; /* an empty stack: no function to count */
		count_sample(s, p, th, (uint32_t)json_integer_value(sv), weight, ++*stamp);
	}
	if (!have_delta)
		th->cpu_ms = th->on_ms;
	return 0;
}

/* Keep the `max` longest markers, longest first. */
static int keep_if_slow(struct report_stats *s, const struct report_marker *mk)
{
	size_t at;

	if (!s->max_markers)
		return 0;
	if (s->slowest.len == s->max_markers && vec_last(&s->slowest).ms >= mk->ms)
		return 0;
	if (s->slowest.len < s->max_markers && vec_push(&s->slowest, *mk))
		return -ENOMEM;
	for (at = s->slowest.len - 1; at > 0 && s->slowest.data[at - 1].ms < mk->ms; at--)
		s->slowest.data[at] = s->slowest.data[at - 1];
	s->slowest.data[at] = *mk;
	return 0;
}

static bool is_syscall_type(const char *type)
{
	return !strcmp(type, "bpfprof.Syscall") || !strcmp(type, "bpfprof.SyscallWait");
}

static int count_markers(struct report_stats *s, const struct report_profile *p, json_t *t,
			 const struct report_thread *th)
{
	json_t *m = json_object_get(t, "markers");
	json_t *data = json_object_get(m, "data");
	size_t n = json_array_size(data);
	bool totals = false;
	int err;

	/* --syscalls=all: the totals count every call; its markers are only the long ones. */
	for (size_t i = 0; i < n && !totals; i++)
		totals = !strcmp(string_or(json_array_get(data, i), "type", ""),
				 "bpfprof.SyscallTotals");
	s->syscall_totals |= totals;
	for (size_t i = 0; i < n; i++) {
		json_t *d = json_array_get(data, i);
		const char *type = string_or(d, "type", "");
		const char *sys = json_string_value(json_object_get(d, "syscall"));
		double start = report_column_number(m, "startTime", i, 0);
		double end = report_column_number(m, "endTime", i, -1);
		struct report_marker mk;
		struct report_sum *sum;

		if (totals ? !strcmp(type, "bpfprof.SyscallTotals") : is_syscall_type(type)) {
			sum = sys ? sum_of(&s->syscalls, sys, sys) : NULL;
			if (sum && totals)
				add_to(sum,
				       (uint64_t)json_integer_value(json_object_get(d, "count")),
				       json_number_value(json_object_get(d, "time")));
			else if (sum)
				add_to(sum, 1, end > start ? end - start : 0);
		}
		if (end <= start || !strcmp(type, "bpfprof.SchedSummary") ||
		    !strcmp(type, "bpfprof.Process") || !strcmp(type, "bpfprof.SyscallTotals"))
			continue;
		mk = (struct report_marker){ .type = type,
					     .name = report_string(p, (int64_t)report_column_number(
									      m, "name", i, -1)),
					     .thread = th->name,
					     .pid = th->pid,
					     .tid = th->tid,
					     .start_ms = start,
					     .ms = end - start };
		if ((err = keep_if_slow(s, &mk)))
			return err;
	}
	return 0;
}

static int by_cpu_desc(const void *a, const void *b)
{
	double x = ((const struct report_thread *)a)->cpu_ms;
	double y = ((const struct report_thread *)b)->cpu_ms;

	return (x < y) - (x > y);
}

static int by_ms_desc(const void *a, const void *b)
{
	double x = ((const struct report_sum *)a)->ms, y = ((const struct report_sum *)b)->ms;

	return (x < y) - (x > y);
}

int report_stats_compute(struct report_stats *s, const struct report_profile *p,
			 const struct report_filter *f, size_t max_markers)
{
	uint32_t stamp = 0;
	size_t i;
	json_t *t;
	int err;

	memset(s, 0, sizeof(*s));
	s->max_markers = max_markers;
	s->funcs = calloc(p->nr_funcs ? p->nr_funcs : 1, sizeof(*s->funcs));
	if (!s->funcs)
		return -ENOMEM;
	json_array_foreach(p->threads, i, t)
	{
		struct report_thread th = { 0 };
		struct report_sum *proc;

		th.name = string_or(t, "name", "?");
		th.pid = string_or(t, "pid", "?");
		th.process = string_or(t, "processName", th.name);
		th.tid = thread_tid(t);
		if (!selected(f, th.pid, th.tid))
			continue;
		if ((err = count_samples(s, p, t, &th, &stamp)) ||
		    (err = count_markers(s, p, t, &th)))
			return err;
		s->cpu_ms += th.cpu_ms;
		proc = sum_of(&s->processes, th.pid, th.process);
		if (!proc || vec_push(&s->threads, th))
			return -ENOMEM;
		add_to(proc, 1, th.cpu_ms);
	}
	vec_sort(&s->threads, by_cpu_desc);
	vec_sort(&s->processes, by_ms_desc);
	vec_sort(&s->reasons, by_ms_desc);
	vec_sort(&s->syscalls, by_ms_desc);
	return 0;
}

void report_stats_free(struct report_stats *s)
{
	free(s->funcs);
	vec_free(&s->threads);
	vec_free(&s->processes);
	vec_free(&s->reasons);
	vec_free(&s->syscalls);
	vec_free(&s->slowest);
	memset(s, 0, sizeof(*s));
}
