// SPDX-License-Identifier: BSD-2-Clause
/*
 * The samples table's null samples at wait ends (emit/wait_breaks.c): right
 * after the wait's own off-CPU samples and before another sample; after a
 * sleep then always, after a preemption only when the next sample is
 * off-CPU again; never a second one; samples and their CPU unchanged.
 */
#include <stdlib.h>

#include "emit/wait_breaks.h"
#include "test.h"

#define ON  SAMPLE_ON_CPU
#define OFF SAMPLE_OFF_CPU

static void add_sample(struct thread *t, uint64_t ts, uint8_t kind, uint32_t stack, uint64_t cpu)
{
	struct thread_sample s = { .ts = ts, .cpu_delta_ns = cpu, .stack = stack, .kind = kind };

	CHECK(!vec_push(&t->samples, s));
}

static void add_end(struct thread *t, uint64_t ts, bool resume)
{
	CHECK(!vec_push(&t->wait_ends, ((struct wait_end){ ts, resume })));
}

/* The cursor's samples as "ts:stack" (stack '-' for a null one), and the CPU they hold. */
static void walk(const struct thread *t, char *buf, size_t size, uint64_t *cpu)
{
	struct sample_cursor c = sample_cursor_start(t);
	struct thread_sample s;
	size_t len = 0, n = 0;

	buf[0] = '\0';
	*cpu = 0;
	while (sample_cursor_next(&c, &s) && len + 24 < size) {
		len += (size_t)snprintf(buf + len, size - len, "%s%" PRIu64 ":", n ? " " : "",
					s.ts);
		if (s.stack == NO_INDEX)
			len += (size_t)snprintf(buf + len, size - len, "-");
		else
			len += (size_t)snprintf(buf + len, size - len, "%u", s.stack);
		*cpu += s.cpu_delta_ns;
		n++;
	}
	CHECK_EQ_INT(sample_cursor_count(t), n);
}

static void thread_free(struct thread *t)
{
	vec_free(&t->samples);
	vec_free(&t->wait_ends);
}

/* Two 20 ms reads with one stack (7) and a few µs between them: a null sample at each switch-in. */
static void test_sleeps_are_cut_apart(void)
{
	struct thread t = { 0 };
	char buf[256];
	uint64_t cpu;

	add_sample(&t, 0, ON, 1, 1000);
	add_sample(&t, 100, OFF, 7, 50);
	add_sample(&t, 110, OFF, 7, 0);
	add_end(&t, 120, false);
	add_sample(&t, 121, OFF, 7, 3);
	add_sample(&t, 131, OFF, 7, 0);
	add_end(&t, 141, false);
	/* A sleep followed by an on-CPU sample ends there too: the syscall returned. */
	add_sample(&t, 150, ON, 1, 9);
	walk(&t, buf, sizeof(buf), &cpu);
	CHECK_EQ_STR(buf, "0:1 100:7 110:7 120:- 121:7 131:7 141:- 150:1");
	CHECK_EQ_INT(cpu, 1000 + 50 + 3 + 9);
	thread_free(&t);
}

/* Preemptions: cut only between two of them with no sample between. */
static void test_preemptions_are_cut_only_between_two(void)
{
	struct thread t = { 0 };
	char buf[256];
	uint64_t cpu;

	add_sample(&t, 0, ON, 1, 1000);
	add_sample(&t, 10, OFF, 8, 10);
	add_end(&t, 12, true);
	add_sample(&t, 13, OFF, 8, 1);
	add_end(&t, 15, true);
	add_sample(&t, 20, ON, 1, 5);
	add_sample(&t, 30, OFF, 8, 10);
	add_end(&t, 35, true); /* the last: nothing after it */
	walk(&t, buf, sizeof(buf), &cpu);
	CHECK_EQ_STR(buf, "0:1 10:8 12:- 13:8 20:1 30:8");
	CHECK_EQ_INT(cpu, 1000 + 10 + 1 + 5 + 10);
	thread_free(&t);
}

/*
 * A wait end with no off-CPU sample of its own before it (a snapshot cut it
 * off), or with no sample after it, gives nothing.
 */
static void test_no_cut_without_the_waits_samples(void)
{
	struct thread t = { 0 };
	char buf[256];
	uint64_t cpu;

	add_end(&t, 5, false);
	add_sample(&t, 10, ON, 1, 4);
	add_end(&t, 12, false);
	add_sample(&t, 20, OFF, 7, 0);
	add_end(&t, 30, false);
	add_end(&t, 31, false);
	add_sample(&t, 40, OFF, 7, 2);
	/* The stop closed the last wait: nothing follows, so no cut. */
	add_end(&t, 50, false);
	walk(&t, buf, sizeof(buf), &cpu);
	CHECK_EQ_STR(buf, "10:1 20:7 30:- 40:7");
	thread_free(&t);
	/* No samples at all. */
	add_end(&t, 5, true);
	walk(&t, buf, sizeof(buf), &cpu);
	CHECK_EQ_STR(buf, "");
	thread_free(&t);
}

int main(void)
{
	RUN(test_sleeps_are_cut_apart);
	RUN(test_preemptions_are_cut_only_between_two);
	RUN(test_no_cut_without_the_waits_samples);
	return test_summary();
}
