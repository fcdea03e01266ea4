// SPDX-License-Identifier: BSD-2-Clause
/*
 * Off-CPU samples (sched.h): a wait of n sampling intervals is n samples,
 * one per interval from the switch-out, as the call tree counts time; but
 * they are held as rows that each stand for a run of them
 * (thread_sample.repeats, written as the row's weight). A row per sample
 * grew with threads x seconds: 5,000 threads that fall asleep during
 * `-a -d 6` were 26 M rows, 839 MiB. Now a wait is at most a few rows
 * whatever its length, so memory and CPU follow the records, not the time
 * slept, and the weights keep each thread's and stack's off-CPU time exact.
 *
 * A wait's rows: one run from the switch-out to the last interval but one,
 * and the last interval on a row of its own, so that the stack chart's box
 * of the wait reaches its end (a box ends one interval after its last
 * sample) whether or not a sample follows. A row's samples all lie inside
 * its wait, on the grid its samples always had, so that a snapshot cut
 * (model/cut.c, between waits) and a scrape window (model/window.c, which
 * clips runs on that grid) count each of them exactly once.
 */
#include "sched.h"

#include <errno.h>

/*
 * Samples in the carry that do not fit on the wait's grid (waits the kernel
 * folded, fold_waits, under one interval in all, and the carry's own
 * remainder) are rows of their own at the switch-out: at most two from
 * records that are right. More come only from a record with a wrong time;
 * they go on one run from the switch-out (bounded by max_n below), whose
 * grid may leave the wait: only a scrape window that ends inside it could
 * then miss some of them.
 */
#define OFFCPU_SPILL_ROWS_MAX 4

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* One row, the thread's CPU since its last sample on the first row of the wait. */
static int push_row(struct model *m, struct thread *t, uint64_t at, uint64_t count, uint32_t stack)
{
	struct thread_sample s = { .ts = at,
				   .stack = stack,
				   .kind = SAMPLE_OFF_CPU,
				   .ustack_end = USTACK_END_UNKNOWN,
				   .repeats = (uint16_t)(count - 1) };

	if (t->replay) {
		s.cpu_delta_ns = t->replay->cpu_since_sample_ns;
		t->replay->cpu_since_sample_ns = 0;
	}
	if (vec_push(&t->samples, s))
		return -ENOMEM;
	m->stats.offcpu_samples += count;
	m->stats.offcpu_rows++;
	return 0;
}

int offcpu_push_run(struct model *m, struct thread *t, uint64_t at, uint64_t count, uint32_t stack)
{
	uint64_t interval = m->offcpu_interval_ns;
	int err;

	while (count) {
		uint64_t n = min_u64(count, (uint64_t)SAMPLE_REPEATS_MAX + 1);

		if ((err = push_row(m, t, at, n, stack)))
			return err;
		at += n * interval;
		count -= n;
	}
	return 0;
}

/*
 * One off-CPU sample each time the thread's accumulated off-CPU time passes
 * a multiple of the interval, spaced by the interval from the switch-out:
 * with carry < interval, the last one is at out + (n - 1) * interval <
 * out + dur, inside the interval.
 */
int offcpu_samples_of_wait(struct model *m, struct thread *t, uint64_t out, uint64_t dur)
{
	struct sched_replay *r = t->replay;
	uint64_t total, n, max_n, on_grid, spill, interval = m->offcpu_interval_ns;
	int64_t frame, stack;
	int err;

	if (!m->offcpu_samples || !interval)
		return 0;
	total = r->offcpu_carry_ns + dur;
	n = total / interval;
	r->offcpu_carry_ns = total % interval;
	/*
	 * No thread waits longer than the recording has lasted: times a record
	 * got wrong (the kernel's folded time is taken as sent) must not make
	 * this count samples for years.
	 */
	max_n = (m->end_ts > m->start_ts ? m->end_ts - m->start_ts : 0) / interval + 1;
	if (n > max_n)
		n = max_n;
	if (!n)
		return 0;
	frame = model_intern_frame(m, OBJ_OFFCPU, r->reason, false);
	if (frame < 0)
		return (int)frame;
	stack = model_intern_stack(m, r->stack, (uint32_t)frame);
	if (stack < 0)
		return (int)stack;
	/* The grid points out + k * interval inside the wait, k < on_grid. */
	on_grid = min_u64(n, dur ? (dur - 1) / interval + 1 : 0);
	spill = n - on_grid;
	/* The first row carries the run up to the switch-out (push_row). */
	for (uint64_t k = 0; k < min_u64(spill, OFFCPU_SPILL_ROWS_MAX); k++)
		if ((err = push_row(m, t, out, 1, (uint32_t)stack)))
			return err;
	if (spill > OFFCPU_SPILL_ROWS_MAX &&
	    (err = offcpu_push_run(m, t, out, spill - OFFCPU_SPILL_ROWS_MAX, (uint32_t)stack)))
		return err;
	if (on_grid > 1 && (err = offcpu_push_run(m, t, out, on_grid - 1, (uint32_t)stack)))
		return err;
	if (on_grid)
		return push_row(m, t, out + (on_grid - 1) * interval, 1, (uint32_t)stack);
	return 0;
}
