/* SPDX-License-Identifier: BSD-2-Clause */
/* Command line: `bpfprof [record] [options] [-- command args...]`. */
#ifndef BPFPROF_OPTIONS_H
#define BPFPROF_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../capture/perf_events.h"
#include "../../bpf/bpfprof_abi.h"
#include "listen_options.h"

#define DEFAULT_FREQ_HZ		     999 /* not 1000: avoids lock-step with timer ticks */
/* --stack-copy: perf's --call-graph dwarf copies 8K; deep C++ stacks need more (clang: 100K). */
#define DEFAULT_STACK_COPY_BYTES     STACK_COPY_TOTAL_MAX
#define DEFAULT_OUTPUT		     "profile.json.gz"
/* Profiles hold every process's command line: private unless --mode says otherwise, as perf.data
 * is. */
#define DEFAULT_FILE_MODE	     0600
/*
 * Scheduling markers shorter than this are only counted: 1 ms keeps real
 * waits (I/O, locks, timers, CPU contention) and drops the µs-scale churn
 * of busy machines that would otherwise dominate the profile's size.
 */
#define DEFAULT_SCHED_MIN_NS	     1000000ULL
#define DEFAULT_SYSCALL_MIN_NS	     1000000ULL
/* What fetching debug files from debuginfod servers may add to the end of a recording. */
#define DEFAULT_DEBUGINFOD_BUDGET_NS 10000000000ULL

/*
 * `continuous` runs for days on every machine of a fleet, so its defaults
 * cost least: a low rate (49 Hz, not a divisor of the tick either), and
 * neither off-CPU samples with switch-out stacks nor syscall tracing (each
 * taxes every context switch or syscall of the machine). Scheduling
 * markers stay: they cost one record per wait long enough to show.
 */
#define CONTINUOUS_FREQ_HZ     49
#define CONTINUOUS_INTERVAL_NS (60ULL * 1000 * 1000 * 1000)
#define CONTINUOUS_KEEP	       60
#define CONTINUOUS_OUT_DIR     "bpfprof-snapshots"

enum run_mode {
	MODE_RECORD = 0,
	MODE_CONTINUOUS,
};

/* --unwind */
enum unwind_mode {
	UNWIND_AUTO = 0, /* CFI where the architecture and kernel allow it, else frame pointers */
	UNWIND_FP,	 /* frame pointers only (bpf_get_stack) */
	UNWIND_CFI,	 /* each binary's .eh_frame, frame pointers where a binary has none */
};

/* --syscalls */
enum syscall_mode {
	SYSCALLS_OFF = 0,
	/*
	 * Blocking waits inside syscalls, named from the registers at the
	 * switch-out: markers at no cost per syscall (needs switch tracing).
	 */
	SYSCALLS_BLOCKING,
	/* sys_enter/sys_exit on every syscall: exact counts, results, non-blocking ones. */
	SYSCALLS_ALL,
};

/*
 * What `record` writes: the Firefox Profiler's format, pprof (-o *.pb.gz,
 * --format pprof), or both from the same recording (the pprof file beside
 * the -o one, its .json.gz or .json ending replaced by .pb.gz).
 */
enum output_format {
	FORMAT_FIREFOX = 0,
	FORMAT_PPROF,
	FORMAT_BOTH,
};

struct options {
	enum run_mode mode;
	bool all;
	uint32_t *pids; /* tgids, resolved from the given pids (a tid maps to its process) */
	size_t nr_pids;
	bool no_inherit; /* -p: not the children the given processes fork while recording */
	bool view;	 /* record --view: serve the profile once written */
	enum output_format format;
	/* --cgroup arguments as given (resolved by record); they imply `all` */
	const char *cgroups[BPFPROF_MAX_CGROUPS];
	size_t nr_cgroups;
	double duration_s; /* 0: until Ctrl-C or the command exits */
	unsigned freq_hz;
	enum sample_event_kind event;
	enum unwind_mode unwind;     /* --unwind: how user stacks are walked */
	const char *state_dir;	     /* --state-dir: what is kept across runs (the table cache) */
	uint64_t unwind_cache_bytes; /* --unwind-cache: its bound; 0: off */
	/* --debuginfod-timeout: fetching debug files may take this long per profile; 0: never */
	uint64_t debuginfod_budget_ns;
	const char *output;
	unsigned file_mode;	   /* --mode: permissions of the profiles written */
	uint64_t ring_bytes;	   /* --ring-size: bytes per CPU ring; 0: sized for the rate */
	uint64_t stack_copy_bytes; /* --stack-copy: bytes of a stack copied at most; 0: none */
	uint64_t unwind_memory;	   /* --unwind-memory: bytes of the unwind store; 0: the default */
	bool include_idle;
	bool sched;	       /* capture context switches and wakeups (--no-sched clears) */
	bool offcpu;	       /* off-CPU samples and switch-out stacks (--no-off-cpu clears) */
	uint64_t sched_min_ns; /* --sched-min */
	enum syscall_mode syscalls; /* --syscalls: how syscalls are seen */
	uint64_t syscall_min_ns;    /* --syscall-min */
	char **command;		    /* argv after `--`, NULL-terminated, or NULL */
	/* continuous */
	uint64_t interval_ns;	      /* --interval: the length of one snapshot */
	const char *out_dir;	      /* --out-dir */
	unsigned keep;		      /* --keep: snapshots kept (0: no count limit) */
	uint64_t max_bytes;	      /* --max-bytes: their total size (0: no size limit) */
	struct listen_options listen; /* --listen and its options */
	char *self_command_line;      /* bpfprof's own argv, for the profile's meta */
	char *target_desc;	      /* "all", "pid 1,2", "command: make" */
};

/*
 * Parse argv. Returns 0 to go on, or an exit status (> 0 after printing a
 * one-line error; -1 for a clean exit after --help/--version, meaning 0).
 */
int options_parse(int argc, char **argv, struct options *o);
void options_free(struct options *o);

#endif
