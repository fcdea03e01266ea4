/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Writes the processed profile (v66) JSON, streamed straight into the
 * (optionally gzip) output by json_writer: no JSON tree is ever built, so
 * memory stays bounded by the tables and the model's samples.
 */
#ifndef BPFPROF_EMITTER_H
#define BPFPROF_EMITTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../model/model.h"
#include "frame_quality.h"
#include "profile_tables.h"

/* Which tracks the profile shows when it opens, for the end-of-run summary. */
struct emit_view_summary {
	size_t tracks;		   /* threads in the profile */
	size_t shown;		   /* of them, shown at load */
	size_t hidden_short_procs; /* short-lived child processes left out of that view */
};

/* What the recording was; all of it lands in `meta` and `meta.extra`. */
struct profile_meta {
	const char *product_version; /* "0.1.0" */
	const char *command_line;    /* bpfprof's own argv, joined */
	const char *hostname;
	const char *kernel_release; /* uname -r */
	const char *arch;	    /* "x86_64", "aarch64" */
	unsigned logical_cpus;
	unsigned sample_freq_hz;
	const char *sample_event; /* "cpu-clock", "cycles" */
	const char *unwinder;	  /* how user stacks were walked: "cfi", "frame pointers" */
	const char *target;	  /* "all", "pid 123,456", "command: make -j2" */
	double start_wall_ms;	  /* UNIX epoch ms at model.start_ts */
	uint64_t lost_samples;	  /* reservations that failed in BPF */
	uint64_t lost_switches, lost_wakeups;
	uint64_t lost_other;
	bool include_idle;
	bool sched_enabled;	   /* switch/wakeup capture was on */
	bool offcpu_samples;	   /* off-CPU samples were synthesized */
	uint64_t sched_min_ns;	   /* the marker threshold (--sched-min) */
	bool syscalls_enabled;	   /* syscall capture was on */
	bool syscalls_from_switch; /* syscall markers of blocking waits, from the scheduler */
	uint64_t syscall_min_ns;   /* its marker threshold (--syscall-min) */
	/* --cgroup targets, e.g. "/test/child (id 1234)": one "Cgroup filter" entry each. */
	const char *const *cgroup_filters;
	size_t nr_cgroup_filters;
	uint32_t selected_pid; /* -- COMMAND: its pid, whose main thread is selected at load; 0:
				  none */
	uint32_t profiler_pid; /* bpfprof's own process, shown as such; 0: none */
	struct frame_quality frame_quality; /* how whole the on-CPU user stacks are */
	/* Per language (enum frame_lang), the versions met ("3.1"); NULL: not said. */
	const char *lang_versions[FRAME_LANG_COUNT];
	struct emit_view_summary *view_out; /* filled by emit_profile_fd when not NULL */
};

/* Write the whole profile to the open file descriptor `fd`, gzip-compressed when `gzip`. 0 or
 * -errno. */
int emit_profile_fd(int fd, bool gzip, const struct model *m, const struct profile_tables *t,
		    const struct profile_meta *meta);

/*
 * libs[].breakpadId for a GNU build-id (hex, or NULL): 32 uppercase hex
 * digits of the build-id read as a GUID, plus the age "0". Exposed for tests.
 */
void emit_breakpad_id(const char *build_id, char out[34]);

#endif
