// SPDX-License-Identifier: BSD-2-Clause
/*
 * Threads blocked all along: no switch record describes a thread that
 * slept from before the recording to its end, so at the end each gets its
 * wait from what it is doing now (recording.h: recording_note_blocked_threads).
 */
#include "recording.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../capture/task_stacks.h"
#include "../model/proc_source.h"
#include "../util/clock.h"
#include "../util/log.h"

/*
 * -a: the user stacks walked at most (process memory reads, ~20 us each);
 * the threads past it get their wait and syscall, with no stack. Kernel
 * threads have no user stack to walk and always get theirs.
 */
#define BLOCKED_USER_WALKS_MAX 1000

/* A thread blocked all along, and what it is known to be waiting at. */
struct blocked_thread {
	uint32_t thread; /* index in the model's threads */
	bool seen;	 /* the task iterator reported it asleep (-a: else it ran) */
	struct blocked_wait w;
};

struct blocked_set {
	struct model *m;
	struct blocked_thread *b;
	size_t n, cap, nslot;
	uint32_t *slot; /* per model thread (nslot of them): its index in b, or NO_INDEX */
	uint64_t ts;
	bool stacks;			    /* with off-CPU samples: stacks, as other waits have */
	size_t user_walks_left;		    /* SIZE_MAX: no cap */
	bool all;			    /* -a: the iterator's state says who sleeps */
	size_t reported, with_stack, added; /* for the log */
};

static int push_blocked(struct blocked_set *c, uint32_t thread, uint8_t reason)
{
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 64;
		struct blocked_thread *nb = realloc(c->b, cap * sizeof(*c->b));

		if (!nb)
			return -ENOMEM;
		c->b = nb;
		c->cap = cap;
	}
	if (thread >= c->nslot) {
		size_t ns = c->nslot ? 2 * c->nslot : 64;
		uint32_t *nsl;

		while (ns <= thread)
			ns *= 2;
		nsl = realloc(c->slot, ns * sizeof(*nsl));
		if (!nsl)
			return -ENOMEM;
		for (size_t i = c->nslot; i < ns; i++)
			nsl[i] = NO_INDEX;
		c->slot = nsl;
		c->nslot = ns;
	}
	c->slot[thread] = (uint32_t)c->n;
	c->b[c->n++] = (struct blocked_thread){
		thread, false, { .reason = reason, .stack = NO_INDEX, .sys_nr = -1 }
	};
	return 0;
}

/*
 * Its blocked_thread, when pid/tid is one (and the same thread, not a
 * reused tid). -a: a user thread asleep that the recording never heard of
 * (a `sleep 60` started before it) becomes a thread of the model here.
 */
static struct blocked_thread *find_blocked(struct blocked_set *c, uint32_t pid, uint32_t tid,
					   uint32_t state)
{
	const struct thread *t = model_find_thread(c->m, tid);
	size_t i;

	if (!t && c->all && pid && !(state & TASK_STACK_KTHREAD)) {
		t = model_thread(c->m, pid, tid, -1, c->m->start_ts);
		if (!t || push_blocked(c, (uint32_t)(t - c->m->threads.data), OFFCPU_SLEEPING))
			return NULL;
		c->added++;
	}
	if (!t || t->pid != pid)
		return NULL;
	i = (size_t)(t - c->m->threads.data);
	if (i >= c->nslot || c->slot[i] == NO_INDEX)
		return NULL;
	return &c->b[c->slot[i]];
}

static bool want_stack(void *ctx, uint32_t pid, uint32_t tid, uint32_t state, bool walks_user)
{
	struct blocked_set *c = ctx;
	struct blocked_thread *b = find_blocked(c, pid, tid, state);

	if (!b || !c->stacks || b->w.stack != NO_INDEX)
		return false;
	if (!walks_user)
		return true;
	if (!c->user_walks_left)
		return false;
	if (c->user_walks_left != SIZE_MAX)
		c->user_walks_left--;
	return true;
}

static int on_blocked_stack(void *ctx, const struct task_stack *st)
{
	struct blocked_set *c = ctx;
	struct blocked_thread *b = find_blocked(c, st->pid, st->tid, st->state);
	int err;

	if (!b || b->seen)
		return 0;
	b->seen = true;
	c->reported++;
	b->w.sys_nr = st->sys_nr;
	memcpy(b->w.sys_args, st->sys_args, sizeof(b->w.sys_args));
	if (c->all)
		b->w.reason = (st->state & TASK_STACK_BLOCKED) && !(st->state & TASK_STACK_NOLOAD)
				      ? OFFCPU_BLOCKED
				      : OFFCPU_SLEEPING;
	if (!st->kstack_len && !st->ustack_len)
		return 0;
	err = model_task_stack(c->m, b->thread, st->ips, st->kstack_len, st->ustack_len, st->py,
			       st->py_len, st->flags, c->ts, &b->w.stack);
	c->with_stack += !err;
	return err == -ENOMEM ? err : 0;
}

/*
 * Where each blocked thread waits: its stacks and syscall as it sleeps
 * now, which are those it slept with all along (it never ran). -a: one
 * pass of the task iterator over the machine; else one per process.
 */
static int blocked_stacks(struct recording *r, struct blocked_set *c)
{
	int err;

	if (c->all)
		return task_stacks_of(&r->session, 0, want_stack, on_blocked_stack, c);
	for (size_t i = 0; i < c->n; i++) {
		uint32_t pid = c->m->threads.data[c->b[i].thread].pid;
		bool done = false;

		for (size_t k = 0; k < i && !done; k++)
			done = c->m->threads.data[c->b[k].thread].pid == pid;
		if (done)
			continue;
		err = task_stacks_of(&r->session, pid, want_stack, on_blocked_stack, c);
		if (err == -ENOMEM || err == -EOPNOTSUPP)
			return err;
		if (err)
			log_debug("stacks of the blocked threads of pid %u: %s", pid,
				  strerror(-err));
	}
	return 0;
}

/* The threads of the model that may have slept all along; -p: those /proc says sleep now. */
static int collect(struct blocked_set *c)
{
	struct model *m = c->m;

	for (size_t i = 0; i < m->threads.len; i++) {
		const struct thread *t = &m->threads.data[i];
		char state = 'S';

		if (!model_thread_silent(t))
			continue;
		if (!c->all) {
			state = proc_thread_state("/proc", t->pid, t->tid);
			if (state != 'S' && state != 'D')
				continue;
		}
		if (push_blocked(c, (uint32_t)i, state == 'D' ? OFFCPU_BLOCKED : OFFCPU_SLEEPING))
			return -ENOMEM;
	}
	return 0;
}

void recording_note_blocked_threads(struct recording *r, struct model *m,
				    const struct options *opts)
{
	struct blocked_set c = { .m = m, .ts = m->stop_ts, .all = opts->all };
	uint64_t t0 = clock_ns(CLOCK_MONOTONIC);
	int err;

	/* A cgroup's threads are not all in the model: the machine's sleepers are no targets. */
	if (opts->nr_cgroups || !m->sched_enabled)
		return;
	c.stacks = m->offcpu_samples;
	c.user_walks_left = c.all ? BLOCKED_USER_WALKS_MAX : SIZE_MAX;
	if (collect(&c))
		goto out; /* out of memory: the rest stay blank */
	if (c.all || (c.n && (m->offcpu_samples || m->syscalls_from_switch))) {
		err = blocked_stacks(r, &c);
		if (err == -ENOMEM)
			goto out;
		/* -a: who sleeps is the iterator's answer, and without it no one is known to. */
		if (err && c.all) {
			log_debug("threads asleep all along: %s", strerror(-err));
			goto out;
		}
	}
	for (size_t i = 0; i < c.n; i++) {
		if (c.all && !c.b[i].seen)
			continue;
		if (model_blocked_throughout(m, c.b[i].thread, &c.b[i].w))
			break;
	}
	log_debug("threads blocked all along: %zu (%zu new to the recording), %zu reported asleep, "
		  "%zu with stacks, in %" PRIu64 " us",
		  c.n, c.added, c.reported, c.with_stack, (clock_ns(CLOCK_MONOTONIC) - t0) / 1000);
out:
	free(c.slot);
	free(c.b);
}
