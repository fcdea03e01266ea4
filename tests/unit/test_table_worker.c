// SPDX-License-Identifier: BSD-2-Clause
/*
 * The unwind table thread (capture/table_worker.c), issue 27: what one
 * user can queue is bounded, in jobs and in descriptors held; owners are
 * served in turn; a job that holds no descriptor reopens its link and is
 * built only if it is still the file queued; stopping is prompt; files of
 * a user's subordinate uids count as that user's. No BPF.
 */
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "capture/table_worker.h"
#include "test.h"

static size_t open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	size_t n = 0;

	while (d && (de = readdir(d)))
		n += de->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

/* A copy of the fixture owned by `uid` (root only), its path in `path`. */
static bool owned_copy(char *path, uid_t uid)
{
	char buf[65536];
	int in = open(CFI_FIX, O_RDONLY | O_CLOEXEC), out = mkstemp(path);
	ssize_t n;
	bool ok = in >= 0 && out >= 0;

	while (ok && (n = read(in, buf, sizeof(buf))) > 0)
		ok = write(out, buf, (size_t)n) == n;
	ok = ok && !fchown(out, uid, 0);
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return ok;
}

static void submit(struct table_worker *w, const char *path, uint64_t ino, int *err)
{
	struct unwind_store_file f = { .key = { 1, ino } };
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	CHECK(fd >= 0 && !fstat(fd, &st));
	f.id = (struct unwind_file_id){
		.size = (uint64_t)st.st_size,
		.mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec,
		.ctime_ns = (int64_t)st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec,
	};
	f.key.ino = ino ? ino : (uint64_t)st.st_ino;
	*err = table_worker_submit(w, &f, fd, path, path);
}

/* Hold the worker: no credit for a long while (as a long build would leave it). */
static void hold(struct table_worker *w, bool held)
{
	pthread_mutex_lock(&w->lock);
	w->credit_ns = held ? -1e15 : (double)TABLE_WORKER_BURST_NS;
	w->credit_at = 0;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
}

/* Files of two owners need root to make: whether we are, said when not. */
static bool root_or_skip(void)
{
	if (geteuid())
		printf("SKIP: not root (files of two owners)\n");
	return geteuid() == 0;
}

/* One owner's bound and 50 more, of files a and b in turn: the 50 are refused. */
static void flood_one_owner(struct table_worker *w, const char *a, const char *b)
{
	size_t accepted = 0, busy = 0;
	int err;

	for (int i = 0; i < TABLE_WORKER_MAX_JOBS_PER_UID + 50; i++) {
		submit(w, i % 2 ? b : a, 0, &err);
		accepted += !err;
		busy += err == -EBUSY;
	}
	CHECK_EQ_INT(accepted, TABLE_WORKER_MAX_JOBS_PER_UID);
	CHECK_EQ_INT(busy, 50);
}

static void one_owner_is_bounded_and_others_go_first(void)
{
	char mine[] = "/tmp/bpfprof-test-worker-XXXXXX",
	     theirs[] = "/tmp/bpfprof-test-worker-XXXXXX";
	size_t fds0 = open_fds(), n = 0, built = 0, theirs_at = SIZE_MAX;
	struct table_worker w;
	struct table_done *done = NULL;
	struct stat st;
	int err;

	if (!root_or_skip())
		return;
	CHECK(owned_copy(mine, 4242) && owned_copy(theirs, 4343));
	CHECK_EQ_INT(table_worker_start(&w), 0);
	/* Let the first job start, then hold the rest: one is in the worker's hands. */
	hold(&w, true);
	flood_one_owner(&w, mine, mine);
	/* Descriptors held: bounded, whatever is queued (and its wake-up eventfd). */
	CHECK(open_fds() <= fds0 + TABLE_WORKER_MAX_FDS + 1);
	/* Another owner still gets in, and is served before the first's backlog. */
	submit(&w, theirs, 0, &err);
	CHECK_EQ_INT(err, 0);
	CHECK(stat(theirs, &st) == 0);
	hold(&w, false);
	CHECK(table_worker_wait_idle(&w, 60000));
	table_worker_take(&w, &done, &n);
	CHECK_EQ_INT(n, TABLE_WORKER_MAX_JOBS_PER_UID + 1);
	for (size_t i = 0; i < n; i++) {
		if (done[i].key.ino == (uint64_t)st.st_ino && theirs_at == SIZE_MAX)
			theirs_at = i;
		built += !done[i].err && done[i].b.status == UNWIND_FILE_LOADED;
		unwind_built_free(&done[i].b);
		free(done[i].path);
	}
	free(done);
	/* Served in turn: after at most one of the first owner's. */
	CHECK(theirs_at <= 1);
	/* Descriptors or reopened links alike, every job built its table. */
	CHECK_EQ_INT(built, n);
	table_worker_stop(&w);
	CHECK_EQ_INT(open_fds(), fds0);
	unlink(mine);
	unlink(theirs);
}

/* Files of two subordinate uids of one user (/etc/subuid) queue as that user's: one bound. */
static void subordinate_uids_queue_as_their_owner(void)
{
	char first[] = "/tmp/bpfprof-test-worker-XXXXXX",
	     second[] = "/tmp/bpfprof-test-worker-XXXXXX";
	struct uid_owners owners = { .n = 1, .ranges = { { 4242, 100000, 65536 } } };
	struct table_worker w;
	struct table_done *done = NULL;
	size_t n = 0;

	if (!root_or_skip())
		return;
	CHECK(owned_copy(first, 100000) && owned_copy(second, 165535));
	CHECK_EQ_INT(table_worker_start(&w), 0);
	w.owners = &owners;
	hold(&w, true);
	/* One owner's bound, however its files' uids differ. */
	flood_one_owner(&w, first, second);
	hold(&w, false);
	CHECK(table_worker_wait_idle(&w, 60000));
	table_worker_take(&w, &done, &n);
	for (size_t i = 0; i < n; i++) {
		unwind_built_free(&done[i].b);
		free(done[i].path);
	}
	free(done);
	table_worker_stop(&w);
	unlink(first);
	unlink(second);
}

/* A job that reopens its link builds only the file it was queued for. */
static void a_changed_file_is_not_built(void)
{
	char path[] = "/tmp/bpfprof-test-worker-XXXXXX";
	struct table_worker w;
	struct table_done *done = NULL;
	size_t n = 0, stale = 0;
	int err;

	CHECK(owned_copy(path, geteuid()));
	CHECK_EQ_INT(table_worker_start(&w), 0);
	hold(&w, true);
	for (int i = 0; i < TABLE_WORKER_MAX_FDS + 10; i++) {
		submit(&w, path, 0, &err);
		CHECK_EQ_INT(err, 0);
	}
	{
		struct timespec t[2] = { { 1000, 0 }, { 1000, 0 } };

		CHECK(utimensat(AT_FDCWD, path, t, 0) == 0);
	}
	hold(&w, false);
	CHECK(table_worker_wait_idle(&w, 60000));
	/* Finished builds wake the draining loop, until they are taken. */
	CHECK(poll(&(struct pollfd){ .fd = w.wake_fd, .events = POLLIN }, 1, 0) == 1);
	table_worker_take(&w, &done, &n);
	CHECK(poll(&(struct pollfd){ .fd = w.wake_fd, .events = POLLIN }, 1, 0) == 0);
	CHECK_EQ_INT(n, TABLE_WORKER_MAX_FDS + 10);
	for (size_t i = 0; i < n; i++) {
		stale += done[i].err == -ESTALE;
		unwind_built_free(&done[i].b);
		free(done[i].path);
	}
	free(done);
	CHECK(stale >= 10 - 1 && stale <= 10); /* the first may have started before the hold */
	table_worker_stop(&w);
	unlink(path);
}

/* Stopping with a full queue: prompt, every descriptor closed. */
/*
 * Samples met a file without its table (table_worker_hurry): its job goes
 * before those queued ahead of it, which no sample waits on; without the
 * call they are built in the order queued. One owner (no root needed).
 */
static void hurried_job_goes_first(bool hurry)
{
	struct table_worker w;
	struct table_done *done = NULL;
	size_t n = 0, hot_at = SIZE_MAX;
	int err;

	CHECK_EQ_INT(table_worker_start(&w), 0);
	hold(&w, true);
	for (uint64_t ino = 1; ino <= 20; ino++) {
		submit(&w, CFI_FIX, ino, &err);
		CHECK_EQ_INT(err, 0);
	}
	/* Not queued: nothing to hurry. */
	CHECK(!table_worker_hurry(&w, &(struct unwind_file_key){ 1, 99 }));
	if (hurry)
		CHECK(table_worker_hurry(&w, &(struct unwind_file_key){ 1, 17 }));
	hold(&w, false);
	CHECK(table_worker_wait_idle(&w, 60000));
	table_worker_take(&w, &done, &n);
	CHECK_EQ_INT(n, 20);
	for (size_t i = 0; i < n; i++) {
		if (done[i].key.ino == 17)
			hot_at = i;
		unwind_built_free(&done[i].b);
		free(done[i].path);
	}
	free(done);
	/* The first job may have started before the hold: the hurried one is next. */
	if (hurry)
		CHECK(hot_at <= 1);
	else
		CHECK(hot_at >= 15);
	table_worker_stop(&w);
}

static void a_sampled_file_is_built_first(void)
{
	hurried_job_goes_first(true);
}

static void unsampled_files_keep_their_order(void)
{
	hurried_job_goes_first(false);
}

static void stop_is_prompt(void)
{
	char path[] = "/tmp/bpfprof-test-worker-XXXXXX";
	size_t fds0 = open_fds();
	struct table_worker w;
	struct timespec a, b;
	int err;

	CHECK(owned_copy(path, geteuid()));
	CHECK_EQ_INT(table_worker_start(&w), 0);
	hold(&w, true);
	for (int i = 0; i < 100; i++)
		submit(&w, path, 0, &err);
	clock_gettime(CLOCK_MONOTONIC, &a);
	table_worker_stop(&w);
	clock_gettime(CLOCK_MONOTONIC, &b);
	CHECK(b.tv_sec - a.tv_sec < 2);
	CHECK_EQ_INT(open_fds(), fds0);
	unlink(path);
}

int main(void)
{
	elf_version(EV_CURRENT);
	RUN(one_owner_is_bounded_and_others_go_first);
	RUN(subordinate_uids_queue_as_their_owner);
	RUN(a_changed_file_is_not_built);
	RUN(a_sampled_file_is_built_first);
	RUN(unsampled_files_keep_their_order);
	RUN(stop_is_prompt);
	return test_summary();
}
