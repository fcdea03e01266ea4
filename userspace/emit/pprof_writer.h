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
 * One pprof sample per thread and stack, labelled pid, tid, process, thread
 * and, where known, cgroup.
 */
#ifndef BPFPROF_PPROF_WRITER_H
#define BPFPROF_PPROF_WRITER_H

#include <stdbool.h>

#include "../model/model.h"
#include "emitter.h"
#include "profile_tables.h"

/* Write it to the open file descriptor `fd`, gzip'd when `gzip`. 0 or -errno. */
int pprof_write_fd(int fd, bool gzip, const struct model *m, const struct profile_tables *t,
		   const struct profile_meta *meta);

#endif
