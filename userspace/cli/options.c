// SPDX-License-Identifier: BSD-2-Clause
#include "options.h"

#include <argp.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../unwind/table_cache.h"
#include "../util/log.h"
#include "../util/option_values.h"
#include "option_targets.h"
#include "snapshot_dir.h"

static const char doc[] =
	"A system-wide eBPF sampling profiler that writes Firefox Profiler profiles.\n"
	"\n"
	"EXAMPLES:\n"
	"  sudo bpfprof -a -d 10            # whole machine, 10 s\n"
	"  sudo bpfprof -p 1234,5678 -d 5   # two processes, all threads\n"
	"  sudo bpfprof -a -F 99 -o x.json  # 99 Hz until Ctrl-C, no gzip\n"
	"  sudo bpfprof record -- make -j8  # a command and its children\n"
	"  sudo bpfprof -a --cgroup system.slice/docker-<id>.scope -d 10\n"
	"                                   # one container (and its sub-cgroups)\n"
	"  sudo bpfprof continuous -a --interval 60s --keep 60 \\\n"
	"      --out-dir /var/lib/bpfprof   # always on: one a minute, last hour kept\n"
	"  bpfprof view profile.json.gz     # serve it to the Firefox Profiler\n"
	"  bpfprof report profile.json.gz   # its summary in the terminal\n"
	"\n"
	"Open the result with bpfprof view, or at https://profiler.firefox.com/\n"
	"(\"Load a profile from file\").\n"
	"\v"
	"Exactly one target: -a, -p, or a command after --. --cgroup narrows -a\n"
	"(and implies it). Ctrl-C or SIGTERM stops recording early; the profile\n"
	"is still written. Long options may be abbreviated while unambiguous\n"
	"(--dur 5 for --duration 5).\n"
	"\n"
	"`continuous` keeps the programs attached and writes one complete profile\n"
	"per interval into --out-dir, named after the UTC start of its window\n"
	"(bpfprof-YYYYMMDDTHHMMSS.mmmZ.json.gz); consecutive snapshots cover time\n"
	"without gap or overlap, and the oldest are deleted past --keep or\n"
	"--max-bytes. Its defaults cost least: 49 Hz, no off-CPU samples (--off-cpu),\n"
	"syscalls only where they block. SIGTERM or Ctrl-C writes the current partial\n"
	"snapshot and exits; SIGHUP ends the current snapshot now.";

static const char args_doc[] =
	"[record] -a | -p PID[,PID...] | -- COMMAND [ARGS...]\n"
	"continuous [--interval TIME] [--out-dir DIR] [--keep N | --max-bytes "
	"SIZE] [--listen ADDR:PORT] -a | -p PID[,PID...]\n"
	"view FILE [--port PORT] [--address ADDR] [--no-open] [--profiler-url URL]\n"
	"report FILE [--pid PID] [--tid TID] [--rows N] [--off-cpu] [--json]";

enum {
	OPT_IDLE = 1000,
	OPT_CGROUP,
	OPT_NO_SCHED,
	OPT_NO_OFFCPU,
	OPT_SCHED_MIN,
	OPT_NO_SYSCALLS,
	OPT_SYSCALL_MIN,
	OPT_OFFCPU,
	OPT_SYSCALLS,
	OPT_INTERVAL,
	OPT_OUT_DIR,
	OPT_KEEP,
	OPT_MAX_BYTES,
	OPT_UNWIND,
	OPT_DEBUGINFOD_TIMEOUT,
	OPT_NO_DEBUGINFOD,
	OPT_NO_INHERIT,
	OPT_VIEW,
	OPT_FORMAT,
	OPT_MODE,
	OPT_RING_SIZE,
	OPT_STATE_DIR,
	OPT_UNWIND_CACHE,
	OPT_STACK_COPY,
	OPT_UNWIND_MEMORY,
	OPT_VERSION,
	OPT_HELP,
	OPT_USAGE,
};

static const struct argp_option option_defs[] = {
	{ "all", 'a', NULL, 0, "Profile the whole system (every process)", 0 },
	{ "pid", 'p', "PID[,PID...]", 0,
	  "Profile these processes: every thread, including threads created later, and the "
	  "processes they fork while recording (and theirs); ends when the given ones are gone",
	  0 },
	{ "no-inherit", OPT_NO_INHERIT, NULL, 0,
	  "With -p: only the given processes, not the children they fork while recording", 0 },
	{ "format", OPT_FORMAT, "FORMAT", 0,
	  "firefox (default), pprof (gzip'd protobuf, for go tool pprof, Pyroscope, Parca), or "
	  "both (record: the pprof file beside -o, ending in .pb.gz; continuous: each snapshot "
	  "as both); an -o name ending in .pb.gz or .pb picks pprof",
	  0 },
	{ "view", OPT_VIEW, NULL, 0,
	  "(record) Then serve the profile to the Firefox Profiler, as bpfprof view does, until "
	  "Ctrl-C",
	  0 },
	{ "cgroup", OPT_CGROUP, "PATH", 0,
	  "Only tasks in this cgroup v2 directory or below it (repeatable, up to 8): a path "
	  "under the v2 mount, or one relative to its root as /proc/PID/cgroup shows it. "
	  "Decided in the kernel at each event from the task's cgroup at that instant: "
	  "processes forked inside or moved in count from then on, moved-out ones stop "
	  "counting. Implies -a",
	  0 },
	{ "duration", 'd', "SECONDS", 0, "Stop after SECONDS (default: Ctrl-C or command exit)",
	  0 },
	{ "freq", 'F', "HZ", 0, "Samples per second per CPU (default 999)", 0 },
	{ "event", 'e', "EVENT", 0,
	  "Sampling clock: cpu-clock, cycles, or auto (default: cycles on bare metal, cpu-clock "
	  "in VMs)",
	  0 },
	{ "unwind", OPT_UNWIND, "HOW", 0,
	  "User stacks: cfi (each binary's .eh_frame: whole stacks of code built without frame "
	  "pointers, as distributions build; x86_64), fp (frame pointers only: cheaper, cut "
	  "short where code has none), or auto (default: cfi where the kernel allows it)",
	  0 },
	{ "unwind-cache", OPT_UNWIND_CACHE, "SIZE", 0,
	  "With cfi: keep the unwind tables built, by build-id, for the next runs, in at most "
	  "SIZE (default 256M; 0: none) under --state-dir",
	  0 },
	{ "state-dir", OPT_STATE_DIR, "DIR", 0,
	  "Where what is kept across runs goes (the unwind table cache; "
	  "default " TABLE_CACHE_DEFAULT_STATE "): made at mode 0700, root's alone, else not used",
	  0 },
	{ "stack-copy", OPT_STACK_COPY, "SIZE", 0,
	  "With --unwind cfi: a sample in a program whose unwind table is still being built "
	  "copies up to SIZE of its stack (default and most 240K, 0 = never; 16 MiB/s per CPU "
	  "at most), and its stack is finished once the table is there",
	  0 },
	{ "unwind-memory", OPT_UNWIND_MEMORY, "SIZE", 0,
	  "Memory for the unwind tables --unwind cfi reads (4M to 1G; default 32M, some 8M rows: "
	  "a build machine's compilers and libLLVM with room to spare). When full, the tables of "
	  "the files sampled least recently make room; the summary says how much was used",
	  0 },
	{ "debuginfod-timeout", OPT_DEBUGINFOD_TIMEOUT, "TIME", 0,
	  "With DEBUGINFOD_URLS set: at most TIME (default 10s) fetching debug files of "
	  "stripped binaries from debuginfod servers while the profile is built",
	  0 },
	{ "no-debuginfod", OPT_NO_DEBUGINFOD, NULL, 0,
	  "Never ask debuginfod servers, even with DEBUGINFOD_URLS set", 0 },
	{ "output", 'o', "FILE", 0, "Output file (default profile.json.gz; .gz compresses)", 0 },
	{ "ring-size", OPT_RING_SIZE, "SIZE", 0,
	  "Bytes of ring buffer per CPU (4K to 64M, a power of two; default: sized for the rate, "
	  "up to 8M). Smaller loses records under load (shown as Lost events markers)",
	  0 },
	{ "mode", OPT_MODE, "MODE", 0,
	  "Permissions of the profiles written, in octal (default 0600: they hold every "
	  "process's command line; 0644 to share them)",
	  0 },
	{ "idle", OPT_IDLE, NULL, 0, "Include the idle task, as one thread per CPU", 0 },
	{ "no-off-cpu", OPT_NO_OFFCPU, NULL, 0,
	  "No off-CPU samples and no stacks at switch-out (cheaper on switch-heavy machines); "
	  "scheduling markers and exact CPU use stay",
	  0 },
	{ "sched-min", OPT_SCHED_MIN, "TIME", 0,
	  "Scheduling markers shorter than TIME are only counted, per thread (default 1ms; "
	  "units ns, us, ms, s; a bare number is ms)",
	  0 },
	{ "no-sched", OPT_NO_SCHED, NULL, 0,
	  "Do not trace context switches and wakeups: no off-CPU data or scheduling markers, and "
	  "CPU use is estimated from samples",
	  0 },
	{ "syscall-min", OPT_SYSCALL_MIN, "TIME", 0,
	  "Syscalls shorter than TIME are only counted, per thread and syscall (default 1ms; 0 "
	  "shows every syscall)",
	  0 },
	{ "no-syscalls", OPT_NO_SYSCALLS, NULL, 0, "Same as --syscalls=off", 0 },
	{ "off-cpu", OPT_OFFCPU, NULL, 0,
	  "Off-CPU samples and switch-out stacks (default in record; continuous: off)", 0 },
	{ "syscalls", OPT_SYSCALLS, "MODE", OPTION_ARG_OPTIONAL,
	  "blocking (default): a marker for each wait inside a syscall of at least --syscall-min, "
	  "named from the scheduler, at no cost per syscall (no counts, no results); all (or "
	  "--syscalls alone): trace every syscall, with exact per-thread counts, results and "
	  "non-blocking long calls, at ~0.1-0.3 us per syscall; off",
	  0 },
	{ "verbose", 'v', NULL, 0, "Say more (repeat for debug output)", 0 },
	{ "version", OPT_VERSION, NULL, 0, "Print the version and exit", 0 },
	{ "help", OPT_HELP, NULL, 0, "Show this help and exit", -1 },
	{ "usage", OPT_USAGE, NULL, 0, "Show a short usage message", -1 },
	{ NULL, 0, NULL, 0, "continuous:", 1 },
	{ "interval", OPT_INTERVAL, "TIME", 0,
	  "Length of one snapshot (default 60s; units ms, s, m, h; 100ms to 24h)", 1 },
	{ "out-dir", OPT_OUT_DIR, "DIR", 0,
	  "Where snapshots go (default ./" CONTINUOUS_OUT_DIR "; created with mode 0700). "
	  "Yours, writable only by you, inside directories only root or you can change; "
	  "a link in the path is followed only when root or you own it",
	  1 },
	{ "keep", OPT_KEEP, "N", 0, "Keep the newest N snapshots (default 60)", 1 },
	{ "max-bytes", OPT_MAX_BYTES, "SIZE", 0,
	  "Instead of --keep: keep the newest snapshots that fit in SIZE (e.g. 500M, 2G)", 1 },
	{ "listen", OPT_LISTEN, "[ADDR:]PORT", 0,
	  "Also serve scrapers, as Go programs do: /debug/pprof/profile?seconds=N (the CPU "
	  "profile of the next N seconds, gzip'd pprof), /debug/pprof/offcpu?seconds=N "
	  "(--off-cpu), /snapshot/latest. ADDR defaults to 127.0.0.1, where only root and you "
	  "may ask without a token; any other address needs --listen-token-file",
	  1 },
	{ "listen-token-file", OPT_LISTEN_TOKEN_FILE, "FILE", 0,
	  "Every request must send the token in FILE as Authorization: Bearer TOKEN", 1 },
	{ "listen-tls", OPT_LISTEN_TLS, "CERT,KEY", 0,
	  "Serve HTTPS with this PEM certificate (chain) and private key", 1 },
	{ "label", OPT_LABEL, "KEY=VALUE", 0,
	  "Label every sample served with KEY=VALUE, beside host (repeatable; e.g. "
	  "service_name=checkout for Pyroscope)",
	  1 },
	{ 0 },
};

struct parse_state {
	struct options *o;
	/* Given explicitly, so the mode's default does not apply. */
	bool freq_set, offcpu_set, syscalls_set, keep_set, max_bytes_set, format_set;
	bool no_debuginfod; /* wins over --debuginfod-timeout, in any order */
	/* Options of one mode only, to reject them in the other (the last one given). */
	const char *continuous_only, *record_only;
	int done;     /* --help/--version: exit 0 */
	int reported; /* a handler already printed its one-line error */
};

static int read_max_sample_rate(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_max_sample_rate", "re");
	int v = 100000;

	if (f) {
		if (fscanf(f, "%d", &v) != 1 || v <= 0)
			v = 100000;
		fclose(f);
	}
	return v;
}

static error_t parse_opt(int key, char *arg, struct argp_state *state);
static const struct argp bpfprof_argp = { option_defs, parse_opt, args_doc, doc };

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct parse_state *ps = state->input;
	struct options *o = ps->o;
	unsigned long long v;
	char *end;

	switch (key) {
	case 'a':
		o->all = true;
		break;
	case 'p':
		if (options_add_pids(o, arg))
			goto reported;
		break;
	case OPT_CGROUP:
		if (o->nr_cgroups >= BPFPROF_MAX_CGROUPS) {
			log_error("--cgroup %s: at most %d cgroups; give a common parent cgroup "
				  "instead",
				  arg, BPFPROF_MAX_CGROUPS);
			goto reported;
		}
		o->cgroups[o->nr_cgroups++] = arg;
		break;
	case 'd':
		ps->record_only = "-d";
		errno = 0;
		o->duration_s = strtod(arg, &end);
		if (errno || *end || !isfinite(o->duration_s) || o->duration_s <= 0 ||
		    o->duration_s > 365.0 * 86400) {
			log_error("-d %s: the duration must be a positive number of seconds, e.g. "
				  "-d 10",
				  arg);
			goto reported;
		}
		break;
	case 'F': {
		int max = read_max_sample_rate();

		if (parse_uint(arg, UINT_MAX, &v) || v == 0) {
			log_error("-F %s: the rate must be a whole number of samples per second "
				  "between 1 and %d, e.g. -F 999",
				  arg, max);
			goto reported;
		}
		if (v > (unsigned long long)max) {
			log_error("-F %s: above the kernel's limit "
				  "(kernel.perf_event_max_sample_rate "
				  "= %d); use -F %d or less",
				  arg, max, max);
			goto reported;
		}
		o->freq_hz = (unsigned)v;
		ps->freq_set = true;
		break;
	}
	case 'e':
		if (!strcmp(arg, "auto"))
			o->event = SAMPLE_EVENT_AUTO;
		else if (!strcmp(arg, "cycles"))
			o->event = SAMPLE_EVENT_CYCLES;
		else if (!strcmp(arg, "cpu-clock"))
			o->event = SAMPLE_EVENT_CPU_CLOCK;
		else {
			log_error("-e %s: unknown sampling event; use cpu-clock, cycles or auto",
				  arg);
			goto reported;
		}
		break;
	case OPT_UNWIND:
		if (!strcmp(arg, "fp")) {
			o->unwind = UNWIND_FP;
		} else if (!strcmp(arg, "auto")) {
			o->unwind = UNWIND_AUTO;
		} else if (!strcmp(arg, "cfi")) {
#if defined(__x86_64__)
			o->unwind = UNWIND_CFI;
#else
			log_error("--unwind cfi: only x86_64 is supported so far; use --unwind fp");
			goto reported;
#endif
		} else {
			log_error("--unwind %s: unknown way to unwind; use cfi, fp or auto", arg);
			goto reported;
		}
		break;
	case 'o':
		if (!*arg) {
			log_error("-o: empty file name; give a path such as -o profile.json.gz");
			goto reported;
		}
		o->output = arg;
		ps->record_only = "-o";
		break;
	case OPT_IDLE:
		o->include_idle = true;
		break;
	case OPT_NO_SCHED:
		o->sched = false;
		break;
	case OPT_NO_INHERIT:
		o->no_inherit = true;
		break;
	case OPT_VIEW:
		o->view = true;
		ps->record_only = "--view";
		break;
	case OPT_RING_SIZE:
		if (parse_size(arg, &o->ring_bytes) || o->ring_bytes < 4096 ||
		    o->ring_bytes > (64ull << 20)) {
			log_error("--ring-size %s: give a size from 4K to 64M, such as 256K", arg);
			goto reported;
		}
		break;
	case OPT_STATE_DIR:
		if (arg[0] != '/') {
			log_error("--state-dir %s: give an absolute path, such as %s", arg,
				  TABLE_CACHE_DEFAULT_STATE);
			goto reported;
		}
		o->state_dir = arg;
		break;
	case OPT_UNWIND_CACHE:
		if (parse_size(arg, &o->unwind_cache_bytes)) {
			log_error("--unwind-cache %s: give a size such as 256M or 1G (K, M, G are "
				  "powers of 1024), or 0 for no cache",
				  arg);
			goto reported;
		}
		break;
	case OPT_STACK_COPY:
		if (parse_size(arg, &o->stack_copy_bytes) ||
		    o->stack_copy_bytes > STACK_COPY_TOTAL_MAX) {
			log_error(
				"--stack-copy %s: give a size from 0 (no copies) to 240K, such as "
				"64K",
				arg);
			goto reported;
		}
		break;
	case OPT_UNWIND_MEMORY:
		if (parse_size(arg, &o->unwind_memory) || o->unwind_memory < (4ull << 20) ||
		    o->unwind_memory > (1ull << 30)) {
			log_error("--unwind-memory %s: give a size from 4M to 1G, such as 64M",
				  arg);
			goto reported;
		}
		break;
	case OPT_MODE:
		if (parse_file_mode(arg, &o->file_mode)) {
			log_error("--mode %s: give the profiles' permissions in octal, readable by "
				  "their owner, such as 0600 or 0644",
				  arg);
			goto reported;
		}
		break;
	case OPT_FORMAT:
		if (!strcmp(arg, "firefox")) {
			o->format = FORMAT_FIREFOX;
		} else if (!strcmp(arg, "pprof")) {
			o->format = FORMAT_PPROF;
		} else if (!strcmp(arg, "both")) {
			o->format = FORMAT_BOTH;
		} else {
			log_error("--format %s: unknown format; use firefox, pprof or both", arg);
			goto reported;
		}
		ps->format_set = true;
		break;
	case OPT_NO_OFFCPU:
		o->offcpu = false;
		ps->offcpu_set = true;
		break;
	case OPT_OFFCPU:
		o->offcpu = true;
		ps->offcpu_set = true;
		break;
	case OPT_SYSCALLS:
		if (!arg || !strcmp(arg, "all"))
			o->syscalls = SYSCALLS_ALL;
		else if (!strcmp(arg, "blocking"))
			o->syscalls = SYSCALLS_BLOCKING;
		else if (!strcmp(arg, "off"))
			o->syscalls = SYSCALLS_OFF;
		else {
			log_error("--syscalls=%s: unknown mode; use blocking, all or off", arg);
			goto reported;
		}
		ps->syscalls_set = true;
		break;
	case OPT_INTERVAL:
		ps->continuous_only = "--interval";
		if (parse_interval_ns(arg, &o->interval_ns) || o->interval_ns < 100000000ULL) {
			log_error("--interval %s: give a time with its unit between 100ms and 24h, "
				  "such as 60s, 5m or 1h",
				  arg);
			goto reported;
		}
		break;
	case OPT_OUT_DIR:
		ps->continuous_only = "--out-dir";
		if (!*arg) {
			log_error("--out-dir: empty path; give a directory such as "
				  "/var/lib/bpfprof");
			goto reported;
		}
		o->out_dir = arg;
		break;
	case OPT_KEEP:
		ps->continuous_only = "--keep";
		if (parse_uint(arg, UINT_MAX, &v) || v == 0) {
			log_error("--keep %s: give how many snapshots to keep, a whole number of "
				  "at least 1, e.g. --keep 60",
				  arg);
			goto reported;
		}
		o->keep = (unsigned)v;
		ps->keep_set = true;
		break;
	case OPT_MAX_BYTES:
		ps->continuous_only = "--max-bytes";
		if (parse_size(arg, &o->max_bytes) || o->max_bytes == 0) {
			log_error("--max-bytes %s: give a size such as 500M or 2G (K, M, G, T are "
				  "powers of 1024)",
				  arg);
			goto reported;
		}
		ps->max_bytes_set = true;
		break;
	case OPT_DEBUGINFOD_TIMEOUT:
		if (parse_interval_ns(arg, &o->debuginfod_budget_ns) || !o->debuginfod_budget_ns) {
			log_error("--debuginfod-timeout %s: give a time such as 10s or 500ms (or "
				  "--no-debuginfod)",
				  arg);
			goto reported;
		}
		break;
	case OPT_NO_DEBUGINFOD:
		ps->no_debuginfod = true;
		break;
	case OPT_SCHED_MIN:
		if (parse_duration_ns(arg, &o->sched_min_ns)) {
			log_error(
				"--sched-min %s: not a duration; give a time such as 1ms, 250us or "
				"2s",
				arg);
			goto reported;
		}
		break;
	case OPT_NO_SYSCALLS:
		o->syscalls = SYSCALLS_OFF;
		ps->syscalls_set = true;
		break;
	case OPT_SYSCALL_MIN:
		if (parse_duration_ns(arg, &o->syscall_min_ns)) {
			log_error(
				"--syscall-min %s: not a duration; give a time such as 1ms, 250us "
				"or 2s",
				arg);
			goto reported;
		}
		break;
	case 'v':
		log_verbosity++;
		break;
	case OPT_VERSION:
		printf("bpfprof %s\n", BPFPROF_VERSION);
		ps->done = 1;
		break;
	case OPT_HELP:
		argp_help(&bpfprof_argp, stdout, ARGP_HELP_STD_HELP & ~ARGP_HELP_EXIT_OK,
			  "bpfprof");
		ps->done = 1;
		break;
	case OPT_USAGE:
		argp_help(&bpfprof_argp, stdout, ARGP_HELP_USAGE, "bpfprof");
		ps->done = 1;
		break;
	case ARGP_KEY_ARG:
		if (state->arg_num == 0 && !strcmp(arg, "record"))
			break;
		if (state->arg_num == 0 && !strcmp(arg, "continuous")) {
			o->mode = MODE_CONTINUOUS;
			break;
		}
		log_error("unexpected argument '%s'; put the command to profile after --, e.g. "
			  "bpfprof -- %s",
			  arg, arg);
		goto reported;
	default: {
		int res = listen_option(&o->listen, key, arg);

		if (res == 1)
			return ARGP_ERR_UNKNOWN;
		if (res)
			goto reported;
		ps->continuous_only = o->listen.given;
		break;
	}
	}
	return 0;
reported:
	ps->reported = 1;
	return EINVAL;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

/* Options that belong to one mode, and the defaults that differ between them. */
static int apply_mode(struct parse_state *ps)
{
	struct options *o = ps->o;
	bool pb_name;

	if (o->mode == MODE_RECORD) {
		if (ps->continuous_only) {
			log_error("%s belongs to bpfprof continuous; run bpfprof continuous %s ...",
				  ps->continuous_only, ps->continuous_only);
			return -EINVAL;
		}
		pb_name = ends_with(o->output, ".pb.gz") || ends_with(o->output, ".pb");
		if (!ps->format_set && pb_name)
			o->format = FORMAT_PPROF;
		if (o->format == FORMAT_BOTH && pb_name) {
			log_error("--format both: -o %s is the Firefox profile's name; give one "
				  "ending in .json.gz (the pprof file goes beside it)",
				  o->output);
			return -EINVAL;
		}
		if (o->view && o->format == FORMAT_PPROF) {
			log_error("--view serves Firefox profiles, not pprof; drop --view or write "
				  "--format firefox");
			return -EINVAL;
		}
		return 0;
	}
	if (ps->record_only || o->command) {
		log_error("%s is for bpfprof record; continuous runs until stopped and writes into "
			  "--out-dir",
			  o->command ? "a command after --" : ps->record_only);
		return -EINVAL;
	}
	if (ps->keep_set && ps->max_bytes_set) {
		log_error("--keep and --max-bytes both limit what is kept; give only one of them");
		return -EINVAL;
	}
	if (listen_options_check(&o->listen))
		return -EINVAL;
	if (!ps->freq_set)
		o->freq_hz = CONTINUOUS_FREQ_HZ;
	if (!ps->offcpu_set)
		o->offcpu = false;
	if (!ps->keep_set && !ps->max_bytes_set)
		o->keep = CONTINUOUS_KEEP;
	return 0;
}

static const struct argp_option *find_long(const char *name, size_t len, bool *ambiguous)
{
	const struct argp_option *found = NULL;

	*ambiguous = false;
	/* A group header has a doc but no name; the terminator has neither. */
	for (const struct argp_option *d = option_defs; d->name || d->doc; d++) {
		if (!d->name || strncmp(d->name, name, len))
			continue;
		if (strlen(d->name) == len)
			return d;
		if (found && found->key != d->key)
			*ambiguous = true;
		found = d;
	}
	return *ambiguous ? NULL : found;
}

/* "--sched-min, --syscall-min": the options NAME abbreviates, for an error. */
static void list_candidates(const char *name, size_t len, char *buf, size_t size)
{
	size_t used = 0;

	buf[0] = '\0';
	for (const struct argp_option *d = option_defs; d->name || d->doc; d++) {
		int n;

		if (!d->name || strncmp(d->name, name, len))
			continue;
		n = snprintf(buf + used, size - used, "%s--%s", used ? ", " : "", d->name);
		if (n < 0 || (size_t)n >= size - used)
			break;
		used += (size_t)n;
	}
}

static const struct argp_option *find_short(int key)
{
	for (const struct argp_option *d = option_defs; d->name || d->doc; d++)
		if (d->name && d->key == key && key < 256)
			return d;
	return NULL;
}

/*
 * argp with ARGP_NO_ERRS rejects an unknown option or a missing value
 * without saying which, and without it argp prints two lines. So check the
 * option words first and say exactly what is wrong, in one line. Long
 * options may be abbreviated as argp allows (see find_long).
 */
static int check_option_words(int nopt, char **argv)
{
	for (int i = 1; i < nopt; i++) {
		const char *a = argv[i];
		const struct argp_option *d;

		if (a[0] != '-' || !a[1])
			continue;
		if (a[1] == '-') {
			const char *eq = strchr(a + 2, '=');
			size_t len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);

			bool ambiguous;

			d = find_long(a + 2, len, &ambiguous);
			if (ambiguous) {
				char names[256];

				list_candidates(a + 2, len, names, sizeof(names));
				log_error("option '%.*s' is ambiguous: it could be %s; see bpfprof "
					  "--help",
					  (int)(len + 2), a, names);
				return -EINVAL;
			}
			if (!d) {
				log_error("unknown option '%s'; see bpfprof --help", a);
				return -EINVAL;
			}
			/* An optional value only ever comes after '=' (argp's rule): say so. */
			if (d->arg && (d->flags & OPTION_ARG_OPTIONAL) && !eq && i + 1 < nopt &&
			    argv[i + 1][0] != '-') {
				log_error("option '%s' takes its value after '=' (%s=%s)", a, a,
					  argv[i + 1]);
				return -EINVAL;
			}
			if (d->arg && !(d->flags & OPTION_ARG_OPTIONAL) && !eq && ++i >= nopt) {
				log_error("option '%s' needs a value (%s); see bpfprof --help", a,
					  d->arg);
				return -EINVAL;
			}
			continue;
		}
		for (const char *c = a + 1; *c; c++) {
			d = find_short((unsigned char)*c);
			if (!d) {
				log_error("unknown option '-%c' in '%s'; see bpfprof --help", *c,
					  a);
				return -EINVAL;
			}
			if (d->arg) {
				if (!c[1] && ++i >= nopt) {
					log_error("option '-%c' needs a value (%s); see bpfprof "
						  "--help",
						  *c, d->arg);
					return -EINVAL;
				}
				break; /* the rest of the word, or the next word, is the value */
			}
		}
	}
	return 0;
}

int options_parse(int argc, char **argv, struct options *o)
{
	struct parse_state ps = { .o = o };
	int nopt = argc, targets, arg_index = 0;
	error_t err;

	memset(o, 0, sizeof(*o));
	o->freq_hz = DEFAULT_FREQ_HZ;
	o->stack_copy_bytes = DEFAULT_STACK_COPY_BYTES;
	o->output = DEFAULT_OUTPUT;
	o->sched = true;
	o->offcpu = true;
	o->sched_min_ns = DEFAULT_SCHED_MIN_NS;
	o->syscalls = SYSCALLS_BLOCKING;
	o->syscall_min_ns = DEFAULT_SYSCALL_MIN_NS;
	o->debuginfod_budget_ns = DEFAULT_DEBUGINFOD_BUDGET_NS;
	o->interval_ns = CONTINUOUS_INTERVAL_NS;
	o->out_dir = CONTINUOUS_OUT_DIR;
	o->file_mode = DEFAULT_FILE_MODE;
	/*
	 * Tests only: BPFPROF_TEST_STATE_DIR replaces the default, so that each
	 * test has a cache of its own (cold, as before the cache), and none
	 * leaves a /var/lib/bpfprof that the package test's purge would delete.
	 */
	o->state_dir = getenv("BPFPROF_TEST_STATE_DIR") && *getenv("BPFPROF_TEST_STATE_DIR")
			       ? getenv("BPFPROF_TEST_STATE_DIR")
			       : TABLE_CACHE_DEFAULT_STATE;
	o->unwind_cache_bytes = TABLE_CACHE_DEFAULT_BYTES;

	/* Everything after the first `--` is the command, never our options. */
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--")) {
			nopt = i;
			if (i + 1 < argc)
				o->command = &argv[i + 1];
			break;
		}

	o->self_command_line = options_join_args(argv, argc);
	if (!o->self_command_line)
		return 1;

	if (check_option_words(nopt, argv))
		return 2;
	/* We print our own one-line errors; argp's two-line ones are off. */
	err = argp_parse(&bpfprof_argp, nopt, argv, ARGP_NO_ERRS | ARGP_NO_EXIT | ARGP_NO_HELP,
			 &arg_index, &ps);
	if (ps.done)
		return -1;
	if (err) {
		if (!ps.reported)
			log_error("invalid arguments; see bpfprof --help");
		return 2;
	}
	if (nopt < argc && !o->command) {
		log_error("nothing after --; give the command to profile, e.g. bpfprof -- make");
		return 2;
	}

	if (apply_mode(&ps))
		return 2;
	if (ps.no_debuginfod)
		o->debuginfod_budget_ns = 0;
	if (o->nr_cgroups && (o->nr_pids || o->command)) {
		log_error("--cgroup narrows the whole system (-a), not %s; drop %s or --cgroup",
			  o->command ? "a command" : "-p", o->command ? "the command" : "-p");
		return 2;
	}
	if (o->nr_cgroups)
		o->all = true;
	targets = o->all + (o->nr_pids > 0) + (o->command != NULL);
	if (targets == 0) {
		log_error("nothing to profile: give -a (whole system), -p PID, or -- COMMAND; see "
			  "bpfprof --help");
		return 2;
	}
	if (targets > 1) {
		log_error("choose one target: -a, -p PID, or -- COMMAND (got %d of them)", targets);
		return 2;
	}
	if (o->no_inherit && !o->nr_pids) {
		log_error("--no-inherit is for -p PID (a command's children and -a's processes are "
			  "always recorded); drop --no-inherit");
		return 2;
	}
	if (options_describe_target(o))
		return 1;
	return 0;
}

void options_free(struct options *o)
{
	free(o->pids);
	free(o->self_command_line);
	free(o->target_desc);
	listen_options_free(&o->listen);
}
