/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The one BPF <-> userspace event ABI of bpfprof.
 *
 * Every record in a ring buffer starts with struct event_header; `kind`
 * selects the payload and `size` is the whole record's length in bytes, so
 * the consumer can skip kinds it does not know (a newer BPF object with an
 * older decoder keeps working). Fields are fixed-size and naturally aligned
 * so that the layout is the same for the BPF target and for userspace.
 */
#ifndef BPFPROF_ABI_H
#define BPFPROF_ABI_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* Frames per stack (kernel and user each); the kernel's default perf_event_max_stack. */
#define BPFPROF_MAX_STACK 127
#define BPFPROF_COMM_LEN  16

enum bpfprof_event_kind {
	EV_SAMPLE = 1, /* a timer/cycles sample with stacks */
	EV_KIND_MAX,
};

struct event_header {
	__u16 kind;
	__u16 size; /* of the whole record, header included */
	__u32 cpu;
	__u64 ts; /* CLOCK_MONOTONIC ns (bpf_ktime_get_ns) */
	__u32 pid; /* tgid */
	__u32 tid;
};

/* sample_event.flags */
#define SAMPLE_KSTACK_TRUNCATED (1u << 0)
#define SAMPLE_USTACK_TRUNCATED (1u << 1)
#define SAMPLE_KSTACK_ERROR	(1u << 2)
#define SAMPLE_USTACK_ERROR	(1u << 3)

/*
 * ips[] holds kstack_len kernel frames followed by ustack_len user frames,
 * each innermost (leaf) first, as bpf_get_stack() returns them. Only the
 * used part of ips[] is sent: size = offsetof(ips) + 8 * (kstack_len + ustack_len).
 */
struct sample_event {
	struct event_header hdr;
	char comm[BPFPROF_COMM_LEN];
	__u64 period; /* event period: ns for cpu-clock, cycles for the PMU */
	__u16 kstack_len;
	__u16 ustack_len;
	__u32 flags;
	__u64 ips[2 * BPFPROF_MAX_STACK];
};

/*
 * Per-CPU counters (one BPF_MAP_TYPE_PERCPU_ARRAY slot): events handed to a
 * ring buffer and events lost because the ring buffer had no room, per kind.
 */
struct bpfprof_stats {
	__u64 emitted[EV_KIND_MAX];
	__u64 dropped[EV_KIND_MAX];
};

#endif /* BPFPROF_ABI_H */
