// SPDX-License-Identifier: BSD-2-Clause
/*
 * Stacks finished from stack copies (capture/stack_finish.c, issue 38) on
 * a made-up process: a copy joined with its sample and parked; finished
 * when its file's table is published; parked again for a second file
 * still pending; given up at the deadline (a fake clock) or the end; the
 * bytes parked in all and per user; a copy lost on the ring; the mappings
 * read when it is walked; a copy that ends before the walk does.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "capture/stack_finish.h"
#include "test.h"

#define STACK_BASE 0x7000u
#define SEC	   1000000000ull

/* File A at [0x1000, 0x2000), linked at 0x101000, with rows; B at [0x3000, 0x4000). */
static const struct unwind_file_key file_a = { 1, 10 }, file_b = { 1, 11 };
static enum stack_file_state state_a, state_b;

static const struct cfi_row rows[] = {
	{ 0x101000, 16, 0, UNWIND_CFA_SP, UNWIND_FP_SAME, 0 },	  /* leaf */
	{ 0x101100, 16, -16, UNWIND_CFA_FP, UNWIND_FP_SAVED, 0 }, /* uses rbp */
	{ 0x101200, 0, 0, UNWIND_CFA_ROOT, UNWIND_FP_UNDEF, 0 },  /* _start */
};

static struct compact_rules rules;
static union unwind_slot slots[16];
static struct compact_view table;

static void lay_out_rows(void)
{
	struct cfi_table t = { .rows = (struct cfi_row *)rows, .len = 3 };
	struct compact_table c;

	CHECK_EQ_INT(compact_rules_init(&rules, NULL, UNWIND_MAX_RULES), 0);
	CHECK_EQ_INT(compact_table_build(&t, &rules, 16, &c), 0);
	memcpy(slots, c.pages, c.npages * sizeof(*c.pages));
	memcpy(slots[c.npages].row, c.rows, c.nrows * sizeof(*c.rows));
	table = compact_view_of(slots, c.base, c.npages, rules.data);
	compact_table_free(&c);
}

static enum stack_file_state file(void *ctx, const struct unwind_file_key *key,
				  struct compact_view *view, int64_t *bias)
{
	(void)ctx;
	if (key->ino == file_a.ino) {
		if (state_a == STACK_FILE_READY) {
			*view = table;
			*bias = 0x100000;
		}
		return state_a;
	}
	if (key->ino == file_b.ino && state_b == STACK_FILE_READY)
		*view = (struct compact_view){ 0 }; /* published, no rows: frame pointers */
	return key->ino == file_b.ino ? state_b : STACK_FILE_NONE;
}

/* Reads of the mappings that still find A alone (B not read from /proc yet). */
static unsigned maps_a_only;
/* The process exec'd: another file where A was. */
static bool maps_execd;
/* The process is gone: no mappings now. */
static bool maps_gone;

static int mappings(void *ctx, uint32_t pid, uint64_t ts, struct unwind_mapping *out, uint32_t max)
{
	static const struct unwind_file_key file_c = { 1, 12 };

	(void)ctx;
	(void)ts;
	if (pid == 99 || max < 2 || maps_gone)
		return -ENOENT;
	out[0] = (struct unwind_mapping){ 0x1000, 0x2000, 0x1000, maps_execd ? file_c : file_a };
	if (maps_a_only) {
		maps_a_only--;
		return 1;
	}
	out[1] = (struct unwind_mapping){ 0x3000, 0x4000, 0, file_b };
	return 2;
}

static uint32_t uid_of(void *ctx, uint32_t pid)
{
	(void)ctx;
	return pid >= 1000 ? pid : 0; /* a test's pid is its uid */
}

static unsigned done_partial, done_full;
static struct sample_event last;
static size_t last_size;

static void done(void *ctx, const struct sample_event *e, size_t size, bool partial)
{
	(void)ctx;
	if (partial)
		done_partial++;
	else
		done_full++;
	memcpy(&last, e, size);
	last_size = size;
}

static const struct stack_finish_ops ops = { file, mappings, uid_of, done, NULL };

/* The bytes a copy holds from its SP. */
static uint32_t copy_len = 0x100;

/*
 * The stack from frame 1's SP: the rbp user in A (CFA = FP + 16) returns
 * into B, whose frame pointer leads to _start in A.
 */
static struct stack_copy_event *copy_of(uint32_t cpu, uint64_t ts, uint32_t pid, uint64_t fp_b)
{
	struct stack_copy_event *c = calloc(1, sizeof(*c));
	uint64_t *words = (uint64_t *)c->bytes;

	c->hdr = (struct event_header){ EV_STACK_COPY, 0, cpu, ts, pid, pid };
	c->pc = 0x1150;
	c->sp = 0x7010;
	c->fp = 0x7040;
	c->file = file_a;
	c->frame = 1;
	c->len = copy_len;
	c->hdr.size = (uint16_t)(offsetof(struct stack_copy_event, bytes) + c->len);
	/* Offsets from SP 0x7010. */
	words[(0x7048 - 0x7010) / 8] = 0x3020; /* the rbp user's return into B */
	words[(0x7040 - 0x7010) / 8] = fp_b;   /* its caller's FP */
	words[(0x7060 - 0x7010) / 8] = 0x7080; /* B's frame: [fp] = FP, [fp + 8] = RA */
	words[(0x7068 - 0x7010) / 8] = 0x1210;
	return c;
}

/* A sample whose walk stopped at frame 1 (0x1150) for its copy. */
static void sample_of(struct sample_event *e, uint32_t cpu, uint64_t ts, uint32_t pid, bool copied)
{
	memset(e, 0, sizeof(*e));
	e->hdr = (struct event_header){ EV_SAMPLE, 0, cpu, ts, pid, pid };
	e->kstack_len = 1;
	e->ustack_len = 2;
	e->ips[0] = 0xffffffff81000000ull;
	e->ips[1] = 0x1010;
	e->ips[2] = 0x1150;
	e->flags = (USTACK_END_NO_CFI << SAMPLE_USTACK_END_SHIFT) |
		   (copied ? SAMPLE_USTACK_COPIED : 0);
	e->hdr.size = (uint16_t)(offsetof(struct sample_event, ips) + 3 * sizeof(e->ips[0]));
}

static struct sample_event ev;

/* A copy, then its sample, on one CPU; whether the sample was parked. */
static void feed(struct stack_finish *f, uint32_t cpu, uint64_t ts, uint32_t pid, uint64_t now,
		 uint64_t fp_b)
{
	struct stack_copy_event *c = copy_of(cpu, ts, pid, fp_b);

	CHECK(stack_finish_record(f, c, c->hdr.size, now));
	free(c);
	sample_of(&ev, cpu, ts, pid, true);
	CHECK(!stack_finish_record(f, &ev, ev.hdr.size, now));
}

static void reset(struct stack_finish *f)
{
	stack_finish_init(f, &ops);
	state_a = STACK_FILE_PENDING;
	state_b = STACK_FILE_NONE;
	done_partial = done_full = 0;
	maps_a_only = 0;
	maps_execd = false;
	maps_gone = false;
	copy_len = 0x100;
}

static void joins_parks_and_finishes_on_publish(void)
{
	struct stack_finish f;

	reset(&f);
	feed(&f, 3, 100, 1000, 0, 0x7060);
	CHECK_EQ_INT(f.parked.len, 1);
	CHECK_EQ_INT(f.stats.copies, 1);
	CHECK_EQ_INT(done_partial + done_full, 0);
	CHECK(f.parked_bytes > 0x100);
	/* Its file's table not there yet: it waits. */
	CHECK_EQ_INT(stack_finish_poll(&f, SEC, false), 1);
	CHECK_EQ_INT(done_full, 0);
	state_a = STACK_FILE_READY;
	CHECK_EQ_INT(stack_finish_poll(&f, SEC, false), 0);
	CHECK_EQ_INT(done_full, 1);
	CHECK_EQ_INT(last.hdr.kind, EV_SAMPLE_RESTACK);
	CHECK_EQ_INT(last.hdr.ts, 100);
	CHECK_EQ_INT(last.kstack_len, 1);
	CHECK_EQ_INT(last.ustack_len, 4);
	CHECK_EQ_INT(last.ips[1], 0x1010);
	CHECK_EQ_INT(last.ips[2], 0x1150);
	CHECK_EQ_INT(last.ips[3], 0x3020);
	CHECK_EQ_INT(last.ips[4], 0x1210);
	CHECK_EQ_INT(SAMPLE_USTACK_END(last.flags), USTACK_END_ROOT);
	CHECK(!(last.flags & SAMPLE_USTACK_COPIED));
	CHECK_EQ_INT(last_size, offsetof(struct sample_event, ips) + 5 * sizeof(last.ips[0]));
	CHECK_EQ_INT(f.stats.finished, 1);
	CHECK_EQ_INT(f.stats.rooted, 1);
	/* Freed once walked. */
	CHECK_EQ_INT(f.parked_bytes, 0);
	stack_finish_free(&f);
}

/* The walk meets B still pending, and stops early: it waits for B too, then ends. */
static void parks_again_for_a_second_file(void)
{
	struct stack_finish f;

	reset(&f);
	state_b = STACK_FILE_PENDING;
	feed(&f, 0, 100, 1000, 0, 0); /* B's frame pointer 0: no root without B's table */
	state_a = STACK_FILE_READY;
	CHECK_EQ_INT(stack_finish_poll(&f, SEC / 2, false), 1);
	CHECK_EQ_INT(done_full + done_partial, 0);
	state_b = STACK_FILE_NONE;
	CHECK_EQ_INT(stack_finish_poll(&f, SEC / 2, false), 0);
	CHECK_EQ_INT(done_full, 1);
	CHECK_EQ_INT(last.ustack_len, 3);
	CHECK_EQ_INT(SAMPLE_USTACK_END(last.flags), USTACK_END_NO_CFI);
	CHECK_EQ_INT(f.stats.rooted, 0);
	stack_finish_free(&f);
}

static void gives_up_at_the_deadline_and_the_end(void)
{
	struct stack_finish f;

	reset(&f);
	feed(&f, 0, 100, 1000, 10 * SEC, 0x7060);
	CHECK_EQ_INT(stack_finish_poll(&f, 10 * SEC + STACK_FINISH_WAIT_NS - 1, false), 1);
	CHECK_EQ_INT(stack_finish_poll(&f, 10 * SEC + STACK_FINISH_WAIT_NS, false), 0);
	CHECK_EQ_INT(done_partial, 1);
	CHECK_EQ_INT(f.stats.expired, 1);
	/* The sample as it came: partial, its end unchanged. */
	CHECK_EQ_INT(last.ustack_len, 2);
	CHECK_EQ_INT(SAMPLE_USTACK_END(last.flags), USTACK_END_NO_CFI);
	CHECK_EQ_INT(f.parked_bytes, 0);
	/* The recording's end: no more waiting. */
	feed(&f, 0, 200, 1000, 20 * SEC, 0x7060);
	CHECK_EQ_INT(stack_finish_poll(&f, 20 * SEC, true), 0);
	CHECK_EQ_INT(done_partial, 2);
	stack_finish_free(&f);
}

/* The bytes parked: a cap in all, a quarter of it per user but root. */
static void bounds_the_bytes_parked(void)
{
	struct stack_finish f;
	size_t one;

	reset(&f);
	feed(&f, 0, 1, 1000, 0, 0x7060);
	one = f.parked_bytes;
	stack_finish_free(&f);

	reset(&f);
	f.max_bytes = 4 * one + one / 2;
	/* uid 1000: one copy within its quarter, not two. */
	feed(&f, 0, 1, 1000, 0, 0x7060);
	feed(&f, 0, 2, 1000, 0, 0x7060);
	CHECK_EQ_INT(f.parked.len, 1);
	CHECK_EQ_INT(f.stats.refused, 1);
	CHECK_EQ_INT(done_partial, 1);
	/* Another user has its own quarter. */
	feed(&f, 0, 3, 1001, 0, 0x7060);
	CHECK_EQ_INT(f.parked.len, 2);
	/* Root: only the cap in all (two more fit, not three). */
	feed(&f, 0, 4, 1, 0, 0x7060);
	feed(&f, 0, 5, 2, 0, 0x7060);
	feed(&f, 0, 6, 3, 0, 0x7060);
	CHECK_EQ_INT(f.parked.len, 4);
	CHECK_EQ_INT(f.stats.refused, 2);
	CHECK(f.parked_bytes <= f.max_bytes);
	/* Finished copies give their bytes back: uid 1000 parks again. */
	state_a = STACK_FILE_READY;
	CHECK_EQ_INT(stack_finish_poll(&f, 1, false), 0);
	CHECK_EQ_INT(f.parked_bytes, 0);
	state_a = STACK_FILE_PENDING;
	feed(&f, 0, 7, 1000, 0, 0x7060);
	CHECK_EQ_INT(f.parked.len, 1);
	stack_finish_free(&f);
}

/* A copy lost on the ring: its sample stays partial, and is counted. */
static void a_lost_copy_leaves_its_sample_partial(void)
{
	struct stack_finish f;
	struct stack_copy_event *c;

	reset(&f);
	sample_of(&ev, 0, 100, 1000, true);
	CHECK(!stack_finish_record(&f, &ev, ev.hdr.size, 0));
	CHECK_EQ_INT(f.stats.lost, 1);
	CHECK_EQ_INT(done_partial, 1);
	CHECK_EQ_INT(f.parked.len, 0);
	/* A copy whose sample was lost: dropped at the CPU's next sample. */
	c = copy_of(0, 200, 1000, 0x7060);
	CHECK(stack_finish_record(&f, c, c->hdr.size, 0));
	free(c);
	sample_of(&ev, 0, 300, 1000, false);
	CHECK(!stack_finish_record(&f, &ev, ev.hdr.size, 0));
	CHECK_EQ_INT(f.stats.orphans, 1);
	/* Another CPU's copy is not this sample's. */
	c = copy_of(1, 400, 1000, 0x7060);
	CHECK(stack_finish_record(&f, c, c->hdr.size, 0));
	free(c);
	sample_of(&ev, 0, 400, 1000, true);
	CHECK(!stack_finish_record(&f, &ev, ev.hdr.size, 0));
	CHECK_EQ_INT(f.stats.lost, 2);
	CHECK_EQ_INT(f.parked.len, 0);
	/* A copy that says more bytes than it holds is dropped. */
	c = copy_of(2, 500, 1000, 0x7060);
	CHECK(stack_finish_record(&f, c, offsetof(struct stack_copy_event, bytes) + 8, 0));
	free(c);
	sample_of(&ev, 2, 500, 1000, true);
	CHECK(!stack_finish_record(&f, &ev, ev.hdr.size, 0));
	CHECK_EQ_INT(f.stats.lost, 3);
	/* A process whose mappings are gone: partial. */
	feed(&f, 0, 600, 99, 0, 0x7060);
	CHECK_EQ_INT(f.parked.len, 0);
	CHECK_EQ_INT(done_partial, 4);
	stack_finish_free(&f);
}

/*
 * The process's mappings are read when its copy is walked, and read again
 * for a PC outside them: at park time, and at the walk's start, B is not
 * in them yet (the loader had not read /proc), at the re-read it is, and
 * still pending: the copy waits for B (S2/S5 review, finding 10).
 */
static void reads_the_mappings_when_it_walks(void)
{
	struct stack_finish f;

	reset(&f);
	state_b = STACK_FILE_PENDING;
	maps_a_only = 2;
	feed(&f, 0, 100, 1000, 0, 0); /* B's frame pointer 0: no root without B's table */
	CHECK_EQ_INT(f.parked.len, 1);
	state_a = STACK_FILE_READY;
	CHECK_EQ_INT(stack_finish_poll(&f, SEC / 2, false), 1);
	CHECK_EQ_INT(done_full + done_partial, 0);
	CHECK_EQ_INT(maps_a_only, 0);
	state_b = STACK_FILE_NONE;
	CHECK_EQ_INT(stack_finish_poll(&f, SEC / 2, false), 0);
	CHECK_EQ_INT(done_full, 1);
	CHECK_EQ_INT(last.ustack_len, 3);
	CHECK_EQ_INT(last.ips[3], 0x3020);
	stack_finish_free(&f);
}

/* The process exec'd before its copy's table came: another file at its PC, nothing walked. */
static void an_exec_since_leaves_the_sample_partial(void)
{
	struct stack_finish f;

	reset(&f);
	feed(&f, 0, 100, 1000, 0, 0x7060);
	maps_execd = true;
	state_a = STACK_FILE_READY;
	CHECK_EQ_INT(stack_finish_poll(&f, SEC / 2, false), 0);
	CHECK_EQ_INT(done_full, 0);
	CHECK_EQ_INT(done_partial, 1);
	CHECK_EQ_INT(f.stats.skipped, 1);
	CHECK_EQ_INT(last.ustack_len, 2);
	CHECK_EQ_INT(f.parked_bytes, 0);
	stack_finish_free(&f);
}

/* A process gone before its copy's table came: walked with the mappings read at park time. */
static void a_gone_process_is_walked_with_its_mappings_then(void)
{
	struct stack_finish f;

	reset(&f);
	feed(&f, 0, 100, 1000, 0, 0x7060);
	maps_gone = true;
	state_a = STACK_FILE_READY;
	CHECK_EQ_INT(stack_finish_poll(&f, SEC / 2, false), 0);
	CHECK_EQ_INT(done_full, 1);
	CHECK_EQ_INT(last.ustack_len, 4);
	CHECK_EQ_INT(SAMPLE_USTACK_END(last.flags), USTACK_END_ROOT);
	CHECK_EQ_INT(f.stats.skipped, 0);
	stack_finish_free(&f);
}

/*
 * A copy that ends before the walk does (its stack deeper than the bytes
 * copied): the walk stops where it would read past the copy, UNREADABLE,
 * with the frames found up to there (finding 15).
 */
static void a_short_copy_ends_unreadable(void)
{
	struct stack_finish f;

	reset(&f);
	/* Up to 0x7050: the return address into B is in it, B's frame at 0x7060 is not. */
	copy_len = 0x40;
	feed(&f, 0, 100, 1000, 0, 0x7060);
	state_a = STACK_FILE_READY;
	CHECK_EQ_INT(stack_finish_poll(&f, SEC / 2, false), 0);
	CHECK_EQ_INT(done_full, 1);
	CHECK_EQ_INT(last.ustack_len, 3);
	CHECK_EQ_INT(last.ips[3], 0x3020);
	CHECK_EQ_INT(SAMPLE_USTACK_END(last.flags), USTACK_END_UNREADABLE);
	CHECK_EQ_INT(f.stats.rooted, 0);
	stack_finish_free(&f);
}

/*
 * A copy in two records (a stack deeper than one record holds): the second,
 * marked MORE at the first's length, is joined to it and the walk goes on
 * through both; one at another offset, or another sample's, is not joined.
 */
static void joins_a_copy_sent_in_two_records(void)
{
	struct stack_finish f;

	for (int bad = 0; bad < 3; bad++) {
		struct stack_copy_event *c, *more;

		reset(&f);
		copy_len = 0x100;
		c = copy_of(0, 100, 1000, 0x7060);
		more = calloc(1, sizeof(*more));
		/* The first record up to 0x7050, the rest from there. */
		more->hdr = c->hdr;
		more->flags = STACK_COPY_MORE;
		more->offset = 0x40;
		more->len = 0xc0;
		memcpy(more->bytes, c->bytes + 0x40, 0xc0);
		more->hdr.size = (uint16_t)(offsetof(struct stack_copy_event, bytes) + more->len);
		c->len = 0x40;
		c->hdr.size = (uint16_t)(offsetof(struct stack_copy_event, bytes) + c->len);
		if (bad == 1)
			more->offset = 0x48;
		if (bad == 2)
			more->hdr.ts = 99;
		CHECK(stack_finish_record(&f, c, c->hdr.size, 0));
		CHECK(stack_finish_record(&f, more, more->hdr.size, 0));
		free(c);
		free(more);
		sample_of(&ev, 0, 100, 1000, true);
		CHECK(!stack_finish_record(&f, &ev, ev.hdr.size, 0));
		CHECK_EQ_INT(f.stats.copy_bytes, bad ? 0x40 : 0x100);
		state_a = STACK_FILE_READY;
		CHECK_EQ_INT(stack_finish_poll(&f, SEC / 2, false), 0);
		CHECK_EQ_INT(done_full, 1);
		CHECK_EQ_INT(last.ustack_len, bad ? 3 : 4);
		CHECK_EQ_INT(SAMPLE_USTACK_END(last.flags),
			     bad ? USTACK_END_UNREADABLE : USTACK_END_ROOT);
		stack_finish_free(&f);
	}
}

int main(void)
{
	lay_out_rows();
	RUN(joins_parks_and_finishes_on_publish);
	RUN(parks_again_for_a_second_file);
	RUN(gives_up_at_the_deadline_and_the_end);
	RUN(bounds_the_bytes_parked);
	RUN(a_lost_copy_leaves_its_sample_partial);
	RUN(reads_the_mappings_when_it_walks);
	RUN(an_exec_since_leaves_the_sample_partial);
	RUN(a_gone_process_is_walked_with_its_mappings_then);
	RUN(a_short_copy_ends_unreadable);
	RUN(joins_a_copy_sent_in_two_records);
	compact_rules_free(&rules);
	return test_summary();
}
