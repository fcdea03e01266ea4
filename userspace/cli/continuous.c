// SPDX-License-Identifier: BSD-2-Clause
/*
 * `bpfprof continuous`: one recording that never stops, cut into
 * consecutive snapshots. The programs stay attached; at each boundary the
 * live model is cut (model/cut.h) once every ring has been drained past
 * it, so each record lands in exactly one snapshot and consecutive
 * snapshots touch. Each snapshot is a standalone profile written
 * atomically into the output directory; the oldest are deleted to respect
 * the retention, and caches that only dead processes used are dropped, so
 * memory follows the live system, not the uptime. This file is the poll
 * thread's side; what happens to a cut window is continuous_jobs.c.
 */
#include "continuous.h"

#include <errno.h>
#include <malloc.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../capture/held_waits.h"
#include "../capture/preflight.h"
#include "../model/cut.h"
#include "../http/http_server.h"
#include "../scrape/scrape_server.h"
#include "../symbols/symbolizer.h"
#include "../util/clock.h"
#include "../util/log.h"
#include "../util/sudo_user.h"
#include "recording.h"
#include "continuous_jobs.h"
#include "snapshot_dir.h"
#include "snapshot_writer.h"

/* How often the rings are drained (as in record). */
/* A wall clock that moved this much against the monotonic one was set, not slewed. */
#define CLOCK_STEP_MS 1000.0

static volatile sig_atomic_t stop_requested;
static volatile sig_atomic_t rotate_requested;
static volatile sig_atomic_t interrupts;

static void on_signal(int sig)
{
	/*
	 * A second Ctrl-C means "abort now": the snapshots written so far stay,
	 * a temporary file being written is removed at the next start.
	 */
	if (sig == SIGINT && ++interrupts >= 2)
		_exit(130);
	if (sig == SIGHUP)
		rotate_requested = 1;
	else
		stop_requested = 1;
}

static double wall_offset_now(void)
{
	return (double)clock_ns(CLOCK_REALTIME) / 1e6 - (double)clock_ns(CLOCK_MONOTONIC) / 1e6;
}

/* The records the rings dropped since the last cut. */
static void lost_since_last_cut(struct continuous *c, struct session_stats *lost)
{
	struct session_stats now;

	session_read_stats(&c->rec.session, &now);
	for (int k = 0; k < EV_KIND_MAX; k++) {
		lost->emitted[k] = now.emitted[k] - c->counters.emitted[k];
		lost->dropped[k] = now.dropped[k] - c->counters.dropped[k];
	}
	c->counters = now;
}

static void retain_object(void *ctx, uint32_t object)
{
	frame_resolver_retain(ctx, object);
}

/*
 * After a cut, only the live model and the windows still to be symbolized
 * refer to binaries: those of live processes' mappings, of the frames the
 * live model kept, and of the waiting windows' frames. The symbolizer and
 * the JIT maps drop every other. The caller holds the symbols lock: the
 * symbolizer thread resolves meanwhile, one frame at a time.
 */
static void sweep_caches(struct continuous *c)
{
	const struct model *m = &c->rec.model;
	size_t objects, jits;

	frame_resolver_retain_begin(&c->rec.frames);
	for (size_t i = 0; i < m->processes.len; i++) {
		const struct process *p = &m->processes.data[i];

		for (size_t k = 0; k < p->mappings.len; k++)
			if (p->mappings.data[k].object != NO_INDEX)
				frame_resolver_retain(&c->rec.frames, p->mappings.data[k].object);
	}
	for (size_t i = 0; i < m->frames.len; i++)
		frame_resolver_retain(&c->rec.frames, m->frames.data[i].object);
	for (const struct snapshot_job *job = c->unsymbolized; job; job = job->next_unsymbolized)
		for (size_t i = 0; i < job->snap.frames.len; i++)
			frame_resolver_retain(&c->rec.frames, job->snap.frames.data[i].object);
	/* And the scrapes still waiting: their samples of dead processes are built later. */
	if (c->scrape)
		scrape_for_each_object(c->scrape, retain_object, &c->rec.frames);
	objects = frame_resolver_sweep(&c->rec.frames, &jits);
	if (objects || jits)
		log_debug("dropped %zu binaries and %zu JIT maps no live process uses", objects,
			  jits);
}

/*
 * Cut the live model at `boundary` (every ring drained past it), finish the
 * window before it and hand it to the symbolizer thread, which symbolizes
 * windows in order and hands each to the writer thread; the cut waits only
 * when SNAPSHOT_WRITER_QUEUE of them wait to be symbolized already. The
 * caches only dead processes used are dropped meanwhile (the window's
 * objects are kept until it is symbolized; the tables hold their own copy
 * of what they name).
 */
static int cut_snapshot(struct continuous *c, uint64_t boundary)
{
	struct model *live = &c->rec.model;
	struct snapshot_job *job;
	uint64_t t0 = clock_ns(CLOCK_MONOTONIC), window_start;
	double offset = wall_offset_now();
	int err;

	/* The symbolizer thread makes room only with the symbols' lock: never held here. */
	proc_source_release_symbols(&c->rec.src_ctx);
	if (snapshot_writer_wait_room(&c->symbolizer))
		log_warn("snapshots are symbolized and written more slowly than they are cut: %d "
			 "windows waited to be symbolized and the rings went unread until one was "
			 "(symbols slow to load, or a slow disk in %s, which the symbolizer waits "
			 "for); a longer --interval gives both more time",
			 SNAPSHOT_WRITER_QUEUE, c->opts->out_dir);
	if (fabs(offset - c->wall_offset_ms) > CLOCK_STEP_MS) {
		log_warn("the wall clock moved by %.0f ms; snapshot names follow it from now on",
			 offset - c->wall_offset_ms);
		c->wall_offset_ms = offset;
	}
	job = calloc(1, sizeof(*job));
	if (!job)
		return -ENOMEM;
	job->t0 = t0;
	job->start_wall_ms = c->wall_offset_ms + (double)live->start_ts / 1e6;
	window_start = live->start_ts;
	if ((err = model_sched_flush(live, boundary - 1)) ||
	    (err = model_cut(live, &job->snap, boundary))) {
		log_error("out of memory while cutting a snapshot; its window is lost and "
			  "recording goes on");
		if (c->scrape)
			scrape_lost(c->scrape, window_start, boundary);
		free(job);
		return err;
	}
	lost_since_last_cut(c, &job->lost);
	recording_report_lost(&job->lost);
	/*
	 * -v: how long the rings went unread at worst (overflow follows from
	 * it), and how long this thread waited for a symbolizing thread's frame.
	 */
	log_debug("window cut at %.3f s: the rings were drained at most %.0f ms apart; the "
		  "longest wait for the frame sources %.0f ms",
		  (double)(boundary - c->rec.start_ns) / 1e9,
		  (double)session_take_longest_drain_gap(&c->rec.session) / 1e6,
		  (double)c->rec.src_ctx.longest_symbols_wait_ns / 1e6);
	c->rec.src_ctx.longest_symbols_wait_ns = 0;
	/* A target blocked through the whole window: its wait there, not a blank track. */
	recording_note_blocked_threads(&c->rec, &job->snap, c->opts);
	/* Threads renamed after their last sample get today's name. */
	proc_refresh_thread_names(&job->snap, "/proc");
	err = model_finish(&job->snap);
	/* Scrapes waiting across the boundary take their part of the window now. */
	if (c->scrape && !err)
		scrape_collect(c->scrape, &job->snap, job->snap.start_ts, boundary);
	else if (c->scrape)
		scrape_lost(c->scrape, window_start, boundary);
	if (err) {
		log_error("out of memory while building a snapshot; its window is lost and "
			  "recording goes on");
		continuous_free_job(job);
		return err;
	}
	job->live_threads = live->threads.len;
	job->live_frames = live->frames.len;
	/* Held already if the cut's reads of /proc took it: the symbolizer unlists under it. */
	proc_source_hold_symbols(&c->rec.src_ctx);
	job->next_unsymbolized = c->unsymbolized;
	c->unsymbolized = job;
	/* After the cut only the live model and the windows to symbolize name binaries. */
	sweep_caches(c);
	proc_source_release_symbols(&c->rec.src_ctx);
	/* Give what the snapshot used back to the system, so RSS shows the live state. */
	malloc_trim(0);
	snapshot_writer_submit(&c->symbolizer, job);
	return 0;
}

/* On the poll thread. */
static int take_snapshot(struct continuous *c, uint64_t boundary)
{
	int err = cut_snapshot(c, boundary);

	/* A cut that failed may hold what its reads of /proc took: the symbolizer's again. */
	if (err)
		proc_source_release_symbols(&c->rec.src_ctx);
	return err;
}

/*
 * A boundary is due (its time came, or SIGHUP). The kernel's syscall
 * totals are read now, so that they are counted in the window that ends.
 */
static void start_cut(struct continuous *c, uint64_t now)
{
	int err;

	c->cut_at = rotate_requested ? now : c->next_boundary;
	rotate_requested = 0;
	c->next_boundary = c->cut_at + c->opts->interval_ns;
	/* A stall longer than the interval (a stopped process) skips, never piles up. */
	while (c->next_boundary <= now)
		c->next_boundary += c->opts->interval_ns;
	err = session_dump_syscall_totals(&c->rec.session);
	if (err)
		log_warn("cannot read the live threads' syscall totals (%s); their counts move to "
			 "a later snapshot",
			 strerror(-err));
	/* A thread asleep across the boundary: its wait must be known to the window that ends. */
	err = session_flush_held_waits(&c->rec.session, c->cut_at - 1);
	if (err)
		log_warn("cannot read the waits the kernel holds (%s); threads asleep across the "
			 "boundary show no wait before it",
			 strerror(-err));
}

/*
 * On the scrape server's builder thread: a scrape's window, its samples
 * copied, as a gzip'd pprof profile. It reads the recording's frame
 * sources under their lock, and what stays as it was set up (options,
 * labels, the session's description) without.
 */
static int write_scrape(void *ctx, struct model *m, enum pprof_kind kind, double wall_offset_ms,
			int fd)
{
	struct continuous *c = ctx;
	struct pprof_options po = { .kind = kind, .labels = c->labels, .nr_labels = c->nr_labels };
	struct profile_tables tables = { 0 };
	int err = recording_build_asked_tables(&c->rec, m, &tables);

	if (!err)
		err = recording_write_pprof(&c->rec, c->opts, m,
					    wall_offset_ms + (double)m->start_ts / 1e6, &tables, fd,
					    &po);
	profile_tables_free(&tables);
	return err;
}

/*
 * How far the replay may go: never past a boundary still to be cut, nor
 * past the end of an off-CPU scrape's window whose held waits are not
 * flushed yet (they carry their switch-out's time, before that end).
 */
static uint64_t replay_limit(struct continuous *c)
{
	uint64_t limit = c->cut_at ? c->cut_at : c->next_boundary, end;

	if (c->scrape && c->opts->offcpu) {
		end = scrape_next_offcpu_end(c->scrape, c->held_flushed_to);
		if (end < limit)
			limit = end;
	}
	return limit;
}

/*
 * An off-CPU scrape's window has ended: the waits the kernel holds are
 * flushed as at a snapshot's boundary, so that a thread asleep across the
 * end shows its wait in the window.
 */
static void flush_held_for_scrapes(struct continuous *c, uint64_t now)
{
	uint64_t end;
	int err;

	if (!c->scrape || !c->opts->offcpu)
		return;
	end = scrape_next_offcpu_end(c->scrape, c->held_flushed_to);
	if (end > now)
		return;
	err = session_flush_held_waits(&c->rec.session, end - 1);
	if (err)
		log_warn("cannot read the waits the kernel holds (%s); a scrape's threads asleep "
			 "at its end show no wait",
			 strerror(-err));
	c->held_flushed_to = end;
}

/*
 * Scrapes whose windows have ended, once every ring is drained past their
 * end (and the replay margin), up to the replay's limit: their part before
 * a boundary is still in the live model or was collected from the snapshot.
 */
static void answer_scrapes(struct continuous *c)
{
	struct model *live = &c->rec.model;
	uint64_t drained = c->rec.session.drained_before_ns;
	uint64_t limit = replay_limit(c), upto;

	if (!c->scrape || drained < SCHED_REPLAY_MARGIN_NS)
		return;
	upto = drained - SCHED_REPLAY_MARGIN_NS;
	if (upto > limit)
		upto = limit;
	if (scrape_next_end(c->scrape) > upto)
		return;
	if (model_sched_flush(live, upto - 1)) {
		log_error("out of memory while replaying for a scrape");
		return;
	}
	scrape_answer(c->scrape, live, upto, c->wall_offset_ms);
}

/* The poll timeout: the next boundary, or the end of a scrape's window, may come sooner. */
static int poll_timeout(struct continuous *c, uint64_t now)
{
	uint64_t next = c->cut_at ? UINT64_MAX : c->next_boundary;
	int timeout = RECORDING_POLL_INTERVAL_MS;

	if (c->scrape) {
		uint64_t end = scrape_next_end(c->scrape);

		if (end != UINT64_MAX && end + SCHED_REPLAY_MARGIN_NS < next)
			next = end + SCHED_REPLAY_MARGIN_NS;
	}
	if (next != UINT64_MAX && next > now &&
	    next - now < RECORDING_POLL_INTERVAL_MS * 1000000ULL)
		timeout = (int)((next - now) / 1000000) + 1;
	return timeout;
}

static int poll_loop(struct continuous *c)
{
	struct recording *r = &c->rec;
	struct recording_pump pump = { .last_alive_check = r->start_ns,
				       .last_replay = r->start_ns };

	while (!stop_requested) {
		uint64_t now = clock_ns(CLOCK_MONOTONIC);
		int timeout;
		int res;

		if (!c->cut_at && (rotate_requested || now >= c->next_boundary))
			start_cut(c, now);
		flush_held_for_scrapes(c, now);
		/*
		 * Both may have resolved user addresses (the switch records the
		 * kernel's iterators hand over): not held through the poll wait,
		 * which would hold off the threads symbolizing windows.
		 */
		proc_source_release_symbols(&c->rec.src_ctx);
		/* Each pass (at most RECORDING_POLL_INTERVAL_MS): a hung-up scrape leaves. */
		if (c->scrape)
			scrape_drop_hung_up(c->scrape);
		timeout = poll_timeout(c, now);
		/* Replay as record does, never past the boundary still to be cut. */
		res = recording_pump(r, c->opts, &pump, timeout, replay_limit(c) - 1);
		if (res == -ENOMEM) {
			log_error("out of memory while recording; writing the current snapshot and "
				  "stopping");
			return 1;
		}
		if (res < 0) {
			log_error("reading the ring buffers failed (%s); writing the current "
				  "snapshot and stopping",
				  strerror(-res));
			return 1;
		}
		/* -p: once every target is gone, the next snapshots would all be empty. */
		if (res == PUMP_TARGETS_GONE) {
			log_info("every target process has exited; writing the last snapshot");
			return 0;
		}
		/* Windows that end before a pending cut are answered from the live model first. */
		answer_scrapes(c);
		if (c->cut_at &&
		    r->session.drained_before_ns >= c->cut_at + SCHED_REPLAY_MARGIN_NS) {
			uint64_t b = c->cut_at;

			c->cut_at = 0;
			take_snapshot(c, b);
			/* It replayed up to the boundary: the next replay is an interval on. */
			pump.last_replay = b;
			answer_scrapes(c);
		}
	}
	return 0;
}

/*
 * --listen: read the token and TLS files, set the labels (host, then
 * --label's) and listen, before any program is loaded. 0, or -errno after
 * a one-line error.
 */
static int start_scrape_server(struct continuous *c)
{
	const struct listen_options *l = &c->opts->listen;
	struct scrape_config cfg = { .address = l->address,
				     .port = l->port,
				     .offcpu = c->opts->offcpu && c->opts->sched,
				     .firefox = c->opts->format != FORMAT_PPROF,
				     .owner = 0,
				     .write = write_scrape,
				     .write_ctx = c };
	char *token = NULL, *cert = NULL, *key = NULL;
	gid_t gid;
	int err = -EINVAL;

	if (!sudo_user_ids(&cfg.owner, &gid))
		cfg.owner = getuid();
	if (l->token_file && !(token = http_read_secret_file(l->token_file, "--listen-token-file",
							     HTTP_FILE_TRIM | HTTP_FILE_SECRET)))
		goto out;
	if (l->tls_cert &&
	    (!(cert = http_read_secret_file(l->tls_cert, "--listen-tls", 0)) ||
	     !(key = http_read_secret_file(l->tls_key, "--listen-tls", HTTP_FILE_SECRET))))
		goto out;
	cfg.token = token;
	cfg.tls_cert = cert;
	cfg.tls_key = key;
	gethostname(c->host, sizeof(c->host) - 1);
	/* host, unless --label names it otherwise. */
	c->labels[c->nr_labels++] = (struct pprof_label){ "host", c->host };
	for (size_t i = 0; i < l->nr_labels; i++)
		if (!strcmp(l->labels[i].key, "host"))
			c->nr_labels = 0;
	for (size_t i = 0; i < l->nr_labels && c->nr_labels < PPROF_MAX_LABELS; i++)
		c->labels[c->nr_labels++] = l->labels[i];
	err = scrape_server_start(&c->scrape, &cfg);
	if (!err)
		log_info("serving scrapes at %s://%s%s%s:%u/debug/pprof/profile?seconds=N%s",
			 cert ? "https" : "http", strchr(l->address, ':') ? "[" : "", l->address,
			 strchr(l->address, ':') ? "]" : "", scrape_server_port(c->scrape),
			 token ? " (with the token)" : "");
out:
	if (token)
		explicit_bzero(token, strlen(token));
	if (key)
		explicit_bzero(key, strlen(key));
	free(token);
	free(cert);
	free(key);
	return err;
}

int continuous_main(const struct options *opts)
{
	struct continuous c = { .opts = opts };
	struct session_stats final;
	const char *files;
	int ret;

	output_file_set_mode(opts->file_mode);
	if (preflight_check_privileges() || preflight_check_btf())
		return 1;
	/* A port in use or a bad token file is said before anything is made or loaded. */
	if (opts->listen.listen && start_scrape_server(&c))
		return 1;
	if (cgroup_targets_open(&c.rec.cgroups, opts->cgroups, opts->nr_cgroups)) {
		scrape_server_stop(c.scrape);
		return 1;
	}
	if (snapshot_dir_open(&c.dir, opts->out_dir)) {
		scrape_server_stop(c.scrape);
		cgroup_targets_close(&c.rec.cgroups);
		return 1;
	}
	recording_handle_signals(on_signal);
	ret = recording_start(&c.rec, opts);
	if (ret)
		goto out;
	if (snapshot_writer_start(&c.writer, continuous_write_job, &c))
		log_warn("cannot start the snapshot writer thread; snapshots are written by the "
			 "reader, which stops reading the rings meanwhile");
	if (snapshot_writer_start(&c.symbolizer, continuous_symbolize_job, &c))
		log_warn("cannot start the snapshot symbolizer thread; snapshots are symbolized by "
			 "the reader, which stops reading the rings meanwhile");
	c.wall_offset_ms = c.rec.start_wall_ms - (double)c.rec.start_ns / 1e6;
	c.next_boundary = c.rec.start_ns + opts->interval_ns;
	files = opts->format == FORMAT_BOTH    ? ".json.gz and .pb.gz"
		: opts->format == FORMAT_PPROF ? ".pb.gz"
					       : ".json.gz";
	if (opts->max_bytes) {
		char size[32];

		human_size((double)opts->max_bytes, size, sizeof(size));
		log_info("recording %s at %u Hz into %s: one snapshot (%s) every %.3g s, keeping "
			 "the newest that fit in %s",
			 opts->target_desc, opts->freq_hz, opts->out_dir, files,
			 (double)opts->interval_ns / 1e9, size);
	} else {
		log_info("recording %s at %u Hz into %s: one snapshot (%s) every %.3g s, keeping "
			 "the newest %u",
			 opts->target_desc, opts->freq_hz, opts->out_dir, files,
			 (double)opts->interval_ns / 1e9, opts->keep);
	}

	ret = poll_loop(&c);

	/* The window in progress is written too, up to now. */
	recording_stop(&c.rec, &final);
	if (c.cut_at)
		take_snapshot(&c, c.cut_at);
	if (model_sched_flush(&c.rec.model, UINT64_MAX) == 0 &&
	    c.rec.model.stop_ts > c.rec.model.start_ts) {
		if (take_snapshot(&c, c.rec.model.stop_ts + 1) && !ret)
			ret = 1;
	}
	/* The last window is symbolized and written before anything it names is freed. */
	snapshot_writer_stop(&c.symbolizer);
	snapshot_writer_stop(&c.writer);
	if ((c.last_write_failed || c.last_build_failed) && !ret)
		ret = 1;
	log_info("stopped after %lu snapshots in %s", c.snapshots, opts->out_dir);
out:
	/* Windows still waiting are answered (503) before what they name is freed. */
	scrape_server_stop(c.scrape);
	c.scrape = NULL;
	snapshot_writer_stop(&c.symbolizer);
	snapshot_writer_stop(&c.writer);
	snapshot_dir_close(&c.dir);
	recording_close(&c.rec);
	return ret;
}
