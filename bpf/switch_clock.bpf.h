/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The time of a context switch without reading the clock at every switch.
 *
 * bpf_ktime_get_ns() costs 15-80 ns (a clocksource read; more in guests),
 * and on a switch-heavy CPU (a million switches a second) that alone is a
 * few percent of the machine. But __schedule() has just read the clock:
 * update_rq_clock() left it in rq->clock, sched_clock_cpu()'s nanoseconds,
 * a few hundred nanoseconds before the sched_switch tracepoint. That clock
 * is not bpf_ktime_get_ns()'s (CLOCK_MONOTONIC: another origin, and NTP
 * slews its rate by up to 500 ppm), so each CPU keeps an offset between the
 * two, measured again by reading both at the first switch after
 * switch_clock_calibrate_ns of rq clock: the error stays within a few
 * microseconds (the rq clock's age at the tracepoint, plus 0.5 us of slew
 * per millisecond at most), and the records of a CPU stay in order
 * (last_ns).
 *
 * The runqueue is reached through prev's scheduling entity (se.cfs_rq->rq,
 * CONFIG_FAIR_GROUP_SCHED: set for tasks of every class); without it, or
 * for raw_tp programs (no BTF-typed pointers), every switch reads the clock.
 */

/*
 * How many of a CPU's last offset measurements the offset in use is the
 * smallest of. A measurement is too large when the rq clock it read was
 * stale: a wakeup that preempts makes __schedule() skip its clock update, so
 * rq->clock is then the enqueue's, up to the wakeup's latency old (tens of
 * microseconds on a busy guest), and every time until the next measurement
 * came out that much late: a 1 ms sleep whose switch-out was stamped so
 * looked shorter than 1 ms. The true offset drifts by at most NTP's slew
 * (0.5 us per ms), so the smallest of the last few is the fresh one.
 */
#define SWITCH_CLOCK_SAMPLES 4

/* Per CPU, in struct cpu_slice. */
struct switch_clock {
	__u64 rq_at;   /* the rq clock when the offset was last measured (0: never) */
	__u64 offset;  /* bpf_ktime_get_ns() - rq clock: the smallest of samples[] */
	__u64 last_ns; /* the last time handed out on this CPU */
	__s64 samples[SWITCH_CLOCK_SAMPLES]; /* the last measurements */
	__u32 nsamples, pad;		     /* measurements taken (samples[nsamples % N] next) */
};

/*
 * Userspace: the kernel stamps sched_info.last_queued (CONFIG_SCHED_INFO and,
 * on older kernels, sched_info_on()), seen in /proc/self/schedstat.
 */
const volatile bool sched_info_stamps = false;

/* Measure the offset again after this much rq clock (per CPU). */
const volatile __u64 switch_clock_calibrate_ns = 1000000;
/* BPFPROF_SWITCH_CLOCK=ktime turns it off, to compare (bench/README.md). */
const volatile bool switch_clock_from_rq = true;

struct cfs_rq___rq {
	struct rq *rq;
} __attribute__((preserve_access_index));

struct sched_entity___grp {
	struct cfs_rq___rq *cfs_rq;
} __attribute__((preserve_access_index));

struct rq___clock {
	__u64 clock;
} __attribute__((preserve_access_index));

struct sched_info___queued {
	unsigned long long last_queued;
	unsigned long long last_arrival;
} __attribute__((preserve_access_index));

/* Whether switch_clock_now() reads the rq clock: all load-time constants. */
static __always_inline bool switch_clock_uses_rq(void)
{
	return switch_clock_from_rq &&
	       bpf_core_field_exists(((struct sched_entity___grp *)0)->cfs_rq) &&
	       bpf_core_field_exists(((struct cfs_rq___rq *)0)->rq);
}

/*
 * Whether a wakeup's time can be read at the wakee's switch-in instead of
 * at the wakeup: enqueueing a woken task stamps sched_info.last_queued with
 * its runqueue's clock, and the switch-in (sched_info_arrive(), after the
 * tracepoint) clears it. So a wakeup costs no clock read. The stamp is the
 * enqueue: later than sched_waking by the wakeup IPI when the wakee's CPU
 * is another, and the time of the move when the balancer moved the woken
 * task to another CPU before it ran.
 */
static __always_inline bool wake_time_at_switch_in(void)
{
	return sched_info_stamps && switch_clock_uses_rq() &&
	       bpf_core_field_exists(((struct sched_info___queued *)0)->last_queued);
}

/* A new measurement of the offset: the offset to use, the smallest of the last few. */
static __always_inline __u64 switch_clock_measured(struct switch_clock *c, __s64 sample)
{
	__s64 best = sample;
	__u32 n = c->nsamples;

	c->samples[n & (SWITCH_CLOCK_SAMPLES - 1)] = sample;
	c->nsamples = ++n;
#pragma unroll
	for (__u32 i = 0; i < SWITCH_CLOCK_SAMPLES; i++)
		if (i < n && c->samples[i] < best)
			best = c->samples[i];
	return (__u64)best;
}

/*
 * The clock of the runqueue of `task` (BTF-typed, on this CPU), reached
 * through its scheduling entity; 0 where the kernel has no such path.
 */
static __always_inline __u64 task_rq_clock(struct task_struct *task)
{
	struct sched_entity___grp *se = (void *)&task->se;
	struct cfs_rq___rq *cfs;
	struct rq___clock *rq;

	if (!bpf_core_field_exists(se->cfs_rq) ||
	    !bpf_core_field_exists(((struct cfs_rq___rq *)0)->rq))
		return 0;
	cfs = se->cfs_rq;
	rq = cfs ? (struct rq___clock *)cfs->rq : NULL;
	return rq ? rq->clock : 0;
}

/* `prev` (BTF-typed, on this CPU) is leaving it now: the time, on bpf_ktime_get_ns()'s clock. */
static __always_inline __u64 switch_clock_now(struct switch_clock *c, struct task_struct *prev)
{
	__u64 rq_now, now;

	if (!switch_clock_uses_rq() || !c)
		return bpf_ktime_get_ns();
	rq_now = task_rq_clock(prev);
	if (!rq_now) {
		c->rq_at = 0; /* the offset is not known now: see switch_in_wake_time() */
		return bpf_ktime_get_ns();
	}
	if (c->rq_at && rq_now >= c->rq_at && rq_now - c->rq_at < switch_clock_calibrate_ns) {
		now = rq_now + c->offset;
	} else {
		now = bpf_ktime_get_ns();
		c->offset = switch_clock_measured(c, (__s64)(now - rq_now));
		c->rq_at = rq_now;
		/* This one's rq clock may be stale too: the smallest offset stamps it. */
		now = rq_now + c->offset;
	}
	if (now < c->last_ns)
		now = c->last_ns;
	c->last_ns = now;
	return now;
}

/*
 * A wakeup time `t` of a wait [off_ts, now], for the records: within the
 * wait, and before its end, as the replay must see the wakeup before the
 * switch-in. The two clocks can meet: a wakeup that preempts the running
 * task makes __schedule() skip its clock update (rq_clock_skip_update()),
 * so the switch-in carries the enqueue's own stamp; and a wakeup timed with
 * bpf_ktime_get_ns() can be a few microseconds past a switch-in timed with
 * the runqueue clock.
 */
static __always_inline __u64 wake_before_switch_in(__u64 t, __u64 off_ts, __u64 now)
{
	if (t >= now)
		t = now - 1;
	return t > off_ts ? t : off_ts;
}

/*
 * The time `next` (BTF-typed), now getting this CPU, was woken: its
 * sched_info.last_queued on bpf_ktime_get_ns()'s clock, within its wait
 * [off_ts, now); just before `now` when it is not stamped.
 */
static __always_inline __u64 switch_in_wake_time(struct switch_clock *c, struct task_struct *next,
						 __u64 off_ts, __u64 now)
{
	struct sched_info___queued *si = (void *)&next->sched_info;
	__u64 queued = si->last_queued, t;

	if (!c || !c->rq_at || !queued)
		t = now;
	else
		t = queued + c->offset;
	return wake_before_switch_in(t, off_ts, now);
}

/*
 * When `task` (BTF-typed, current, leaving this CPU at `now`) got this CPU,
 * for a switch-in the program was not shown: its sched_info.last_arrival
 * (stamped at every switch-in, on the runqueue clock), carried over to
 * bpf_ktime_get_ns()'s clock by the runqueue clock's distance to `now`.
 * Never before `from` (this CPU's last switch that was seen, and the
 * task's own switch-out before); `from` itself where the kernel keeps no
 * stamps.
 */
static __always_inline __u64 unseen_switch_in_time(struct task_struct *task, __u64 from, __u64 now)
{
	struct sched_info___queued *si = (void *)&task->sched_info;
	__u64 rq_now, arrival, t;

	if (!sched_info_stamps || !bpf_core_field_exists(si->last_arrival))
		return from;
	rq_now = task_rq_clock(task);
	arrival = si->last_arrival;
	if (!rq_now || !arrival || arrival > rq_now || rq_now - arrival > now)
		return from;
	t = now - (rq_now - arrival);
	return t > from ? t : from;
}
