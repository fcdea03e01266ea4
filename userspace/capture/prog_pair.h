/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Tracepoint programs come in pairs: a tp_btf flavour (BTF-typed arguments,
 * plain loads, task storage of other tasks) and a raw_tp fallback for kernels
 * whose BTF lacks the tracepoint's types. Some have a third flavour, tp_btf
 * calling the cgroup kfuncs of 6.5+ kernels (--cgroup). One is loaded.
 */
#ifndef BPFPROF_PROG_PAIR_H
#define BPFPROF_PROG_PAIR_H

#include <stdbool.h>

struct bpf_program;
struct bpf_link;

struct prog_pair {
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
 * one, when the pair has it, for cg_kfunc with tp_btf) and say which in
 * debug output. Returns true when a tp_btf one was chosen.
 */
bool prog_pair_choose(struct prog_pair *p, bool on, bool cg_kfunc);

/*
 * After load: attach the loaded half of each pair. On failure nothing of
 * these pairs stays attached; returns 0 or -errno, with *failed the pair's tp.
 */
int prog_pairs_attach(struct prog_pair *pairs, int n, const char **failed);

#endif
