// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * bpfprof kernel side: samples with kernel+user stacks from a perf event per
 * CPU, target filtering in the kernel, and fork tracking for `-- cmd`.
 *
 * Rules followed here (see design.md): no shared hash-map *updates* from the
 * perf_event (NMI-like) handler — it only looks up; per-CPU scratch and
 * counters; every failed ring buffer write is counted.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "bpfprof_abi.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Knobs, set by userspace before load. */
const volatile bool include_idle = false;
const volatile bool filter_tgid = false; /* only tgids in target_tgids */
const volatile bool follow_forks = false; /* children of targets become targets */
const volatile __u32 nr_rings = 1;
const volatile __u64 wakeup_bytes = 256 * 1024; /* wake the consumer past this much data */

struct ringbuf_map {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024); /* resized by userspace before load */
};

/* One ring buffer per CPU (or per CPU group): index = cpu % nr_rings. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1); /* resized by userspace */
	__type(key, __u32);
	__array(values, struct ringbuf_map);
} rings SEC(".maps");

/*
 * Scratch records, one per CPU and per context: a perf_event sample can
 * interrupt a tracepoint program on the same CPU, so they must not share.
 */
enum scratch_slot {
	SCRATCH_SAMPLE = 0,
	SCRATCH_SLOTS,
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SCRATCH_SLOTS);
	__type(key, __u32);
	__type(value, struct sample_event);
} scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bpfprof_stats);
} stats SEC(".maps");

/* Target processes (tgid -> 1). Written by userspace and by the fork tracepoint only. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u8);
} target_tgids SEC(".maps");

static __always_inline bool tgid_is_target(__u32 tgid)
{
	if (!filter_tgid)
		return true;
	return bpf_map_lookup_elem(&target_tgids, &tgid) != NULL;
}

static __always_inline void count(bool ok, __u32 kind)
{
	__u32 zero = 0;
	struct bpfprof_stats *s = bpf_map_lookup_elem(&stats, &zero);

	if (!s || kind >= EV_KIND_MAX)
		return;
	if (ok)
		s->emitted[kind]++;
	else
		s->dropped[kind]++;
}

/* Hand a finished record to this CPU's ring buffer; count drops. */
static __always_inline void submit(void *rec, __u64 size, __u32 kind, __u32 cpu)
{
	__u32 idx = nr_rings ? cpu % nr_rings : 0;
	void *ring = bpf_map_lookup_elem(&rings, &idx);
	__u64 flags = BPF_RB_NO_WAKEUP;
	long err;

	if (!ring) {
		count(false, kind);
		return;
	}
	/* Waking the consumer per record costs more than the record: batch. */
	if (bpf_ringbuf_query(ring, BPF_RB_AVAIL_DATA) >= wakeup_bytes)
		flags = BPF_RB_FORCE_WAKEUP;
	err = bpf_ringbuf_output(ring, rec, size, flags);
	count(err == 0, kind);
}

SEC("perf_event")
int on_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id;
	__u32 slot = SCRATCH_SAMPLE;
	struct sample_event *e;
	long klen, ulen;
	__u32 kn, un;
	__u64 size;

	if (tid == 0 && !include_idle)
		return 0;
	if (tid != 0 && !tgid_is_target(tgid))
		return 0;
	if (tid == 0 && filter_tgid)
		return 0;

	e = bpf_map_lookup_elem(&scratch, &slot);
	if (!e)
		return 0;

	e->hdr.kind = EV_SAMPLE;
	e->hdr.cpu = bpf_get_smp_processor_id();
	e->hdr.ts = bpf_ktime_get_ns();
	e->hdr.pid = tgid;
	e->hdr.tid = tid;
	e->period = ctx->sample_period;
	e->flags = 0;
	bpf_get_current_comm(e->comm, sizeof(e->comm));

	klen = bpf_get_stack(ctx, e->ips, BPFPROF_MAX_STACK * sizeof(__u64), 0);
	if (klen < 0) {
		e->flags |= SAMPLE_KSTACK_ERROR;
		klen = 0;
	}
	kn = (__u32)klen / sizeof(__u64);
	if (kn > BPFPROF_MAX_STACK)
		kn = BPFPROF_MAX_STACK;
	if (kn == BPFPROF_MAX_STACK)
		e->flags |= SAMPLE_KSTACK_TRUNCATED;

	un = 0;
	if (tid != 0) {
		ulen = bpf_get_stack(ctx, &e->ips[kn], BPFPROF_MAX_STACK * sizeof(__u64),
				     BPF_F_USER_STACK);
		if (ulen < 0) {
			e->flags |= SAMPLE_USTACK_ERROR;
			ulen = 0;
		}
		un = (__u32)ulen / sizeof(__u64);
		if (un > BPFPROF_MAX_STACK)
			un = BPFPROF_MAX_STACK;
		if (un == BPFPROF_MAX_STACK)
			e->flags |= SAMPLE_USTACK_TRUNCATED;
	}
	e->kstack_len = kn;
	e->ustack_len = un;

	size = __builtin_offsetof(struct sample_event, ips) + (__u64)(kn + un) * sizeof(__u64);
	if (size > sizeof(*e))
		size = sizeof(*e);
	e->hdr.size = size;
	submit(e, size, EV_SAMPLE, e->hdr.cpu);
	return 0;
}

/*
 * `-- cmd`: a child of a target process becomes a target. A fork is not
 * sched_switch or NMI context, so the one hash update here is allowed.
 */
static __always_inline void track_fork(struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid);
	__u32 ctgid = BPF_CORE_READ(child, tgid);
	__u8 one = 1;

	if (!follow_forks || ptgid == ctgid)
		return;
	if (!bpf_map_lookup_elem(&target_tgids, &ptgid))
		return;
	bpf_map_update_elem(&target_tgids, &ctgid, &one, BPF_NOEXIST);
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork_btf, struct task_struct *parent, struct task_struct *child)
{
	track_fork(parent, child);
	return 0;
}

/* Fallback for kernels whose BTF lacks the tracepoint's types. */
SEC("raw_tp/sched_process_fork")
int BPF_PROG(on_fork_raw, struct task_struct *parent, struct task_struct *child)
{
	track_fork(parent, child);
	return 0;
}
