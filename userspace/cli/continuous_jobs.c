// SPDX-License-Identifier: BSD-2-Clause
/*
 * What happens to a cut continuous window off the poll thread
 * (continuous_jobs.h): symbolized on the symbolizer thread, then written
 * on the writer thread in each format asked for, and the retention applied.
 */
#include "continuous_jobs.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../scrape/scrape_server.h"
#include "../util/clock.h"
#include "../util/fair_lock.h"
#include "../util/log.h"

/* -v: one line per snapshot, to see size and cost over days. */
static void log_snapshot(const struct snapshot_job *job, const char *path, uint64_t took_ns)
{
	const struct symbolizer_stats *st = &job->sym;
	char size[32] = "?", rss[32] = "?", caches[32], heap[32];
	/* Allocated bytes, apart from what the allocator holds free: tells growth from
	 * fragmentation. */
	struct mallinfo2 mi = mallinfo2();
	struct rusage ru;
	struct stat sb;

	if (log_verbosity < 1)
		return;
	if (!stat(path, &sb))
		human_size((double)sb.st_size, size, sizeof(size));
	if (!getrusage(RUSAGE_SELF, &ru))
		human_size((double)ru.ru_maxrss * 1024, rss, sizeof(rss));
	human_size((double)st->bytes, caches, sizeof(caches));
	human_size((double)(mi.uordblks + mi.hblkhd), heap, sizeof(heap));
	log_info("snapshot %s: %" PRIu64 " samples, %zu threads, %s, written in %.0f ms; live "
		 "model %zu threads, %zu frames; symbol caches %s (%" PRIu64
		 " objects); heap in use %s; peak RSS %s",
		 path, job->snap.stats.samples, job->snap.threads.len, size, (double)took_ns / 1e6,
		 job->live_threads, job->live_frames, caches, st->objects, heap, rss);
}

/* The files each window is written as, for --format. */
static size_t snapshot_kinds(enum output_format format, enum snapshot_kind kinds[2])
{
	switch (format) {
	case FORMAT_PPROF:
		kinds[0] = SNAPSHOT_PPROF;
		return 1;
	case FORMAT_BOTH:
		kinds[0] = SNAPSHOT_FIREFOX;
		kinds[1] = SNAPSHOT_PPROF;
		return 2;
	case FORMAT_FIREFOX:
	default:
		kinds[0] = SNAPSHOT_FIREFOX;
		return 1;
	}
}

/* Write one file of a finished snapshot; on a full disk, make room by dropping the oldest once. */
static int write_snapshot_file(struct continuous *c, struct model *snap,
			       const struct session_stats *lost,
			       const struct profile_tables *tables, double start_wall_ms,
			       enum snapshot_kind kind, char **path)
{
	struct output_file out = { .fd = -1 };
	int err, attempt;

	err = snapshot_dir_path(&c->dir, start_wall_ms, kind, path);
	if (err)
		return err;
	for (attempt = 0; attempt < 2; attempt++) {
		err = output_file_open_at(&out, c->dir.fd, *path);
		if (!err) {
			err = recording_write(
				&c->rec, c->opts, snap, lost, start_wall_ms, tables, &out,
				kind == SNAPSHOT_PPROF ? FORMAT_PPROF : FORMAT_FIREFOX);
			if (!err)
				err = output_file_commit(&out);
			if (!err && kind == SNAPSHOT_FIREFOX && c->scrape)
				scrape_set_latest(c->scrape,
						  openat(c->dir.fd, *path,
							 O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
			if (err)
				output_file_abort(&out);
			output_file_free(&out);
		}
		if (err != -ENOSPC && err != -EDQUOT)
			break;
		/* The oldest snapshot is worth less than this one. */
		if (snapshot_dir_prune(&c->dir, 1, 0, *path) <= 0)
			break;
	}
	return err;
}

/*
 * Write a finished snapshot in each format asked for; *path is the first
 * file written. A format that fails is said and the others are still
 * written; an error only when none was.
 */
static int write_snapshot(struct continuous *c, struct model *snap,
			  const struct session_stats *lost, const struct profile_tables *tables,
			  double start_wall_ms, char **path)
{
	enum snapshot_kind kinds[2];
	size_t n = snapshot_kinds(c->opts->format, kinds);
	int ret = 0;

	*path = NULL;
	for (size_t i = 0; i < n; i++) {
		char *p = NULL;
		int err = write_snapshot_file(c, snap, lost, tables, start_wall_ms, kinds[i], &p);

		if (err) {
			log_error("writing snapshot %s failed (%s); free disk space in %s or lower "
				  "--keep/--max-bytes",
				  p ? p : "?", strerror(-err), c->opts->out_dir);
			ret = ret ? ret : err;
			free(p);
		} else if (!*path) {
			*path = p;
		} else {
			free(p);
		}
	}
	return *path ? 0 : ret;
}

/*
 * Tests only: `env`=N[:COUNT] is N ms for each of the first COUNT calls
 * (every one without COUNT) counted in *calls, 0 after; 0 when unset.
 */
static unsigned test_delay_ms(const char *env, unsigned long *calls)
{
	const char *s = getenv(env);
	char *end = NULL;
	unsigned ms = s ? (unsigned)strtoul(s, &end, 10) : 0;
	unsigned long count = end && *end == ':' ? strtoul(end + 1, NULL, 10) : ULONG_MAX;

	return ms && (*calls)++ < count ? ms : 0;
}

/*
 * Tests only: BPFPROF_TEST_WRITE_DELAY_MS=N[:COUNT] makes the writer take N
 * ms more for each of the first COUNT snapshots (every one without COUNT),
 * as a slow disk would: capture must not notice. On the writer thread only.
 */
static void test_write_delay(void)
{
	static unsigned long writes;
	unsigned ms = test_delay_ms("BPFPROF_TEST_WRITE_DELAY_MS", &writes);

	if (ms)
		nanosleep(&(struct timespec){ .tv_sec = ms / 1000,
					      .tv_nsec = (long)(ms % 1000) * 1000000 },
			  NULL);
}

/*
 * Tests only: BPFPROF_TEST_SYMBOLIZE_GATE=FILE holds the first snapshot's
 * symbolization until FILE exists (5 minutes at most), as loading cold
 * caches of big binaries would, for as long as the test needs; it holds
 * nothing: the rings must be read on, and scrapes answered, meanwhile. On the
 * symbolizer thread only. -v says how long it held and how often the rings
 * were drained meanwhile.
 */
static void test_symbolize_gate(struct continuous *c)
{
	static bool held;
	const char *gate = getenv("BPFPROF_TEST_SYMBOLIZE_GATE");
	uint64_t t0, drains;

	if (!gate || held)
		return;
	held = true;
	t0 = clock_ns(CLOCK_MONOTONIC);
	drains = atomic_load_explicit(&c->rec.session.drains, memory_order_relaxed);
	for (int i = 0; i < 30000 && access(gate, F_OK); i++)
		nanosleep(&(struct timespec){ .tv_nsec = 10 * 1000000 }, NULL);
	log_debug("the test's gate held a snapshot's symbolization %.0f ms; the rings were "
		  "drained %" PRIu64 " times meanwhile",
		  (double)(clock_ns(CLOCK_MONOTONIC) - t0) / 1e6,
		  atomic_load_explicit(&c->rec.session.drains, memory_order_relaxed) - drains);
}

void continuous_free_job(struct snapshot_job *job)
{
	profile_tables_free(&job->tables);
	model_free(&job->snap);
	free(job);
}

/* The window is symbolized: a sweep need not keep what it names any more. */
static void unlist_unsymbolized(struct continuous *c, struct snapshot_job *job)
{
	struct snapshot_job **pp;

	fair_lock(&c->rec.symbols_lock);
	for (pp = &c->unsymbolized; *pp && *pp != job; pp = &(*pp)->next_unsymbolized)
		;
	if (*pp)
		*pp = job->next_unsymbolized;
	symbolizer_get_stats(c->rec.sym, &job->sym);
	fair_unlock(&c->rec.symbols_lock);
}

/*
 * On the symbolizer thread: the window's profile tables, symbolized, then
 * the window to the writer (which may make this thread wait for room, never
 * the poll thread while this queue has room).
 */
void continuous_symbolize_job(void *ctx, void *arg)
{
	struct continuous *c = ctx;
	struct snapshot_job *job = arg;
	int err;

	test_symbolize_gate(c);
	err = recording_build_tables(&c->rec, &job->snap, &job->tables);
	unlist_unsymbolized(c, job);
	c->last_build_failed = err != 0;
	if (err) {
		log_error("out of memory while building a snapshot; its window is lost and "
			  "recording goes on");
		continuous_free_job(job);
		return;
	}
	snapshot_writer_submit(&c->writer, job);
}

/* On the writer thread: write the window, apply the retention, free the job. */
void continuous_write_job(void *ctx, void *arg)
{
	struct continuous *c = ctx;
	struct snapshot_job *job = arg;
	char *path = NULL;
	int err;

	test_write_delay();
	err = write_snapshot(c, &job->snap, &job->lost, &job->tables, job->start_wall_ms, &path);
	c->last_write_failed = err != 0;
	if (!err) {
		c->snapshots++;
		log_snapshot(job, path, clock_ns(CLOCK_MONOTONIC) - job->t0);
		snapshot_dir_prune(&c->dir, c->opts->keep, c->opts->max_bytes, path);
	}
	continuous_free_job(job);
	free(path);
}
