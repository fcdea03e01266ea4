/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What `bpfprof report` computes from a profile: CPU by thread and process,
 * functions by on-CPU self and total time and by off-CPU total time,
 * off-CPU reasons, syscalls and the slowest markers. Sample time is the
 * sampling interval times the sample's weight; CPU time is the sum of
 * threadCPUDelta (the kernel's exact figure in bpfprof's profiles).
 */
#ifndef BPFPROF_REPORT_REPORT_STATS_H
#define BPFPROF_REPORT_REPORT_STATS_H

#include <stdbool.h>
#include <stdint.h>

#include "../emit/frame_quality.h"
#include "../util/vec.h"
#include "report_load.h"

struct report_filter {
	int64_t pid; /* -1: every process; else the pid before any ".N" exec suffix */
	int64_t tid; /* -1: every thread */
};

struct report_func {
	double self_on_ms, total_on_ms, total_off_ms;
	uint32_t seen; /* the last sample that counted it in a total (recursion counts once) */
};

struct report_thread {
	const char *name, *pid, *process;
	int64_t tid;
	double cpu_ms, on_ms, off_ms;
};

/* A named sum: a process, an off-CPU reason, a syscall. */
struct report_sum {
	const char *name, *key;
	uint64_t count;
	double ms, max_ms;
};

typedef VEC(struct report_sum) report_sum_vec;

struct report_marker {
	const char *type, *name, *thread, *pid;
	int64_t tid;
	double start_ms, ms;
};

struct report_stats {
	struct report_func *funcs; /* per funcTable row */
	VEC(struct report_thread) threads;
	report_sum_vec processes, reasons, syscalls;
	VEC(struct report_marker) slowest; /* by duration, longest first, at most max_markers */
	size_t max_markers;
	bool syscall_totals; /* counts from Syscall totals markers (--syscalls=all) */
	uint64_t samples_on, samples_off;
	/* On-CPU samples in each language's code, and those naming one of its functions. */
	struct frame_lang_quality lang;
	double on_ms, off_ms, cpu_ms;
};

int report_stats_compute(struct report_stats *s, const struct report_profile *p,
			 const struct report_filter *f, size_t max_markers);
void report_stats_free(struct report_stats *s);

#endif
