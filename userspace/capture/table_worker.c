// SPDX-License-Identifier: BSD-2-Clause
/* See table_worker.h. */
#include "table_worker.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../util/clock.h"
#include "../util/log.h"
#include "../util/quiet_thread.h"
#include "../util/elf_open.h"

/* `ns` from now on `clock`, as pthread's timed waits take it. */
static struct timespec deadline(clockid_t clock, uint64_t ns)
{
	struct timespec t;

	clock_gettime(clock, &t);
	t.tv_sec += (time_t)(ns / 1000000000ull);
	t.tv_nsec += (long)(ns % 1000000000ull);
	if (t.tv_nsec >= 1000000000L) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000L;
	}
	return t;
}

/*
 * The CPU budget over time (lock held): refill for the time gone by, then
 * wait while it is spent. False when told to stop meanwhile.
 */
static bool wait_for_credit(struct table_worker *w)
{
	for (;;) {
		uint64_t now = clock_ns(CLOCK_MONOTONIC);
		struct timespec until;

		w->credit_ns += (double)(now - w->credit_at) * TABLE_WORKER_DUTY;
		if (w->credit_ns > (double)TABLE_WORKER_BURST_NS)
			w->credit_ns = (double)TABLE_WORKER_BURST_NS;
		w->credit_at = now;
		if (w->credit_ns >= 0 || w->stop)
			return !w->stop;
		until = deadline(CLOCK_MONOTONIC, (uint64_t)(-w->credit_ns / TABLE_WORKER_DUTY));
		pthread_cond_timedwait(&w->cond, &w->lock, &until);
	}
}

/*
 * The next job (lock held, some queued): the oldest of the owner after the
 * one served last, in uid order, wrapping around, so that one user's many
 * files never all go ahead of another's; among the hot jobs first, when
 * there are any (table_worker_hurry).
 */
static struct table_job take_next(struct table_worker *w)
{
	size_t pick = SIZE_MAX, lowest = SIZE_MAX;
	bool hot = false;
	struct table_job job;

	for (size_t i = 0; i < w->jobs.len && !hot; i++)
		hot = w->jobs.data[i].hot;
	for (size_t i = 0; i < w->jobs.len; i++) {
		uint32_t uid = w->jobs.data[i].uid;

		if (w->jobs.data[i].hot != hot)
			continue;

		if (uid > w->last_uid && (pick == SIZE_MAX || uid < w->jobs.data[pick].uid))
			pick = i;
		if (lowest == SIZE_MAX || uid < w->jobs.data[lowest].uid)
			lowest = i;
	}
	if (pick == SIZE_MAX)
		pick = lowest;
	job = w->jobs.data[pick];
	memmove(&w->jobs.data[pick], &w->jobs.data[pick + 1],
		(w->jobs.len - pick - 1) * sizeof(job));
	w->jobs.len--;
	w->last_uid = job.uid;
	if (job.fd >= 0)
		w->fds--;
	return job;
}

/* The job's file, opened again when it holds no descriptor: -ESTALE if not the one queued. */
static int job_fd(const struct table_job *job)
{
	struct stat st;
	int fd;

	if (job->fd >= 0)
		return job->fd;
	fd = open(job->link, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -ESTALE;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (uint64_t)st.st_ino != job->key.ino ||
	    (uint64_t)st.st_size != job->id.size ||
	    (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec != job->id.mtime_ns ||
	    (int64_t)st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec != job->id.ctime_ns) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

static void free_job(struct table_job *job)
{
	if (job->fd >= 0)
		close(job->fd);
	free(job->path);
	free(job->link);
}

/*
 * Tests only: BPFPROF_TEST_TABLE_DELAY=NAME:MS holds the build of a file
 * whose path ends in "/NAME" for MS ms (a slow build, as a big binary on a
 * busy machine takes), so that its first samples come before its table. The
 * wait ends early when the worker is stopped.
 */
static void test_delay(struct table_worker *w, const char *path)
{
	const char *spec = getenv("BPFPROF_TEST_TABLE_DELAY"), *colon, *base;
	long ms;

	if (!spec || !path || !(colon = strchr(spec, ':')) || (ms = atol(colon + 1)) <= 0)
		return;
	base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	if (strlen(base) != (size_t)(colon - spec) || strncmp(base, spec, (size_t)(colon - spec)))
		return;
	for (; ms > 0 && !__atomic_load_n(&w->stop, __ATOMIC_RELAXED); ms -= 10)
		nanosleep(&(struct timespec){ .tv_nsec = 10 * 1000000 }, NULL);
}

/*
 * The table of the file at `fd` into d->b: from the cache when it holds
 * the file's (*cached set), else built, and then kept there.
 */
static int load_or_build(struct table_worker *w, int fd, const struct cfi_budget *budget,
			 struct table_done *d, bool *cached)
{
	struct table_cache_key k;
	Elf *elf = elf_open_fd(fd);
	bool keyed = w->cache && w->cache->dir >= 0 && elf && !table_cache_key_of(fd, elf, &k);
	int err;

	*cached = false;
	if (keyed && !table_cache_load(w->cache, &k, budget, &d->b)) {
		elf_end(elf);
		*cached = true;
		if (log_verbosity >= 2)
			log_debug("%s: unwind table from the cache (%.2f ms of CPU)",
				  d->path ? d->path : "?", (double)d->b.build_ns / 1e6);
		return 0;
	}
	err = unwind_file_build(elf, budget, &d->b);
	if (!err && log_verbosity >= 2)
		log_debug("%s: unwind table built (%.2f ms of CPU)%s", d->path ? d->path : "?",
			  (double)d->b.build_ns / 1e6, keyed ? "" : "; no build-id, not cached");
	if (!err && keyed)
		(void)table_cache_store(w->cache, &k, &d->b);
	return err;
}

static void *worker_main(void *arg)
{
	struct table_worker *w = arg;
	struct cfi_budget budget = w->budget, file_budget;

	budget.stop = &w->stop;
	pthread_mutex_lock(&w->lock);
	for (;;) {
		struct table_done d = { 0 };
		struct table_job job;
		bool cached = false;
		uint64_t job_ns;
		int fd;

		while (!w->jobs.len && !w->stop)
			pthread_cond_wait(&w->cond, &w->lock);
		if (w->stop || !wait_for_credit(w))
			break;
		job = take_next(w);
		w->busy = true;
		pthread_mutex_unlock(&w->lock);

		d.key = job.key;
		d.id = job.id;
		d.path = job.path;
		job.path = NULL;
		test_delay(w, d.path);
		/* Charged to the budget whole: the cache's reads, writes and trims too. */
		job_ns = cfi_thread_cpu_ns();
		fd = job_fd(&job);
		/* A user's file within one user's cap; the system's within the store's. */
		file_budget = cfi_budget_for_file(&budget, fd);
		if (fd < 0)
			d.err = fd;
		else
			d.err = load_or_build(w, fd, &file_budget, &d, &cached);
		if (fd >= 0 && fd != job.fd)
			close(fd);
		free_job(&job);
		job_ns = cfi_thread_cpu_ns() - job_ns;

		pthread_mutex_lock(&w->lock);
		w->credit_ns -= (double)(job_ns > d.b.build_ns ? job_ns : d.b.build_ns);
		if (!d.err && cached) {
			w->from_cache++;
			w->from_cache_ns += d.b.build_ns;
		} else if (!d.err) {
			w->built++;
			w->built_ns += d.b.build_ns;
		}
		if (d.err == -ECANCELED) {
			unwind_built_free(&d.b);
			free(d.path);
		} else {
			/* Room reserved at submit: cannot fail. */
			(void)vec_push(&w->done, d);
			if (w->wake_fd >= 0)
				(void)eventfd_write(w->wake_fd, 1);
		}
		w->busy = false;
		pthread_cond_broadcast(&w->cond);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

int table_worker_start(struct table_worker *w)
{
	return table_worker_start_within(w, &cfi_default_budget);
}

int table_worker_start_within(struct table_worker *w, const struct cfi_budget *budget)
{
	pthread_condattr_t attr;
	int err;

	memset(w, 0, sizeof(*w));
	w->budget = *budget;
	pthread_mutex_init(&w->lock, NULL);
	/* Waits measured on the monotonic clock: a wall-clock step neither stalls nor spins them.
	 */
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&w->cond, &attr);
	pthread_condattr_destroy(&attr);
	w->credit_ns = (double)TABLE_WORKER_BURST_NS;
	w->credit_at = clock_ns(CLOCK_MONOTONIC);
	/* Without it, tables are still taken at each pass of the loop. */
	w->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	/*
	 * Queued jobs hold an eighth of the open-file limit at most: the rest of
	 * the recording (ring buffers, perf events, BPF links, outputs) needs the
	 * others, and a job without one reopens its file when it starts.
	 */
	{
		struct rlimit rl;

		w->max_fds = TABLE_WORKER_MAX_FDS;
		if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur != RLIM_INFINITY &&
		    rl.rlim_cur / 8 < w->max_fds)
			w->max_fds = (size_t)(rl.rlim_cur / 8);
	}
	err = quiet_thread_start(&w->thread, worker_main, w);
	if (err) {
		if (w->wake_fd >= 0)
			close(w->wake_fd);
		pthread_cond_destroy(&w->cond);
		pthread_mutex_destroy(&w->lock);
		return err;
	}
	w->started = true;
	return 0;
}

/* Whether the queue has room for a job of `uid` (lock held). */
static bool room_for(const struct table_worker *w, uint32_t uid)
{
	size_t mine = 0;

	if (w->jobs.len >= TABLE_WORKER_MAX_JOBS)
		return false;
	for (size_t i = 0; i < w->jobs.len; i++)
		mine += w->jobs.data[i].uid == uid;
	return mine < TABLE_WORKER_MAX_JOBS_PER_UID;
}

bool table_worker_hurry(struct table_worker *w, const struct unwind_file_key *key)
{
	bool found = false;

	if (!w->started)
		return false;
	pthread_mutex_lock(&w->lock);
	for (size_t i = 0; i < w->jobs.len && !found; i++) {
		struct table_job *job = &w->jobs.data[i];

		if (job->key.dev == key->dev && job->key.ino == key->ino)
			found = job->hot = true;
	}
	pthread_mutex_unlock(&w->lock);
	return found;
}

int table_worker_submit(struct table_worker *w, const struct unwind_store_file *f, int fd,
			const char *path, const char *link)
{
	struct table_job job = {
		.key = f->key, .id = f->id, .fd = fd, .path = strdup(path), .link = strdup(link)
	};
	struct stat st;
	int err = 0;

	job.uid = fstat(fd, &st) ? UINT32_MAX : uid_owner_of(w->owners, (uint32_t)st.st_uid);
	if (!job.path || !job.link) {
		free_job(&job);
		return -ENOMEM;
	}
	pthread_mutex_lock(&w->lock);
	if (!room_for(w, job.uid)) {
		err = -EBUSY;
	} else if (vec_reserve(&w->done, w->jobs.len + 2) || vec_push(&w->jobs, job)) {
		err = -ENOMEM;
	} else {
		/* Past the descriptors it may hold, the job reopens its link when it starts. */
		if (w->fds >= w->max_fds) {
			close(fd);
			vec_last(&w->jobs).fd = -1;
		} else {
			w->fds++;
		}
		pthread_cond_broadcast(&w->cond);
	}
	pthread_mutex_unlock(&w->lock);
	if (err)
		free_job(&job);
	return err;
}

void table_worker_take(struct table_worker *w, struct table_done **out, size_t *n)
{
	pthread_mutex_lock(&w->lock);
	*n = 0;
	if (w->wake_fd >= 0) {
		eventfd_t ignored;

		(void)eventfd_read(w->wake_fd, &ignored);
	}
	/* A copy: `done` keeps the room reserved for the queued jobs' results. */
	*out = w->done.len ? malloc(w->done.len * sizeof(**out)) : NULL;
	if (*out) {
		memcpy(*out, w->done.data, w->done.len * sizeof(**out));
		*n = w->done.len;
		w->done.len = 0;
	}
	/* No memory: they stay, taken next time. */
	pthread_mutex_unlock(&w->lock);
}

bool table_worker_wait_idle(struct table_worker *w, int timeout_ms)
{
	struct timespec until = deadline(CLOCK_MONOTONIC, (uint64_t)timeout_ms * 1000000ull);
	bool idle;

	pthread_mutex_lock(&w->lock);
	while ((w->busy || w->jobs.len) &&
	       pthread_cond_timedwait(&w->cond, &w->lock, &until) != ETIMEDOUT)
		;
	idle = !w->busy && !w->jobs.len;
	pthread_mutex_unlock(&w->lock);
	return idle;
}

bool table_worker_stop(struct table_worker *w)
{
	struct timespec until;

	if (!w->started)
		return true;
	pthread_mutex_lock(&w->lock);
	__atomic_store_n(&w->stop, true, __ATOMIC_RELAXED);
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
	/* The build under way polls the stop flag; a stuck one (a read that hangs) is left. */
	until = deadline(CLOCK_REALTIME, TABLE_WORKER_STOP_MS * 1000000ull);
	if (pthread_timedjoin_np(w->thread, NULL, &until)) {
		log_warn("the unwind table thread did not stop within %d s; left behind",
			 TABLE_WORKER_STOP_MS / 1000);
		pthread_detach(w->thread);
		w->started = false;
		return false; /* its state stays allocated: the thread may still touch it */
	}
	for (size_t i = 0; i < w->jobs.len; i++)
		free_job(&w->jobs.data[i]);
	vec_free(&w->jobs);
	for (size_t i = 0; i < w->done.len; i++) {
		unwind_built_free(&w->done.data[i].b);
		free(w->done.data[i].path);
	}
	vec_free(&w->done);
	if (w->wake_fd >= 0)
		close(w->wake_fd);
	w->wake_fd = -1;
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->lock);
	w->started = false;
	return true;
}
