/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * `bpfprof continuous`'s state, shared by the poll thread (continuous.c:
 * draining the rings, cutting windows, scrapes) and the threads a cut
 * window goes through (continuous_jobs.c: symbolized, then written in each
 * format asked for, then the retention).
 */
#ifndef BPFPROF_CLI_CONTINUOUS_JOBS_H
#define BPFPROF_CLI_CONTINUOUS_JOBS_H

#include <stdbool.h>
#include <stdint.h>

#include "../capture/session.h"
#include "../emit/pprof_writer.h"
#include "../emit/profile_tables.h"
#include "../model/model.h"
#include "../symbols/symbolizer.h"
#include "options.h"
#include "recording.h"
#include "snapshot_dir.h"
#include "snapshot_writer.h"

struct scrape_server;

/*
 * The poll thread's, but for what the other threads read: opts, dir,
 * labels and rec's settings (fixed once recording), rec's frame sources
 * (under rec.symbols_lock), scrape (its own lock), and the fields below
 * that say which thread writes them.
 */
struct continuous {
	struct recording rec;
	const struct options *opts;
	struct snapshot_dir dir;
	uint64_t next_boundary;	       /* the current window ends here (CLOCK_MONOTONIC) */
	uint64_t cut_at;	       /* a boundary reached, waiting for the rings; 0: none */
	double wall_offset_ms;	       /* CLOCK_REALTIME - CLOCK_MONOTONIC */
	struct session_stats counters; /* the rings' counters at the last cut */
	/*
	 * A cut window goes to the symbolizer thread, then to the writer
	 * thread, in order: the poll thread only cuts, and goes back to the
	 * rings. Symbolizing and writing overlap, as cutting and writing did.
	 */
	struct snapshot_writer symbolizer;
	struct snapshot_writer writer;
	/*
	 * Cut windows not symbolized yet, newest first, under
	 * rec.symbols_lock: a sweep of the caches keeps what they name.
	 */
	struct snapshot_job *unsymbolized;
	/* --listen: the scrape target; NULL without. Its labels: host, then --label's. */
	struct scrape_server *scrape;
	uint64_t held_flushed_to; /* the kernel's held waits were flushed for windows ending here */
	char host[256];
	struct pprof_label labels[PPROF_MAX_LABELS];
	size_t nr_labels;
	/* Written by the writer thread; read once it has stopped. */
	unsigned long snapshots;
	bool last_write_failed;
	/* Written by the symbolizer thread; read once it has stopped. */
	bool last_build_failed;
};

/*
 * A cut window on its way to the symbolizer and writer threads, with what
 * its -v line says of the live state. Theirs alone from its hand-over:
 * the poll thread only reads snap's frames, under rec.symbols_lock, while
 * the job is listed in `unsymbolized`.
 */
struct snapshot_job {
	struct snapshot_job *next_unsymbolized;
	struct model snap;
	struct profile_tables tables; /* built by the symbolizer thread */
	struct session_stats lost;
	double start_wall_ms;
	uint64_t t0; /* when the cut began */
	size_t live_threads, live_frames;
	struct symbolizer_stats sym;
};

void continuous_free_job(struct snapshot_job *job);

/* On the symbolizer thread: the window's tables, then the window to the writer. */
void continuous_symbolize_job(void *ctx, void *job);

/* On the writer thread: write the window, apply the retention, free the job. */
void continuous_write_job(void *ctx, void *job);

#endif
