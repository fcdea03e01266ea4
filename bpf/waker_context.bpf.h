/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Who woke a thread when no thread did. sched_waking runs in the waker's
 * context, and `current` is the waker only when a thread woke it (a pipe
 * write, a futex wake). A timer's expiry (clock_nanosleep, poll timeouts),
 * an I/O completion or a softirq wakes from interrupt context, and
 * `current` is then whatever task the interrupt landed on: naming it the
 * waker blamed a bystander (a CPU burner "woke" every sleeper beside it).
 *
 * The context is followed per CPU from the tracepoints around device
 * interrupt handlers, softirqs and timer callbacks (hrtimer, timer_list).
 * The kernel's own preempt count would say it too, but on x86 it is a
 * per-CPU variable a BPF program reaches only as a typed ksym, which the
 * kernel resolves through kallsyms: without CONFIG_KALLSYMS_ALL (common in
 * VM kernels) the whole object failed to load. Interrupts without a
 * tracepoint of their own (IPIs, irq_work) still name `current`. The
 * local timer interrupt has none either, but its work is timer callbacks.
 */

/* Per CPU: how deep in interrupt handlers and softirqs it is, and a timer callback. */
struct irq_state {
	__u32 hardirq, softirq;
	/* A timer callback runs, at these depths: a wakeup at the same depths is its. */
	__u32 timer_on, timer_hardirq, timer_softirq, pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct irq_state);
} irq_states SEC(".maps");

static __always_inline struct irq_state *irq_state(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&irq_states, &zero);
}

/* An exit without its entry (attached in between) must not wrap the depth. */
static __always_inline void depth_add(__u32 *depth, bool enter)
{
	if (enter)
		(*depth)++;
	else if (*depth)
		(*depth)--;
}

static __always_inline void timer_cb(bool enter)
{
	struct irq_state *s = irq_state();

	if (!s)
		return;
	s->timer_on = enter;
	s->timer_hardirq = s->hardirq;
	s->timer_softirq = s->softirq;
}

/* raw_tp: no argument is read, and these exist on every kernel bpfprof runs on. */
SEC("raw_tp/irq_handler_entry")
int on_irq_entry(void *ctx)
{
	struct irq_state *s = irq_state();

	if (s)
		depth_add(&s->hardirq, true);
	return 0;
}

SEC("raw_tp/irq_handler_exit")
int on_irq_exit(void *ctx)
{
	struct irq_state *s = irq_state();

	if (s)
		depth_add(&s->hardirq, false);
	return 0;
}

SEC("raw_tp/softirq_entry")
int on_softirq_entry(void *ctx)
{
	struct irq_state *s = irq_state();

	if (s)
		depth_add(&s->softirq, true);
	return 0;
}

SEC("raw_tp/softirq_exit")
int on_softirq_exit(void *ctx)
{
	struct irq_state *s = irq_state();

	if (s)
		depth_add(&s->softirq, false);
	return 0;
}

SEC("raw_tp/hrtimer_expire_entry")
int on_hrtimer_entry(void *ctx)
{
	timer_cb(true);
	return 0;
}

SEC("raw_tp/hrtimer_expire_exit")
int on_hrtimer_exit(void *ctx)
{
	timer_cb(false);
	return 0;
}

SEC("raw_tp/timer_expire_entry")
int on_timer_entry(void *ctx)
{
	timer_cb(true);
	return 0;
}

SEC("raw_tp/timer_expire_exit")
int on_timer_exit(void *ctx)
{
	timer_cb(false);
	return 0;
}

/* ksoftirqd runs softirqs as a thread; its comm is "ksoftirqd/N". */
static __always_inline bool current_is_ksoftirqd(struct task_struct *cur)
{
	__u64 head;

	if (!(cur->flags & KPF_KTHREAD))
		return false;
	__builtin_memcpy(&head, cur->comm, sizeof(head));
	return head == 0x71726974666f736bull; /* "ksoftirq", little-endian */
}

/* What woke the thread now being woken, in the waker's context (`cur`; enum waker_kind). */
static __always_inline __u32 waker_kind(struct task_struct *cur)
{
	struct irq_state *s = irq_state();

	if (s && s->timer_on && s->timer_hardirq == s->hardirq && s->timer_softirq == s->softirq)
		return WAKER_TIMER;
	if (s && s->hardirq)
		return WAKER_INTERRUPT;
	if ((s && s->softirq) || current_is_ksoftirqd(cur))
		return WAKER_SOFTIRQ;
	return WAKER_THREAD;
}
