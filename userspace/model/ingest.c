// SPDX-License-Identifier: BSD-2-Clause
/*
 * How a record becomes part of the model, the top of model/: each ring
 * buffer record is checked, its thread found in the registry, its stack
 * built from its addresses and interned, and the record handed to its
 * handler (sched.c's replay queue, syscalls.c, or straight into the
 * thread's samples); model_finish ends the recording. Nothing below calls
 * back up here.
 */
#include "model.h"
#include "model_internal.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched.h"

/* Re-read a process's maps for an unknown address at most this often (ns). */
#define MAPS_REREAD_INTERVAL_NS (20ULL * 1000 * 1000)

static const struct proc_mapping *find_in(const struct proc_mapping *maps, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct proc_mapping *pm = &maps[mid];

		if (addr < pm->start)
			hi = mid;
		else if (addr >= pm->end)
			lo = mid + 1;
		else
			return pm;
	}
	return NULL;
}

static const struct proc_mapping *find_mapping(const struct process *p, uint64_t addr)
{
	return find_in(p->mappings.data, p->mappings.len, addr);
}

/* Translate a user address to (object, file offset); re-read maps once if it is new. */
/* The object and offset of user address addr; false (OBJ_UNKNOWN) when no code is known there. */
static bool resolve_user_addr(struct model *m, struct process *p, uint64_t addr, bool is_return,
			      uint64_t ts, uint32_t *object, uint64_t *offset)
{
	bool before_exec = p->before_exec.len && ts < p->exec_ts;
	const struct proc_mapping *pm =
		before_exec ? find_in(p->before_exec.data, p->before_exec.len, addr)
			    : find_mapping(p, addr);
	int64_t jit;

	/* Before the exec: the old image's mappings, which /proc no longer has. */
	if (!pm && !before_exec && !p->gone && ts - p->maps_read_ts >= MAPS_REREAD_INTERVAL_NS) {
		model_read_maps(m, p, ts);
		pm = find_mapping(p, addr);
	}
	if (pm && pm->object != NO_INDEX) {
		*object = pm->object;
		*offset = addr - pm->start + pm->pgoff;
	} else if (m->source.java_frame &&
		   (jit = m->source.java_frame(m->source.ctx, p->pid, p->uid, addr, is_return)) >=
			   0) {
		/* A JVM's code: its Java methods, read from the JVM now, while it runs. */
		*object = OBJ_JAVA;
		*offset = (uint64_t)jit;
	} else if (m->source.jit_object &&
		   (jit = m->source.jit_object(m->source.ctx, p->pid, pm != NULL, ts)) >= 0) {
		/* Anonymous (or unmapped) code a runtime may describe in its perf map. */
		*object = (uint32_t)jit;
		*offset = addr;
	} else {
		*object = OBJ_UNKNOWN;
		*offset = addr;
		return false;
	}
	return true;
}

static void user_addr_to_object(struct model *m, struct process *p, uint64_t addr, bool is_return,
				uint64_t ts, uint32_t *object, uint64_t *offset)
{
	if (!resolve_user_addr(m, p, addr, is_return, ts, object, offset))
		m->stats.unknown_user_addrs++;
}

static int push_frame(struct model *m, uint32_t *stack, uint32_t object, uint64_t offset,
		      bool is_return)
{
	int64_t f = model_intern_frame(m, object, offset, is_return);
	int64_t s;

	if (f < 0)
		return (int)f;
	s = model_intern_stack(m, *stack, (uint32_t)f);
	if (s < 0)
		return (int)s;
	*stack = (uint32_t)s;
	return 0;
}

/* The stack part of a sample or switch record: ips[] as sample_event describes it. */
struct stack_record {
	const __u64 *ips;
	uint32_t kstack_len, ustack_len;
	uint32_t flags; /* SAMPLE_*STACK_TRUNCATED */
	uint64_t ts;
	const __u64 *py; /* py_len Python frames, two words each */
	uint32_t py_len;
	uint32_t interp; /* enum interp_kind: whose frames py holds */
	const __u64 *rt; /* rt_len runtime records, RT_REC_WORDS words each (bpf/runtime.bpf.h) */
	uint32_t rt_len;
};

/*
 * User frame i's runtime record, named (OBJ_JAVA, entry into *offset);
 * false when it has none or its words name nothing. *cursor walks the
 * records (innermost first) down as build_stack walks the frames down.
 */
static bool runtime_frame(struct model *m, struct process *p, const struct stack_record *e,
			  uint32_t i, uint64_t ip, bool is_return, int *cursor, uint64_t *offset)
{
	const __u64 *rec;
	int64_t entry;

	while (*cursor >= 0 && RT_REC_FRAME(e->rt[RT_REC_WORDS * *cursor]) > i)
		(*cursor)--;
	if (*cursor < 0 || !m->source.runtime_frame)
		return false;
	rec = &e->rt[RT_REC_WORDS * *cursor];
	if (RT_REC_FRAME(rec[0]) != i)
		return false;
	entry = m->source.runtime_frame(m->source.ctx, p->pid, p->uid, RT_REC_KIND(rec[0]), ip,
					is_return, (const uint64_t *)rec + 1);
	if (entry < 0)
		return false;
	*offset = (uint64_t)entry;
	return true;
}

/*
 * The Python frames of a sample, in groups: one per run of the interpreter
 * loop, innermost first, each ending at the frame the loop entered with
 * (PY_FRAME_ENTRY). The loop's native frames, tagged USTACK_PY_EVAL, take
 * the groups in the same order, the innermost loop the innermost group.
 */
struct py_groups {
	uint32_t n;
	uint32_t start[BPFPROF_MAX_PYFRAMES + 1]; /* group g is [start[g], start[g + 1]) */
};

static void py_group(const struct stack_record *e, struct py_groups *g)
{
	g->n = 0;
	g->start[0] = 0;
	for (uint32_t j = 0; j < e->py_len; j++)
		if ((e->py[2 * j + 1] & PY_FRAME_ENTRY) || j + 1 == e->py_len)
			g->start[++g->n] = j + 1;
}

/* The model source that names the sample's interpreter frames, and their object; NULL: none. */
static int64_t (*interp_namer(const struct model *m, const struct stack_record *e,
			      uint32_t *object))(void *, uint32_t, uint64_t, uint64_t)
{
	switch (e->interp) {
	case INTERP_PYTHON:
		*object = OBJ_PYTHON;
		return m->source.python_frame;
	case INTERP_RUBY:
		*object = OBJ_RUBY;
		return m->source.ruby_frame;
	case INTERP_PHP:
		*object = OBJ_PHP;
		return m->source.php_frame;
	default:
		return NULL;
	}
}

/* Group g's Python frames, outermost first, in place of an interpreter loop frame. */
static int push_python(struct model *m, struct process *p, const struct stack_record *e,
		       const struct py_groups *g, uint32_t group, uint32_t *stack)
{
	uint32_t object = OBJ_PYTHON;
	int64_t (*name)(void *, uint32_t, uint64_t, uint64_t) = interp_namer(m, e, &object);

	for (uint32_t j = g->start[group + 1]; j-- > g->start[group];) {
		int64_t entry = name(m->source.ctx, p->pid, e->py[2 * j],
				     e->py[2 * j + 1] & ~PY_FRAME_ENTRY);
		int err;

		if (entry < 0)
			return (int)entry;
		if ((err = push_frame(m, stack, object, (uint64_t)entry, false)))
			return err;
	}
	return 0;
}

/*
 * How far back a frame is compared with the ones before it: a chain that
 * loops through more frames than this repeats each at most
 * BPFPROF_MAX_USTACK / (UNWIND_REPEAT_WINDOW + 1) times, and the cost per
 * sample stays bounded.
 */
#define UNWIND_REPEAT_WINDOW 32

/* Whether ip is one of the up to UNWIND_REPEAT_WINDOW frames before frame i. */
static bool repeats_recent(const __u64 *uips, uint32_t i, uint64_t ip)
{
	for (uint32_t j = i > UNWIND_REPEAT_WINDOW ? i - UNWIND_REPEAT_WINDOW : 0; j < i; j++)
		if ((uips[j] & ~USTACK_TAGS) == ip)
			return true;
	return false;
}

/*
 * The user frames of a sample up to the first that repeats a recent one at
 * an address no executable mapping holds: past it a frame-pointer walk did
 * not move, or went round a list (bpf_get_stack's, which checks nothing: a
 * heap address in RBP whose first word points at itself, as a struct
 * pthread's does, or at the next of glibc's cached thread stacks, repeats
 * to the depth limit). A recursion repeats return addresses too, but in
 * code. Returns how many frames to keep.
 */
static uint32_t ustack_until_stuck(struct model *m, struct process *p, const struct stack_record *e)
{
	const __u64 *uips = e->ips + e->kstack_len;
	uint32_t object;
	uint64_t offset, ip;

	for (uint32_t i = 1; i < e->ustack_len; i++) {
		ip = uips[i] & ~USTACK_TAGS;
		if (repeats_recent(uips, i, ip) &&
		    !resolve_user_addr(m, p, ip, true, e->ts, &object, &offset) &&
		    !find_mapping(p, ip))
			return i;
	}
	return e->ustack_len;
}

/*
 * Build the raw stack of a sample, root first: user frames from the
 * outermost caller inwards, then kernel frames from the syscall/interrupt
 * entry to the leaf. A truncated side gets a marker frame where the cut is.
 */
static int build_stack(struct model *m, struct process *p, const struct stack_record *e,
		       uint32_t *out)
{
	const __u64 *kips = e->ips, *uips = e->ips + e->kstack_len;
	uint32_t stack = NO_INDEX, loops = 0, ulen = ustack_until_stuck(m, p, e);
	int rt_cursor = (int)e->rt_len - 1;
	bool utruncated = (e->flags & SAMPLE_USTACK_TRUNCATED) || ulen < e->ustack_len;
	struct py_groups groups;
	uint32_t interp_object;
	bool loop_replaced = false; /* the loop frame outward of this one got its group */
	int err;

	groups.n = 0;
	/* Asked until known: the capture may learn it runs Python after its first samples. */
	if (!p->python_version && m->source.python_version)
		p->python_version = m->source.python_version(m->source.ctx, p->pid);
	if (e->py_len && interp_namer(m, e, &interp_object)) {
		py_group(e, &groups);
		for (uint32_t i = 0; i < ulen; i++)
			loops += !!(uips[i] & USTACK_PY_EVAL);
	}
	if (utruncated) {
		if ((err = push_frame(m, &stack, OBJ_TRUNCATED, 0, false)))
			return err;
		m->stats.truncated_stacks++;
	}
	for (int i = (int)ulen - 1; i >= 0; i--) {
		uint32_t object;
		uint64_t offset;
		/*
		 * Every user frame but the innermost is a return address; so is the
		 * innermost when the thread is in a syscall (the instruction after
		 * it). In user mode, or in the kernel through an interrupt or a
		 * fault, it is the instruction about to run.
		 */
		bool is_return = i > 0 || (e->flags & SAMPLE_USER_IN_SYSCALL);
		uint64_t ip = uips[i] & ~USTACK_TAGS;

		/*
		 * The VM's own code inside or beside its loop (Ruby's core, PHP's
		 * handlers, both called from the loop): the frames put in place of
		 * that loop stand for it; under a loop left as a C frame, it stays.
		 */
		if ((uips[i] & USTACK_INTERP_VM) && loop_replaced)
			continue;
		/* The interpreter loop: its Python frames instead, when there are as many groups.
		 */
		if ((uips[i] & USTACK_PY_EVAL) && loops && loops - 1 < groups.n) {
			err = push_python(m, p, e, &groups, --loops, &stack);
			if (err)
				return err;
			loop_replaced = true;
			continue;
		}
		if (uips[i] & USTACK_PY_EVAL) {
			loops -= !!loops;
			loop_replaced = false;
		}
		/* A runtime's frame, named from the words BPF read in it. */
		if (e->rt_len &&
		    runtime_frame(m, p, e, (uint32_t)i, ip, is_return, &rt_cursor, &offset))
			object = OBJ_JAVA;
		else
			user_addr_to_object(m, p, ip, is_return, e->ts, &object, &offset);
		if ((err = push_frame(m, &stack, object, offset, is_return)))
			return err;
	}
	if ((e->flags & SAMPLE_KSTACK_TRUNCATED) && !utruncated) {
		if ((err = push_frame(m, &stack, OBJ_TRUNCATED, 0, false)))
			return err;
		m->stats.truncated_stacks++;
	}
	for (int i = (int)e->kstack_len - 1; i >= 0; i--)
		if ((err = push_frame(m, &stack, OBJ_KERNEL, kips[i], i > 0)))
			return err;
	*out = stack;
	return 0;
}

int model_task_stack(struct model *m, uint32_t thread, const uint64_t *ips, uint32_t kstack_len,
		     uint32_t ustack_len, const uint64_t *py, uint32_t py_len, uint32_t flags,
		     uint64_t ts, uint32_t *stack)
{
	struct stack_record sr = { .ips = (const __u64 *)ips,
				   .kstack_len = kstack_len,
				   .ustack_len = ustack_len,
				   .py = (const __u64 *)py,
				   .py_len = py ? py_len : 0,
				   .flags = flags,
				   .ts = ts };
	struct process *p;

	if (thread >= m->threads.len || kstack_len > BPFPROF_MAX_KSTACK ||
	    ustack_len > BPFPROF_MAX_USTACK || sr.py_len > BPFPROF_MAX_PYFRAMES)
		return -EINVAL;
	p = &m->processes.data[m->threads.data[thread].process];
	if (!p->maps_read)
		model_read_maps(m, p, ts);
	return build_stack(m, p, &sr, stack);
}

/* Whether a record of `size` bytes holds the ips[] its lengths announce. */
static bool stack_fits(size_t size, size_t ips_offset, uint32_t kstack_len, uint32_t ustack_len)
{
	return size >= ips_offset && kstack_len <= BPFPROF_MAX_KSTACK &&
	       ustack_len <= BPFPROF_MAX_USTACK &&
	       size >= ips_offset + sizeof(uint64_t) * (kstack_len + ustack_len);
}

/*
 * A wakeup the kernel kept with the thread (its wait was under the
 * threshold) and handed over in the thread's next record: it goes into the
 * replay as the wakeup record it would have been, before that record.
 */
static int queue_folded_wakeup(struct model *m, struct thread *t, const struct folded_wakeup *w)
{
	struct sched_event ev = { 0 };

	if (!w->ts)
		return 0;
	m->stats.wakeups++;
	m->stats.wakeups_folded++;
	ev.ts = w->ts;
	ev.stack = NO_INDEX;
	ev.type = SCHED_EV_WAKEUP;
	ev.other_pid = w->waker_pid;
	ev.other_tid = w->waker_tid;
	/*
	 * No waker name: the kernel folds only waits under the marker
	 * threshold, so no marker will ever show it; the replay counts the
	 * wakeup for the waker by its tid.
	 */
	return sched_queue(t, &ev);
}

int model_add_sample(struct model *m, const struct sample_event *e, size_t size)
{
	struct stack_record sr;
	struct thread_sample s = { 0 };
	struct process *p;
	struct thread *t;
	int err;

	/* The lengths are read only once the record is known to hold them. */
	if (size < offsetof(struct sample_event, ips) ||
	    !stack_fits(size, offsetof(struct sample_event, ips), e->kstack_len, e->ustack_len) ||
	    e->py_len > BPFPROF_MAX_PYFRAMES || e->rt_len > BPFPROF_MAX_RTFRAMES ||
	    (e->py_len && e->rt_len) ||
	    size < offsetof(struct sample_event, ips) +
			    sizeof(uint64_t) * (e->kstack_len + e->ustack_len + 2u * e->py_len +
						RT_REC_WORDS * e->rt_len)) {
		m->stats.events_malformed++;
		return 0;
	}
	t = model_thread(m, e->hdr.pid, e->hdr.tid, (int)e->hdr.cpu, e->hdr.ts);
	if (!t)
		return -ENOMEM;
	p = &m->processes.data[t->process];
	/* The kernel's word: /proc has nothing on a kworker gone before it was read. */
	if (e->flags & EV_KTHREAD)
		p->kernel_thread = true;
	if (e->hdr.tid != 0)
		model_name_thread(t, e->comm, e->hdr.ts);
	if (!p->maps_read)
		model_read_maps(m, p, e->hdr.ts);

	sr = (struct stack_record){ .ips = e->ips,
				    .kstack_len = e->kstack_len,
				    .ustack_len = e->ustack_len,
				    .flags = e->flags,
				    .ts = e->hdr.ts,
				    .py = e->ips + e->kstack_len + e->ustack_len,
				    .py_len = e->py_len,
				    .interp = e->interp,
				    .rt = e->ips + e->kstack_len + e->ustack_len,
				    .rt_len = e->rt_len };
	err = build_stack(m, p, &sr, &s.stack);
	if (err)
		return err;
	if (m->sched_enabled && e->hdr.tid != 0) {
		/* Its CPU time is known only once the thread's events are in order. */
		struct sched_event ev = { .ts = e->hdr.ts,
					  .since = e->oncpu_since,
					  .since_runtime_ns = e->oncpu_runtime_ns,
					  .stack = s.stack,
					  .type = SCHED_EV_SAMPLE,
					  .ustack_end = SAMPLE_USTACK_END(e->flags) };

		if ((err = queue_folded_wakeup(m, t, &e->woken)) || (err = sched_queue(t, &ev)))
			return err;
	} else {
		s.ts = e->hdr.ts;
		s.cpu_delta_ns =
			m->period_is_ns || !m->nominal_period_ns ? e->period : m->nominal_period_ns;
		s.kind = SAMPLE_ON_CPU;
		s.ustack_end = SAMPLE_USTACK_END(e->flags);
		if (vec_push(&t->samples, s))
			return -ENOMEM;
	}
	note_event_ts(m, t, e->hdr.ts);
	m->stats.samples++;
	return 0;
}

/*
 * The stack of the sample of `t` at ts: its row, or its event still in the
 * replay's queue; NULL (and *end NULL) when neither holds it (a window cut
 * since, a replay that dropped it).
 */
static uint32_t *sample_stack_at(struct thread *t, uint64_t ts, uint8_t **end)
{
	if (t->replay)
		for (size_t i = t->replay->pending.len; i-- > 0;) {
			struct sched_event *ev = &t->replay->pending.data[i];

			if (ev->ts == ts && ev->type == SCHED_EV_SAMPLE) {
				*end = &ev->ustack_end;
				return &ev->stack;
			}
		}
	for (size_t i = t->samples.len; i-- > 0;) {
		struct thread_sample *row = &t->samples.data[i];

		if (row->ts == ts && row->kind == SAMPLE_ON_CPU) {
			*end = &row->ustack_end;
			return &row->stack;
		}
		/* Rows are in time order but for a few: a copy waits 2 s at most. */
		if (row->ts + 10000000000ull < ts)
			break;
	}
	*end = NULL;
	return NULL;
}

/*
 * Whether `stack` has a cut marker (OBJ_TRUNCATED): build_stack puts one
 * in a stack at most, and counted it in truncated_stacks. Root-first
 * interning gives every node a smaller prefix: the chain ends.
 */
static bool stack_has_cut(const struct model *m, uint32_t stack)
{
	while (stack != NO_INDEX && stack < m->stacks.len) {
		const struct raw_stack *s = &m->stacks.data[stack];

		if (s->frame < m->frames.len && m->frames.data[s->frame].object == OBJ_TRUNCATED)
			return true;
		if (s->prefix != NO_INDEX && s->prefix >= stack)
			break;
		stack = s->prefix;
	}
	return false;
}

/*
 * A copied sample's stack finished (capture/stack_finish.c). Its partial
 * stack's nodes stay interned: they may be shared (another sample, the
 * same leaf frames), and one no sample refers to is harmless to the
 * front-end, which builds its call tree from the samples' stacks only
 * (docs/processed-profile-format.md, 5.2: nodes are shared, none is
 * required to be used), and a window's cut (cut.c) keeps only the nodes
 * still used. Its frames are the finished stack's own leaf frames: no
 * name appears that the profile does not show. The sample counts in truncated_stacks by its
 * finished stack only (S2/S5 review, finding 14).
 */
int model_sample_restack(struct model *m, const struct sample_event *e, size_t size)
{
	struct stack_record sr;
	struct thread *t;
	uint32_t *stack, fresh;
	uint8_t *end;
	int err;

	if (size < offsetof(struct sample_event, ips) ||
	    !stack_fits(size, offsetof(struct sample_event, ips), e->kstack_len, e->ustack_len) ||
	    e->py_len) {
		m->stats.events_malformed++;
		return 0;
	}
	t = model_thread_at(m, e->hdr.pid, e->hdr.tid, e->hdr.ts);
	stack = t ? sample_stack_at(t, e->hdr.ts, &end) : NULL;
	if (!stack) {
		m->stats.restacks_missed++;
		return 0;
	}
	/* A restack has no Python frames or runtime records: BPF keeps no copy of such a sample. */
	sr = (struct stack_record){ .ips = e->ips,
				    .kstack_len = e->kstack_len,
				    .ustack_len = e->ustack_len,
				    .flags = e->flags,
				    .ts = e->hdr.ts };
	err = build_stack(m, &m->processes.data[t->process], &sr, &fresh);
	if (err)
		return err;
	if (stack_has_cut(m, *stack) && m->stats.truncated_stacks)
		m->stats.truncated_stacks--;
	*stack = fresh;
	*end = SAMPLE_USTACK_END(e->flags);
	m->stats.restacks++;
	return 0;
}

/* Drop the tracing frames (BPF program, tracepoint) leafward of __schedule. */
static void trim_switch_stack(const struct model *m, struct stack_record *sr)
{
	if (m->switch_trim_lo >= m->switch_trim_hi)
		return;
	for (uint32_t i = 0; i < sr->kstack_len; i++)
		if (sr->ips[i] >= m->switch_trim_lo && sr->ips[i] < m->switch_trim_hi) {
			/* The user frames stay where they are: ips + kstack_len. */
			sr->ips += i;
			sr->kstack_len -= i;
			return;
		}
}

/* A target thread left the target cgroups: its timeline ends (see SWITCH_LEFT_TARGETS). */
static int add_leave(struct model *m, const struct switch_event *e)
{
	struct sched_event ev = { 0 };
	struct thread *t;
	int err;

	if (!m->sched_enabled || e->hdr.tid == 0)
		return 0;
	t = model_thread(m, e->hdr.pid, e->hdr.tid, (int)e->hdr.cpu, e->hdr.ts);
	if (!t)
		return -ENOMEM;
	ev.ts = e->hdr.ts;
	ev.since = e->oncpu_since;
	ev.stack = NO_INDEX;
	ev.type = SCHED_EV_LEAVE;
	if ((err = sched_queue(t, &ev)))
		return err;
	note_event_ts(m, t, e->hdr.ts);
	return 0;
}

/* Only the short waits a thread had since its last switch record (SWITCH_FOLD_ONLY). */
static int add_folded(struct model *m, const struct switch_event *e)
{
	struct sched_event ev = { 0 };
	struct thread *t;
	int err;

	if (!m->sched_enabled || e->hdr.tid == 0 || !e->folded.waits)
		return 0;
	t = model_thread(m, e->hdr.pid, e->hdr.tid, (int)e->hdr.cpu, e->hdr.ts);
	if (!t)
		return -ENOMEM;
	ev.ts = e->hdr.ts;
	ev.stack = NO_INDEX;
	ev.type = SCHED_EV_FOLDED;
	ev.folded = e->folded;
	if ((err = sched_queue(t, &ev)))
		return err;
	note_event_ts(m, t, e->hdr.ts);
	return 0;
}

int model_add_switch(struct model *m, const struct switch_event *e, size_t size)
{
	struct sched_event ev = { 0 };
	struct stack_record sr;
	bool has_stack;
	struct process *p;
	struct thread *t;
	int err;

	if (size < offsetof(struct switch_event, ips)) {
		m->stats.events_malformed++;
		return 0;
	}
	has_stack = e->flags & SWITCH_HAS_STACK;
	if (has_stack &&
	    (!stack_fits(size, offsetof(struct switch_event, ips), e->kstack_len, e->ustack_len) ||
	     e->rt_len > BPFPROF_MAX_RTFRAMES || e->py_len > BPFPROF_MAX_PYFRAMES ||
	     (e->py_len && e->rt_len) ||
	     size < offsetof(struct switch_event, ips) +
			     sizeof(uint64_t) * (e->kstack_len + e->ustack_len + 2u * e->py_len +
						 RT_REC_WORDS * e->rt_len))) {
		m->stats.events_malformed++;
		return 0;
	}
	if (e->flags & SWITCH_LEFT_TARGETS)
		return add_leave(m, e);
	if (e->flags & SWITCH_FOLD_ONLY)
		return add_folded(m, e);
	m->stats.switches++;
	/* Idle's slices are not accounted; a non-target prev has nothing to tell. */
	if (!m->sched_enabled || !(e->flags & SWITCH_PREV_TARGET) || e->hdr.tid == 0)
		return 0;
	t = model_thread(m, e->hdr.pid, e->hdr.tid, (int)e->hdr.cpu, e->hdr.ts);
	if (!t)
		return -ENOMEM;
	p = &m->processes.data[t->process];
	if (e->flags & EV_KTHREAD)
		p->kernel_thread = true;
	model_name_thread(t, e->prev_comm, e->hdr.ts);

	ev.ts = e->hdr.ts;
	ev.since = e->oncpu_since;
	ev.runtime_ns = e->runtime_ns;
	ev.stack = NO_INDEX;
	ev.type = SCHED_EV_SWITCH_OUT;
	ev.flags = e->flags & SWITCH_PREEMPT ? SCHED_EVF_PREEMPT : 0;
	if (!has_stack && (e->flags & SWITCH_STACK_REUSED))
		ev.flags |= SCHED_EVF_STACK_REUSED;
	ev.stack_slot = (e->flags & SWITCH_STACK_SLOT_MASK) >> SWITCH_STACK_SLOT_SHIFT;
	ev.state = e->prev_state;
	ev.other_pid = e->next_pid;
	ev.other_tid = e->next_tid;
	memcpy(ev.other_comm, e->next_comm, sizeof(ev.other_comm));
	ev.other_comm[sizeof(ev.other_comm) - 1] = '\0';
	ev.sys_nr = e->sys_nr;
	if (e->sys_nr >= 0)
		memcpy(ev.sys_args, e->sys_args, sizeof(ev.sys_args));
	if (has_stack) {
		if (!p->maps_read)
			model_read_maps(m, p, e->hdr.ts);
		sr = (struct stack_record){ .ips = e->ips,
					    .kstack_len = e->kstack_len,
					    .ustack_len = e->ustack_len,
					    .flags = e->flags,
					    .ts = e->hdr.ts,
					    .py = e->ips + e->kstack_len + e->ustack_len,
					    .py_len = e->py_len,
					    .interp = e->interp,
					    .rt = e->ips + e->kstack_len + e->ustack_len,
					    .rt_len = e->rt_len };
		trim_switch_stack(m, &sr);
		if ((err = build_stack(m, p, &sr, &ev.stack)))
			return err;
	}
	ev.folded = e->folded;
	if ((err = queue_folded_wakeup(m, t, &e->woken)) || (err = sched_queue(t, &ev)))
		return err;
	note_event_ts(m, t, e->hdr.ts);
	/* Held until its wait ended: the switch-in is known too. */
	if (e->back_ts > e->hdr.ts) {
		struct sched_event in = { .ts = e->back_ts,
					  .since = e->back_ts,
					  .stack = NO_INDEX,
					  .type = SCHED_EV_SWITCH_IN };

		if ((err = sched_queue(t, &in)))
			return err;
		note_event_ts(m, t, e->back_ts);
	}
	return 0;
}

int model_add_wakeup(struct model *m, const struct wakeup_event *e, size_t size)
{
	struct sched_event ev = { 0 };
	struct thread *t;
	int err;

	if (size < sizeof(*e)) {
		m->stats.events_malformed++;
		return 0;
	}
	m->stats.wakeups++;
	/*
	 * Only the wakee's timeline needs the event; the waker gets its
	 * instant marker from the wakee's replay, if the waker is a thread of
	 * the model by then.
	 */
	if (!m->sched_enabled || !(e->flags & WAKEUP_WAKEE_TARGET) || e->hdr.tid == 0)
		return 0;
	t = model_thread(m, e->hdr.pid, e->hdr.tid, (int)e->hdr.cpu, e->hdr.ts);
	if (!t)
		return -ENOMEM;
	model_name_thread(t, e->wakee_comm, e->hdr.ts);

	ev.ts = e->hdr.ts;
	ev.stack = NO_INDEX;
	ev.type = SCHED_EV_WAKEUP;
	ev.flags = e->flags & WAKEUP_NEW ? SCHED_EVF_NEW : 0;
	ev.flags |= (uint8_t)(WAKEUP_WAKER(e->flags) << SCHED_EVF_WAKER_SHIFT);
	ev.other_pid = e->waker_pid;
	ev.other_tid = e->waker_tid;
	memcpy(ev.other_comm, e->waker_comm, sizeof(ev.other_comm));
	ev.other_comm[sizeof(ev.other_comm) - 1] = '\0';
	if ((err = sched_queue(t, &ev)))
		return err;
	note_event_ts(m, t, e->hdr.ts);
	return 0;
}

int model_add_record(struct model *m, const void *data, size_t size)
{
	const struct event_header *h = data;

	if (size < sizeof(*h) || h->size > size) {
		m->stats.events_malformed++;
		return 0;
	}
	switch (h->kind) {
	case EV_SAMPLE:
		return model_add_sample(m, data, h->size);
	case EV_SWITCH:
		return model_add_switch(m, data, h->size);
	case EV_WAKEUP:
		return model_add_wakeup(m, data, h->size);
	case EV_SYSCALL:
		return model_add_syscall(m, data, h->size);
	case EV_SYSCALL_TOTALS:
		return model_add_syscall_totals(m, data, h->size);
	case EV_SAMPLE_RESTACK:
		return model_sample_restack(m, data, h->size);
	default:
		/* A kind this build does not know: skip it, the size says how far. */
		m->stats.events_malformed++;
		return 0;
	}
}

static int cmp_sample_ts(const void *a, const void *b)
{
	const struct thread_sample *x = a, *y = b;

	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/* Sorted already after a replay; qsort is not stable, so leave equal times alone then. */
static void sort_samples(struct thread *t)
{
	for (size_t i = 1; i < t->samples.len; i++) {
		if (t->samples.data[i].ts < t->samples.data[i - 1].ts) {
			vec_sort(&t->samples, cmp_sample_ts);
			return;
		}
	}
}

int model_finish(struct model *m)
{
	int err;

	/* Replay what is still queued, then end every thread's state at the stop. */
	if ((err = model_sched_flush(m, UINT64_MAX)))
		return err;
	if ((err = sched_close_all(m, m->stop_ts ? m->stop_ts : m->end_ts)))
		return err;
	sched_sort_markers(m);
	for (size_t i = 0; i < m->processes.len; i++) {
		struct process *p = &m->processes.data[i];

		if ((err = model_ensure_main_thread(m, (uint32_t)i)))
			return err;
		p = &m->processes.data[i];
		/* The process is named after its main thread's current comm. */
		if (!p->is_idle && m->threads.data[p->main_thread].name[0])
			memcpy(p->name, m->threads.data[p->main_thread].name, sizeof(p->name));
		if (!p->name[0] && p->threads.len)
			memcpy(p->name, m->threads.data[p->threads.data[0]].name, sizeof(p->name));
	}
	sched_name_others(m);
	for (size_t i = 0; i < m->threads.len; i++) {
		sort_samples(&m->threads.data[i]);
		syscalls_finish(&m->threads.data[i]);
	}
	return 0;
}
