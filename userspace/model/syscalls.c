// SPDX-License-Identifier: BSD-2-Clause
/*
 * Syscalls in the model: the kernel sends a record for each syscall at least
 * the threshold long (a marker) and, per thread, totals of every syscall by
 * number, in pieces that add up (when its slots fill, when it exits, and at
 * the end of the recording).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "model_internal.h"
#include "../../bpf/bpfprof_abi.h"

int model_add_syscall(struct model *m, const struct syscall_event *e, size_t size)
{
	struct syscall_marker mk = { 0 };
	struct thread *t;

	if (size < sizeof(*e) || e->enter_ts > e->hdr.ts) {
		m->stats.events_malformed++;
		return 0;
	}
	if (e->hdr.tid == 0)
		return 0;
	t = model_thread(m, e->hdr.pid, e->hdr.tid, (int)e->hdr.cpu, e->enter_ts);
	if (!t)
		return -ENOMEM;
	mk.start = e->enter_ts;
	mk.end = e->hdr.ts;
	mk.ret = e->ret;
	memcpy(mk.args, e->args, sizeof(mk.args));
	mk.nr = e->nr;
	if (vec_push(&t->syscall_markers, mk))
		return -ENOMEM;
	m->stats.syscall_markers++;
	note_event_ts(m, t, e->enter_ts);
	note_event_ts(m, t, e->hdr.ts);
	return 0;
}

static struct syscall_count *count_of(struct thread *t, uint32_t nr)
{
	struct syscall_count zero = { .nr = nr };

	/* Threads use a few dozen distinct syscalls at most: a scan is fine. */
	for (size_t i = 0; i < t->syscall_counts.len; i++)
		if (t->syscall_counts.data[i].nr == nr)
			return &t->syscall_counts.data[i];
	if (vec_push(&t->syscall_counts, zero))
		return NULL;
	return &t->syscall_counts.data[t->syscall_counts.len - 1];
}

int model_add_syscall_totals(struct model *m, const struct syscall_totals_event *e, size_t size)
{
	struct thread *t;

	if (size < sizeof(*e) || e->nr_slots > SYSCALL_SLOTS) {
		m->stats.events_malformed++;
		return 0;
	}
	if (e->hdr.tid == 0 || e->nr_slots == 0)
		return 0;
	/*
	 * The totals cover the thread's syscalls up to hdr.ts: its newest
	 * image then (an exec keeps the tid but starts a new thread entry,
	 * which the totals are charged to from then on).
	 */
	t = model_thread(m, e->hdr.pid, e->hdr.tid, (int)e->hdr.cpu, e->hdr.ts);
	if (!t)
		return -ENOMEM;
	for (uint32_t i = 0; i < e->nr_slots; i++) {
		const struct syscall_total *s = &e->slots[i];
		struct syscall_count *c;

		if (!s->count)
			continue;
		if (!(c = count_of(t, s->nr)))
			return -ENOMEM;
		c->count += s->count;
		c->ns += s->ns;
		m->stats.syscalls_counted += s->count;
	}
	return 0;
}

static int cmp_marker(const void *a, const void *b)
{
	const struct syscall_marker *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end;
}

static int cmp_count(const void *a, const void *b)
{
	const struct syscall_count *x = a, *y = b;

	return x->nr < y->nr ? -1 : x->nr > y->nr;
}

void syscalls_finish(struct thread *t)
{
	if (t->syscall_markers.len > 1)
		vec_sort(&t->syscall_markers, cmp_marker);
	/*
	 * A marker's syscall is in the totals too, unless the thread's totals
	 * were lost (a full ring buffer): then the markers alone are counted.
	 * Blocked waits (--syscalls=blocking) come without any totals.
	 */
	for (size_t i = 0; i < t->syscall_markers.len; i++) {
		const struct syscall_marker *mk = &t->syscall_markers.data[i];
		struct syscall_count *c;

		if (mk->blocked_wait)
			continue;
		if (!(c = count_of(t, mk->nr)))
			break;
		c->shown++;
		if (c->count < c->shown) {
			c->count = c->shown;
			c->ns += mk->end - mk->start;
		}
	}
	if (t->syscall_counts.len > 1)
		vec_sort(&t->syscall_counts, cmp_count);
}
