/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Each tracepoint program comes in flavours: tp_btf (BTF-typed arguments,
 * plain loads, task storage of other tasks), a raw_tp fallback for kernels
 * whose BTF lacks the tracepoint's types, and for some a tp_btf one calling
 * the cgroup kfuncs of 6.5+ kernels (--cgroup). One of them is loaded.
 */
#ifndef BPFPROF_TP_FLAVOURS_H
#define BPFPROF_TP_FLAVOURS_H

#include <stdbool.h>

struct bpf_program;
struct bpf_link;

struct tp_flavours {
	const char *tp;
	struct bpf_program *btf, *raw;
	struct bpf_link **btf_link, **raw_link;
	/* Optional: the tp_btf flavour that tests other tasks' cgroups with the kfunc. */
	struct bpf_program *btf_cg;
	struct bpf_link **btf_cg_link;
};

/* Whether tp_btf can attach to `tp` on this kernel (BPFPROF_FORCE_RAW_TP=1 says no). */
bool tp_btf_supported(const char *tp);
/*
 * Whether the kernel has the kfuncs and iterator --cgroup uses to test other
 * tasks' cgroups (6.5+; BPFPROF_CGROUP_NO_KFUNC=1 says no).
 */
bool cgroup_kfunc_supported(void);
/* Free the kernel BTF tp_btf_supported() keeps once the programs are chosen. */
void tp_btf_release(void);

/*
 * Before load: mark the flavour to load (none when !on; the cgroup kfunc
 * one, when the tracepoint has it, for cg_kfunc with tp_btf) and say which in
 * debug output. Returns true when a tp_btf one was chosen.
 */
bool tp_flavours_choose(struct tp_flavours *p, bool on, bool cg_kfunc);

/*
 * After load: attach the loaded flavour of each of the n tracepoints. On
 * failure none of them stays attached; returns 0 or -errno, with *failed
 * the tracepoint that failed.
 */
int tp_flavours_attach(struct tp_flavours *tps, int n, const char **failed);

#endif
