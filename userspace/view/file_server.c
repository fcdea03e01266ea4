// SPDX-License-Identifier: BSD-2-Clause
/*
 * One file over HTTP with libmicrohttpd: GET and HEAD of one path, CORS
 * preflights, POSTs to the symbolication API, 404 for the rest. The file is
 * opened once, by view, and each answer is sent from a duplicate of that
 * descriptor, so a 100 MB profile costs no memory here and no rename can
 * put another file in its place. One thread answers every connection in
 * turn.
 *
 * Other users of the machine can connect too: the HTTP layer refuses a
 * request naming another host (DNS rebinding) and limits each client's
 * connections (http/http_server.h); here, only the front-end's origin may
 * read the answers from a browser (CORS).
 */
#include "file_server.h"

#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/log.h"

/*
 * The front-end's page is on another origin: only that origin may read
 * the answers in a browser. The path's secret is the guard; this keeps
 * another page that learnt it from reading anything.
 */
static void add_common_headers(const struct file_server *s, struct MHD_Connection *c,
			       struct MHD_Response *r)
{
	const char *origin = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin");

	if (origin && s->origin && !strcmp(origin, s->origin))
		MHD_add_response_header(r, "Access-Control-Allow-Origin", s->origin);
	MHD_add_response_header(r, "Vary", "Origin");
	MHD_add_response_header(r, "Cache-Control", "no-store");
}

static enum MHD_Result queue_empty(const struct file_server *s, struct MHD_Connection *c,
				   unsigned int status)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(0, "", MHD_RESPMEM_PERSISTENT);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	add_common_headers(s, c, r);
	if (status == MHD_HTTP_NO_CONTENT) {
		MHD_add_response_header(r, "Access-Control-Allow-Methods",
					"GET, HEAD, POST, OPTIONS");
		MHD_add_response_header(r, "Access-Control-Allow-Headers", "*");
		MHD_add_response_header(r, "Access-Control-Max-Age", "600");
	}
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result queue_file(struct file_server *s, struct MHD_Connection *c)
{
	struct MHD_Response *r;
	enum MHD_Result ret;
	struct stat st;
	/* libmicrohttpd reads at offsets (pread, sendfile): a duplicate is enough. */
	int fd = fcntl(s->fd, F_DUPFD_CLOEXEC, 0);

	if (fd < 0 || fstat(fd, &st)) {
		if (fd >= 0)
			close(fd);
		return queue_empty(s, c, MHD_HTTP_INTERNAL_SERVER_ERROR);
	}
	/* Takes the descriptor: closed with the response. */
	r = MHD_create_response_from_fd_at_offset64((uint64_t)st.st_size, fd, 0);
	if (!r) {
		close(fd);
		return MHD_NO;
	}
	add_common_headers(s, c, r);
	MHD_add_response_header(r, "Content-Type", "application/json");
	if (s->gzip)
		MHD_add_response_header(r, "Content-Encoding", "gzip");
	ret = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

/* An API request's body, gathered over the calls libmicrohttpd makes. */
#define API_REQUEST_MAX 65536

typedef int (*api_fn)(struct symbol_api *api, const char *body, size_t len, int fd);

struct upload {
	api_fn answer;
	char *body;
	size_t len;
	bool too_big;
};

/* The endpoint `url` names under the API's path, or NULL. */
static api_fn api_endpoint(const struct file_server *s, const char *url)
{
	size_t n = s->api_path ? strlen(s->api_path) : 0;

	if (!n || strncmp(url, s->api_path, n))
		return NULL;
	if (!strcmp(url + n, "/source/v1"))
		return symbol_api_source;
	if (!strcmp(url + n, "/asm/v1"))
		return symbol_api_asm;
	return NULL;
}

/* The answer is written to an anonymous file and sent from it, like the profile. */
static enum MHD_Result queue_api(struct file_server *s, struct MHD_Connection *c,
				 const struct upload *u)
{
	struct MHD_Response *r;
	enum MHD_Result ret;
	off_t size;
	int fd = memfd_create("bpfprof-api", MFD_CLOEXEC);

	if (fd < 0)
		return queue_empty(s, c, MHD_HTTP_INTERNAL_SERVER_ERROR);
	if (u->too_big) {
		close(fd);
		return queue_empty(s, c, 413 /* content too large */);
	}
	if (u->answer(&s->api, u->body ? u->body : "", u->len, fd)) {
		close(fd);
		return queue_empty(s, c, MHD_HTTP_INTERNAL_SERVER_ERROR);
	}
	size = lseek(fd, 0, SEEK_CUR);
	r = size >= 0 ? MHD_create_response_from_fd_at_offset64((uint64_t)size, fd, 0) : NULL;
	if (!r) {
		close(fd);
		return MHD_NO;
	}
	add_common_headers(s, c, r);
	MHD_add_response_header(r, "Content-Type", "application/json");
	ret = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

/* libmicrohttpd calls this once for the headers, once per piece of body, then once more. */
static enum MHD_Result on_api_request(struct file_server *s, struct MHD_Connection *c,
				      api_fn answer, const char *upload, size_t *upload_size,
				      void **req_cls)
{
	struct upload *u = *req_cls;
	char *nb;

	if (!u) {
		u = calloc(1, sizeof(*u));
		if (!u)
			return MHD_NO;
		u->answer = answer;
		*req_cls = u;
		return MHD_YES;
	}
	if (*upload_size) {
		if (u->len + *upload_size > API_REQUEST_MAX) {
			u->too_big = true;
		} else if ((nb = realloc(u->body, u->len + *upload_size + 1))) {
			u->body = nb;
			memcpy(u->body + u->len, upload, *upload_size);
			u->len += *upload_size;
			u->body[u->len] = '\0';
		} else {
			return MHD_NO;
		}
		*upload_size = 0;
		return MHD_YES;
	}
	return queue_api(s, c, u);
}

static void on_completed(void *cls, void *req_cls)
{
	struct upload *u = req_cls;

	if (u != cls) {
		free(u->body);
		free(u);
	}
}

static int on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
		      const char *upload, size_t *upload_size, void **req_cls)
{
	struct file_server *s = cls;
	api_fn api = api_endpoint(s, url);

	if (api && !strcmp(method, MHD_HTTP_METHOD_POST))
		return on_api_request(s, c, api, upload, upload_size, req_cls);
	/* Nothing else is uploaded: answer on the first call, whatever the body. */
	if (*upload_size)
		*upload_size = 0;
	*req_cls = s;
	if (api && !strcmp(method, MHD_HTTP_METHOD_OPTIONS))
		return queue_empty(s, c, MHD_HTTP_NO_CONTENT);
	if (strcmp(url, s->path))
		return queue_empty(s, c, MHD_HTTP_NOT_FOUND);
	if (!strcmp(method, MHD_HTTP_METHOD_OPTIONS))
		return queue_empty(s, c, MHD_HTTP_NO_CONTENT);
	if (!strcmp(method, MHD_HTTP_METHOD_GET) || !strcmp(method, MHD_HTTP_METHOD_HEAD))
		return queue_file(s, c);
	return queue_empty(s, c, MHD_HTTP_METHOD_NOT_ALLOWED);
}

int file_server_start(struct file_server *s, const char *file, int fd, const char *path,
		      const char *api_path, const char *address, uint16_t port, const char *origin,
		      uid_t viewer)
{
	struct http_server_config cfg = { .address = address,
					  .port = port,
					  .option = "--address",
					  .owner = viewer,
					  .handler = on_request,
					  .completed = on_completed,
					  .ctx = s };
	unsigned char magic[2];
	int err;

	memset(s, 0, sizeof(*s));
	s->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	s->path = strdup(path);
	s->origin = origin ? strdup(origin) : NULL;
	s->api_path = api_path ? strdup(api_path) : NULL;
	if (s->fd < 0 || !s->path || (origin && !s->origin) || (api_path && !s->api_path) ||
	    symbol_api_init(&s->api, file, s->fd, viewer)) {
		file_server_stop(s);
		return -ENOMEM;
	}
	s->gzip =
		pread(s->fd, magic, sizeof(magic), 0) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
	err = http_server_start(&s->http, &cfg);
	if (err)
		file_server_stop(s);
	return err;
}

void file_server_stop(struct file_server *s)
{
	if (s->http.daemon)
		http_server_stop(&s->http);
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	free(s->path);
	free(s->api_path);
	free(s->origin);
	s->path = s->api_path = s->origin = NULL;
	symbol_api_free(&s->api);
}
