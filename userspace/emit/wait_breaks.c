// SPDX-License-Identifier: BSD-2-Clause
/*
 * The front-end's stack chart (getStackTimingByDepth) makes a box of each
 * run of consecutive samples whose call paths share a prefix, and a sample
 * with a null stack ends every open box. A thread that waits 20 ms, runs
 * for microseconds (too briefly for an on-CPU sample) and waits 20 ms again
 * in the same place has off-CPU samples with one stack all along: drawn as
 * one box "anon_pipe_read 2,941 ms" for 150 reads. A null sample at each
 * switch-in cuts them apart.
 *
 * After a sleep the thread leaves its wait's code (the syscall returns), so
 * the null sample is written whenever a sample follows: the wait's boxes
 * end where it ended, not at whatever sample comes next. After a preemption or yield the thread
 * resumes where it stopped, and its boxes rightly go on through the next
 * on-CPU sample: the null sample is written only when the next sample is
 * off-CPU again (two Runnable waits with no sample between them).
 *
 * A null-stack sample is left out of the call tree and the flame graph (the
 * front-end nulls samples itself for "Include idle samples"), and its CPU
 * delta is 0: the thread was off-CPU until then, and the run after it goes
 * to the next sample as before, so no total changes.
 */
#include "wait_breaks.h"

bool sample_cursor_next(struct sample_cursor *c, struct thread_sample *out)
{
	const struct thread *th = c->th;
	const struct thread_sample *next;

	/*
	 * After the last sample there is no box left to cut, and the
	 * recording's stop ends a wait too without the thread waking.
	 */
	if (c->sample == th->samples.len)
		return false;
	next = &th->samples.data[c->sample];
	/* The waits that ended by the next sample's time come before it. */
	while (c->wait_end < th->wait_ends.len && th->wait_ends.data[c->wait_end].ts <= next->ts) {
		const struct wait_end *e = &th->wait_ends.data[c->wait_end++];

		/* Only right after the wait's own samples (a snapshot may hold none of them). */
		if (c->after_offcpu && (!e->resume || next->kind == SAMPLE_OFF_CPU)) {
			*out = (struct thread_sample){ .ts = e->ts, .stack = NO_INDEX };
			c->after_offcpu = false;
			return true;
		}
	}
	*out = *next;
	c->sample++;
	c->after_offcpu = out->kind == SAMPLE_OFF_CPU;
	return true;
}

size_t sample_cursor_count(const struct thread *th)
{
	struct sample_cursor c = sample_cursor_start(th);
	struct thread_sample s;
	size_t n = 0;

	while (sample_cursor_next(&c, &s))
		n++;
	return n;
}
