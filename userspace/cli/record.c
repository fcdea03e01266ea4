// SPDX-License-Identifier: BSD-2-Clause
/*
 * The recording flow: checks, output file, BPF session, the poll loop, then
 * symbolization and the profile. Whatever ends the recording (duration,
 * Ctrl-C, SIGTERM, the command exiting), the samples taken so far are
 * written; if the chosen path fails at the end, a fallback path keeps them.
 */
#include "record.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "../capture/command.h"
#include "../capture/preflight.h"
#include "../capture/session.h"
#include "../emit/emitter.h"
#include "../emit/output_file.h"
#include "../emit/profile_tables.h"
#include "../model/model.h"
#include "../model/proc_source.h"
#include "../symbols/jit_maps.h"
#include "../symbols/kallsyms.h"
#include "../symbols/symbolizer.h"
#include "../util/clock.h"
#include "../util/log.h"
#include "cgroup_targets.h"
#include "lifecycle_feed.h"
#include "progress.h"

/*
 * How often the rings are drained: bounds how long a new process can live
 * before we read its mappings (shorter-lived ones need the exec/mmap events).
 */
#define POLL_INTERVAL_MS       50
/*
 * Scheduler events are replayed per thread in time order once every ring
 * has been drained past their time; this margin covers a record being
 * written while its ring was drained.
 */
#define SCHED_REPLAY_MARGIN_NS (20ULL * 1000 * 1000)

static volatile sig_atomic_t stop_requested;
static volatile sig_atomic_t interrupts;
static const char *volatile abort_unlink_path;

static void on_stop_signal(int sig)
{
	/* A second Ctrl-C means "abort now": no profile, no temporary file left behind. */
	if (sig == SIGINT && ++interrupts >= 2) {
		if (abort_unlink_path)
			unlink(abort_unlink_path);
		_exit(130);
	}
	stop_requested = 1;
}

static void install_signal_handlers(void)
{
	struct sigaction sa = { 0 };

	sa.sa_handler = on_stop_signal;
	sigemptyset(&sa.sa_mask);
	/* No SA_RESTART: a signal must wake the poll loop at once. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

static int on_record(void *ctx, const void *data, size_t size)
{
	const struct event_header *h = data;

	/* -vvv: a trace of every record, for debugging the capture side. */
	if (log_verbosity >= 3 && size >= sizeof(*h))
		fprintf(stderr, "record kind=%u size=%u cpu=%u ts=%llu pid=%u tid=%u\n", h->kind,
			h->size, h->cpu, (unsigned long long)h->ts, h->pid, h->tid);
	return model_add_record(ctx, data, size);
}

struct recording {
	struct model model;
	struct symbolizer *sym;
	struct jit_maps *jit;
	struct proc_source_ctx src_ctx;
	struct session session;
	struct lifecycle_feed feed;
	struct command cmd;
	bool have_cmd;
	struct output_file out;
	struct session_stats stats;
	double start_wall_ms;
	struct cgroup_targets cgroups;
};

static void resolve_frame(void *ctx, const struct raw_frame *f, struct resolved_frame *out)
{
	struct recording *r = ctx;

	if (!jit_maps_resolve(r->jit, f->object, f->offset, out))
		symbolizer_resolve(r->sym, f->object, f->offset, f->is_return, out);
}

static const char *human_size(double bytes, char *buf, size_t len)
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

static int write_profile(struct recording *r, const struct options *opts,
			 const struct profile_tables *tables, struct output_file *out)
{
	struct profile_meta meta = { 0 };
	char host[256] = "";
	struct utsname uts;

	gethostname(host, sizeof(host) - 1);
	uname(&uts);
	meta.product_version = BPFPROF_VERSION;
	meta.command_line = opts->self_command_line;
	meta.hostname = host;
	meta.kernel_release = uts.release;
	meta.arch = uts.machine;
	meta.logical_cpus = (unsigned)r->session.nr_online;
	meta.sample_freq_hz = opts->freq_hz;
	meta.sample_event =
		r->session.sampler.event_name ? r->session.sampler.event_name : "cpu-clock";
	meta.target = opts->target_desc;
	meta.start_wall_ms = r->start_wall_ms;
	meta.lost_samples = r->stats.dropped[EV_SAMPLE];
	meta.lost_switches = r->stats.dropped[EV_SWITCH];
	meta.lost_wakeups = r->stats.dropped[EV_WAKEUP];
	meta.lost_other = r->stats.dropped[EV_SYSCALL] + r->stats.dropped[EV_SYSCALL_TOTALS];
	meta.include_idle = opts->include_idle;
	meta.sched_enabled = r->model.sched_enabled;
	meta.offcpu_samples = r->model.sched_enabled && r->model.offcpu_samples;
	meta.sched_min_ns = r->model.sched_min_ns;
	meta.syscalls_enabled = r->model.syscalls_enabled;
	meta.syscall_min_ns = r->model.syscall_min_ns;
	meta.cgroup_filters = (const char *const *)r->cgroups.desc;
	meta.nr_cgroup_filters = r->cgroups.n;
	return emit_profile_fd(out->fd, out->gzip, &r->model, tables, &meta);
}

/*
 * The chosen path failed after recording (disk full, directory removed):
 * the samples are in memory, so try the usual temporary directories.
 */
static int write_fallback(struct recording *r, const struct options *opts,
			  const struct profile_tables *tables, char *saved, size_t saved_len)
{
	const char *dirs[] = { getenv("TMPDIR"), "/var/tmp", "/tmp" };

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		struct output_file alt;
		char path[PATH_MAX];

		if (!dirs[i] || !*dirs[i])
			continue;
		snprintf(path, sizeof(path), "%s/bpfprof-%d-%ld.json.gz", dirs[i], (int)getpid(),
			 (long)time(NULL));
		if (output_file_open(&alt, path))
			continue;
		if (write_profile(r, opts, tables, &alt) == 0 && output_file_commit(&alt) == 0) {
			snprintf(saved, saved_len, "%s", path);
			output_file_free(&alt);
			return 0;
		}
		output_file_abort(&alt);
		output_file_free(&alt);
	}
	return -EIO;
}

static void report_lost(const struct session_stats *st)
{
	static const char *const what[EV_KIND_MAX] = {
		[EV_SAMPLE] = "samples",
		[EV_SWITCH] = "context switches",
		[EV_WAKEUP] = "wakeups",
		[EV_SYSCALL] = "syscall markers",
		[EV_SYSCALL_TOTALS] = "syscall totals",
	};
	static const char *const effect[EV_KIND_MAX] = {
		[EV_SAMPLE] = "CPU use and off-CPU time are approximate around them",
		[EV_SWITCH] = "CPU use and off-CPU time are approximate around them",
		[EV_WAKEUP] = "CPU use and off-CPU time are approximate around them",
		[EV_SYSCALL] = "those syscalls are counted but not shown",
		[EV_SYSCALL_TOTALS] = "the syscall counts of some threads are too low",
	};

	for (int k = 1; k < EV_KIND_MAX; k++)
		if (st->dropped[k])
			log_warn("%" PRIu64 " %s were lost because a ring buffer was full; %s",
				 st->dropped[k], what[k], effect[k]);
}

static void print_summary(struct recording *r, const char *path)
{
	struct stat st;
	char size[32] = "?";
	size_t threads = 0;

	threads = r->model.threads.len;
	if (!stat(path, &st))
		human_size((double)st.st_size, size, sizeof(size));
	fprintf(stderr,
		"bpfprof: %" PRIu64 " samples from %zu processes, %zu threads; %" PRIu64
		" samples lost\n",
		r->model.stats.samples, r->model.processes.len, threads,
		r->stats.dropped[EV_SAMPLE]);
	if (r->model.sched_enabled)
		fprintf(stderr,
			"bpfprof: %" PRIu64 " context switches, %" PRIu64 " wakeups, %" PRIu64
			" off-CPU samples; %" PRIu64 " switches and %" PRIu64 " wakeups lost\n",
			/* wakeups: also those folded into other records (model_add_*) */
			r->stats.emitted[EV_SWITCH], r->model.stats.wakeups,
			r->model.stats.offcpu_samples, r->stats.dropped[EV_SWITCH],
			r->stats.dropped[EV_WAKEUP]);
	if (r->model.syscalls_enabled)
		fprintf(stderr,
			"bpfprof: %" PRIu64 " syscalls counted, %" PRIu64
			" shown as markers; %" PRIu64 " markers and %" PRIu64 " totals lost\n",
			r->model.stats.syscalls_counted, r->model.stats.syscall_markers,
			r->stats.dropped[EV_SYSCALL], r->stats.dropped[EV_SYSCALL_TOTALS]);
	fprintf(stderr, "bpfprof: wrote %s (%s)\n", path, size);
	fprintf(stderr, "bpfprof: open it at https://profiler.firefox.com/ with \"Load a profile "
			"from file\"\n");
}

/* With -p, recording ends early once none of the processes is left. */
static bool any_target_alive(const struct options *opts)
{
	for (size_t i = 0; i < opts->nr_pids; i++)
		if (kill((pid_t)opts->pids[i], 0) == 0 || errno == EPERM)
			return true;
	return false;
}

/* The poll loop: until the duration, a signal, the command's exit, or the targets' exit. */
static void record_loop(struct recording *r, const struct options *opts, uint64_t start_ns)
{
	uint64_t deadline =
		opts->duration_s > 0 ? start_ns + (uint64_t)(opts->duration_s * 1e9) : UINT64_MAX;
	uint64_t last_alive_check = start_ns, last_replay = start_ns;
	struct progress prog;

	progress_init(&prog);
	while (!stop_requested) {
		uint64_t now;
		int timeout = POLL_INTERVAL_MS;
		int n;

		now = clock_ns(CLOCK_MONOTONIC);
		if (now >= deadline)
			break;
		if (deadline - now < POLL_INTERVAL_MS * 1000000ULL)
			timeout = (int)((deadline - now) / 1000000) + 1;
		n = session_poll(&r->session, timeout);
		if (n < 0) {
			log_error("reading the ring buffers failed (%s); stopping and writing what "
				  "was recorded",
				  strerror(-n));
			break;
		}
		/*
		 * On busy machines the rings are never empty and this loop spins
		 * every few µs; a replay pass costs O(events buffered), so replay
		 * once per poll interval, not per pass.
		 */
		if (r->model.sched_enabled &&
		    r->session.drained_before_ns >= last_replay + POLL_INTERVAL_MS * 1000000ULL) {
			last_replay = r->session.drained_before_ns;
			if (model_sched_flush(&r->model, last_replay - SCHED_REPLAY_MARGIN_NS))
				r->session.record_error = -ENOMEM;
		}
		if (r->session.record_error == -ENOMEM) {
			log_error("out of memory while recording; stopping and writing what was "
				  "recorded");
			break;
		}
		if (r->have_cmd && command_poll_exit(&r->cmd))
			break;
		if (opts->nr_pids && now - last_alive_check > 1000000000ULL) {
			last_alive_check = now;
			if (!any_target_alive(opts)) {
				log_info("every target process has exited; stopping");
				break;
			}
		}
		if (prog.enabled) {
			struct session_stats st;

			now = clock_ns(CLOCK_MONOTONIC);
			session_read_stats(&r->session, &st);
			progress_update(&prog, now, (double)(now - start_ns) / 1e9,
					opts->duration_s, r->model.stats.samples,
					st.dropped[EV_SAMPLE] + st.dropped[EV_SWITCH] +
						st.dropped[EV_WAKEUP]);
		}
	}
	progress_clear(&prog);
}

/* -v: what symbolizing the profile cost, for users who wonder where the time went. */
static void log_symbolization(struct recording *r, const struct profile_tables *tables,
			      uint64_t elapsed_ns)
{
	struct symbolizer_stats st;
	char bytes[32], dwarf[32], rss[32] = "?";
	struct rusage ru;

	symbolizer_get_stats(r->sym, &st);
	human_size((double)st.bytes, bytes, sizeof(bytes));
	human_size((double)st.dwarf_bytes, dwarf, sizeof(dwarf));
	if (!getrusage(RUSAGE_SELF, &ru))
		human_size((double)ru.ru_maxrss * 1024, rss, sizeof(rss));
	log_debug("symbolized %zu frames (%zu functions) in %.0f ms: %" PRIu64 " objects (%" PRIu64
		  " with DWARF), %" PRIu64 " lookups; symbol caches hold %s "
		  "(DWARF %s), %" PRIu64 " files open; bpfprof peak RSS %s",
		  tables->frames.len, tables->funcs.len, (double)elapsed_ns / 1e6, st.objects,
		  st.dwarf_objects, st.lookups, bytes, dwarf, st.open_files, rss);
}

static int finish_and_write(struct recording *r, const struct options *opts)
{
	struct profile_tables tables = { 0 };
	char saved[PATH_MAX];
	int err;

	/* Threads renamed after their last sample (prctl, pthread_setname_np) get today's name. */
	proc_refresh_thread_names(&r->model, "/proc");
	err = model_finish(&r->model);
	if (!err) {
		uint64_t t0 = clock_ns(CLOCK_MONOTONIC);

		err = profile_tables_build(&tables, &r->model, resolve_frame, r);
		if (!err)
			log_symbolization(r, &tables, clock_ns(CLOCK_MONOTONIC) - t0);
	}
	if (err) {
		log_error("out of memory while building the profile (%s)", strerror(-err));
		profile_tables_free(&tables);
		return 1;
	}
	err = write_profile(r, opts, &tables, &r->out);
	if (!err)
		err = output_file_commit(&r->out);
	if (err) {
		log_error("writing %s failed (%s); saving the profile elsewhere", opts->output,
			  strerror(-err));
		output_file_abort(&r->out);
		if (write_fallback(r, opts, &tables, saved, sizeof(saved))) {
			log_error("could not save the profile anywhere (%s); free some disk space "
				  "and record again",
				  strerror(-err));
			profile_tables_free(&tables);
			return 1;
		}
		log_info("the profile was saved to %s instead", saved);
		print_summary(r, saved);
		profile_tables_free(&tables);
		return 1;
	}
	profile_tables_free(&tables);
	print_summary(r, opts->output);
	return 0;
}

int record_main(const struct options *opts)
{
	struct recording r = { 0 };
	struct session_config cfg = { 0 };
	struct proc_source src;
	uint32_t cmd_tgid;
	uint64_t start_ns;
	int dump_err;
	int ret;

	if ((ret = preflight_check_privileges()) || (ret = preflight_check_btf()))
		return ret;
	/* Bad --cgroup paths are the user's to fix before anything is created. */
	if (cgroup_targets_open(&r.cgroups, opts->cgroups, opts->nr_cgroups))
		return 1;
	if (output_file_open(&r.out, opts->output)) {
		cgroup_targets_close(&r.cgroups);
		return 1;
	}
	abort_unlink_path = r.out.tmp_path;
	install_signal_handlers();

	r.sym = symbolizer_new("/proc", "/proc/kallsyms");
	if (!r.sym) {
		log_error("out of memory");
		ret = 1;
		goto out;
	}
	r.jit = jit_maps_new("/proc");
	if (!r.jit) {
		log_error("out of memory");
		ret = 1;
		goto out;
	}
	r.src_ctx.proc_root = "/proc";
	r.src_ctx.sym = r.sym;
	r.src_ctx.jit = r.jit;
	proc_source_init(&src, &r.src_ctx);
	model_init(&r.model, &src, 0);

	cfg.freq_hz = opts->freq_hz;
	cfg.include_idle = opts->include_idle;
	cfg.sched = opts->sched;
	cfg.offcpu_stacks = opts->sched && opts->offcpu;
	cfg.sched_min_ns = opts->sched_min_ns;
	cfg.syscalls = opts->syscalls;
	cfg.syscall_min_ns = opts->syscall_min_ns;
	cfg.on_record = on_record;
	cfg.ctx = &r.model;
	if (opts->command) {
		ret = command_prepare(&r.cmd, opts->command);
		if (ret) {
			log_error("cannot fork to run '%s' (%s)", opts->command[0], strerror(-ret));
			ret = 1;
			goto out;
		}
		r.have_cmd = true;
		cmd_tgid = (uint32_t)r.cmd.pid;
		cfg.tgids = &cmd_tgid;
		cfg.nr_tgids = 1;
		cfg.follow_forks = true;
	} else if (!opts->all) {
		cfg.tgids = opts->pids;
		cfg.nr_tgids = opts->nr_pids;
	}
	cfg.cgroups = r.cgroups.session;
	cfg.nr_cgroups = r.cgroups.n;

	ret = session_open(&r.session, &cfg);
	if (ret)
		goto out;
	/* Forks, execs, exits, renames and mmaps, read before each drain of the rings. */
	ret = lifecycle_feed_open(&r.feed, &r.model, r.session.online, r.session.nr_possible,
				  cfg.tgids, cfg.nr_tgids, cfg.follow_forks);
	if (ret) {
		log_warn("cannot follow processes over time (%s): processes that exit during the "
			 "recording may stay unsymbolized and get no start or end times",
			 r.feed.sb.error[0] ? r.feed.sb.error : strerror(-ret));
		ret = 0;
	} else {
		lifecycle_feed_set_cgroups(&r.feed, r.cgroups.path, r.cgroups.n);
		r.model.lifecycle = true;
		r.session.before_drain = lifecycle_feed_drain;
		r.session.before_drain_ctx = &r.feed;
	}
	/* With --cgroup, a process enters the model only through the filters. */
	r.model.all_processes = opts->all && !r.cgroups.n;
	r.model.cgroup_names = r.cgroups.n > 0;
	r.start_wall_ms = (double)clock_ns(CLOCK_REALTIME) / 1e6;
	start_ns = clock_ns(CLOCK_MONOTONIC);
	r.model.start_ts = r.model.end_ts = start_ns;
	if (session_start(&r.session, opts->freq_hz, opts->event)) {
		ret = 1;
		goto out;
	}
	r.model.period_is_ns = !r.session.sampler.hardware;
	r.model.nominal_period_ns = 1000000000ULL / opts->freq_hz;
	/* Records are only decoded in the poll loop, so this is set before the first. */
	r.model.sched_enabled = r.session.sched_attached;
	r.model.offcpu_samples = opts->offcpu;
	r.model.offcpu_interval_ns = r.model.nominal_period_ns;
	r.model.sched_min_ns = opts->sched_min_ns;
	r.model.syscalls_enabled = r.session.syscalls_attached;
	r.model.syscall_min_ns = opts->syscall_min_ns;
	if (r.model.sched_enabled && opts->offcpu &&
	    kallsyms_find_range("/proc/kallsyms", "__schedule", &r.model.switch_trim_lo,
				&r.model.switch_trim_hi))
		log_debug("no __schedule in /proc/kallsyms: switch-out stacks keep their "
			  "tracing frames");
	if (r.have_cmd && (ret = command_start(&r.cmd, opts->command)))
		goto out;
	/*
	 * Named targets appear in the profile even if they never run (after
	 * exec: its name). The command's threads are not seeded when lifecycles
	 * are followed: it execs now, and each thread it starts is reported
	 * with its real start.
	 */
	for (size_t i = 0; i < cfg.nr_tgids; i++) {
		if (r.have_cmd && r.model.lifecycle)
			model_process(&r.model, cfg.tgids[i], start_ns);
		else
			proc_seed_process(&r.model, "/proc", cfg.tgids[i], start_ns);
	}
	if (r.cgroups.n) {
		struct seed_ctx seed = { &r.model, start_ns };

		if (cgroup_targets_for_each_process(&r.cgroups, seed_cgroup_process, &seed)) {
			log_error("out of memory");
			ret = 1;
			goto out;
		}
	}
	if (!isatty(STDERR_FILENO) || log_verbosity)
		log_info("recording %s at %u Hz%s", opts->target_desc, opts->freq_hz,
			 opts->duration_s > 0 ? "" : " until Ctrl-C");

	record_loop(&r, opts, start_ns);

	session_stop(&r.session);
	dump_err = session_dump_syscall_totals(&r.session);
	if (dump_err)
		log_warn("cannot read the live threads' syscall totals (%s); their syscall counts "
			 "miss what was not sent before",
			 strerror(-dump_err));
	session_read_stats(&r.session, &r.stats);
	{
		uint64_t now = clock_ns(CLOCK_MONOTONIC);

		if (now > r.model.end_ts)
			r.model.end_ts = now;
		/* Every program is detached: nothing after this instant was recorded. */
		r.model.stop_ts = r.model.end_ts;
	}
	report_lost(&r.stats);
	if (r.have_cmd && !r.cmd.exited)
		log_info("recording stopped; '%s' (pid %d) keeps running", opts->command[0],
			 (int)r.cmd.pid);
	ret = finish_and_write(&r, opts);
	abort_unlink_path = NULL;
out:
	if (r.have_cmd && r.cmd.go_fd >= 0)
		command_abort(&r.cmd);
	session_close(&r.session);
	lifecycle_feed_close(&r.feed);
	if (ret && r.out.tmp_path && r.out.fd >= 0)
		output_file_abort(&r.out);
	output_file_free(&r.out);
	model_free(&r.model);
	symbolizer_free(r.sym);
	jit_maps_free(r.jit);
	cgroup_targets_close(&r.cgroups);
	return ret;
}
