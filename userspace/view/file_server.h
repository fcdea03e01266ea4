/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Serves one file over HTTP (libmicrohttpd, its own thread) at one path, for
 * `bpfprof view`: the Firefox Profiler fetches it from another origin, so
 * answers to that origin (only) carry Access-Control-Allow-Origin, a gzip
 * file goes out with Content-Encoding: gzip. POSTs to <api>/source/v1 and
 * <api>/asm/v1 are the symbolication API (symbol_api.h); every other path
 * is a 404; http_server.h checks the Host and limits connections.
 */
#ifndef BPFPROF_VIEW_FILE_SERVER_H
#define BPFPROF_VIEW_FILE_SERVER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../http/http_server.h"
#include "symbol_api.h"

struct file_server {
	struct http_server http;
	int fd;		/* the file served, each answer from a duplicate */
	char *path;	/* the one URL path answered, e.g. "/3f9c.../profile.json" */
	bool gzip;	/* the file starts with gzip's magic bytes */
	char *origin;	/* the front-end's origin, the only one CORS lets read answers */
	char *api_path; /* where the symbolication API is, "/<secret>"; NULL: nowhere */
	struct symbol_api api;
};

/*
 * Listen on `address` (IPv4 or IPv6 literal) and `port` (0: a free one,
 * s->http.port says which) and answer `path` with the file `file` open as `fd`
 * (duplicated: the caller keeps its own), and POSTs to `api_path`/source/v1
 * and /asm/v1 (api_path NULL: none) about what it names, shown to `viewer`
 * as symbol_api.h says. `origin` ("https://profiler.firefox.com") is the
 * front-end's. 0, or -errno after a one-line error.
 */
int file_server_start(struct file_server *s, const char *file, int fd, const char *path,
		      const char *api_path, const char *address, uint16_t port, const char *origin,
		      uid_t viewer);
void file_server_stop(struct file_server *s);

#endif
