// SPDX-License-Identifier: BSD-2-Clause
#include "debuginfo_server.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../util/clock.h"
#include "../util/hashmap.h"
#include "../util/log.h"
#include "debug_file.h"

#ifdef HAVE_DEBUGINFOD
#include <dlfcn.h>
#include <elfutils/debuginfod.h>

/*
 * libdebuginfod is opened only when DEBUGINFOD_URLS asks for it, as libdw
 * itself does: linked, it would load libcurl, OpenSSL and some twenty more
 * libraries into every bpfprof, whose own mappings -a profiles and unwinds.
 */
static struct {
	debuginfod_client *(*begin)(void);
	int (*find_debuginfo)(debuginfod_client *, const unsigned char *, int, char **);
	void (*set_progressfn)(debuginfod_client *, debuginfod_progressfn_t);
	void (*set_user_data)(debuginfod_client *, void *);
	void *(*get_user_data)(debuginfod_client *);
	void (*end)(debuginfod_client *);
} lib;

static bool load_library(void)
{
	void *h = lib.begin ? NULL : dlopen("libdebuginfod.so.1", RTLD_NOW | RTLD_LOCAL);

	if (lib.begin)
		return true;
	if (!h) {
		log_warn("DEBUGINFOD_URLS is set but libdebuginfod.so.1 cannot be loaded (%s); "
			 "install libdebuginfod1 to fetch debug files",
			 dlerror());
		return false;
	}
	*(void **)&lib.find_debuginfo = dlsym(h, "debuginfod_find_debuginfo");
	*(void **)&lib.set_progressfn = dlsym(h, "debuginfod_set_progressfn");
	*(void **)&lib.set_user_data = dlsym(h, "debuginfod_set_user_data");
	*(void **)&lib.get_user_data = dlsym(h, "debuginfod_get_user_data");
	*(void **)&lib.end = dlsym(h, "debuginfod_end");
	*(void **)&lib.begin = dlsym(h, "debuginfod_begin");
	if (!lib.find_debuginfo || !lib.set_progressfn || !lib.set_user_data ||
	    !lib.get_user_data || !lib.end || !lib.begin) {
		log_warn("libdebuginfod.so.1 lacks the functions bpfprof calls; not fetching debug "
			 "files");
		lib.begin = NULL;
		dlclose(h);
		return false;
	}
	return true; /* kept loaded for the life of the process */
}

struct debuginfo_server {
	debuginfod_client *client;
	uint64_t budget_ns;
	uint64_t deadline_ns; /* set at the first fetch */
	bool budget_reported;
	struct hmap refused; /* build-ids whose file was not theirs: not asked again */
	struct debuginfo_server_stats stats;
};

/* Called by libdebuginfod while it transfers: non-zero cancels. */
static int past_deadline(debuginfod_client *client, long done, long total)
{
	struct debuginfo_server *d = lib.get_user_data(client);

	(void)done;
	(void)total;
	return clock_ns(CLOCK_MONOTONIC) >= d->deadline_ns;
}

/* mkdir -p for the cache path, owner-only: what lands there is root's. */
static int make_dirs(char *path)
{
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0700) && errno != EEXIST) {
			*p = '/';
			return -errno;
		}
		*p = '/';
	}
	return mkdir(path, 0700) && errno != EEXIST ? -errno : 0;
}

/* DEBUGINFOD_CACHE_PATH unless the user chose one: bpfprof's own cache directory. */
static void choose_cache(void)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	char path[4096];
	int n;

	if (getenv("DEBUGINFOD_CACHE_PATH"))
		return;
	if (xdg && xdg[0] == '/')
		n = snprintf(path, sizeof(path), "%s/bpfprof/debuginfod", xdg);
	else if (home && home[0] == '/')
		n = snprintf(path, sizeof(path), "%s/.cache/bpfprof/debuginfod", home);
	else
		return; /* libdebuginfod's default */
	if (n <= 0 || (size_t)n >= sizeof(path) || make_dirs(path))
		return;
	setenv("DEBUGINFOD_CACHE_PATH", path, 1);
}

/*
 * Whatever lands in the cache is read as root and trusted for the build-id
 * it is filed under: a directory another user owns or may write is theirs
 * to fill. 0, or -EPERM (said).
 */
static int check_cache_dir(void)
{
	const char *path = getenv("DEBUGINFOD_CACHE_PATH");
	struct stat st;
	const char *why = NULL;

	if (!path || lstat(path, &st))
		return 0; /* libdebuginfod makes it, owner-only */
	if (!S_ISDIR(st.st_mode))
		why = "is not a directory";
	else if (st.st_uid != 0 && st.st_uid != geteuid())
		why = "belongs to another user";
	else if (st.st_mode & (S_IWGRP | S_IWOTH))
		why = "is writable by other users";
	if (!why)
		return 0;
	log_warn("debuginfod: the cache directory %s %s, who could put any file there; not "
		 "fetching debug files (set DEBUGINFOD_CACHE_PATH to a directory only you may "
		 "write)",
		 path, why);
	return -EPERM;
}

struct debuginfo_server *debuginfo_server_open(uint64_t budget_ms)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	struct debuginfo_server *d;

	if (!urls || !urls[strspn(urls, " \t")] || !budget_ms || !load_library())
		return NULL;
	choose_cache();
	if (check_cache_dir())
		return NULL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->client = lib.begin();
	if (!d->client) {
		log_warn("debuginfod: cannot start a client; stripped binaries keep unnamed "
			 "functions");
		free(d);
		return NULL;
	}
	d->budget_ns = budget_ms * 1000000ULL;
	lib.set_user_data(d->client, d);
	lib.set_progressfn(d->client, past_deadline);
	log_debug("debuginfod: asking %s for missing debug files, %.1f s at most", urls,
		  (double)budget_ms / 1e3);
	return d;
}

void debuginfo_server_close(struct debuginfo_server *d)
{
	if (!d)
		return;
	if (d->stats.fetched || d->stats.missing || d->stats.failed || d->stats.skipped)
		log_debug("debuginfod: %" PRIu64 " debug files found, %" PRIu64 " missing, %" PRIu64
			  " failed, %" PRIu64 " not asked; %.0f ms",
			  d->stats.fetched, d->stats.missing, d->stats.failed, d->stats.skipped,
			  (double)d->stats.spent_ns / 1e6);
	lib.end(d->client);
	hmap_free(&d->refused);
	free(d);
}

static int hex_to_bytes(const char *hex, unsigned char *out, size_t max)
{
	size_t n = strlen(hex);

	if (!n || n % 2 || n / 2 > max)
		return -EINVAL;
	for (size_t i = 0; i < n / 2; i++) {
		unsigned int v;

		if (sscanf(hex + 2 * i, "%2x", &v) != 1)
			return -EINVAL;
		out[i] = (unsigned char)v;
	}
	return (int)(n / 2);
}

static void report_budget_spent(struct debuginfo_server *d)
{
	if (d->budget_reported)
		return;
	d->budget_reported = true;
	log_warn("debuginfod: the %.1f s allowed for fetching debug files is spent; stripped "
		 "binaries not fetched by then keep unnamed functions (raise --debuginfod-timeout, "
		 "or record again: fetched files are cached)",
		 (double)d->budget_ns / 1e9);
}

/* A regular file of sane size carrying that build-id. */
static bool is_debug_file_for(int fd, const char *build_id)
{
	return !debug_file_check(fd, NULL) && debug_file_has_build_id(fd, build_id);
}

void debuginfo_server_new_profile(struct debuginfo_server *d)
{
	if (d) {
		d->deadline_ns = 0;
		d->budget_reported = false;
	}
}

int debuginfo_server_fetch(struct debuginfo_server *d, const char *build_id, char *path,
			   size_t path_size)
{
	unsigned char id[64];
	struct hmap_key key;
	char *found = NULL;
	uint64_t t0, t1;
	int len, fd;

	if (!d)
		return -ENOENT;
	len = hex_to_bytes(build_id, id, sizeof(id));
	if (len < 0)
		return len;
	key = (struct hmap_key){ hash_bytes(id, (size_t)len), (uint64_t)len };
	if (hmap_get(&d->refused, key, NULL))
		return -ESTALE;
	t0 = clock_ns(CLOCK_MONOTONIC);
	if (!d->deadline_ns)
		d->deadline_ns = t0 + d->budget_ns;
	if (t0 >= d->deadline_ns) {
		report_budget_spent(d);
		d->stats.skipped++;
		return -ETIME;
	}
	fd = lib.find_debuginfo(d->client, id, len, &found);
	t1 = clock_ns(CLOCK_MONOTONIC);
	d->stats.spent_ns += t1 - t0;
	if (fd < 0 && t1 >= d->deadline_ns)
		report_budget_spent(d);
	if (fd >= 0 && !is_debug_file_for(fd, build_id)) {
		/* A server or cache that answers with another file: names from it would lie. */
		log_warn("debuginfod: the file served for build-id %s (%s) is not a debug file of "
			 "that build-id; not used (check the server in DEBUGINFOD_URLS and the "
			 "cache)",
			 build_id, found ? found : "no path");
		close(fd);
		free(found);
		d->stats.failed++;
		(void)hmap_put(&d->refused, key, 0);
		return -ESTALE;
	}
	if (fd >= 0) {
		d->stats.fetched++;
		snprintf(path, path_size, "%s", found ? found : "");
		free(found);
		return fd;
	}
	free(found);
	if (fd == -ENOENT)
		d->stats.missing++;
	else
		d->stats.failed++;
	log_debug("debuginfod: no debug file for build-id %s (%s)", build_id, strerror(-fd));
	return fd;
}

void debuginfo_server_get_stats(const struct debuginfo_server *d,
				struct debuginfo_server_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (d)
		*out = d->stats;
}

#else /* !HAVE_DEBUGINFOD */

struct debuginfo_server *debuginfo_server_open(uint64_t budget_ms)
{
	const char *urls = getenv("DEBUGINFOD_URLS");

	if (urls && urls[0] && budget_ms)
		log_warn("DEBUGINFOD_URLS is set, but this bpfprof was built without libdebuginfod "
			 "(libdebuginfod-dev); debug files are only looked up locally");
	return NULL;
}

void debuginfo_server_close(struct debuginfo_server *d)
{
	(void)d;
}

void debuginfo_server_new_profile(struct debuginfo_server *d)
{
	(void)d;
}

int debuginfo_server_fetch(struct debuginfo_server *d, const char *build_id, char *path,
			   size_t path_size)
{
	(void)d;
	(void)build_id;
	(void)path;
	(void)path_size;
	return -ENOENT;
}

void debuginfo_server_get_stats(const struct debuginfo_server *d,
				struct debuginfo_server_stats *out)
{
	(void)d;
	memset(out, 0, sizeof(*out));
}

#endif
