/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Short waits counted in the kernel instead of sent (fold_waits).
 *
 * A switch-out record costs more than everything else a switch does, and on
 * a switch-heavy machine nearly every wait is microseconds long: too short
 * for a marker, an off-CPU sample or a blocking syscall's marker. So a
 * target's switch-out is held in its task storage instead of sent, and
 * decided at its switch-in, when the wait's length is known. Only what the
 * switch-out alone knows is held (struct held_switch: a few words; copying
 * the whole record there cost ~20 ns per switch); the name, CPU time and
 * syscall of a wait that is sent are read at its end, as they do not change
 * while the thread is off the CPU:
 *
 *  - still under every threshold (fold_min_ns), and the off-CPU time folded
 *    since the thread's last record under fold_off_ns (one off-CPU sampling
 *    interval, so that folded time still becomes off-CPU samples in time):
 *    only counted in struct folded_waits, which goes out with the thread's
 *    next switch record, or at the end of the recording or snapshot window;
 *  - else sent, with back_ts (the switch-in), and the wakeup that ended it
 *    as a record right after.
 *
 * The replay learns a slice's start from its records' `since`, so a wait it
 * saw the start of must be ended by a record: after a switch-out sent at
 * once (one that took a stack, rate-limited per interval) or one the end
 * iterator sent while its wait was on, the next switch-out is never folded
 * (must_send). While a switch-out is held, every wakeup of the thread is
 * kept too: a wakeup record must not reach the replay before the switch-out
 * it ends. CPU time stays exact: samples carry the kernel's figure at their
 * slice's start (sample_event.oncpu_runtime_ns), switch-outs at their end.
 *
 * Needs the BTF-typed sched_switch (only it reaches next's task storage);
 * not with --cgroup, whose leaver detection reads off_ts differently.
 */

static __always_inline bool wait_is_runnable(__u32 flags, __u32 prev_state)
{
	return (flags & SWITCH_PREEMPT) || prev_state == 0;
}

/*
 * Set by userspace from before the end iterator runs until after it ran,
 * with an RCU grace period (membarrier) between setting it and running the
 * iterator, so that every switch-in that may claim a held switch-out with a
 * plain store has ended before the iterator looks (end_held_wait()). Kept
 * set where that wait is not to be had.
 */
bool flush_in_progress = true;

/* Hand the thread's folded waits over to a record and start counting afresh. */
static __always_inline void take_folded(struct task_sched_state *ts, struct folded_waits *out)
{
	*out = ts->fold;
	__builtin_memset(&ts->fold, 0, sizeof(ts->fold));
}

/*
 * At a switch-out: keep what only the switch-out knows instead of sending a
 * record (held_record() reads the rest at the switch-in). Returns false when
 * it must go now: the thread exits, so no switch-in follows.
 */
static __always_inline bool hold_switch(struct task_sched_state *ts, struct task_struct *next,
					__u32 next_tgid, __u32 next_tid, __u64 since, __u32 state,
					__u32 flags, const struct folded_wakeup *woken)
{
	struct held_switch *hs = &ts->hs;

	if (state & (KTASK_DEAD | KTASK_EXIT_DEAD | KTASK_EXIT_ZOMBIE))
		return false;
	hs->since = since;
	hs->prev_state = state;
	hs->flags = flags;
	hs->cpu = bpf_get_smp_processor_id();
	hs->woken = *woken;
	/* Who took the CPU matters only when prev did not give it up to wait. */
	if (wait_is_runnable(flags, state)) {
		hs->next_pid = next_tgid;
		hs->next_tid = next_tid;
		task_comm(hs->next_comm, next);
	} else {
		hs->next_pid = hs->next_tid = 0;
		hs->next_comm[0] = '\0';
	}
	ts->must_send = ts->next_must_send;
	ts->next_must_send = 0;
	/* Last: the iterator reads hs once it sees held. */
	ts->held = 1;
	return true;
}

/*
 * The held switch-out of `task` (BTF-typed, off the CPU since) as a switch
 * record in `e`, without a stack. Its name, CPU time and the syscall it
 * sleeps in are read now: none of them changes while it does not run.
 */
static __always_inline __u64 held_record(struct switch_event *e, struct task_sched_state *ts,
					 struct task_struct *task, __u32 tgid, __u32 tid,
					 __u64 back_ts)
{
	struct held_switch *hs = &ts->hs;
	__s32 nr;

	e->hdr.kind = EV_SWITCH;
	e->hdr.cpu = hs->cpu;
	e->hdr.ts = ts->off_ts;
	e->hdr.pid = tgid;
	e->hdr.tid = tid;
	e->oncpu_since = hs->since;
	e->runtime_ns = task->se.sum_exec_runtime;
	e->next_pid = hs->next_pid;
	e->next_tid = hs->next_tid;
	task_comm(e->prev_comm, task);
	__builtin_memcpy(e->next_comm, hs->next_comm, sizeof(e->next_comm));
	e->prev_state = hs->prev_state;
	e->flags = hs->flags;
	e->kstack_len = 0;
	e->ustack_len = 0;
	e->sys_nr = -1;
	if (syscalls_from_switch && !wait_is_runnable(hs->flags, hs->prev_state) &&
	    read_task_syscall(task, &nr, e->sys_args))
		e->sys_nr = nr;
	e->woken = hs->woken;
	e->back_ts = back_ts;
	take_folded(ts, &e->folded);
	e->hdr.size = __builtin_offsetof(struct switch_event, ips);
	return e->hdr.size;
}

/* Count a short wait [off_ts, now] of the thread instead of sending it. */
static __always_inline void fold_wait(struct task_sched_state *ts, __u64 now)
{
	struct folded_waits *f = &ts->fold;
	__u64 wait = now - ts->off_ts, from;

	f->waits++;
	f->off_ns += wait;
	if (wait_is_runnable(ts->hs.flags, ts->hs.prev_state)) {
		f->preempted++;
		if (!ts->wake_ts) {
			f->runnable++;
			f->runnable_ns += wait;
		}
	}
	if (ts->wake_ts) {
		from = ts->wake_ts > ts->off_ts ? ts->wake_ts : ts->off_ts;
		f->runnable++;
		f->runnable_ns += now > from ? now - from : 0;
		f->wakeups++;
		if (!f->waker_wakeups) {
			f->waker_pid = ts->waker_pid;
			f->waker_tid = ts->waker_tid;
		}
		if (f->waker_pid == ts->waker_pid && f->waker_tid == ts->waker_tid)
			f->waker_wakeups++;
		ts->wake_ts = 0;
	}
}

/*
 * End the wait of `task`'s held switch-out, if any, at `now`, by folding or
 * sending it: `task` (a target, BTF-typed) gets this CPU now, or got it at
 * `now` unseen (see recover_unseen_switch_in()).
 */
static __always_inline void end_wait(struct task_sched_state *ts, struct task_struct *task,
				     __u32 tgid, __u32 tid, __u64 now, struct switch_clock *clock)
{
	struct switch_event *e;
	__u32 zero = 0;
	__u64 size;

	/* Before the held test: the end iterator may have sent the switch-out. */
	if (ts->wake_ts == WAKE_TS_AT_SWITCH_IN)
		ts->wake_ts = switch_in_wake_time(clock, task, ts->off_ts, now);
	else if (ts->held && ts->wake_ts)
		ts->wake_ts = wake_before_switch_in(ts->wake_ts, ts->off_ts, now);
	if (!ts->held)
		return;
	/*
	 * Claim it. Only the end iterator can race with this (a task is
	 * switched in on one CPU at a time), and only while it runs: then with
	 * a cmpxchg (it may be sending it right now, from another CPU), else
	 * with a plain store, ~8 ns less per switch.
	 */
	if (flush_in_progress) {
		if (__sync_val_compare_and_swap(&ts->held, 1, 0) != 1)
			return;
	} else {
		ts->held = 0;
	}
	if (!ts->must_send && now - ts->off_ts < fold_min_ns &&
	    ts->fold.off_ns + (now - ts->off_ts) < fold_off_ns) {
		fold_wait(ts, now);
		return;
	}
	e = bpf_map_lookup_elem(&switch_scratch, &zero);
	if (!e)
		return;
	size = held_record(e, ts, task, tgid, tid, now);
	submit(e, size, EV_SWITCH, bpf_get_smp_processor_id());
	if (ts->wake_ts) {
		emit_wakeup(ts->wake_ts, ts->wake_cpu, task, ts->waker_pid, ts->waker_tid,
			    ts->waker_comm, ts->wake_target_cpu, ts->wake_flags);
		ts->wake_ts = 0;
	}
}

/* `next` (a target, BTF-typed) gets this CPU at `now`: end its held switch-out's wait. */
static __always_inline void end_held_wait(struct task_struct *next, __u32 tgid, __u32 tid,
					  __u64 now, struct switch_clock *clock)
{
	struct task_sched_state *ts = bpf_task_storage_get(&task_sched, next, NULL, 0);

	if (ts)
		end_wait(ts, next, tgid, tid, now, clock);
}

/*
 * `task` (current, BTF-typed, leaving the CPU at `now`) still holds its
 * last switch-out: the switch that gave it the CPU again was never shown to
 * the program. The kernel may hide a switch from tracepoint programs (on
 * this project's guests, every switch away from the VM agent's threads is
 * unseen, and the wakeups in their context too); holding the new
 * switch-out over the old one lost that wait, and its time, altogether.
 * The wait ends where the task's own stamp says it got the CPU, after this
 * CPU's last switch that was seen (`since`); returns that time, the start of
 * the slice now ending. Without a held switch-out, `since` as it was.
 */
static __always_inline __u64 recover_unseen_switch_in(struct task_sched_state *ts,
						      struct task_struct *task, __u32 tgid,
						      __u32 tid, __u64 since, __u64 now,
						      struct switch_clock *clock)
{
	__u64 from;

	if (!ts->held)
		return since;
	from = unseen_switch_in_time(task, since > ts->off_ts ? since : ts->off_ts, now);
	end_wait(ts, task, tgid, tid, from, clock);
	return from;
}

/*
 * The per-CPU record the end iterator builds: its own, as sched_switch can
 * preempt an iterator and use switch_scratch on the same CPU.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct switch_event);
} held_scratch SEC(".maps");

/*
 * At the end of a recording or a snapshot window: every held switch-out (its
 * wait still on) and every thread's folded waits, as switch records in the
 * ring's format (offsetof(ips) bytes each), read by userspace through a task
 * iterator. A held switch-out sent here leaves a wait the replay saw the
 * start of, so the thread's next switch-out is sent whatever its length.
 */
/* Set by userspace before each run: the time fold-only records carry (0: now). */
__u64 flush_folded_ts = 0;

SEC("iter/task")
int flush_held_waits(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	const __u64 size = __builtin_offsetof(struct switch_event, ips);
	struct task_sched_state *ts;
	struct switch_event *e;
	__u32 zero = 0;

	if (!task)
		return 0;
	ts = bpf_task_storage_get(&task_sched, task, NULL, 0);
	if (!ts)
		return 0;
	e = bpf_map_lookup_elem(&held_scratch, &zero);
	if (!e)
		return 0;
	if (ts->held) {
		ts->next_must_send = 1;
		if (__sync_val_compare_and_swap(&ts->held, 1, 0) == 1) {
			held_record(e, ts, task, task->tgid, task->pid, 0);
			bpf_seq_write(ctx->meta->seq, e, size);
			return 0;
		}
	}
	if (!ts->fold.waits)
		return 0;
	__builtin_memset(e, 0, size);
	e->hdr.kind = EV_SWITCH;
	e->hdr.size = size;
	e->hdr.cpu = bpf_get_smp_processor_id();
	e->hdr.ts = flush_folded_ts ? flush_folded_ts : bpf_ktime_get_ns();
	e->hdr.pid = task->tgid;
	e->hdr.tid = task->pid;
	e->flags = SWITCH_FOLD_ONLY;
	e->sys_nr = -1;
	take_folded(ts, &e->folded);
	bpf_seq_write(ctx->meta->seq, e, size);
	return 0;
}
