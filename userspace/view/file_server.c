// SPDX-License-Identifier: BSD-2-Clause
/*
 * One file over HTTP with libmicrohttpd: GET and HEAD of one path, CORS
 * preflights, POSTs to the symbolication API, 404 for the rest. The file is
 * opened once, by view, and each answer is sent from a duplicate of that
 * descriptor, so a 100 MB profile costs no memory here and no rename can
 * put another file in its place. One thread answers every connection in
 * turn.
 *
 * Other users of the machine can connect too: a request naming another
 * host (DNS rebinding) is refused, only the front-end's origin may read
 * the answers from a browser (CORS), and no user but the viewer and root
 * holds more than PEER_MAX_CONNECTIONS (peer_limit.h), idle ones closed
 * after CONNECTION_IDLE_S.
 */
#include "file_server.h"

#include <arpa/inet.h>
#include <ctype.h>
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

/*
 * Connections at once, all clients together: well below the descriptors a
 * process gets (1024 by default), and what peer_limit can count.
 */
#define CONNECTION_LIMIT  PEER_SLOTS
/* An idle connection is closed after this long (a browser opens another). */
#define CONNECTION_IDLE_S 10u

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

/* "HOST[:PORT]" or "[V6][:PORT]": the host part into `out`; false when malformed. */
static bool split_host(const char *h, char *out, size_t len)
{
	const char *end, *port;

	if (h[0] == '[') {
		end = strchr(h, ']');
		if (!end)
			return false;
		h++;
		port = end + 1;
	} else {
		end = h + strcspn(h, ":");
		port = end;
	}
	if (end == h || (size_t)(end - h) >= len || (*port && (*port != ':' || !port[1])))
		return false;
	for (port += *port ? 1 : 0; *port; port++)
		if (!isdigit((unsigned char)*port))
			return false;
	memcpy(out, h, (size_t)(end - h));
	out[end - h] = '\0';
	return true;
}

/*
 * The Host a request names must be this server: "localhost" or the address
 * served, or, when served on a wildcard or another machine's network, any
 * address literal or this machine's name. A page of another name whose DNS
 * answer turned into 127.0.0.1 (DNS rebinding) is refused. Any port: a
 * forwarded one (ssh -L) may differ, and a port is no name to rebind.
 */
static bool host_allowed(const struct file_server *s, const char *host)
{
	char name[256], self[256] = { 0 };
	unsigned char bin[sizeof(struct in6_addr)];

	if (!host || !split_host(host, name, sizeof(name)))
		return false;
	if (!strcasecmp(name, "localhost") || !strcmp(name, s->address))
		return true;
	if (s->loopback)
		return false;
	if (inet_pton(AF_INET, name, bin) == 1 || inet_pton(AF_INET6, name, bin) == 1)
		return true;
	/* gethostname may leave a name that fills the buffer unterminated. */
	return !gethostname(self, sizeof(self) - 1) && !strcasecmp(name, self);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **req_cls)
{
	struct file_server *s = cls;
	api_fn api = api_endpoint(s, url);

	(void)version;
	if (!*req_cls && !host_allowed(s, MHD_lookup_connection_value(c, MHD_HEADER_KIND,
								      MHD_HTTP_HEADER_HOST))) {
		/* Answered before any body is read: what follows is discarded. */
		*upload_size = 0;
		*req_cls = s;
		return queue_empty(s, c, MHD_HTTP_FORBIDDEN);
	}
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

/*
 * A connection from a client with too many already is shut down at once:
 * libmicrohttpd then reads its end and closes it. The slot is kept in the
 * connection's context for when it closes.
 */
static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
			  enum MHD_ConnectionNotificationCode code)
{
	struct file_server *s = cls;
	const union MHD_ConnectionInfo *info;
	unsigned slot;

	if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
		peer_limit_remove(&s->peers, (unsigned)(uintptr_t)*socket_context);
		*socket_context = NULL;
		return;
	}
	info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	slot = info ? peer_limit_add(&s->peers, info->connect_fd) : 0;
	*socket_context = (void *)(uintptr_t)slot;
	if (!slot && info)
		shutdown(info->connect_fd, SHUT_RDWR);
}

/* Served on 127.0.0.0/8 or ::1: only this machine's users can connect. */
static bool is_loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
	return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)sa)->sin6_addr);
}

int file_server_start(struct file_server *s, const char *file, int fd, const char *path,
		      const char *api_path, const char *address, uint16_t port, const char *origin,
		      uid_t viewer)
{
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6, .sin6_port = htons(port) };
	struct sockaddr_in a4 = { .sin_family = AF_INET, .sin_port = htons(port) };
	unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL;
	const struct sockaddr *sa = (const struct sockaddr *)&a4;
	const union MHD_DaemonInfo *info;
	unsigned char magic[2];

	memset(s, 0, sizeof(*s));
	s->fd = -1;
	peer_limit_init(&s->peers, viewer, NULL);
	if (inet_pton(AF_INET6, address, &a6.sin6_addr) == 1) {
		sa = (const struct sockaddr *)&a6;
		flags |= MHD_USE_IPv6;
	} else if (inet_pton(AF_INET, address, &a4.sin_addr) != 1) {
		log_error("--address %s: not an IPv4 or IPv6 address; give one such as 127.0.0.1",
			  address);
		return -EINVAL;
	}
	s->loopback = is_loopback(sa);
	s->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	s->path = strdup(path);
	s->address = strdup(address);
	s->origin = origin ? strdup(origin) : NULL;
	s->api_path = api_path ? strdup(api_path) : NULL;
	if (s->fd < 0 || !s->path || !s->address || (origin && !s->origin) ||
	    (api_path && !s->api_path) || symbol_api_init(&s->api, file, s->fd, viewer)) {
		file_server_stop(s);
		return -ENOMEM;
	}
	s->gzip =
		pread(s->fd, magic, sizeof(magic), 0) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
	s->daemon = MHD_start_daemon(flags, port, NULL, NULL, on_request, s, MHD_OPTION_SOCK_ADDR,
				     sa, MHD_OPTION_CONNECTION_TIMEOUT, CONNECTION_IDLE_S,
				     MHD_OPTION_CONNECTION_LIMIT, (unsigned)CONNECTION_LIMIT,
				     MHD_OPTION_NOTIFY_CONNECTION, on_connection, s,
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
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	free(s->path);
	free(s->api_path);
	free(s->address);
	free(s->origin);
	s->path = s->api_path = s->address = s->origin = NULL;
	symbol_api_free(&s->api);
	peer_limit_free(&s->peers);
}
