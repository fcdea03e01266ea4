/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Synthetic BPF records (the ABI structs of bpfprof_abi.h) for model tests:
 * samples, switch-outs and wakeups, fed through model_add_record; and
 * lookups of what the model made of them.
 */
#ifndef BPFPROF_TEST_SCHED_RECORDS_H
#define BPFPROF_TEST_SCHED_RECORDS_H

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "model/model.h"
#include "test.h"

#define US 1000ULL
#define MS 1000000ULL
#define T0 (1000 * MS) /* recording start */

/* Addresses of the switch-out stack: a kernel leaf and a user caller (outside any mapping). */
#define KIP 0xffffffff81001000ULL
#define UIP 0x401000ULL

union record {
	struct event_header hdr;
	struct sample_event sample;
	struct switch_event sw;
	struct wakeup_event wakeup;
};

static inline void comm_of(char out[BPFPROF_COMM_LEN], uint32_t tid)
{
	snprintf(out, BPFPROF_COMM_LEN, "t%u", tid);
}

static inline union record mk_sample(uint32_t pid, uint32_t tid, uint32_t cpu, uint64_t ts,
				     uint64_t since)
{
	union record r;

	memset(&r, 0, sizeof(r));
	r.hdr.kind = EV_SAMPLE;
	r.hdr.cpu = cpu;
	r.hdr.ts = ts;
	r.hdr.pid = pid;
	r.hdr.tid = tid;
	comm_of(r.sample.comm, tid);
	r.sample.period = 1001001;
	r.sample.oncpu_since = since;
	r.sample.ips[0] = 0x402000 + tid; /* one user frame */
	r.sample.ustack_len = 1;
	r.hdr.size = (uint16_t)(offsetof(struct sample_event, ips) + 8);
	return r;
}

struct sw_args {
	uint32_t pid, tid, cpu;
	uint64_t ts, since;
	uint32_t state;
	bool preempt;
	bool stack; /* KIP <- UIP */
	uint32_t next_pid, next_tid;
	const char *next_comm;
	uint64_t runtime; /* the kernel's CPU time of the thread so far (0: unknown) */
	/* Asleep inside syscall sys_nr with args fd, count (--syscalls=blocking). */
	bool in_syscall;
	int32_t sys_nr;
	uint64_t fd, count;
};

static inline union record mk_switch(struct sw_args a)
{
	union record r;
	int n = 0;

	memset(&r, 0, sizeof(r));
	r.hdr.kind = EV_SWITCH;
	r.hdr.cpu = a.cpu;
	r.hdr.ts = a.ts;
	r.hdr.pid = a.pid;
	r.hdr.tid = a.tid;
	r.sw.oncpu_since = a.since;
	r.sw.runtime_ns = a.runtime;
	r.sw.next_pid = a.next_pid;
	r.sw.next_tid = a.next_tid;
	comm_of(r.sw.prev_comm, a.tid);
	snprintf(r.sw.next_comm, sizeof(r.sw.next_comm), "%s", a.next_comm ? a.next_comm : "");
	r.sw.prev_state = a.state;
	r.sw.flags = SWITCH_PREV_TARGET | (a.preempt ? SWITCH_PREEMPT : 0);
	r.sw.sys_nr = a.in_syscall ? a.sys_nr : -1;
	r.sw.sys_args[0] = a.fd;
	r.sw.sys_args[2] = a.count;
	if (a.stack) {
		r.sw.flags |= SWITCH_HAS_STACK;
		r.sw.ips[0] = KIP;
		r.sw.ips[1] = UIP;
		r.sw.kstack_len = 1;
		r.sw.ustack_len = 1;
		n = 2;
	}
	r.hdr.size = (uint16_t)(offsetof(struct switch_event, ips) + 8 * n);
	return r;
}

static inline union record mk_wakeup(uint32_t pid, uint32_t tid, uint64_t ts, uint32_t waker_pid,
				     uint32_t waker_tid, const char *waker_comm, uint32_t flags)
{
	union record r;

	memset(&r, 0, sizeof(r));
	r.hdr.kind = EV_WAKEUP;
	r.hdr.size = sizeof(struct wakeup_event);
	r.hdr.ts = ts;
	r.hdr.pid = pid;
	r.hdr.tid = tid;
	r.wakeup.waker_pid = waker_pid;
	r.wakeup.waker_tid = waker_tid;
	snprintf(r.wakeup.waker_comm, sizeof(r.wakeup.waker_comm), "%s", waker_comm);
	comm_of(r.wakeup.wakee_comm, tid);
	r.wakeup.flags = flags | WAKEUP_WAKEE_TARGET;
	return r;
}

static inline void feed(struct model *m, union record r)
{
	CHECK_EQ_INT(model_add_record(m, &r, r.hdr.size), 0);
}

static inline void sample(struct model *m, uint32_t pid, uint32_t tid, uint64_t ts, uint64_t since)
{
	feed(m, mk_sample(pid, tid, 0, ts, since));
}

static inline void wakeup(struct model *m, uint32_t pid, uint32_t tid, uint64_t ts,
			  uint32_t waker_pid, uint32_t waker_tid, const char *waker_comm,
			  uint32_t flags)
{
	feed(m, mk_wakeup(pid, tid, ts, waker_pid, waker_tid, waker_comm, flags));
}

/* The thread `tid` (not an idle thread), or NULL. */
static inline const struct thread *thread_of(const struct model *m, uint32_t tid)
{
	for (size_t i = 0; i < m->threads.len; i++)
		if (m->threads.data[i].tid == tid && m->threads.data[i].cpu == -1)
			return &m->threads.data[i];
	return NULL;
}

static inline uint64_t sum_deltas(const struct thread *t)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < t->samples.len; i++)
		sum += t->samples.data[i].cpu_delta_ns;
	return sum;
}

#endif
