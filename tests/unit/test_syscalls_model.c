// SPDX-License-Identifier: BSD-2-Clause
/*
 * Syscall records through the model: markers kept in time order, totals
 * pieces added up per thread and syscall, markers counted per syscall, and
 * the argument decoding the markers show.
 */
#include <string.h>
#include <sys/syscall.h>

#include "emit/syscall_markers.h"
#include "model/model.h"
#include "test.h"
#include "../../bpf/bpfprof_abi.h"

#define MS 1000000ULL
#define T0 (1000 * MS)

static struct syscall_event mk_syscall(uint32_t tid, uint32_t nr, uint64_t start, uint64_t end,
				       int64_t ret)
{
	struct syscall_event e;

	memset(&e, 0, sizeof(e));
	e.hdr.kind = EV_SYSCALL;
	e.hdr.size = sizeof(e);
	e.hdr.ts = end;
	e.hdr.pid = 100;
	e.hdr.tid = tid;
	e.enter_ts = start;
	e.ret = ret;
	e.nr = nr;
	e.args[0] = 3;
	e.args[2] = 4096;
	return e;
}

static struct syscall_totals_event mk_totals(uint32_t tid, uint64_t ts)
{
	struct syscall_totals_event e;

	memset(&e, 0, sizeof(e));
	e.hdr.kind = EV_SYSCALL_TOTALS;
	e.hdr.size = sizeof(e);
	e.hdr.ts = ts;
	e.hdr.pid = 100;
	e.hdr.tid = tid;
	return e;
}

static const struct thread *thread_of(const struct model *m, uint32_t tid)
{
	for (size_t i = 0; i < m->threads.len; i++)
		if (m->threads.data[i].tid == tid)
			return &m->threads.data[i];
	return NULL;
}

static const struct syscall_count *count_of(const struct thread *t, uint32_t nr)
{
	for (size_t i = 0; i < t->syscall_counts.len; i++)
		if (t->syscall_counts.data[i].nr == nr)
			return &t->syscall_counts.data[i];
	return NULL;
}

static void markers_and_totals_add_up(void)
{
	struct model m;
	struct syscall_event late = mk_syscall(101, SYS_read, T0 + 40 * MS, T0 + 60 * MS, 7);
	struct syscall_event early = mk_syscall(101, SYS_read, T0 + 10 * MS, T0 + 30 * MS, 7);
	struct syscall_totals_event full = mk_totals(101, T0 + 50 * MS), end;
	const struct syscall_count *c;
	const struct thread *t;

	model_init(&m, NULL, T0);
	/* A full table sent mid-run, then the rest at the end: they add up. */
	full.nr_slots = 2;
	full.reason = SYSCALL_TOTALS_FULL;
	full.slots[0] = (struct syscall_total){ .count = 1, .ns = 20 * MS, .nr = SYS_read };
	full.slots[1] =
		(struct syscall_total){ .count = 1000000, .ns = 90 * MS, .nr = SYS_getppid };
	end = mk_totals(101, T0 + 70 * MS);
	end.nr_slots = 1;
	end.reason = SYSCALL_TOTALS_END;
	end.slots[0] = (struct syscall_total){ .count = 3, .ns = 21 * MS, .nr = SYS_read };
	/* Slots past nr_slots are garbage the model must not read. */
	end.slots[1] = (struct syscall_total){ .count = 77, .ns = 1, .nr = SYS_write };
	CHECK_EQ_INT(model_add_record(&m, &late, sizeof(late)), 0);
	CHECK_EQ_INT(model_add_record(&m, &full, sizeof(full)), 0);
	CHECK_EQ_INT(model_add_record(&m, &early, sizeof(early)), 0);
	CHECK_EQ_INT(model_add_record(&m, &end, sizeof(end)), 0);
	CHECK_EQ_INT(model_finish(&m), 0);
	t = thread_of(&m, 101);
	CHECK(t != NULL);
	if (!t)
		goto out;
	CHECK_EQ_INT(t->syscall_markers.len, 2);
	if (t->syscall_markers.len == 2) {
		CHECK_EQ_INT(t->syscall_markers.data[0].start, T0 + 10 * MS);
		CHECK_EQ_INT(t->syscall_markers.data[1].end, T0 + 60 * MS);
	}
	CHECK_EQ_INT(t->syscall_counts.len, 2);
	c = count_of(t, SYS_read);
	CHECK(c != NULL);
	if (c) {
		CHECK_EQ_INT(c->count, 4);
		CHECK_EQ_INT(c->ns, 41 * MS);
		CHECK_EQ_INT(c->shown, 2);
	}
	c = count_of(t, SYS_getppid);
	CHECK(c != NULL);
	if (c) {
		CHECK_EQ_INT(c->count, 1000000);
		CHECK_EQ_INT(c->shown, 0);
	}
	CHECK(count_of(t, SYS_write) == NULL);
	CHECK_EQ_INT(m.stats.syscalls_counted, 1000004);
	CHECK_EQ_INT(m.stats.syscall_markers, 2);
out:
	model_free(&m);
}

/* Markers whose totals were lost (a full ring) still count as calls. */
static void markers_without_totals(void)
{
	struct model m;
	struct syscall_event e = mk_syscall(102, SYS_read, T0 + 1 * MS, T0 + 5 * MS, -11);
	const struct thread *t;
	const struct syscall_count *c;

	model_init(&m, NULL, T0);
	CHECK_EQ_INT(model_add_record(&m, &e, sizeof(e)), 0);
	CHECK_EQ_INT(model_finish(&m), 0);
	t = thread_of(&m, 102);
	c = t ? count_of(t, SYS_read) : NULL;
	CHECK(c != NULL);
	if (c) {
		CHECK_EQ_INT(c->count, 1);
		CHECK_EQ_INT(c->ns, 4 * MS);
		CHECK_EQ_INT(c->shown, 1);
	}
	model_free(&m);
}

static void malformed_records(void)
{
	struct model m;
	struct syscall_event backwards = mk_syscall(103, SYS_read, T0 + 9 * MS, T0 + 5 * MS, 0);
	struct syscall_totals_event too_many = mk_totals(103, T0 + 9 * MS);

	model_init(&m, NULL, T0);
	too_many.nr_slots = SYSCALL_SLOTS + 1;
	CHECK_EQ_INT(model_add_record(&m, &backwards, sizeof(backwards)), 0);
	CHECK_EQ_INT(model_add_record(&m, &too_many, sizeof(too_many)), 0);
	CHECK_EQ_INT(m.stats.events_malformed, 2);
	CHECK_EQ_INT(m.threads.len, 0);
	model_free(&m);
}

static void decoded_arguments(void)
{
	struct syscall_args_view v;
	uint64_t rd[6] = { 3, 0x7ffc0000, 4096, 0, 0, 0 };
	uint64_t fx[6] = { 0x55550000, 128 | 9, 0, 0, 0, 0xffffffff };
	uint64_t op[6] = { (uint64_t)-100, 0x1000, 02000000 | 0100 | 1, 0644, 0, 0 };
	uint64_t raw[6] = { 1, 2, 0xff, 0, 0, 0 };

	syscall_args_decode("read", rd, &v);
	CHECK_EQ_STR(v.text, "fd=3, count=4096");
	CHECK_EQ_INT(v.fd, 3);
	CHECK_EQ_INT(v.count, 4096);
	syscall_args_decode("futex", fx, &v);
	CHECK_EQ_STR(v.text, "uaddr=0x55550000, op=FUTEX_WAIT_BITSET_PRIVATE, val=0");
	CHECK_EQ_INT(v.fd, -1);
	syscall_args_decode("openat", op, &v);
	CHECK_EQ_STR(v.text, "AT_FDCWD, flags=O_WRONLY|O_CREAT|O_CLOEXEC");
	syscall_args_decode("no_such_syscall", raw, &v);
	CHECK_EQ_STR(v.text, "0x1, 0x2, 0xff, 0x0, 0x0, 0x0");
	syscall_args_decode(NULL, raw, &v);
	CHECK_EQ_INT(v.count, -1);
}

int main(void)
{
	RUN(markers_and_totals_add_up);
	RUN(markers_without_totals);
	RUN(malformed_records);
	RUN(decoded_arguments);
	return test_summary();
}
