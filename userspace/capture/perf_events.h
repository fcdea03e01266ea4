/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The sampling clock: one perf event per online CPU, each with the sample
 * program attached. Hardware cycles when the PMU has them, else the
 * cpu-clock software event (VMs, containers without PMU access).
 */
#ifndef BPFPROF_PERF_EVENTS_H
#define BPFPROF_PERF_EVENTS_H

#include <stdbool.h>

struct bpf_program;
struct bpf_link;

enum sample_event_kind {
	SAMPLE_EVENT_AUTO, /* cycles on bare metal when the PMU works, else cpu-clock */
	SAMPLE_EVENT_CYCLES,
	SAMPLE_EVENT_CPU_CLOCK,
};

struct perf_sampler {
	int nr; /* slots: one per possible CPU */
	int *fds; /* -1 where the CPU is offline */
	struct bpf_link **links;
	const char *event_name; /* "cycles" or "cpu-clock" */
	bool hardware;
};

/*
 * Open and attach; 0 or -errno (a one-line error already printed). `online`
 * flags CPUs over [0, nr_possible).
 */
int perf_sampler_open(struct perf_sampler *s, struct bpf_program *prog, unsigned freq_hz,
		      enum sample_event_kind kind, const bool *online, int nr_possible);
/* Stop sampling (detach and close); safe to call twice. */
void perf_sampler_close(struct perf_sampler *s);

#endif
