// SPDX-License-Identifier: BSD-2-Clause
/*
 * The recording shared by `record` and `continuous` (recording.h): set up
 * from the options, stopped, and one model written as a profile.
 */
#include "recording.h"

#include <errno.h>
#include <stdatomic.h>
#include <signal.h>
#include <inttypes.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "../capture/held_waits.h"
#include "../capture/preflight.h"
#include "../emit/emitter.h"
#include "../emit/pprof_writer.h"
#include "../symbols/debuginfo_server.h"
#include "../lang/php_procs.h"
#include "../lang/python_procs.h"
#include "../lang/ruby_procs.h"
#include "../symbols/frame_resolver.h"
#include "../lang/hotspot_procs.h"
#include "../lang/v8_procs.h"
#include "../symbols/java_frames.h"
#include "../symbols/python_frames.h"
#include "../symbols/jit_maps.h"
#include "../symbols/kallsyms.h"
#include "../symbols/symbolizer.h"
#include "../util/clock.h"
#include "../util/log.h"

static int on_record(void *ctx, const void *data, size_t size)
{
	const struct event_header *h = data;

	/* -vvv: a trace of every record, for debugging the capture side. */
	if (log_verbosity >= 3 && size >= sizeof(*h))
		fprintf(stderr, "record kind=%u size=%u cpu=%u ts=%llu pid=%u tid=%u\n", h->kind,
			h->size, h->cpu, (unsigned long long)h->ts, h->pid, h->tid);
	return model_add_record(ctx, data, size);
}

static void resolve_frame(void *ctx, const struct raw_frame *f, struct resolved_frame *out)
{
	const struct recording *r = ctx;

	frame_resolve(&r->frames, f->object, f->offset, f->is_return, out);
}

const char *human_size(double bytes, char *buf, size_t len)
{
	static const char *units[] = { "B", "KiB", "MiB", "GiB" };
	int u = 0;

	while (bytes >= 1024 && u < 3) {
		bytes /= 1024;
		u++;
	}
	snprintf(buf, len, u ? "%.1f %s" : "%.0f %s", bytes, units[u]);
	return buf;
}

struct seed_ctx {
	struct model *model;
	uint64_t ts;
};

/* --cgroup: the processes inside at the start appear even if they never run. */
static int seed_cgroup_process(void *vctx, uint32_t pid)
{
	struct seed_ctx *ctx = vctx;
	int err = proc_seed_process(ctx->model, "/proc", pid, ctx->ts);

	return err == -ENOMEM ? err : 0; /* one that exited meanwhile is simply not there */
}

/* What the profile says of the recording; `host` and `uts` hold its strings. */
static void fill_meta(struct profile_meta *meta, struct recording *r, const struct options *opts,
		      const struct model *m, const struct session_stats *lost, double start_wall_ms,
		      char *host, size_t host_len, struct utsname *uts)
{
	gethostname(host, host_len - 1);
	uname(uts);
	meta->product_version = BPFPROF_VERSION;
	meta->command_line = opts->self_command_line;
	meta->hostname = host;
	meta->kernel_release = uts->release;
	meta->arch = uts->machine;
	meta->logical_cpus = (unsigned)r->session.nr_online;
	meta->sample_freq_hz = opts->freq_hz;
	meta->sample_event =
		r->session.sampler.event_name ? r->session.sampler.event_name : "cpu-clock";
	meta->target = opts->target_desc;
	meta->unwinder =
		r->session.unwind ? "CFI (.eh_frame), frame pointers where none" : "frame pointers";
	meta->start_wall_ms = start_wall_ms;
	meta->lost_samples = lost->dropped[EV_SAMPLE];
	meta->lost_switches = lost->dropped[EV_SWITCH];
	meta->lost_wakeups = lost->dropped[EV_WAKEUP];
	meta->lost_other = lost->dropped[EV_SYSCALL] + lost->dropped[EV_SYSCALL_TOTALS];
	meta->include_idle = opts->include_idle;
	meta->sched_enabled = m->sched_enabled;
	meta->offcpu_samples = m->sched_enabled && m->offcpu_samples;
	meta->sched_min_ns = m->sched_min_ns;
	meta->syscalls_enabled = m->syscalls_enabled;
	meta->syscalls_from_switch = m->syscalls_from_switch;
	meta->syscall_min_ns = m->syscall_min_ns;
	meta->cgroup_filters = (const char *const *)r->cgroups.desc;
	meta->selected_pid = r->have_cmd ? r->cmd_tgid : 0;
	meta->profiler_pid = (uint32_t)getpid();
	meta->nr_cgroup_filters = r->cgroups.n;
	meta->view_out = &r->view;
}

int recording_write(struct recording *r, const struct options *opts, const struct model *m,
		    const struct session_stats *lost, double start_wall_ms,
		    const struct profile_tables *tables, struct output_file *out,
		    enum output_format format)
{
	struct profile_meta meta = { 0 };
	char host[256] = "", ruby[64], php[64];
	struct utsname uts;

	fill_meta(&meta, r, opts, m, lost, start_wall_ms, host, sizeof(host), &uts);
	/* Buffers of this call's own: snapshots are written on threads of their own. */
	meta.lang_versions[FRAME_LANG_RUBY] = ruby_procs_versions(r->rb_procs, ruby, sizeof(ruby));
	meta.lang_versions[FRAME_LANG_PHP] = php_procs_versions(r->php_procs, php, sizeof(php));
	/* How whole the stacks are: counted here, over the symbolized tables, for meta.extra. */
	if (format != FORMAT_PPROF) {
		int err = frame_quality_count(&meta.frame_quality, m, tables);

		if (err)
			return err;
	}
	if (format == FORMAT_PPROF)
		return pprof_write_fd(out->fd, out->gzip, m, tables, &meta, NULL);
	return emit_profile_fd(out->fd, out->gzip, m, tables, &meta);
}

int recording_write_pprof(struct recording *r, const struct options *opts, const struct model *m,
			  double start_wall_ms, const struct profile_tables *tables, int fd,
			  const struct pprof_options *pprof)
{
	static const struct session_stats none;
	struct profile_meta meta = { 0 };
	char host[256] = "";
	struct utsname uts;

	fill_meta(&meta, r, opts, m, &none, start_wall_ms, host, sizeof(host), &uts);
	return pprof_write_fd(fd, true, m, tables, &meta, pprof);
}

void recording_report_lost(const struct session_stats *st)
{
	static const char approximate[] = "CPU use and off-CPU time are approximate around them";
	static const struct {
		const char *what, *effect;
	} kinds[EV_KIND_MAX] = {
		[EV_SAMPLE] = { "samples", approximate },
		[EV_SWITCH] = { "context switches", approximate },
		[EV_WAKEUP] = { "wakeups", approximate },
		[EV_SYSCALL] = { "syscall markers", "those syscalls are counted but not shown" },
		[EV_SYSCALL_TOTALS] = { "syscall totals",
					"the syscall counts of some threads are too low" },
	};

	for (int k = 1; k < EV_KIND_MAX; k++)
		if (st->dropped[k])
			log_warn("%" PRIu64 " %s were lost because a ring buffer was full; %s",
				 st->dropped[k], kinds[k].what, kinds[k].effect);
}

/* -v: what symbolizing the profile cost, for users who wonder where the time went. */
static void log_symbolization(struct recording *r, const struct profile_tables *tables,
			      uint64_t elapsed_ns, uint64_t drains)
{
	struct symbolizer_stats st;
	char bytes[32], dwarf[32], jit[32], rss[32] = "?";
	struct rusage ru;

	fair_lock(&r->symbols_lock);
	symbolizer_get_stats(r->sym, &st);
	human_size((double)jit_maps_bytes(r->jit), jit, sizeof(jit));
	fair_unlock(&r->symbols_lock);
	human_size((double)st.bytes, bytes, sizeof(bytes));
	human_size((double)st.dwarf_bytes, dwarf, sizeof(dwarf));
	if (!getrusage(RUSAGE_SELF, &ru))
		human_size((double)ru.ru_maxrss * 1024, rss, sizeof(rss));
	log_debug("symbolized %zu frames (%zu functions) in %.0f ms, the rings drained %" PRIu64
		  " times meanwhile: %" PRIu64 " objects (%" PRIu64 " with DWARF), %" PRIu64
		  " lookups; symbol caches hold %s "
		  "(DWARF %s), JIT maps %s, %" PRIu64 " files open; bpfprof peak RSS %s",
		  tables->frames.len, tables->funcs.len, (double)elapsed_ns / 1e6, drains,
		  st.objects, st.dwarf_objects, st.lookups, bytes, dwarf, jit, st.open_files, rss);
}

static int build_tables(struct recording *r, struct model *m, struct profile_tables *tables,
			bool scheduled);

int recording_build_tables(struct recording *r, struct model *m, struct profile_tables *tables)
{
	return build_tables(r, m, tables, true);
}

int recording_build_asked_tables(struct recording *r, struct model *m,
				 struct profile_tables *tables)
{
	return build_tables(r, m, tables, false);
}

static int build_tables(struct recording *r, struct model *m, struct profile_tables *tables,
			bool scheduled)
{
	uint64_t t0 = clock_ns(CLOCK_MONOTONIC);
	uint64_t drains = atomic_load_explicit(&r->session.drains, memory_order_relaxed);
	int err;

	/* On the thread that feeds the model (record): what it holds is taken per frame here. */
	if (pthread_equal(pthread_self(), r->feeder))
		proc_source_release_symbols(&r->src_ctx);

	/*
	 * Each profile gets the whole fetch and CRC budgets, but a scrape not
	 * while another build spends them: see symbolizer_build_begin.
	 */
	fair_lock(&r->symbols_lock);
	symbolizer_build_begin(r->sym, scheduled);
	fair_unlock(&r->symbols_lock);
	err = profile_tables_build_locked(tables, m, resolve_frame, r, &r->symbols_lock);
	fair_lock(&r->symbols_lock);
	symbolizer_build_end(r->sym);
	fair_unlock(&r->symbols_lock);

	if (!err)
		log_symbolization(r, tables, clock_ns(CLOCK_MONOTONIC) - t0,
				  atomic_load_explicit(&r->session.drains, memory_order_relaxed) -
					  drains);
	return err;
}

/* Forks, execs, exits, renames and mmaps, read before each drain of the rings. */
static void follow_lifecycles(struct recording *r, const struct session_config *cfg)
{
	int err =
		lifecycle_feed_open(&r->feed, &r->model, r->session.online, r->session.nr_possible,
				    cfg->tgids, cfg->nr_tgids, cfg->follow_forks);

	if (err) {
		log_warn("cannot follow processes over time (%s): processes that exit during the "
			 "recording may stay unsymbolized and get no start or end times",
			 r->feed.sb.error[0] ? r->feed.sb.error : strerror(-err));
		return;
	}
	lifecycle_feed_set_cgroups(&r->feed, r->cgroups.path, r->cgroups.n);
	r->model.lifecycle = true;
	r->feed.unwind = r->session.unwind;
	/*
	 * --unwind cfi: a new program's mappings must reach the unwinder before
	 * its samples do, so each side-band record wakes the loop (else it
	 * waits for the rings' batched wakeup, tens of ms).
	 */
	if (r->session.unwind && session_watch_fds(&r->session, &r->feed.sb))
		log_warn("cannot wake on side-band records: a new program's first stacks may be "
			 "unwound with frame pointers");
	r->session.before_drain = lifecycle_feed_drain;
	r->session.before_drain_ctx = &r->feed;
}

/* The model's settings, from what the session could attach. */
static void configure_model(struct recording *r, const struct options *opts)
{
	struct model *m = &r->model;

	/* With --cgroup, a process enters the model only through the filters. */
	m->all_processes = opts->all && !r->cgroups.n;
	m->cgroup_names = r->cgroups.n > 0;
	m->period_is_ns = !r->session.sampler.hardware;
	m->nominal_period_ns = 1000000000ULL / opts->freq_hz;
	/* Records are only decoded in the poll loop, so this is set before the first. */
	m->sched_enabled = r->session.sched_attached;
	m->offcpu_samples = opts->offcpu;
	m->offcpu_interval_ns = m->nominal_period_ns;
	m->sched_min_ns = opts->sched_min_ns;
	m->syscalls_enabled = r->session.syscalls_attached;
	m->syscalls_from_switch = r->session.syscalls_from_switch && r->session.sched_attached;
	m->syscall_min_ns = opts->syscall_min_ns;
	if (m->sched_enabled && opts->offcpu &&
	    kallsyms_find_range("/proc/kallsyms", "__schedule", &m->switch_trim_lo,
				&m->switch_trim_hi))
		log_debug("no __schedule in /proc/kallsyms: switch-out stacks keep their "
			  "tracing frames");
}

/*
 * Named targets appear in the profile even if they never run (after exec:
 * its name). The command's threads are not seeded when lifecycles are
 * followed: it execs now, and each thread it starts is reported with its
 * real start.
 */
static int seed_targets(struct recording *r, const struct session_config *cfg)
{
	for (size_t i = 0; i < cfg->nr_tgids; i++) {
		if (r->have_cmd && r->model.lifecycle)
			model_process(&r->model, cfg->tgids[i], r->start_ns);
		else
			proc_seed_process(&r->model, "/proc", cfg->tgids[i], r->start_ns);
	}
	if (r->cgroups.n) {
		struct seed_ctx seed = { &r->model, r->start_ns };

		if (cgroup_targets_for_each_process(&r->cgroups, seed_cgroup_process, &seed)) {
			log_error("out of memory");
			return 1;
		}
	}
	return 0;
}

/*
 * A whole machine's profiler holds a ring and a perf event per CPU and keeps
 * the binaries of short-lived processes open until they are symbolized: take
 * the hard open-file limit, not the 1024 of a login shell (nothing here uses
 * select()).
 */
static void raise_open_file_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur >= rl.rlim_max)
		return;
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		log_debug("cannot raise the open-file limit to %llu (%s)",
			  (unsigned long long)rl.rlim_max, strerror(errno));
}

/* The profile's time 0: meta.startTime (wall ms) and the model's start are the same instant. */
static void mark_start(struct recording *r)
{
	r->start_wall_ms = (double)clock_ns(CLOCK_REALTIME) / 1e6;
	r->start_ns = clock_ns(CLOCK_MONOTONIC);
	r->model.start_ts = r->model.end_ts = r->start_ns;
}

int recording_start(struct recording *r, const struct options *opts)
{
	struct session_config cfg = { 0 };
	struct rt_module rt_modules[2];
	struct proc_source src;
	int ret;

	fair_lock_init(&r->symbols_lock);
	r->feeder = pthread_self();
	r->sym = symbolizer_new("/proc", "/proc/kallsyms");
	r->jit = r->sym ? jit_maps_new("/proc") : NULL;
	r->py_procs = python_procs_new();
	r->py_frames = python_frames_new();
	r->rb_procs = ruby_procs_new();
	r->rb_frames = python_frames_new();
	r->jvms = hotspot_procs_new("/proc");
	r->java_frames = java_frames_new();
	r->v8 = v8_procs_new("/proc");
	r->php_procs = php_procs_new();
	r->frames = (struct frame_resolver){ r->sym, r->jit, r->py_frames, r->java_frames,
					     r->rb_frames };
	r->debuginfod = debuginfo_server_open(opts->debuginfod_budget_ns / 1000000);
	if (r->sym)
		symbolizer_set_debuginfod(r->sym, r->debuginfod);
	if (!r->jit || !r->py_procs || !r->py_frames || !r->jvms || !r->java_frames || !r->v8 ||
	    !r->php_procs || !r->rb_procs || !r->rb_frames) {
		log_error("out of memory");
		return 1;
	}
	r->src_ctx.proc_root = "/proc";
	r->src_ctx.sym = r->sym;
	r->src_ctx.jit = r->jit;
	r->src_ctx.py_procs = r->py_procs;
	r->src_ctx.py_frames = r->py_frames;
	r->src_ctx.rb_procs = r->rb_procs;
	r->src_ctx.rb_frames = r->rb_frames;
	r->src_ctx.jvms = r->jvms;
	r->src_ctx.java_frames = r->java_frames;
	r->src_ctx.v8 = r->v8;
	r->src_ctx.php_procs = r->php_procs;
	r->src_ctx.symbols_lock = &r->symbols_lock;
	proc_source_init(&src, &r->src_ctx);
	model_init(&r->model, &src, 0);

	cfg.freq_hz = opts->freq_hz;
	cfg.ring_bytes = opts->ring_bytes;
	cfg.unwind_memory = opts->unwind_memory;
	cfg.include_idle = opts->include_idle;
	cfg.sched = opts->sched;
	cfg.offcpu_stacks = opts->sched && opts->offcpu;
	if (opts->unwind == UNWIND_CFI && preflight_cfi_unwind_check())
		return 1;
	cfg.unwind_cfi = opts->unwind == UNWIND_CFI ||
			 (opts->unwind == UNWIND_AUTO && preflight_cfi_unwind_supported());
	cfg.state_dir = opts->state_dir;
	cfg.unwind_cache_bytes = opts->unwind_cache_bytes;
	cfg.stack_copy_bytes = cfg.unwind_cfi ? (uint32_t)opts->stack_copy_bytes : 0;
	cfg.sched_min_ns = opts->sched_min_ns;
	cfg.syscalls = opts->syscalls == SYSCALLS_ALL;
	cfg.syscalls_from_switch = opts->syscalls == SYSCALLS_BLOCKING;
	cfg.syscall_min_ns = opts->syscall_min_ns;
	cfg.on_record = on_record;
	cfg.ctx = &r->model;
	/* Python functions in the stacks, where the unwinder reads the processes' mappings. */
	cfg.python = cfg.unwind_cfi ? r->py_procs : NULL;
	/* PHP functions likewise. */
	cfg.php = cfg.unwind_cfi ? r->php_procs : NULL;
	/* Ruby's likewise. */
	cfg.ruby = cfg.unwind_cfi ? r->rb_procs : NULL;
	/* Java frames read in BPF where the JVM keeps them (interpreted frames), JS in node's. */
	rt_modules[0] = hotspot_procs_rt_module(r->jvms);
	rt_modules[1] = v8_procs_rt_module(r->v8);
	cfg.rt_modules = rt_modules;
	cfg.rt_nmodules = cfg.unwind_cfi ? 2 : 0;
	if (opts->command) {
		ret = command_prepare(&r->cmd, opts->command);
		if (ret) {
			log_error("cannot fork to run '%s' (%s)", opts->command[0], strerror(-ret));
			return 1;
		}
		r->have_cmd = true;
		r->cmd_tgid = (uint32_t)r->cmd.pid;
		cfg.tgids = &r->cmd_tgid;
		cfg.nr_tgids = 1;
		cfg.follow_forks = true;
	} else if (!opts->all) {
		cfg.tgids = opts->pids;
		cfg.nr_tgids = opts->nr_pids;
		/* Like perf's inherited events: the work a shell or a server starts. */
		cfg.follow_forks = !opts->no_inherit;
	}
	cfg.cgroups = r->cgroups.session;
	cfg.nr_cgroups = r->cgroups.n;

	/* After the command's fork: it runs with the limits it was given. */
	raise_open_file_limit();
	if (session_open(&r->session, &cfg))
		return 1;
	follow_lifecycles(r, &cfg);
	mark_start(r);
	if (session_start(&r->session, opts->freq_hz, opts->event))
		return 1;
	configure_model(r, opts);
	/*
	 * -- COMMAND: the profile starts when the command does, not when the
	 * programs were attached (starting the perf events and reading
	 * kallsyms took 150-400 ms, shown as an empty stretch before the
	 * command's exec). Only the held child, blocked in read(), ran
	 * between the two; anything of it before this instant is clamped to 0.
	 */
	if (r->have_cmd) {
		uint64_t attached_ns = clock_ns(CLOCK_MONOTONIC);

		mark_start(r);
		/* For the tests: the profile's 0 follows the attaching, whatever it took. */
		log_debug("attached by %llu ns (CLOCK_MONOTONIC); the profile starts at %llu ns, "
			  "when the command is released",
			  (unsigned long long)attached_ns, (unsigned long long)r->start_ns);
		/*
		 * Until its exec the held child is a copy of bpfprof: its
		 * mappings, read while it waits, name a stack caught inside
		 * its execve (an off-CPU sample, a migration in sched_exec),
		 * which /proc no longer shows once the command runs.
		 */
		if (r->model.lifecycle)
			model_read_process_maps(&r->model, (uint32_t)r->cmd.pid, r->start_ns);
		if (command_start(&r->cmd, opts->command))
			return 1;
	}
	ret = seed_targets(r, &cfg);
	proc_source_release_symbols(&r->src_ctx);
	return ret;
}

void recording_stop(struct recording *r, struct session_stats *stats)
{
	uint64_t now;
	int err;

	session_stop(&r->session);
	err = session_flush_held_waits(&r->session, 0);
	if (err)
		log_warn("cannot read the waits the kernel still holds (%s); the threads asleep at "
			 "the end show no last wait",
			 strerror(-err));
	err = session_dump_syscall_totals(&r->session);
	if (err)
		log_warn("cannot read the live threads' syscall totals (%s); their syscall counts "
			 "miss what was not sent before",
			 strerror(-err));
	session_read_stats(&r->session, stats);
	now = clock_ns(CLOCK_MONOTONIC);
	/* What was lost in the last poll interval; out of memory, its range is unknown. */
	(void)recording_note_lost(r, now, true);
	if (now > r->model.end_ts)
		r->model.end_ts = now;
	/* Every program is detached: nothing after this instant was recorded. */
	r->model.stop_ts = r->model.end_ts;
	proc_source_release_symbols(&r->src_ctx);
}

void recording_handle_signals(void (*handler)(int))
{
	static const int signals[] = { SIGINT, SIGTERM, SIGHUP };
	struct sigaction sa = { 0 };

	sa.sa_handler = handler;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(signals) / sizeof(signals[0]); i++)
		sigaction(signals[i], &sa, NULL);
}

bool recording_any_target_alive(const struct options *opts)
{
	for (size_t i = 0; i < opts->nr_pids; i++)
		if (kill((pid_t)opts->pids[i], 0) == 0 || errno == EPERM)
			return true;
	return false;
}

int recording_note_lost(struct recording *r, uint64_t now, bool force)
{
	uint64_t total[LOST_KINDS], delta[LOST_KINDS];
	struct session_stats st;
	int err;

	if (!force && now < r->lost_read_ns + RECORDING_POLL_INTERVAL_MS * 1000000ULL)
		return 0;
	session_read_stats(&r->session, &st);
	total[LOST_SAMPLES] = st.dropped[EV_SAMPLE];
	total[LOST_SWITCHES] = st.dropped[EV_SWITCH];
	total[LOST_WAKEUPS] = st.dropped[EV_WAKEUP];
	total[LOST_SYSCALLS] = st.dropped[EV_SYSCALL] + st.dropped[EV_SYSCALL_TOTALS];
	total[LOST_LIFECYCLE] = r->feed.lost;
	for (int k = 0; k < LOST_KINDS; k++) {
		delta[k] = total[k] >= r->lost_seen[k] ? total[k] - r->lost_seen[k] : 0;
		r->lost_seen[k] = total[k];
	}
	err = model_add_lost(&r->model, r->lost_read_ns ? r->lost_read_ns : r->start_ns, now,
			     delta);
	r->lost_read_ns = now;
	return err;
}

/*
 * Tests only: BPFPROF_TEST_STALL=AT_MS:FOR_MS makes the consumer stop
 * reading for FOR_MS once, AT_MS into the recording, as a consumer stalled
 * by a slow disk or a huge snapshot would: the rings must then overflow.
 */
static void test_stall(struct recording *r, uint64_t now)
{
	static int state; /* 0: not read yet, 1: armed, 2: done or off */
	static unsigned at_ms, for_ms;
	const char *s;

	if (state == 0) {
		s = getenv("BPFPROF_TEST_STALL");
		state = s && sscanf(s, "%u:%u", &at_ms, &for_ms) == 2 ? 1 : 2;
	}
	if (state != 1 || now < r->start_ns + at_ms * 1000000ULL)
		return;
	state = 2;
	log_info("BPFPROF_TEST_STALL: not reading the rings for %u ms", for_ms);
	nanosleep(&(struct timespec){ .tv_sec = for_ms / 1000,
				      .tv_nsec = (long)(for_ms % 1000) * 1000000 },
		  NULL);
}

static int pump_once(struct recording *r, const struct options *opts, struct recording_pump *p,
		     int timeout_ms, uint64_t replay_limit)
{
	uint64_t drained, watermark, now;
	int n = session_poll(&r->session, timeout_ms);

	if (n < 0)
		return n;
	if (r->session.record_error == -ENOMEM)
		return -ENOMEM;
	/*
	 * On busy machines the rings are never empty and this loop turns every
	 * few µs; a replay pass costs O(events buffered), so replay once per
	 * poll interval, not per turn.
	 */
	drained = r->session.drained_before_ns;
	if (r->model.sched_enabled && drained >= SCHED_REPLAY_MARGIN_NS &&
	    drained >= p->last_replay + RECORDING_POLL_INTERVAL_MS * 1000000ULL) {
		p->last_replay = drained;
		watermark = drained - SCHED_REPLAY_MARGIN_NS;
		if (model_sched_flush(&r->model,
				      watermark < replay_limit ? watermark : replay_limit))
			return -ENOMEM;
	}
	now = clock_ns(CLOCK_MONOTONIC);
	if (recording_note_lost(r, now, false))
		return -ENOMEM;
	test_stall(r, now);
	if (r->have_cmd && command_poll_exit(&r->cmd))
		return PUMP_COMMAND_EXITED;
	if (opts->nr_pids && now - p->last_alive_check > 1000000000ULL) {
		p->last_alive_check = now;
		if (!recording_any_target_alive(opts))
			return PUMP_TARGETS_GONE;
	}
	return PUMP_GO_ON;
}

int recording_pump(struct recording *r, const struct options *opts, struct recording_pump *p,
		   int timeout_ms, uint64_t replay_limit)
{
	int res = pump_once(r, opts, p, timeout_ms, replay_limit);

	/* The frame sources, taken for what this drain met, go back to the symbolizing threads. */
	proc_source_release_symbols(&r->src_ctx);
	return res;
}

void recording_close(struct recording *r)
{
	if (r->have_cmd && r->cmd.go_fd >= 0)
		command_abort(&r->cmd);
	session_close(&r->session);
	lifecycle_feed_close(&r->feed);
	model_free(&r->model);
	symbolizer_free(r->sym);
	debuginfo_server_close(r->debuginfod);
	jit_maps_free(r->jit);
	python_procs_free(r->py_procs);
	python_frames_free(r->py_frames);
	php_procs_free(r->php_procs);
	ruby_procs_free(r->rb_procs);
	python_frames_free(r->rb_frames);
	hotspot_procs_free(r->jvms);
	java_frames_free(r->java_frames);
	v8_procs_free(r->v8);
	cgroup_targets_close(&r->cgroups);
	/* Zeroed (never started) is an unlocked mutex too. */
	fair_lock_destroy(&r->symbols_lock);
}
