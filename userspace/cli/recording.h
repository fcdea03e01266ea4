/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What `record` and `continuous` share: the BPF session and everything that
 * turns its records into a profile (model, symbolizer, JIT maps, the
 * lifecycle feed), set up from the options; and writing one model as a
 * profile file.
 */
#ifndef BPFPROF_RECORDING_H
#define BPFPROF_RECORDING_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "../capture/command.h"
#include "../capture/session.h"
#include "../emit/emitter.h"
#include "../emit/output_file.h"
#include "../emit/pprof_writer.h"
#include "../emit/profile_tables.h"
#include "../model/model.h"
#include "../model/proc_source.h"
#include "../symbols/frame_resolver.h"
#include "../util/fair_lock.h"
#include "cgroup_targets.h"
#include "lifecycle_feed.h"
#include "options.h"

/*
 * Scheduler events are replayed per thread in time order once every ring
 * has been drained past their time; this margin covers a record being
 * written while its ring was drained.
 */
#define SCHED_REPLAY_MARGIN_NS (20ULL * 1000 * 1000)

struct recording {
	struct model model;
	/*
	 * The frame sources (sym, debuginfod, jit, py_frames, frames) are
	 * shared by the thread recording, which registers what it meets, and
	 * the threads that symbolize continuous snapshots and scrapes: each
	 * use of them is under this lock. The recording thread keeps it for
	 * a whole drain of the rings once it needs it; a symbolizing thread
	 * keeps it across frames while nobody waits, and lets go at the end of
	 * the frame it is at when someone does. The rest of the recording is
	 * the recording thread's alone.
	 */
	struct fair_lock symbols_lock;
	pthread_t feeder; /* the thread that drains the rings and feeds the model */
	struct symbolizer *sym;
	struct debuginfo_server *debuginfod; /* DEBUGINFOD_URLS: debug files from servers */
	struct jit_maps *jit;
	struct python_procs *py_procs;	 /* Python processes: their code objects, named */
	struct python_frames *py_frames; /* the Python frames met */
	struct php_procs *php_procs;	 /* PHP processes: their functions, named */
	struct ruby_procs *rb_procs;	 /* Ruby processes: their iseqs, named */
	struct python_frames *rb_frames; /* the Ruby frames met (the same kind of table) */
	struct hotspot_procs *jvms;	 /* the JVMs met, read as their code is met */
	struct java_frames *java_frames; /* the Java (and JS) frames met */
	struct v8_procs *v8;		 /* the node processes met, read as their frames are met */
	struct frame_resolver frames;	 /* sym, jit, py_frames and java_frames, by object id */
	struct proc_source_ctx src_ctx;
	struct session session;
	struct lifecycle_feed feed;
	struct command cmd;
	bool have_cmd;
	uint32_t cmd_tgid;
	struct cgroup_targets cgroups; /* opened by the caller, closed by recording_close */
	uint64_t start_ns;	       /* CLOCK_MONOTONIC at the start */
	double start_wall_ms;	       /* CLOCK_REALTIME at the start */
	/* The drop counters at their last read, and when: lost records get a time range. */
	uint64_t lost_seen[LOST_KINDS];
	uint64_t lost_read_ns;
	struct emit_view_summary view; /* what the last profile written shows at load */
};

/*
 * Everything from the symbolizer to attached programs and seeded targets
 * (and the command started, with -- COMMAND). r->cgroups must be open.
 * 0, or an exit status after a one-line error.
 */
int recording_start(struct recording *r, const struct options *opts);

/*
 * Detach every program, drain the rings, read the live threads' syscall
 * totals and the drop counters. The model's end is now.
 */
void recording_stop(struct recording *r, struct session_stats *stats);

/*
 * The profile tables of `m`, symbolized; 0 or -ENOMEM. -v logs what it
 * cost. On any thread: the frame sources are taken under symbols_lock.
 */
int recording_build_tables(struct recording *r, struct model *m, struct profile_tables *tables);
/*
 * The same for a profile someone asked for (a scrape): its symbolization
 * does not start the time budgets again while another build spends them
 * (symbolizer_build_begin).
 */
int recording_build_asked_tables(struct recording *r, struct model *m,
				 struct profile_tables *tables);

/*
 * Write `m` (finished, its tables built) to `out` as `format` (FORMAT_BOTH
 * writes the Firefox profile); `lost` are the records the rings dropped
 * while it was recorded, `start_wall_ms` the wall-clock time of
 * m->start_ts. 0 or -errno.
 */
int recording_write(struct recording *r, const struct options *opts, const struct model *m,
		    const struct session_stats *lost, double start_wall_ms,
		    const struct profile_tables *tables, struct output_file *out,
		    enum output_format format);

/*
 * Write `m` (finished, its tables built) to `fd` as a gzip'd pprof profile
 * of the kind and labels `pprof` says, for a scrape. 0 or -errno.
 */
int recording_write_pprof(struct recording *r, const struct options *opts, const struct model *m,
			  double start_wall_ms, const struct profile_tables *tables, int fd,
			  const struct pprof_options *pprof);

/*
 * Read the kernel's drop counters (the rings' and the side-band's); records
 * lost since the last read go into the model as lost between then and now.
 * At most once per poll interval unless `force`. 0 or -ENOMEM.
 */
int recording_note_lost(struct recording *r, uint64_t now, bool force);

/*
 * With scheduler capture, at the end of `m` (the recording after
 * recording_stop, or a continuous window just cut): a thread that never
 * ran nor woke in it (blocked in pthread_join, a read, a lock from before
 * its start to its end) gets its wait over the whole of it (an Off-CPU
 * marker, its off-CPU samples when they are on, and the syscall it sleeps
 * in), for the reason its state says now, at the stack it sleeps in (with
 * off-CPU samples, as other waits), instead of a blank track. -a: every
 * such thread of the machine, from one pass over its tasks, with at most
 * BLOCKED_USER_WALKS_MAX user stacks (blocked_threads.c); its samples are
 * a few weighted rows, as every wait's (model/offcpu_samples.c). Not with
 * cgroup targets.
 */
void recording_note_blocked_threads(struct recording *r, struct model *m,
				    const struct options *opts);

/* Warn about records lost because a ring buffer was full. */
void recording_report_lost(const struct session_stats *st);

/* SIGINT, SIGTERM and SIGHUP go to `handler`, without SA_RESTART: they wake the poll loop. */
void recording_handle_signals(void (*handler)(int));

/* With -p, a recording ends once none of the processes is left. */
bool recording_any_target_alive(const struct options *opts);

/*
 * How often the rings are drained: bounds how long a new process can live
 * before we read its mappings (shorter-lived ones need the exec/mmap events).
 */
#define RECORDING_POLL_INTERVAL_MS 50

/* The poll loop's memory between turns (zero-initialised, then start_ns set). */
struct recording_pump {
	uint64_t last_alive_check; /* -p: when the targets were last looked for */
	uint64_t last_replay;	   /* drained_before_ns of the last scheduler replay */
};

enum recording_pump_result {
	PUMP_GO_ON = 0,
	PUMP_TARGETS_GONE,  /* -p: every target process has exited */
	PUMP_COMMAND_EXITED /* -- cmd: the command has exited */
};

/*
 * One turn of the poll loop of record and continuous: wait up to
 * timeout_ms for records and decode them into the model; once per poll
 * interval, replay the scheduler events up to what every ring has been
 * drained past (minus a margin), never past `replay_limit`; see whether
 * the command exited or (every second, -p) the targets are gone. A
 * PUMP_* result, or a negative errno (the rings could not be read, or
 * out of memory), after which the caller writes what was recorded.
 */
int recording_pump(struct recording *r, const struct options *opts, struct recording_pump *p,
		   int timeout_ms, uint64_t replay_limit);

/* "12.3 MiB" */
const char *human_size(double bytes, char *buf, size_t len);

void recording_close(struct recording *r);

#endif
