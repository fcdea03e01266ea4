// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Empty programs on the hooks bpfprof uses (bench/hook_floor.sh): what any
 * program there costs before it does anything, the floor under bpfprof's
 * own per-event cost. tp_btf, as bpfprof attaches them on kernels with BTF.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("tp_btf/sched_switch")
int BPF_PROG(floor_switch)
{
	return 0;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(floor_waking)
{
	return 0;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(floor_sys_enter)
{
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(floor_sys_exit)
{
	return 0;
}
