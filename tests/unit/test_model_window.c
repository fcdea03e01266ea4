// SPDX-License-Identifier: BSD-2-Clause
/*
 * model_window_copy (model/window.h) on the emitter's fixture model: the
 * copy holds exactly the samples of the window, each with the same raw
 * frames root to leaf, under a thread of the same tid, name and process;
 * a window copied in two parts into one model is the same as in one piece,
 * and the source is left as it was.
 */
#include "emit_fixture.h"
#include "model/sched.h"
#include "model/window.h"
#include "offcpu_rows.h"
#include "test.h"

#include <stdlib.h>
#include <string.h>

/* The raw frames of `stack`, leaf first, as (object, offset) pairs; their count. */
static size_t frames_of(const struct model *m, uint32_t stack, uint64_t out[][2], size_t max)
{
	size_t n = 0;

	for (uint32_t s = stack; s != NO_INDEX && n < max; s = m->stacks.data[s].prefix) {
		const struct raw_frame *f = &m->frames.data[m->stacks.data[s].frame];

		out[n][0] = f->object;
		out[n][1] = f->offset;
		n++;
	}
	return n;
}

static size_t samples_in(const struct model *m, uint32_t tid, uint64_t from, uint64_t to)
{
	size_t n = 0;

	for (size_t i = 0; i < m->threads.len; i++) {
		const struct thread *t = &m->threads.data[i];

		if (t->tid != tid)
			continue;
		for (size_t j = 0; j < t->samples.len; j++)
			n += t->samples.data[j].ts >= from && t->samples.data[j].ts < to;
	}
	return n;
}

/* Every sample of `dst` is one of `src` in the window: same time, thread, CPU and frames. */
static void check_copy(const struct model *dst, const struct model *src, uint64_t from, uint64_t to)
{
	size_t total = 0, want = 0;

	for (size_t i = 0; i < src->threads.len; i++)
		for (size_t j = 0; j < src->threads.data[i].samples.len; j++) {
			uint64_t ts = src->threads.data[i].samples.data[j].ts;

			want += ts >= from && ts < to;
		}
	for (size_t i = 0; i < dst->threads.len; i++) {
		const struct thread *dt = &dst->threads.data[i];
		const struct process *dp = &dst->processes.data[dt->process];

		CHECK_EQ_INT(dp->pid, dt->pid);
		CHECK_EQ_INT(dt->samples.len, samples_in(src, dt->tid, from, to));
		for (size_t j = 0; j < dt->samples.len; j++) {
			const struct thread_sample *ds = &dt->samples.data[j];
			bool found = false;

			total++;
			for (size_t k = 0; k < src->threads.len && !found; k++) {
				const struct thread *st = &src->threads.data[k];

				if (st->tid != dt->tid || st->pid != dt->pid || st->cpu != dt->cpu)
					continue;
				CHECK_EQ_STR(dt->name, st->name);
				CHECK_EQ_STR(dp->name, src->processes.data[st->process].name);
				for (size_t l = 0; l < st->samples.len && !found; l++) {
					const struct thread_sample *ss = &st->samples.data[l];
					uint64_t a[64][2], b[64][2];
					size_t na, nb;

					if (ss->ts != ds->ts || ss->kind != ds->kind ||
					    ss->cpu_delta_ns != ds->cpu_delta_ns)
						continue;
					na = frames_of(src, ss->stack, a, 64);
					nb = frames_of(dst, ds->stack, b, 64);
					found = na == nb && !memcmp(a, b, na * sizeof(a[0]));
				}
			}
			CHECK(found);
		}
	}
	CHECK_EQ_INT(total, want);
	CHECK(want > 0);
}

static void window_copy_is_the_window(void)
{
	struct model src, one, two;
	uint64_t from = FX_START_TS + 2 * FX_MS, mid = FX_START_TS + 5 * FX_MS,
		 to = FX_START_TS + 9 * FX_MS;
	size_t src_stacks;

	CHECK_EQ_INT(fx_model_build(&src), 0);
	CHECK_EQ_INT(fx_add_sched(&src), 0);
	src_stacks = src.stacks.len;

	model_window_init(&one, &src, from, to);
	CHECK_EQ_INT(model_window_copy(&one, &src, from, to, false), 0);
	CHECK_EQ_INT(one.start_ts, from);
	CHECK_EQ_INT(one.stop_ts, to);
	check_copy(&one, &src, from, to);

	/* In two parts, as a scrape across a snapshot's cut is copied. */
	model_window_init(&two, &src, from, to);
	CHECK_EQ_INT(model_window_copy(&two, &src, from, mid, false), 0);
	CHECK_EQ_INT(model_window_copy(&two, &src, mid, to, false), 0);
	check_copy(&two, &src, from, to);
	CHECK_EQ_INT(two.threads.len, one.threads.len);
	CHECK_EQ_INT(two.stacks.len, one.stacks.len);
	CHECK_EQ_INT(two.stats.samples + two.stats.offcpu_samples,
		     one.stats.samples + one.stats.offcpu_samples);
	/* The source is read only. */
	CHECK_EQ_INT(src.stacks.len, src_stacks);

	model_free(&one);
	model_free(&two);
	fx_model_free(&src);
}

/* The off-CPU samples of thread `tid` in `m`, and whether each is a wait's (leaf OBJ_OFFCPU). */
static size_t offcpu_samples_of(const struct model *m, uint32_t tid, bool *all_leaves_ok,
				uint8_t reason)
{
	size_t n = 0;

	*all_leaves_ok = true;
	for (size_t i = 0; i < m->threads.len; i++) {
		const struct thread *t = &m->threads.data[i];

		if (t->tid != tid)
			continue;
		for (size_t j = 0; j < t->samples.len; j++) {
			const struct thread_sample *s = &t->samples.data[j];
			const struct raw_frame *leaf;

			if (s->kind != SAMPLE_OFF_CPU)
				continue;
			n++;
			leaf = &m->frames.data[m->stacks.data[s->stack].frame];
			*all_leaves_ok &= leaf->object == OBJ_OFFCPU && leaf->offset == reason;
		}
	}
	return n;
}

/*
 * The fixture model with `interval` off-CPU samples, its worker 101 in a
 * wait since `since` that goes on (a live model's); NULL when it cannot be
 * built (then freed).
 */
static struct thread *open_wait_source(struct model *src, uint64_t interval, uint64_t since)
{
	struct thread *t;

	CHECK_EQ_INT(fx_model_build(src), 0);
	src->offcpu_samples = true;
	src->offcpu_interval_ns = interval;
	t = &src->threads.data[0]; /* worker 101 */
	t->replay = calloc(1, sizeof(*t->replay));
	if (!t->replay) {
		CHECK(false);
		fx_model_free(src);
		return NULL;
	}
	t->replay->state = REPLAY_OFF;
	t->replay->start_known = true;
	t->replay->reason = OFFCPU_SLEEPING;
	t->replay->stack = 2; /* a fixture stack of the worker's */
	t->replay->since = since;
	return t;
}

/*
 * A wait still going on at the window's end (live model): its part in the
 * window gets one off-CPU sample per interval from the switch-out, under
 * its switch-out stack with the reason as leaf; none from a snapshot, none
 * for a wait that began after the window.
 */
static void window_open_wait(void)
{
	const uint64_t ms = 1000000, from = FX_START_TS + 2 * ms, to = FX_START_TS + 9 * ms;
	struct model src, dst;
	struct thread *t;
	uint64_t a[64][2], b[64][2];
	size_t n, na, nb;
	bool ok;

	/* Before the window: grid 3, 5, 7 ms. */
	t = open_wait_source(&src, 2 * ms, FX_START_TS + 1 * ms);
	if (!t)
		return;

	model_window_init(&dst, &src, from, to);
	CHECK_EQ_INT(model_window_copy(&dst, &src, from, to, true), 0);
	CHECK_EQ_INT(expand_offcpu_rows(&dst), 0);
	n = offcpu_samples_of(&dst, 101, &ok, OFFCPU_SLEEPING);
	CHECK_EQ_INT(n, 3); /* 3, 5 and 7 ms; 9 ms is the window's end, outside it */
	CHECK(ok);
	for (size_t i = 0; i < dst.threads.len; i++)
		for (size_t j = 0; j < dst.threads.data[i].samples.len; j++) {
			const struct thread_sample *s = &dst.threads.data[i].samples.data[j];

			if (s->kind != SAMPLE_OFF_CPU)
				continue;
			CHECK(s->ts >= from && s->ts < to);
			CHECK_EQ_INT((s->ts - t->replay->since) % (2 * ms), 0);
			/* Under the switch-out stack: the frames above the leaf are its. */
			na = frames_of(&src, t->replay->stack, a, 64);
			nb = frames_of(&dst, dst.stacks.data[s->stack].prefix, b, 64);
			CHECK(na == nb && !memcmp(a, b, na * sizeof(a[0])));
		}
	model_free(&dst);

	/* From a snapshot (its waits closed at its end): nothing added. */
	model_window_init(&dst, &src, from, to);
	CHECK_EQ_INT(model_window_copy(&dst, &src, from, to, false), 0);
	CHECK_EQ_INT(offcpu_samples_of(&dst, 101, &ok, OFFCPU_SLEEPING), 0);
	model_free(&dst);

	/* A wait that began at the window's end is the next window's. */
	t->replay->since = to;
	model_window_init(&dst, &src, from, to);
	CHECK_EQ_INT(model_window_copy(&dst, &src, from, to, true), 0);
	CHECK_EQ_INT(offcpu_samples_of(&dst, 101, &ok, OFFCPU_SLEEPING), 0);
	model_free(&dst);

	free(t->replay);
	t->replay = NULL;
	fx_model_free(&src);
}

/* The off-CPU rows of thread `tid`: their count, the samples they stand for (*weight). */
static size_t offcpu_rows_of(const struct model *m, uint32_t tid, uint64_t *weight)
{
	size_t n = 0;

	*weight = 0;
	for (size_t i = 0; i < m->threads.len; i++)
		for (size_t j = 0; j < m->threads.data[i].samples.len; j++) {
			const struct thread_sample *s = &m->threads.data[i].samples.data[j];

			if (m->threads.data[i].tid != tid || s->kind != SAMPLE_OFF_CPU)
				continue;
			n++;
			*weight += sample_weight(s);
		}
	return n;
}

/*
 * An off-CPU row that stands for a run of samples (issue 37): a window
 * holds the part of the run on its grid inside it, as one row; windows
 * that tile a span share the run's samples out, none twice, none lost.
 */
static void window_clips_offcpu_runs(void)
{
	const uint64_t ms = FX_MS, at = FX_START_TS + 20 * ms;
	struct model src, dst;
	struct thread *t;
	struct thread_sample run = {
		.ts = at, .cpu_delta_ns = 300000, .stack = 2, .kind = SAMPLE_OFF_CPU, .repeats = 9
	}; /* 20, 21, ... 29 ms */
	uint64_t weight, total = 0;

	CHECK_EQ_INT(fx_model_build(&src), 0);
	src.offcpu_samples = true;
	src.offcpu_interval_ns = ms;
	t = &src.threads.data[0]; /* worker 101 */
	CHECK_EQ_INT(vec_push(&t->samples, run), 0);

	/* [22.5, 26.5) ms: the samples at 23, 24, 25 and 26 ms, no CPU delta (the run's is at 20).
	 */
	model_window_init(&dst, &src, at + 2500000, at + 6500000);
	CHECK_EQ_INT(model_window_copy(&dst, &src, at + 2500000, at + 6500000, false), 0);
	CHECK_EQ_INT(offcpu_rows_of(&dst, 101, &weight), 1);
	CHECK_EQ_INT(weight, 4);
	CHECK_EQ_INT(dst.stats.offcpu_samples, 4);
	CHECK_EQ_INT(dst.stats.offcpu_rows, 1);
	for (size_t i = 0; i < dst.threads.len; i++)
		for (size_t j = 0; j < dst.threads.data[i].samples.len; j++) {
			const struct thread_sample *s = &dst.threads.data[i].samples.data[j];

			if (s->kind != SAMPLE_OFF_CPU)
				continue;
			CHECK_EQ_INT(s->ts, at + 3 * ms);
			CHECK_EQ_INT(s->repeats, 3);
			CHECK_EQ_INT(s->cpu_delta_ns, 0);
		}
	model_free(&dst);

	/* Windows of 1.5 ms tiling 15..35 ms: the run's 10 samples, each once. */
	for (uint64_t from = at - 5 * ms; from < at + 15 * ms; from += 1500000) {
		model_window_init(&dst, &src, from, from + 1500000);
		CHECK_EQ_INT(model_window_copy(&dst, &src, from, from + 1500000, false), 0);
		offcpu_rows_of(&dst, 101, &weight);
		total += weight;
		model_free(&dst);
	}
	CHECK_EQ_INT(total, 10);

	/* The whole run: its first sample keeps the run up to the switch-out. */
	model_window_init(&dst, &src, at, at + 10 * ms);
	CHECK_EQ_INT(model_window_copy(&dst, &src, at, at + 10 * ms, false), 0);
	CHECK_EQ_INT(offcpu_rows_of(&dst, 101, &weight), 1);
	CHECK_EQ_INT(weight, 10);
	model_free(&dst);
	fx_model_free(&src);
}

/* A wait open for 100 s of 1 ms intervals: a few rows in a scrape, not 100,000. */
static void window_open_wait_is_few_rows(void)
{
	const uint64_t ms = FX_MS, from = FX_START_TS, to = FX_START_TS + 100000 * ms;
	struct model src, dst;
	struct thread *t;
	uint64_t weight;

	t = open_wait_source(&src, ms, FX_START_TS + 50 * ms);
	if (!t)
		return;
	model_window_init(&dst, &src, from, to);
	CHECK_EQ_INT(model_window_copy(&dst, &src, from, to, true), 0);
	/* 50 ms .. 100 s: 99,950 samples, on rows of at most 65,536. */
	CHECK_EQ_INT(offcpu_rows_of(&dst, 101, &weight), 2);
	CHECK_EQ_INT(weight, 99950);
	model_free(&dst);
	free(t->replay);
	t->replay = NULL;
	fx_model_free(&src);
}

int main(void)
{
	(void)fx_resolve; /* the fixture's symbolizer: the copy has no symbols to check */
	RUN(window_copy_is_the_window);
	RUN(window_open_wait);
	RUN(window_clips_offcpu_runs);
	RUN(window_open_wait_is_few_rows);
	return test_summary();
}
