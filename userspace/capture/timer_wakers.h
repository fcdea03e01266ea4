/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Wakeups from interrupt context name what woke the thread (a timer, an
 * interrupt, a softirq) instead of the task the interrupt landed on
 * (bpf/waker_context.bpf.h): programs on the tracepoints around interrupt
 * handlers, softirqs and timer callbacks follow each CPU's context. Loaded
 * and attached here with the scheduler programs.
 */
#ifndef BPFPROF_TIMER_WAKERS_H
#define BPFPROF_TIMER_WAKERS_H

#include <stdbool.h>

struct bpfprof_bpf;

/* Before load: load them when the scheduler programs are (`sched`). */
void timer_wakers_choose(struct bpfprof_bpf *k, bool sched);

/*
 * After load: attach them. A failure costs only the waker's kind (a
 * warning): wakeups from interrupts name the interrupted task, as before.
 */
void timer_wakers_attach(struct bpfprof_bpf *k);

#endif
