/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The recording as a pprof profile (perftools.profiles.Profile, protobuf via
 * protobuf-c), for the tools a fleet already runs: go tool pprof, Pyroscope,
 * Parca. Built from the same tables as the Firefox profile, so both name the
 * same functions with the same lines and count the same time.
 *
 * Sample types: samples (count of on-CPU samples), cpu (nanoseconds: the
 * threads' CPU time, threadCPUDelta's sum) and off_cpu (nanoseconds: one
 * sampling interval per off-CPU sample, whose leaf is "off-CPU: REASON").
 * One pprof sample per thread and stack, labelled pid, tid, thread_name,
 * process_name and, where known, container_id and cgroup, then the labels
 * the caller gives (host, --label KEY=VALUE).
 */
#ifndef BPFPROF_PPROF_WRITER_H
#define BPFPROF_PPROF_WRITER_H

#include <stdbool.h>

#include "../model/model.h"
#include "emitter.h"
#include "profile_tables.h"

/* Which values the profile carries. */
enum pprof_kind {
	PPROF_ALL = 0, /* samples, cpu and off_cpu: the files record and continuous write */
	PPROF_CPU,     /* samples and cpu, as Go's /debug/pprof/profile */
	PPROF_OFF_CPU, /* off_cpu only; stacks without off-CPU time are left out */
};

/* The most labels a caller adds to every sample. */
#define PPROF_MAX_LABELS 32

struct pprof_label {
	const char *key, *value;
};

struct pprof_options {
	enum pprof_kind kind;
	const struct pprof_label *labels; /* on every sample, after the thread's own */
	size_t nr_labels;		  /* at most PPROF_MAX_LABELS */
};

/*
 * Write it to the open file descriptor `fd`, gzip'd when `gzip`; `opts`
 * NULL: every value, no labels of the caller's. 0 or -errno.
 */
int pprof_write_fd(int fd, bool gzip, const struct model *m, const struct profile_tables *t,
		   const struct profile_meta *meta, const struct pprof_options *opts);

#endif
