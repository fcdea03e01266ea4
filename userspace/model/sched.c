// SPDX-License-Identifier: BSD-2-Clause
/*
 * The scheduler replay: per thread, a small state machine (unknown, on-CPU,
 * off-CPU) driven by the thread's samples, switch-outs and wakeups in time
 * order. It turns them into
 *
 *  - exact on-CPU time between samples (each sample's cpu_delta_ns), from
 *    slices [switch-in, switch-out]; a switch-in is never a record of its
 *    own, it is learned from the next record's `since`,
 *  - off-CPU samples, one per offcpu_interval_ns of off-CPU time
 *    (model/offcpu_samples.c),
 *  - OFFCPU / RUNNABLE markers on the thread and WAKEUP instants on its waker,
 *  - per-thread totals (struct sched_summary).
 *
 * Records can be lost or arrive late, so every transition clamps instead of
 * trusting: no interval ever ends before it starts, and a slice whose start
 * is unknown starts at what is known (the recording start, the last event).
 */
#include "sched.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char *const reason_names[OFFCPU_REASON_MAX] = {
	[OFFCPU_SLEEPING] = "sleeping",	  [OFFCPU_BLOCKED] = "blocked (D)",
	[OFFCPU_PREEMPTED] = "preempted", [OFFCPU_YIELDED] = "yielded",
	[OFFCPU_STOPPED] = "stopped",	  [OFFCPU_EXITING] = "exiting",
	[OFFCPU_OTHER] = "other",
};

const char *offcpu_reason_name(enum offcpu_reason r)
{
	return (unsigned)r < OFFCPU_REASON_MAX ? reason_names[r] : reason_names[OFFCPU_OTHER];
}

/*
 * Modifier bits (TASK_WAKEKILL, TASK_FREEZABLE, ...) can come with any wait,
 * so the decision goes by the bit that says why, most telling first.
 */
enum offcpu_reason offcpu_reason_from_state(uint32_t state, bool preempted)
{
	if (preempted)
		return OFFCPU_PREEMPTED;
	if (state & (KTASK_DEAD | KTASK_EXIT_DEAD | KTASK_EXIT_ZOMBIE))
		return OFFCPU_EXITING;
	if (state & (KTASK_STOPPED | KTASK_TRACED))
		return OFFCPU_STOPPED;
	/* TASK_IDLE (uninterruptible + noload) is a kernel thread's idle wait, not I/O. */
	if (((state & KTASK_UNINTERRUPTIBLE) && !(state & KTASK_NOLOAD)) ||
	    (state & KTASK_RTLOCK_WAIT))
		return OFFCPU_BLOCKED;
	if (state & (KTASK_INTERRUPTIBLE | KTASK_UNINTERRUPTIBLE | KTASK_PARKED))
		return OFFCPU_SLEEPING;
	/*
	 * Still runnable without the preempt flag: schedule() on the way back
	 * to user mode or in cond_resched() because the scheduler wanted another
	 * task (a tick preemption on non-preemptible and lazy kernels), rarely
	 * sched_yield(). The kernel counts these as involuntary (nivcsw) too.
	 */
	if (state == 0)
		return OFFCPU_PREEMPTED;
	return OFFCPU_OTHER;
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static bool is_runnable_reason(uint8_t reason)
{
	return reason == OFFCPU_PREEMPTED || reason == OFFCPU_YIELDED;
}

struct sched_replay *sched_replay_of(struct thread *t)
{
	if (!t->replay)
		t->replay = calloc(1, sizeof(*t->replay));
	return t->replay;
}

void sched_replay_free(struct sched_replay *r)
{
	if (r) {
		vec_free(&r->pending);
		free(r);
	}
}

int sched_queue(struct thread *t, struct sched_event *ev)
{
	struct sched_replay *r = sched_replay_of(t);

	if (!r)
		return -ENOMEM;
	ev->seq = r->next_seq++;
	return vec_push(&r->pending, *ev) ? -ENOMEM : 0;
}

/* `kind`: what woke it, when no thread did (enum waker_kind); `other` is then empty. */
static void set_other(struct sched_replay *r, uint32_t pid, uint32_t tid, const char *comm,
		      uint8_t kind)
{
	r->other_pid = pid;
	r->other_tid = tid;
	memcpy(r->other_comm, comm, sizeof(r->other_comm));
	r->other_comm[sizeof(r->other_comm) - 1] = '\0';
	r->other_known = true;
	r->other_kind = kind;
}

static void clear_other(struct sched_replay *r)
{
	r->other_pid = r->other_tid = 0;
	memset(r->other_comm, 0, sizeof(r->other_comm));
	r->other_known = false;
	r->other_kind = WAKER_THREAD;
}

static void marker_other_from_replay(struct sched_marker *mk, const struct sched_replay *r)
{
	mk->other_pid = r->other_pid;
	mk->other_tid = r->other_tid;
	memcpy(mk->other_comm, r->other_comm, sizeof(mk->other_comm));
	mk->other_known = r->other_known;
	mk->waker_kind = r->other_kind;
}

static int push_sample(struct thread *t, uint64_t ts, uint32_t stack, uint8_t kind,
		       uint8_t ustack_end)
{
	struct thread_sample s = { ts, t->replay->cpu_since_sample_ns, stack, kind, ustack_end };

	if (vec_push(&t->samples, s))
		return -ENOMEM;
	t->replay->cpu_since_sample_ns = 0;
	return 0;
}

static int push_marker(struct thread *t, const struct sched_marker *mk)
{
	return vec_push(&t->sched_markers, *mk) ? -ENOMEM : 0;
}

/* On-CPU time for the thread's next sample; a debt (see true_up_runtime) is paid first. */
static void credit_cpu(struct thread *t, uint64_t ns)
{
	struct sched_replay *r = t->replay;
	uint64_t paid = min_u64(ns, r->cpu_debt_ns);

	r->cpu_debt_ns -= paid;
	ns -= paid;
	r->cpu_since_sample_ns += ns;
	t->sched.on_cpu_ns += ns;
}

/* Take back on-CPU time: from what no sample holds yet, the rest from the next samples. */
static void debit_cpu(struct thread *t, uint64_t ns)
{
	struct sched_replay *r = t->replay;
	uint64_t taken = min_u64(ns, r->cpu_since_sample_ns);

	r->cpu_since_sample_ns -= taken;
	t->sched.on_cpu_ns -= taken;
	r->cpu_debt_ns += ns - taken;
}

/* The thread ran until `ts` in its current slice. */
static void account_cpu(struct thread *t, uint64_t ts)
{
	struct sched_replay *r = t->replay;

	if (ts <= r->cursor)
		return;
	r->runtime_replayed_ns += ts - r->cursor;
	credit_cpu(t, ts - r->cursor);
	r->cursor = ts;
}

/* The thread's CPU time by the kernel's accounting is known from here: `runtime_ns` at `ts`. */
static void anchor_runtime(struct sched_replay *r, uint64_t runtime_ns, uint64_t ts)
{
	r->runtime_known = true;
	r->runtime_ns = runtime_ns;
	r->runtime_ts = ts;
	r->runtime_replayed_ns = 0;
}

/*
 * A switch-out at `ts` says the kernel's CPU time of the thread so far
 * (`runtime_ns`, 0: unknown). Since the last one, the replay accounted the
 * time between switch-ins and switch-outs; the kernel accounts from its own
 * clock updates, which it skips at a switch that follows a wakeup (the
 * wakee's time starts at the wakeup), and a lost record hides a whole slice.
 * Both add up to tens of microseconds per slice for a thread that runs in
 * short bursts, so the difference is given to (or taken from) its samples:
 * the sum of threadCPUDelta is what getrusage and top say.
 */
static void true_up_runtime(struct thread *t, uint64_t runtime_ns, uint64_t ts)
{
	struct sched_replay *r = t->replay;
	uint64_t kernel_ns;

	if (!runtime_ns) {
		r->runtime_known = false;
		return;
	}
	if (r->runtime_known && runtime_ns >= r->runtime_ns && ts >= r->runtime_ts) {
		/* A thread cannot run longer than the time that passed (a bad record). */
		kernel_ns = min_u64(runtime_ns - r->runtime_ns, ts - r->runtime_ts);
		if (kernel_ns > r->runtime_replayed_ns)
			credit_cpu(t, kernel_ns - r->runtime_replayed_ns);
		else
			debit_cpu(t, r->runtime_replayed_ns - kernel_ns);
	}
	anchor_runtime(r, runtime_ns, ts);
}

static void start_slice(struct sched_replay *r, uint64_t in)
{
	r->state = REPLAY_ON;
	r->since = r->cursor = in;
	r->woken = r->woken_new = r->waker_told = false;
	clear_other(r);
}

/*
 * The waker learns it ended the wakee's wait: counted always, shown as an
 * instant when the wait it ended is long enough to be shown. Only a waker
 * that is a thread of the model (a target); none is created for others.
 */
static int notify_waker(struct model *m, struct thread *wakee, uint64_t wait_ns)
{
	const struct sched_replay *r = wakee->replay;
	struct sched_marker mk = { 0 };
	struct thread *waker = NULL;

	/* A timer, an interrupt or a softirq: the thread it interrupted woke nobody. */
	if (r->other_known && r->other_kind == WAKER_THREAD && r->other_tid)
		waker = model_find_thread(m, r->other_tid);
	if (!waker || waker == wakee)
		return 0;
	waker->sched.wakeups_sent++;
	if (wait_ns < m->sched_min_ns)
		return 0;
	mk.start = mk.end = r->wake_ts;
	mk.stack = NO_INDEX;
	mk.kind = SCHED_MARKER_WAKEUP;
	mk.reason = r->reason;
	mk.other_pid = wakee->pid;
	mk.other_tid = wakee->tid;
	memcpy(mk.other_comm, wakee->name, sizeof(mk.other_comm));
	mk.other_known = true;
	return push_marker(waker, &mk);
}

/*
 * --syscalls=blocking: a wait of at least --syscall-min inside a syscall is
 * that syscall's marker, from the switch-out to the switch-in (its short
 * on-CPU parts around the wait, and its return value, are not known). A
 * syscall that sleeps several times gives one marker per long wait.
 */
static int blocking_syscall_marker(struct model *m, struct thread *t, uint64_t in, uint64_t off_ns)
{
	const struct sched_replay *r = t->replay;
	struct syscall_marker mk = { 0 };

	/* Runnable (preempted, yielded) is not waiting in the syscall, whatever the record says. */
	if (!m->syscalls_from_switch || r->sys_nr < 0 || is_runnable_reason(r->reason) ||
	    off_ns < m->syscall_min_ns)
		return 0;
	mk.start = r->since;
	mk.end = in;
	mk.nr = (uint32_t)r->sys_nr;
	memcpy(mk.args, r->sys_args, sizeof(mk.args));
	mk.blocked_wait = true;
	m->stats.syscall_markers++;
	return vec_push(&t->syscall_markers, mk) ? -ENOMEM : 0;
}

/* The thread got a CPU again at `in`: the off-CPU interval becomes samples and markers. */
static int close_offcpu(struct model *m, struct thread *t, uint64_t in)
{
	struct sched_replay *r = t->replay;
	struct sched_marker mk = { 0 };
	uint64_t off_ns = 0, run_start = 0, run_ns;
	bool runnable = false, offcpu_marker = false;
	size_t n;
	int err;

	in = max_u64(in, r->since);
	if (r->start_known) {
		off_ns = in - r->since;
		t->sched.offcpu_count++;
		t->sched.offcpu_ns += off_ns;
		if (off_ns >= m->sched_min_ns) {
			mk.start = r->since;
			mk.end = in;
			mk.stack = r->stack;
			mk.kind = SCHED_MARKER_OFFCPU;
			mk.reason = r->reason;
			marker_other_from_replay(&mk, r);
			if ((err = push_marker(t, &mk)))
				return err;
			offcpu_marker = true;
		} else {
			t->sched.offcpu_hidden_count++;
			t->sched.offcpu_hidden_ns += off_ns;
		}
		n = t->samples.len;
		if ((err = offcpu_samples_of_wait(m, t, r->since, off_ns)))
			return err;
		/* Where this wait's samples end (model.h, struct wait_end). */
		if (t->samples.len > n &&
		    vec_push(&t->wait_ends,
			     ((struct wait_end){ in, is_runnable_reason(r->reason) })))
			return -ENOMEM;
		if ((err = blocking_syscall_marker(m, t, in, off_ns)))
			return err;
	}

	/* Runnable from the wakeup, or from the switch-out when it never stopped being runnable. */
	if (r->woken) {
		runnable = true;
		run_start = min_u64(max_u64(r->wake_ts, r->since), in);
	} else if (r->start_known && is_runnable_reason(r->reason)) {
		runnable = true;
		run_start = r->since;
	}
	if (runnable) {
		run_ns = in - run_start;
		t->sched.runnable_count++;
		t->sched.runnable_ns += run_ns;
		/*
		 * Preempted or yielded, and never asleep: the Off-CPU marker
		 * already spans exactly this, with the same reason and the
		 * same task that got the CPU, and its stack. A second row with
		 * the same text would only double the table.
		 */
		if (offcpu_marker && !r->woken && run_start == r->since) {
			t->sched.runnable_as_offcpu_count++;
		} else if (run_ns >= m->sched_min_ns) {
			memset(&mk, 0, sizeof(mk));
			mk.start = run_start;
			mk.end = in;
			mk.stack = NO_INDEX;
			mk.kind = SCHED_MARKER_RUNNABLE;
			mk.reason = r->reason;
			mk.woken_new = r->woken_new;
			marker_other_from_replay(&mk, r);
			if ((err = push_marker(t, &mk)))
				return err;
		} else {
			t->sched.runnable_hidden_count++;
			t->sched.runnable_hidden_ns += run_ns;
		}
	}
	/* A wait cut by a snapshot boundary told its waker in the snapshot before. */
	if (r->woken && !r->waker_told)
		return notify_waker(m, t, r->start_known ? off_ns : in - run_start);
	return 0;
}

/*
 * The thread is on a CPU at `ts`, in a slice that began at `since` (0:
 * unknown, before the recording), when the kernel had accounted it
 * `since_runtime` of CPU time (0: unknown). Ends an off-CPU interval,
 * starts or continues a slice, and accounts the CPU time up to `ts`.
 */
static int run_until(struct model *m, struct thread *t, uint64_t since, uint64_t since_runtime,
		     uint64_t ts)
{
	struct sched_replay *r = t->replay;
	uint64_t in;
	int err;

	if (since > ts)
		since = ts, since_runtime = 0;
	switch (r->state) {
	case REPLAY_OFF:
		if (r->start_known || since > r->since) {
			/*
			 * A `since` at or before the switch-out cannot be its
			 * switch-in (a record was lost): the thread is known
			 * to run only from now, so no CPU time is made up.
			 */
			in = since > r->since ? since : ts;
			if ((err = close_offcpu(m, t, in)))
				return err;
			/* Slices between the switch-out and this one that no record showed. */
			if (since > r->since && since_runtime)
				true_up_runtime(t, since_runtime, since);
			start_slice(r, in);
			break;
		}
		/*
		 * Only a wakeup was seen, and the thread was already running
		 * then: the wakeup found it on a CPU, nothing was off-CPU.
		 */
		/* fallthrough */
	case REPLAY_UNKNOWN:
	case REPLAY_EXITED:
		/* Not before the thread (or its exec'd image) existed. */
		in = max_u64(since, m->start_ts);
		if (t->registered)
			in = max_u64(in, t->register_ts);
		in = min_u64(in, ts);
		start_slice(r, in);
		/* The kernel's figure at the slice's own start: exact accounting from here. */
		if (since_runtime && in == since && !r->runtime_known)
			anchor_runtime(r, since_runtime, since);
		break;
	case REPLAY_ON:
		if (since > r->since) {
			/*
			 * A slice we saw no start of (a lost switch-out): the gap
			 * is no CPU until the kernel's figure says, at the start
			 * of this slice when the record carries it, else at the
			 * next switch-out.
			 */
			r->since = since;
			r->cursor = max_u64(r->cursor, since);
			r->woken = r->woken_new = false;
			clear_other(r);
			if (since_runtime)
				true_up_runtime(t, since_runtime, since);
		}
		break;
	}
	account_cpu(t, ts);
	return 0;
}

static int replay_sample(struct model *m, struct thread *t, const struct sched_event *ev)
{
	int err = run_until(m, t, ev->since, ev->since_runtime_ns, ev->ts);

	if (err)
		return err;
	/* An early wakeup must be followed directly by its switch-out. */
	t->replay->woken = t->replay->woken_new = false;
	clear_other(t->replay);
	return push_sample(t, ev->ts, ev->stack, SAMPLE_ON_CPU, ev->ustack_end);
}

/*
 * Waits the kernel only counted (fold_waits): each under every threshold, so
 * no marker and no sample of its own; they add to the totals as the replay
 * would have added them, and their off-CPU time to the off-CPU samples.
 */
static void apply_folded(struct model *m, struct thread *t, const struct folded_waits *f)
{
	struct thread *waker;

	if (!f->waits)
		return;
	t->sched.switches_preempted += f->preempted;
	t->sched.switches_voluntary += f->waits - min_u64(f->preempted, f->waits);
	t->sched.offcpu_count += f->waits;
	t->sched.offcpu_ns += f->off_ns;
	t->sched.offcpu_hidden_count += f->waits;
	t->sched.offcpu_hidden_ns += f->off_ns;
	t->sched.runnable_count += f->runnable;
	t->sched.runnable_ns += f->runnable_ns;
	t->sched.runnable_hidden_count += f->runnable;
	t->sched.runnable_hidden_ns += f->runnable_ns;
	m->stats.switches += f->waits;
	m->stats.switches_folded += f->waits;
	m->stats.wakeups += f->wakeups;
	m->stats.wakeups_folded += f->wakeups;
	/* Waker tid 0: the wakeups came from interrupts (or the idle task), from no thread. */
	waker = f->waker_wakeups && f->waker_tid ? model_find_thread(m, f->waker_tid) : NULL;
	if (waker && waker != t)
		waker->sched.wakeups_sent += f->waker_wakeups;
	if (m->offcpu_samples)
		t->replay->offcpu_carry_ns += f->off_ns;
}

static int replay_switch_out(struct model *m, struct thread *t, const struct sched_event *ev)
{
	struct sched_replay *r = t->replay;
	bool preempted = ev->flags & SCHED_EVF_PREEMPT;
	enum offcpu_reason reason = offcpu_reason_from_state(ev->state, preempted);
	unsigned int slot;
	int err;

	if ((err = run_until(m, t, ev->since, 0, ev->ts)))
		return err;
	true_up_runtime(t, ev->runtime_ns, ev->ts);
	apply_folded(m, t, &ev->folded);
	if (reason == OFFCPU_PREEMPTED)
		t->sched.switches_preempted++;
	else
		t->sched.switches_voluntary++;
	if (reason == OFFCPU_EXITING) {
		/* Its last switch: there is no off-CPU interval to show, only an end. */
		r->state = REPLAY_EXITED;
		r->runtime_known = false; /* a thread that reuses its tid starts from 0 */
		r->woken = r->woken_new = false;
		clear_other(r);
		return 0;
	}
	r->state = REPLAY_OFF;
	r->start_known = true;
	r->since = ev->ts;
	r->reason = (uint8_t)reason;
	r->stack = ev->stack;
	r->sys_nr = ev->sys_nr;
	memcpy(r->sys_args, ev->sys_args, sizeof(r->sys_args));
	/*
	 * The kernel takes at most one stack per thread and switch-out place
	 * (slot) per sampling interval; the switch-outs in between stand on
	 * their slot's last one, in replay order.
	 */
	slot = ev->stack_slot % SWITCH_STACK_SLOTS;
	if (ev->stack != NO_INDEX) {
		r->last_switch_stack[slot] = ev->stack;
		r->have_switch_stack |= (uint8_t)(1u << slot);
	} else if ((ev->flags & SCHED_EVF_STACK_REUSED) && (r->have_switch_stack & (1u << slot))) {
		r->stack = r->last_switch_stack[slot];
	}
	if (is_runnable_reason(reason)) {
		r->woken = r->woken_new = false;
		set_other(r, ev->other_pid, ev->other_tid, ev->other_comm, WAKER_THREAD);
	} else if (!r->woken) {
		clear_other(r);
	}
	/*
	 * Else a wakeup came just before this switch-out: the waker's
	 * try_to_wake_up raced with the switch and waited for it. It ends
	 * this sleep; the runnable wait starts at the switch-out (the clamp in
	 * close_offcpu), the waker's instant stays where it happened.
	 */
	return 0;
}

static void replay_wakeup(struct thread *t, const struct sched_event *ev, bool late)
{
	struct sched_replay *r = t->replay;
	bool is_new = ev->flags & SCHED_EVF_NEW;

	switch (r->state) {
	case REPLAY_UNKNOWN:
	case REPLAY_EXITED:
		/* A new thread has run for no time yet (the kernel's sched_fork). */
		if (is_new)
			anchor_runtime(r, 0, ev->ts);
		/* Off-CPU since we do not know when: only the runnable wait is known. */
		r->state = REPLAY_OFF;
		r->start_known = false;
		r->since = ev->ts;
		r->reason = OFFCPU_OTHER;
		r->stack = NO_INDEX;
		break;
	case REPLAY_OFF:
		/* The first wakeup ends the wait; a preempted thread was runnable already. */
		if (r->woken || is_runnable_reason(r->reason))
			return;
		break;
	case REPLAY_ON:
		/* Possibly early, racing with the coming switch-out (see replay_switch_out). */
		if (late || r->woken)
			return;
		break;
	}
	r->woken = true;
	r->woken_new = is_new;
	r->waker_told = false;
	r->wake_ts = ev->ts;
	set_other(r, ev->other_pid, ev->other_tid, ev->other_comm,
		  (uint8_t)SCHED_EVF_WAKER(ev->flags));
}

/*
 * The thread left the target cgroups. A wait it was in ended when it got a
 * CPU outside; a slice it was in when it moved is not accounted past what
 * was seen (when it moved is unknown). Nothing is known of it from now on.
 */
static int replay_leave(struct model *m, struct thread *t, const struct sched_event *ev)
{
	struct sched_replay *r = t->replay;
	int err;

	if (r->state == REPLAY_OFF && (err = close_offcpu(m, t, min_u64(ev->since, ev->ts))))
		return err;
	r->state = REPLAY_UNKNOWN;
	r->woken = r->woken_new = false;
	clear_other(r);
	return 0;
}

static int replay_event(struct model *m, struct thread *t, struct sched_event ev)
{
	struct sched_replay *r = t->replay;
	bool late = ev.ts < r->last_ts;

	/* Older than what was replayed already (its ring was drained late): apply it now. */
	if (late) {
		m->stats.sched_late_events++;
		ev.ts = r->last_ts;
	}
	r->last_ts = ev.ts;
	switch (ev.type) {
	case SCHED_EV_SAMPLE:
		return replay_sample(m, t, &ev);
	case SCHED_EV_SWITCH_OUT:
		return replay_switch_out(m, t, &ev);
	case SCHED_EV_WAKEUP:
		replay_wakeup(t, &ev, late);
		return 0;
	case SCHED_EV_LEAVE:
		return replay_leave(m, t, &ev);
	case SCHED_EV_SWITCH_IN:
		/* Ends the wait of its held switch-out; CPU time comes with later records. */
		return run_until(m, t, ev.ts, 0, ev.ts);
	case SCHED_EV_FOLDED:
		apply_folded(m, t, &ev.folded);
		return 0;
	}
	return 0;
}

static int cmp_event(const void *a, const void *b)
{
	const struct sched_event *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static bool events_sorted(const struct sched_event *ev, size_t len)
{
	for (size_t i = 1; i < len; i++)
		if (cmp_event(&ev[i - 1], &ev[i]) > 0)
			return false;
	return true;
}

int model_sched_flush(struct model *m, uint64_t watermark)
{
	for (size_t i = 0; i < m->threads.len; i++) {
		/* Replaying never adds threads, so `t` stays valid. */
		struct thread *t = &m->threads.data[i];
		struct sched_event *ev;
		size_t len, n = 0;
		int err = 0;

		if (!t->replay || !t->replay->pending.len)
			continue;
		ev = t->replay->pending.data;
		len = t->replay->pending.len;
		/*
		 * (ts, arrival order): a stable sort by time. A thread's events
		 * come mostly in order (out of order only across CPUs' rings), and
		 * on switch-heavy machines this runs for 10^6 events/s: check first.
		 */
		if (!events_sorted(ev, len))
			qsort(ev, len, sizeof(*ev), cmp_event);
		for (; n < len && ev[n].ts <= watermark; n++)
			if ((err = replay_event(m, t, ev[n])))
				break;
		memmove(ev, ev + n, (len - n) * sizeof(*ev));
		t->replay->pending.len = len - n;
		if (err)
			return err;
	}
	return 0;
}

bool model_thread_silent(const struct thread *t)
{
	const struct sched_replay *r = t->replay;

	if (t->pid == 0 || t->exited || t->samples.len || t->sched_markers.len)
		return false;
	return !r || (r->state == REPLAY_UNKNOWN && !r->pending.len && !r->last_ts);
}

int model_blocked_throughout(struct model *m, uint32_t thread, const struct blocked_wait *w)
{
	struct thread *t = thread < m->threads.len ? &m->threads.data[thread] : NULL;
	struct sched_replay *r;

	/* Any event at all: the replay knows better than a guess. */
	if (!t || !m->sched_enabled || !model_thread_silent(t))
		return 0;
	r = sched_replay_of(t);
	if (!r)
		return -ENOMEM;
	r->state = REPLAY_OFF;
	r->start_known = true;
	r->since = m->start_ts;
	r->last_ts = m->start_ts;
	r->reason = w->reason;
	r->stack = w->stack;
	/* Not 0 (read) when unknown: a thread in no syscall has none. */
	r->sys_nr = w->sys_nr >= 0 && w->sys_nr < SYSCALL_NR_MAX ? w->sys_nr : -1;
	memcpy(r->sys_args, w->sys_args, sizeof(r->sys_args));
	t->blocked_throughout = true;
	return 0;
}

int sched_close_all(struct model *m, uint64_t stop)
{
	for (size_t i = 0; i < m->threads.len; i++) {
		struct thread *t = &m->threads.data[i];
		struct sched_replay *r = t->replay;
		uint64_t end;
		int err;

		/* Never replayed: nothing to close. */
		if (!r)
			continue;
		/* A thread that exited (or whose image an exec replaced) ends there. */
		end = max_u64(t->exited ? min_u64(stop, t->unregister_ts) : stop, r->last_ts);

		if (r->state == REPLAY_ON) {
			/* CPU time after the last sample: in the totals, in no sample. */
			account_cpu(t, end);
		} else if (r->state == REPLAY_OFF) {
			if ((err = close_offcpu(m, t, end)))
				return err;
		}
		r->state = REPLAY_UNKNOWN;
		r->woken = r->woken_new = false;
		clear_other(r);
	}
	return 0;
}

void sched_name_others(struct model *m)
{
	for (size_t i = 0; i < m->threads.len; i++) {
		struct thread *t = &m->threads.data[i];

		for (size_t k = 0; k < t->sched_markers.len; k++) {
			struct sched_marker *mk = &t->sched_markers.data[k];
			bool preempted =
				mk->reason == OFFCPU_PREEMPTED || mk->reason == OFFCPU_YIELDED;
			const struct thread *o;

			if (!mk->other_known || mk->waker_kind != WAKER_THREAD)
				continue;
			/*
			 * The comm a record carried is the one of that moment: a
			 * thread that renamed itself later (prctl, or a fork
			 * child named after its parent until it did) would be
			 * called by a name no track has. The track shows its last.
			 * A preemptor got the CPU at the start; a waker woke
			 * the thread at the end; a wakee was woken at the instant.
			 */
			o = model_thread_at(m, mk->other_pid, mk->other_tid,
					    mk->kind != SCHED_MARKER_WAKEUP && !preempted
						    ? mk->end
						    : mk->start);
			mk->other_in_model = o != NULL;
			if (o && o->name[0])
				memcpy(mk->other_comm, o->name, sizeof(mk->other_comm));
		}
	}
}

static int cmp_marker(const void *a, const void *b)
{
	const struct sched_marker *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return x->other_tid < y->other_tid ? -1 : x->other_tid > y->other_tid;
}

void sched_sort_markers(struct model *m)
{
	for (size_t i = 0; i < m->threads.len; i++) {
		struct thread *t = &m->threads.data[i];

		if (t->sched_markers.len < 2)
			continue;
		vec_sort(&t->sched_markers, cmp_marker);
	}
}
