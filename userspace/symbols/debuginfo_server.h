/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Separate debug files from debuginfod servers (DEBUGINFOD_URLS), through
 * elfutils' client library: for stripped binaries whose debug file is not
 * installed, the names of their internal functions and their source lines.
 *
 * Fetching happens while the profile is built, after recording: a slow or
 * silent server must not hold the profile back for long, so all fetches of
 * a run share one time budget; once it is spent, the rest go without. The
 * files land in a cache (DEBUGINFOD_CACHE_PATH, else bpfprof's own under
 * $XDG_CACHE_HOME or ~/.cache), so the next run finds them at once, and so
 * do misses: a build-id a server does not have is not asked again for a day
 * (libdebuginfod's negative cache).
 */
#ifndef BPFPROF_DEBUGINFO_SERVER_H
#define BPFPROF_DEBUGINFO_SERVER_H

#include <stddef.h>
#include <stdint.h>

struct debuginfo_server;

struct debuginfo_server_stats {
	uint64_t fetched;  /* debug files found (from a server or the cache) */
	uint64_t missing;  /* build-ids no server has */
	uint64_t failed;   /* errors: network, server, cache */
	uint64_t skipped;  /* not asked: the time budget was spent */
	uint64_t spent_ns; /* wall time in fetches */
};

/*
 * A client when DEBUGINFOD_URLS names a server and bpfprof was built with
 * libdebuginfod, else NULL (then every fetch is skipped). budget_ms: the
 * wall time all fetches of this client may take together.
 */
struct debuginfo_server *debuginfo_server_open(uint64_t budget_ms);
void debuginfo_server_close(struct debuginfo_server *d);

/* A new profile is being built: the budget starts again at its first fetch. */
void debuginfo_server_new_profile(struct debuginfo_server *d);

/*
 * The debug file of the binary with this GNU build-id (lowercase hex): an
 * fd the caller closes, its path copied to `path`; or -ENOENT (no server
 * has it), -ETIME (the budget is spent), another negative errno.
 */
int debuginfo_server_fetch(struct debuginfo_server *d, const char *build_id, char *path,
			   size_t path_size);

void debuginfo_server_get_stats(const struct debuginfo_server *d,
				struct debuginfo_server_stats *out);

#endif
