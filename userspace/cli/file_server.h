/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Serves one file over HTTP (libmicrohttpd, its own thread) at one path, for
 * `bpfprof view`: the Firefox Profiler fetches it from another origin, so
 * every answer carries Access-Control-Allow-Origin, a gzip file goes out
 * with Content-Encoding: gzip. POSTs to <api>/source/v1 and <api>/asm/v1
 * are the symbolication API (symbol_api.h); every other path is a 404.
 */
#ifndef BPFPROF_CLI_FILE_SERVER_H
#define BPFPROF_CLI_FILE_SERVER_H

#include <stdbool.h>
#include <stdint.h>

#include "symbol_api.h"

struct MHD_Daemon;

struct file_server {
	struct MHD_Daemon *daemon;
	char *file; /* the file served, opened anew for each request */
	char *path; /* the one URL path answered, e.g. "/3f9c.../profile.json" */
	bool gzip;  /* the file starts with gzip's magic bytes */
	uint16_t port;
	char *api_path; /* where the symbolication API is, "/<secret>"; NULL: nowhere */
	struct symbol_api api;
};

/*
 * Listen on `address` (IPv4 or IPv6 literal) and `port` (0: a free one,
 * s->port says which) and answer `path` with `file`, and POSTs to
 * `api_path`/source/v1 and /asm/v1 (api_path NULL: none) about what `file`
 * names. 0, or -errno after a one-line error.
 */
int file_server_start(struct file_server *s, const char *file, const char *path,
		      const char *api_path, const char *address, uint16_t port);
void file_server_stop(struct file_server *s);

#endif
