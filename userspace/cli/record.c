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

#include "../capture/preflight.h"
#include "../capture/stack_finish.h"
#include "../capture/unwind_loader.h"
#include "../emit/frame_quality.h"
#include "../lang/php_procs.h"
#include "../lang/python_procs.h"
#include "../lang/ruby_procs.h"
#include "../util/clock.h"
#include "../util/log.h"
#include "../util/term_escape.h"
#include "progress.h"
#include "recording.h"
#include "../view/view.h"

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

/*
 * The chosen path failed after recording (disk full, directory removed):
 * the samples are in memory, so try the usual temporary directories.
 */
static int write_fallback(struct recording *r, const struct options *opts,
			  const struct session_stats *lost, const struct profile_tables *tables,
			  char *saved, size_t saved_len)
{
	const char *dirs[] = { getenv("TMPDIR"), "/var/tmp", "/tmp" };
	/* What -o was to hold (--format both: its Firefox profile). */
	enum output_format fmt = opts->format == FORMAT_PPROF ? FORMAT_PPROF : FORMAT_FIREFOX;

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		struct output_file alt;
		char path[PATH_MAX];

		if (!dirs[i] || !*dirs[i])
			continue;
		snprintf(path, sizeof(path), "%s/bpfprof-%d-%ld.%s", dirs[i], (int)getpid(),
			 (long)time(NULL), fmt == FORMAT_PPROF ? "pb.gz" : "json.gz");
		if (output_file_open(&alt, path))
			continue;
		if (recording_write(r, opts, &r->model, lost, r->start_wall_ms, tables, &alt,
				    fmt) == 0 &&
		    output_file_commit(&alt) == 0) {
			snprintf(saved, saved_len, "%s", path);
			output_file_free(&alt);
			return 0;
		}
		output_file_abort(&alt);
		output_file_free(&alt);
	}
	return -EIO;
}

/* Files named on the quality line; -v names up to UNWIND_MISSES_LOGGED. */
#define UNWIND_MISSES_SHOWN  3
#define UNWIND_MISSES_LOGGED 64

/*
 * "; files met without their table: cc1 (1402: its table came 92 ms after
 * its first sample), libfoo.so (310: no CFI), +3 more (-v names them)"
 */
static void print_unwind_misses(const struct unwind_loader *ul)
{
	struct unwind_miss top[UNWIND_MISSES_LOGGED];
	size_t n = ul ? unwind_misses_top(&ul->misses, top, UNWIND_MISSES_LOGGED) : 0;
	size_t more =
		ul ? ul->misses.files.len - (n < UNWIND_MISSES_SHOWN ? n : UNWIND_MISSES_SHOWN) : 0;
	char why[96];

	if (!n)
		return;
	fprintf(stderr, "; files met without their table: ");
	for (size_t i = 0; i < n && i < UNWIND_MISSES_SHOWN; i++) {
		unwind_loader_miss_reason(ul, &top[i], why, sizeof(why));
		fprintf(stderr, "%s", i ? ", " : "");
		/* A file's name is its owner's choice: escaped for the terminal. */
		term_escape_write(stderr, top[i].name[0] ? top[i].name : "?",
				  top[i].name[0] ? strlen(top[i].name) : 1);
		fprintf(stderr, " (%" PRIu64 ": %s)", top[i].stacks, why);
	}
	if (more)
		fprintf(stderr, ", +%zu more (-v names them)", more);
}

/* At -v, after the quality line: each file met without its table, most stacks first. */
static void log_unwind_misses(const struct unwind_loader *ul)
{
	struct unwind_miss top[UNWIND_MISSES_LOGGED];
	size_t n = ul && log_verbosity >= 1
			   ? unwind_misses_top(&ul->misses, top, UNWIND_MISSES_LOGGED)
			   : 0;
	char why[96];

	for (size_t i = 0; i < n; i++) {
		char *name = term_escape_dup(top[i].name[0] ? top[i].name : "?");

		unwind_loader_miss_reason(ul, &top[i], why, sizeof(why));
		log_debug("met without its table: %s (device %u:%u, inode %llu): %" PRIu64
			  " stacks, %s",
			  name ? name : "?", (unsigned int)(top[i].key.dev >> 20),
			  (unsigned int)(top[i].key.dev & 0xfffff),
			  (unsigned long long)top[i].key.ino, top[i].stacks, why);
		free(name);
	}
}

/*
 * "runtime frames: Java 91.3% of 4000 samples in its code name a Java
 * function; JavaScript 97.0% of 3000; Python 3.9 96.0% of 1200": a
 * runtime's samples can be whole stacks and still name nothing of the
 * program ("[JIT] java"); Python's are told per interpreter version too
 * (samples in its interpreter with no Python frame count there).
 */
static void print_lang_quality(const struct frame_quality *fq,
			       const char *const versions[FRAME_LANG_COUNT])
{
	const struct frame_lang_quality *q = &fq->lang;
	bool first = true;

	for (int l = 0; l < FRAME_LANG_COUNT; l++) {
		if (!q->samples[l])
			continue;
		fprintf(stderr, "%s%s%s%s %.1f%% of %" PRIu64 "%s",
			first ? "bpfprof: runtime frames: " : "; ", frame_lang_name(l),
			versions[l] && versions[l][0] ? " " : "", versions[l] ? versions[l] : "",
			100.0 * (double)q->named[l] / (double)q->samples[l], q->samples[l],
			first ? " samples in its code name one of its functions" : "");
		first = false;
	}
	for (unsigned i = 0; i < fq->n_py; i++) {
		char name[24];

		fprintf(stderr, "%s%s %.1f%% of %" PRIu64 "%s",
			first ? "bpfprof: runtime frames: " : "; ",
			frame_py_version_name(fq->py[i].version, name),
			100.0 * (double)fq->py[i].named / (double)fq->py[i].samples,
			fq->py[i].samples,
			first ? " samples in its code name one of its functions" : "");
		first = false;
	}
	if (!first)
		fputc('\n', stderr);
}

/*
 * "user stacks: 97.2% of 1998 reach a thread root; 56 stop early: 50 no CFI, 6 unreadable"
 * then, when not all are native, "... by runtime: native 96.1% of 998, Go 99.9% of 1000"
 */
static void print_frame_quality(const struct frame_quality *q, const struct unwind_loader *ul,
				const char *const versions[FRAME_LANG_COUNT])
{
	char why[512] = "", by[256] = "";
	size_t len = 0, blen = 0;
	uint64_t early = q->user_stacks - q->reached_root;

	if (!q->user_stacks)
		return;
	if (q->runtime_stacks[CODE_RUNTIME_NATIVE] != q->user_stacks)
		for (int rt = 0; rt < CODE_RUNTIME_COUNT && blen < sizeof(by); rt++)
			if (q->runtime_stacks[rt])
				blen += (size_t)snprintf(
					by + blen, sizeof(by) - blen, "%s%s %.1f%% of %" PRIu64,
					blen ? ", " : "; by runtime: ", code_runtime_name(rt),
					100.0 * (double)q->runtime_reached_root[rt] /
						(double)q->runtime_stacks[rt],
					q->runtime_stacks[rt]);
	for (int r = 0; r < FRAME_QUALITY_REASONS && len < sizeof(why); r++)
		if (q->stopped[r])
			len += (size_t)snprintf(why + len, sizeof(why) - len, "%s%" PRIu64 " %s",
						len ? ", " : ": ", q->stopped[r],
						frame_quality_reason((enum ustack_end)r));
	fprintf(stderr,
		"bpfprof: user stacks: %.1f%% of %" PRIu64 " reach a thread root; %" PRIu64
		" stop early%s%s",
		100.0 * (double)q->reached_root / (double)q->user_stacks, q->user_stacks, early,
		why, by);
	if (early)
		print_unwind_misses(ul);
	fputc('\n', stderr);
	if (early)
		log_unwind_misses(ul);
	print_lang_quality(q, versions);
}

/*
 * Stacks copied where a program's table was still being built, and how
 * many of them were finished: said whenever one was copied or refused.
 */
static void print_stack_copies(const struct recording *r, const struct session_stats *st)
{
	const struct stack_finish *f = r->session.finish;
	const struct stack_finish_stats *c;
	char bytes[32];

	if (!f || (!f->stats.copies && !f->stats.lost && !st->stack_copy_no_budget))
		return;
	c = &f->stats;
	fprintf(stderr,
		"bpfprof: stack copies: %" PRIu64 " stacks copied (%s) where a table was still "
		"being built; %" PRIu64 " finished from their copies, %" PRIu64
		" of them to a thread root; %" PRIu64 " copies lost, %" PRIu64
		" refused for room, %" PRIu64 " not walkable, %" PRIu64
		" without their table in time; %" PRIu64
		" not copied for want of budget or ring room\n",
		c->copies, human_size((double)c->copy_bytes, bytes, sizeof(bytes)), c->finished,
		c->rooted, c->lost + c->orphans, c->refused, c->skipped, c->expired,
		st->stack_copy_no_budget);
}

/* Tracks left out of the first view: the user would look for them otherwise. */
static void print_view(const struct emit_view_summary *v)
{
	if (!v->tracks || v->shown >= v->tracks)
		return;
	fprintf(stderr, "bpfprof: %zu of %zu tracks shown at first", v->shown, v->tracks);
	if (v->hidden_short_procs)
		fprintf(stderr, "; %zu short-lived child process%s that did little hidden",
			v->hidden_short_procs, v->hidden_short_procs == 1 ? "" : "es");
	fprintf(stderr, " (the track menu lists every one)\n");
}

/* Python frames a process's memory share or a stalled read left unread (lang/python_procs.h). */
static void print_python_unread(const struct python_procs *py)
{
	struct python_procs_stats st;

	if (!py)
		return;
	python_procs_get_stats(py, &st);
	if (st.peak_bytes)
		log_debug("Python code objects kept: %zu KiB at most", st.peak_bytes >> 10);
	if (st.over_budget_frames || st.stalled_frames || st.stalled_procs)
		fprintf(stderr,
			"bpfprof: Python frames not read: %" PRIu64 " past bpfprof's memory "
			"budget, %" PRIu64 " of %u process%s whose memory stalled a read (their "
			"frames say so by name)\n",
			st.over_budget_frames, st.stalled_frames, st.stalled_procs,
			st.stalled_procs == 1 ? "" : "es");
}

/* viewing: --view serves the profile next, so no "view it with" hint. */
static void print_summary(struct recording *r, const struct session_stats *lost,
			  const struct profile_tables *tables, const char *path,
			  enum output_format format, bool viewing)
{
	struct frame_quality frames;
	struct stat st;
	char size[32] = "?";
	size_t threads = 0;

	threads = r->model.threads.len;
	if (!stat(path, &st))
		human_size((double)st.st_size, size, sizeof(size));
	fprintf(stderr,
		"bpfprof: %" PRIu64 " samples from %zu processes, %zu threads; %" PRIu64
		" samples lost\n",
		r->model.stats.samples, r->model.processes.len, threads, lost->dropped[EV_SAMPLE]);
	if (r->model.sched_enabled)
		fprintf(stderr,
			"bpfprof: %" PRIu64 " context switches, %" PRIu64 " wakeups, %" PRIu64
			" off-CPU samples (%" PRIu64 " weighted rows); %" PRIu64
			" switches and %" PRIu64 " wakeups lost\n",
			/* also those the kernel only counted or folded into other records */
			r->model.stats.switches, r->model.stats.wakeups,
			r->model.stats.offcpu_samples, r->model.stats.offcpu_rows,
			lost->dropped[EV_SWITCH], lost->dropped[EV_WAKEUP]);
	if (r->model.syscalls_from_switch)
		fprintf(stderr,
			"bpfprof: %" PRIu64 " waits inside syscalls shown as markers (blocking "
			"syscalls, from the scheduler; --syscalls=all counts every call)\n",
			r->model.stats.syscall_markers);
	if (r->model.syscalls_enabled)
		fprintf(stderr,
			"bpfprof: %" PRIu64 " syscalls counted, %" PRIu64
			" shown as markers; %" PRIu64 " markers and %" PRIu64 " totals lost\n",
			r->model.stats.syscalls_counted, r->model.stats.syscall_markers,
			lost->dropped[EV_SYSCALL], lost->dropped[EV_SYSCALL_TOTALS]);
	if (!frame_quality_count(&frames, &r->model, tables)) {
		/* The versions met of the runtimes that say theirs: "Ruby 3.1 99.8% of ...". */
		const char *versions[FRAME_LANG_COUNT] = { NULL };
		char ruby[64], php[64];

		versions[FRAME_LANG_RUBY] = ruby_procs_versions(r->rb_procs, ruby, sizeof(ruby));
		versions[FRAME_LANG_PHP] = php_procs_versions(r->php_procs, php, sizeof(php));
		print_frame_quality(&frames, r->session.unwind, versions);
	}
	if (r->session.unwind) {
		char store[256];

		unwind_loader_store_line(r->session.unwind, store, sizeof(store));
		fprintf(stderr, "bpfprof: unwind store: %s\n", store);
	}
	print_stack_copies(r, lost);
	print_python_unread(r->py_procs);
	print_view(&r->view);
	if (r->model.lost.len) {
		const struct model *m = &r->model;

		fprintf(stderr,
			"bpfprof: records were lost in %zu interval%s, from %.3f s to %.3f s; the "
			"profile marks them (Lost events markers); --ring-size or a lower -F "
			"helps\n",
			m->lost.len, m->lost.len == 1 ? "" : "s",
			(double)(m->lost.data[0].start - m->start_ts) / 1e9,
			(double)(vec_last(&m->lost).end - m->start_ts) / 1e9);
	}
	fprintf(stderr, "bpfprof: wrote %s (%s)\n", path, size);
	if (format == FORMAT_PPROF)
		fprintf(stderr,
			"bpfprof: a pprof profile: go tool pprof -top %s, or load it into "
			"Pyroscope or Parca\n",
			path);
	else if (!viewing) /* --view serves it next, and says where */
		fprintf(stderr,
			"bpfprof: view it with: bpfprof view %s (or load the file at "
			"https://profiler.firefox.com/)\n",
			path);
}

/* The poll loop: until the duration, a signal, the command's exit, or the targets' exit. */
static void record_loop(struct recording *r, const struct options *opts, uint64_t start_ns)
{
	uint64_t deadline =
		opts->duration_s > 0 ? start_ns + (uint64_t)(opts->duration_s * 1e9) : UINT64_MAX;
	struct recording_pump pump = { .last_alive_check = start_ns, .last_replay = start_ns };
	struct progress prog;

	progress_init(&prog);
	while (!stop_requested) {
		uint64_t now = clock_ns(CLOCK_MONOTONIC);
		int timeout = RECORDING_POLL_INTERVAL_MS;
		int res;

		if (now >= deadline)
			break;
		if (deadline - now < RECORDING_POLL_INTERVAL_MS * 1000000ULL)
			timeout = (int)((deadline - now) / 1000000) + 1;
		res = recording_pump(r, opts, &pump, timeout, UINT64_MAX);
		if (res == -ENOMEM) {
			log_error("out of memory while recording; stopping and writing what was "
				  "recorded");
			break;
		}
		if (res < 0) {
			log_error("reading the ring buffers failed (%s); stopping and writing what "
				  "was recorded",
				  strerror(-res));
			break;
		}
		if (res == PUMP_COMMAND_EXITED)
			break;
		if (res == PUMP_TARGETS_GONE) {
			log_info("every target process has exited; stopping");
			break;
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

/*
 * --format both: the same recording as pprof, beside the Firefox profile
 * (its .json.gz or .json ending replaced by .pb.gz). 0, or 1 after a
 * one-line error (the Firefox profile is written already).
 */
static int write_pprof_beside(struct recording *r, const struct options *opts,
			      const struct session_stats *lost, const struct profile_tables *tables)
{
	struct output_file out;
	size_t n = strlen(opts->output);
	char path[PATH_MAX];
	int err;

	if (n > 8 && !strcmp(opts->output + n - 8, ".json.gz"))
		n -= 8;
	else if (n > 5 && !strcmp(opts->output + n - 5, ".json"))
		n -= 5;
	snprintf(path, sizeof(path), "%.*s.pb.gz", (int)n, opts->output);
	err = output_file_open(&out, path);
	if (!err) {
		err = recording_write(r, opts, &r->model, lost, r->start_wall_ms, tables, &out,
				      FORMAT_PPROF);
		err = err ? err : output_file_commit(&out);
		if (err)
			output_file_abort(&out);
		output_file_free(&out);
	}
	if (err) {
		log_error("cannot write the pprof profile %s (%s); the Firefox profile %s is "
			  "written",
			  path, strerror(-err), opts->output);
		return 1;
	}
	log_info("wrote %s (pprof: go tool pprof -top %s)", path, path);
	return 0;
}

static int finish_and_write(struct recording *r, const struct options *opts,
			    struct output_file *out, const struct session_stats *lost)
{
	struct profile_tables tables = { 0 };
	char saved[PATH_MAX];
	int err;

	/* Threads renamed after their last sample (prctl, pthread_setname_np) get today's name. */
	proc_refresh_thread_names(&r->model, "/proc");
	err = model_finish(&r->model);
	if (!err)
		err = recording_build_tables(r, &r->model, &tables);
	if (err) {
		log_error("out of memory while building the profile (%s)", strerror(-err));
		profile_tables_free(&tables);
		return 1;
	}
	err = recording_write(r, opts, &r->model, lost, r->start_wall_ms, &tables, out,
			      opts->format);
	if (!err)
		err = output_file_commit(out);
	if (err) {
		log_error("writing %s failed (%s); saving the profile elsewhere", opts->output,
			  strerror(-err));
		output_file_abort(out);
		if (write_fallback(r, opts, lost, &tables, saved, sizeof(saved))) {
			log_error("could not save the profile anywhere (%s); free some disk space "
				  "and record again",
				  strerror(-err));
			profile_tables_free(&tables);
			return 1;
		}
		log_info("the profile was saved to %s instead", saved);
		print_summary(r, lost, &tables, saved, opts->format, false);
		profile_tables_free(&tables);
		return 1;
	}
	print_summary(r, lost, &tables, opts->output, opts->format, opts->view);
	err = opts->format == FORMAT_BOTH ? write_pprof_beside(r, opts, lost, &tables) : 0;
	profile_tables_free(&tables);
	return err;
}

int record_main(const struct options *opts)
{
	struct recording r = { 0 };
	struct output_file out = { .fd = -1 };
	struct session_stats lost;
	int ret;

	output_file_set_mode(opts->file_mode);
	if (preflight_check_privileges() || preflight_check_btf())
		return 1;
	/* Bad --cgroup paths are the user's to fix before anything is created. */
	if (cgroup_targets_open(&r.cgroups, opts->cgroups, opts->nr_cgroups))
		return 1;
	if (output_file_open(&out, opts->output)) {
		cgroup_targets_close(&r.cgroups);
		return 1;
	}
	abort_unlink_path = out.tmp_path;
	recording_handle_signals(on_stop_signal);

	ret = recording_start(&r, opts);
	if (ret)
		goto out;
	if (!isatty(STDERR_FILENO) || log_verbosity)
		log_info("recording %s at %u Hz%s", opts->target_desc, opts->freq_hz,
			 opts->duration_s > 0 ? "" : " until Ctrl-C");

	record_loop(&r, opts, r.start_ns);

	recording_stop(&r, &lost);
	recording_report_lost(&lost);
	recording_note_blocked_threads(&r, &r.model, opts);
	if (r.have_cmd && !r.cmd.exited)
		log_info("recording stopped; '%s' (pid %d) keeps running", opts->command[0],
			 (int)r.cmd.pid);
	ret = finish_and_write(&r, opts, &out, &lost);
	abort_unlink_path = NULL;
out:
	if (ret && out.tmp_path && out.fd >= 0)
		output_file_abort(&out);
	output_file_free(&out);
	recording_close(&r);
	/* Nothing of the recording is held any more: only the file is served. */
	if (!ret && opts->view)
		ret = view_serve(opts->output, "127.0.0.1", 0, false);
	return ret;
}
