// SPDX-License-Identifier: BSD-2-Clause
/*
 * One file over HTTP with libmicrohttpd: GET and HEAD of one path, CORS
 * preflights, POSTs to the symbolication API, 404 for the rest. The file is
 * opened for each request and sent from its descriptor, so a 100 MB profile
 * costs no memory here. One thread answers every connection in turn.
 */
#include "file_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/log.h"

static void add_common_headers(struct MHD_Response *r)
{
	/* The profiler's page is on another origin; the path's secret is the guard. */
	MHD_add_response_header(r, "Access-Control-Allow-Origin", "*");
	MHD_add_response_header(r, "Cache-Control", "no-store");
}

static enum MHD_Result queue_empty(struct MHD_Connection *c, unsigned int status)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(0, "", MHD_RESPMEM_PERSISTENT);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	add_common_headers(r);
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
	int fd = open(s->file, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		if (fd >= 0)
			close(fd);
		return queue_empty(c, MHD_HTTP_NOT_FOUND);
	}
	/* Takes the descriptor: closed with the response. */
	r = MHD_create_response_from_fd64((uint64_t)st.st_size, fd);
	if (!r) {
		close(fd);
		return MHD_NO;
	}
	add_common_headers(r);
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
		return queue_empty(c, MHD_HTTP_INTERNAL_SERVER_ERROR);
	if (u->too_big) {
		close(fd);
		return queue_empty(c, 413 /* content too large */);
	}
	if (u->answer(&s->api, u->body ? u->body : "", u->len, fd)) {
		close(fd);
		return queue_empty(c, MHD_HTTP_INTERNAL_SERVER_ERROR);
	}
	size = lseek(fd, 0, SEEK_CUR);
	r = size >= 0 ? MHD_create_response_from_fd_at_offset64((uint64_t)size, fd, 0) : NULL;
	if (!r) {
		close(fd);
		return MHD_NO;
	}
	add_common_headers(r);
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

static void on_completed(void *cls, struct MHD_Connection *c, void **req_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct upload *u = *req_cls;

	(void)cls;
	(void)c;
	(void)toe;
	if (u && (void *)u != cls) {
		free(u->body);
		free(u);
	}
	*req_cls = NULL;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **req_cls)
{
	struct file_server *s = cls;
	api_fn api = api_endpoint(s, url);

	(void)version;
	if (api && !strcmp(method, MHD_HTTP_METHOD_POST))
		return on_api_request(s, c, api, upload, upload_size, req_cls);
	/* Nothing else is uploaded: answer on the first call, whatever the body. */
	if (*upload_size)
		*upload_size = 0;
	*req_cls = s;
	if (api && !strcmp(method, MHD_HTTP_METHOD_OPTIONS))
		return queue_empty(c, MHD_HTTP_NO_CONTENT);
	if (strcmp(url, s->path))
		return queue_empty(c, MHD_HTTP_NOT_FOUND);
	if (!strcmp(method, MHD_HTTP_METHOD_OPTIONS))
		return queue_empty(c, MHD_HTTP_NO_CONTENT);
	if (!strcmp(method, MHD_HTTP_METHOD_GET) || !strcmp(method, MHD_HTTP_METHOD_HEAD))
		return queue_file(s, c);
	return queue_empty(c, MHD_HTTP_METHOD_NOT_ALLOWED);
}

static bool starts_with_gzip_magic(const char *file)
{
	unsigned char magic[2];
	int fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	bool gzip = false;

	if (fd >= 0) {
		gzip = read(fd, magic, sizeof(magic)) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
		close(fd);
	}
	return gzip;
}

int file_server_start(struct file_server *s, const char *file, const char *path,
		      const char *api_path, const char *address, uint16_t port)
{
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6, .sin6_port = htons(port) };
	struct sockaddr_in a4 = { .sin_family = AF_INET, .sin_port = htons(port) };
	unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL;
	const struct sockaddr *sa = (const struct sockaddr *)&a4;
	const union MHD_DaemonInfo *info;

	memset(s, 0, sizeof(*s));
	if (inet_pton(AF_INET6, address, &a6.sin6_addr) == 1) {
		sa = (const struct sockaddr *)&a6;
		flags |= MHD_USE_IPv6;
	} else if (inet_pton(AF_INET, address, &a4.sin_addr) != 1) {
		log_error("--address %s: not an IPv4 or IPv6 address; give one such as 127.0.0.1",
			  address);
		return -EINVAL;
	}
	s->file = strdup(file);
	s->path = strdup(path);
	s->api_path = api_path ? strdup(api_path) : NULL;
	if (!s->file || !s->path || (api_path && !s->api_path) || symbol_api_init(&s->api, file)) {
		file_server_stop(s);
		return -ENOMEM;
	}
	s->gzip = starts_with_gzip_magic(file);
	s->daemon = MHD_start_daemon(flags, port, NULL, NULL, on_request, s, MHD_OPTION_SOCK_ADDR,
				     sa, MHD_OPTION_CONNECTION_TIMEOUT, 60u,
				     MHD_OPTION_NOTIFY_COMPLETED, on_completed, s, MHD_OPTION_END);
	if (!s->daemon) {
		int err = errno ? errno : EADDRINUSE;

		log_error("cannot listen on %s port %u (%s); choose another --port or --address",
			  address, port, strerror(err));
		file_server_stop(s);
		return -err;
	}
	info = MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_BIND_PORT);
	s->port = info ? info->port : port;
	return 0;
}

void file_server_stop(struct file_server *s)
{
	if (s->daemon)
		MHD_stop_daemon(s->daemon);
	s->daemon = NULL;
	free(s->file);
	free(s->path);
	free(s->api_path);
	s->file = s->path = s->api_path = NULL;
	symbol_api_free(&s->api);
}
