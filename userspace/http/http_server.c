// SPDX-License-Identifier: BSD-2-Clause
/*
 * libmicrohttpd with the checks every bpfprof server makes before a
 * handler sees a request (http_server.h). One thread answers every
 * connection in turn: handlers never block (a scrape that waits for its
 * window suspends its connection instead).
 */
#include "http_server.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/log.h"
#include "../util/safe_open.h"
#include "../util/sudo_user.h"

/* Connections at once, all clients together: what peer_limit can count. */
#define CONNECTION_LIMIT PEER_SLOTS

/* *req_cls of a request refused here: the handler never saw it. */
static char refused;

/* In a connection's socket context, beside its peer_limit slot: not root's or the owner's. */
#define NOT_OWNER (1u << 31)

int http_queue_text(struct MHD_Connection *c, unsigned status, const char *type, const char *body,
		    size_t len)
{
	struct MHD_Response *r =
		MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	if (type)
		MHD_add_response_header(r, "Content-Type", type);
	MHD_add_response_header(r, "Cache-Control", "no-store");
	if (status == MHD_HTTP_UNAUTHORIZED)
		MHD_add_response_header(r, "WWW-Authenticate", "Bearer");
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
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
static bool host_allowed(const struct http_server *s, const char *host)
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

/* Every byte compared whatever the first difference: the time tells nothing of the token. */
static bool token_equal(const char *want, const char *got)
{
	size_t wl = strlen(want), gl = strlen(got);
	unsigned char diff = wl != gl;

	for (size_t i = 0; i < wl; i++)
		diff |= (unsigned char)want[i] ^ (unsigned char)(i < gl ? got[i] : 0);
	return !diff;
}

/* `Authorization: Bearer TOKEN`, as Prometheus-style scrapers send it. */
static bool authorized(const struct http_server *s, struct MHD_Connection *c)
{
	const char *h;

	if (!s->token)
		return true;
	h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
	if (!h || strncasecmp(h, "Bearer ", 7))
		return false;
	for (h += 7; *h == ' '; h++)
		;
	return token_equal(s->token, h);
}

/* Why a request is refused before any handler sees it. */
enum refusal { ACCEPTED, OVER_LIMIT, WRONG_HOST, OTHER_USER, NO_TOKEN };

static enum refusal check_request(const struct http_server *s, struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *info =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	uintptr_t ctx = info ? (uintptr_t)info->socket_context : 0;
	bool not_owner = (ctx & NOT_OWNER) != 0;

	/*
	 * A connection peer_limit gave no slot was shut down at once, but what
	 * its client sent before that can still be read: nothing of it counts.
	 */
	if (!(ctx & ~(uintptr_t)NOT_OWNER))
		return OVER_LIMIT;
	if (s->token)
		return authorized(s, c) ? ACCEPTED : NO_TOKEN;
	if (!host_allowed(s, MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST)))
		return WRONG_HOST;
	return s->owner_only && not_owner ? OTHER_USER : ACCEPTED;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **req_cls)
{
	static const char *const why[] = {
		[WRONG_HOST] = "this server answers only to its own host name\n",
		[OTHER_USER] = "without a token only root and the user running bpfprof may ask; "
			       "start it with --listen-token-file\n",
		[NO_TOKEN] = "a valid Authorization: Bearer token is needed\n",
	};
	struct http_server *s = cls;
	enum refusal r;

	(void)version;
	if (*req_cls == &refused) {
		/* Answered before any body was read: what follows is discarded. */
		*upload_size = 0;
		return MHD_YES;
	}
	if (!*req_cls && (r = check_request(s, c)) != ACCEPTED) {
		if (r == OVER_LIMIT)
			return MHD_NO; /* closed without an answer */
		*upload_size = 0;
		*req_cls = &refused;
		return (enum MHD_Result)http_queue_text(
			c, r == NO_TOKEN ? MHD_HTTP_UNAUTHORIZED : MHD_HTTP_FORBIDDEN,
			"text/plain; charset=utf-8", why[r], strlen(why[r]));
	}
	return (enum MHD_Result)s->handler(s->ctx, c, url, method, upload, upload_size, req_cls);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **req_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct http_server *s = cls;

	(void)c;
	(void)toe;
	if (*req_cls && *req_cls != &refused && s->completed)
		s->completed(s->ctx, *req_cls);
	*req_cls = NULL;
}

/*
 * A connection from a client with too many already is shut down at once:
 * libmicrohttpd then reads its end and closes it. The slot is kept in the
 * connection's context for when it closes.
 */
static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
			  enum MHD_ConnectionNotificationCode code)
{
	struct http_server *s = cls;
	const union MHD_ConnectionInfo *info;
	bool owner = false;
	unsigned slot;

	if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
		peer_limit_remove(&s->peers, (unsigned)(uintptr_t)*socket_context & ~NOT_OWNER);
		*socket_context = NULL;
		return;
	}
	info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	slot = info ? peer_limit_add(&s->peers, info->connect_fd, &owner) : 0;
	if (!slot && info)
		shutdown(info->connect_fd, SHUT_RDWR);
	if (slot && !owner)
		slot |= NOT_OWNER;
	*socket_context = (void *)(uintptr_t)slot;
}

static bool sockaddr_is_loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
	return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)sa)->sin6_addr);
}

int http_address_is_loopback(const char *address)
{
	struct in6_addr a6;
	struct in_addr a4;

	if (inet_pton(AF_INET6, address, &a6) == 1)
		return IN6_IS_ADDR_LOOPBACK(&a6);
	if (inet_pton(AF_INET, address, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127;
	return -EINVAL;
}

/*
 * Whether a secret owned by `uid` is ours to trust: root's, ours, or the
 * user's who ran `sudo bpfprof`. Another user who owns the file knows
 * what is in it (a 0600 mode says nothing against its owner), and can
 * change it when they like.
 */
static bool secret_owner_trusted(uid_t uid, uid_t *invoker)
{
	gid_t gid;

	if (!sudo_user_ids(invoker, &gid))
		*invoker = getuid();
	return uid == 0 || uid == geteuid() || uid == *invoker;
}

char *http_read_secret_file(const char *path, const char *option, unsigned flags)
{
	/* A FIFO or a device planted there is never opened. */
	int fd = open_regular(path, O_NOFOLLOW);
	struct stat st;
	char *buf = NULL;
	size_t len = 0;
	uid_t invoker;
	ssize_t n;

	if (fd < 0) {
		log_error("%s %s: cannot open it (%s); give a readable regular file, not a symlink",
			  option, path, fd == -EINVAL ? "not a regular file" : strerror(-fd));
		return NULL;
	}
	if (fstat(fd, &st) || st.st_size > HTTP_SECRET_FILE_MAX) {
		log_error("%s %s: not a regular file of at most %u bytes", option, path,
			  HTTP_SECRET_FILE_MAX);
		goto fail;
	}
	if ((flags & HTTP_FILE_SECRET) && !secret_owner_trusted(st.st_uid, &invoker)) {
		log_error("%s %s: owned by uid %u, who can read and change it; give a file of "
			  "root's or yours (uid %u)",
			  option, path, (unsigned)st.st_uid, (unsigned)invoker);
		goto fail;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		log_error("%s %s: out of memory", option, path);
		goto fail;
	}
	while (len < (size_t)st.st_size &&
	       (n = read(fd, buf + len, (size_t)st.st_size - len)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			log_error("%s %s: cannot read it (%s)", option, path, strerror(errno));
			goto fail;
		}
		len += (size_t)n;
	}
	buf[len] = '\0';
	if (flags & HTTP_FILE_TRIM)
		while (len && isspace((unsigned char)buf[len - 1]))
			buf[--len] = '\0';
	if (!len || strlen(buf) != len) {
		log_error("%s %s: the file is empty or holds a NUL byte; put the secret in it",
			  option, path);
		goto fail;
	}
	if ((flags & HTTP_FILE_SECRET) && (st.st_mode & (S_IRWXG | S_IRWXO)))
		log_warn("%s %s: other users may read or change it (mode %03o); chmod 600 it",
			 option, path, (unsigned)(st.st_mode & 0777));
	close(fd);
	return buf;
fail:
	free(buf);
	close(fd);
	return NULL;
}

int http_server_start(struct http_server *s, const struct http_server_config *cfg)
{
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6, .sin6_port = htons(cfg->port) };
	struct sockaddr_in a4 = { .sin_family = AF_INET, .sin_port = htons(cfg->port) };
	unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL;
	const struct sockaddr *sa = (const struct sockaddr *)&a4;
	const union MHD_DaemonInfo *info;
	bool tls = cfg->tls_cert && cfg->tls_key;
	sigset_t all, old_mask;
	int err;

	memset(s, 0, sizeof(*s));
	peer_limit_init(&s->peers, cfg->owner, NULL);
	if (inet_pton(AF_INET6, cfg->address, &a6.sin6_addr) == 1) {
		sa = (const struct sockaddr *)&a6;
		flags |= MHD_USE_IPv6;
	} else if (inet_pton(AF_INET, cfg->address, &a4.sin_addr) != 1) {
		log_error("%s %s: not an IPv4 or IPv6 address; give one such as 127.0.0.1",
			  cfg->option, cfg->address);
		peer_limit_free(&s->peers);
		return -EINVAL;
	}
	if (tls && MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
		log_error("this libmicrohttpd was built without TLS; install Debian's "
			  "libmicrohttpd12 (built with GnuTLS) or serve without --listen-tls");
		peer_limit_free(&s->peers);
		return -ENOTSUP;
	}
	if (tls)
		flags |= MHD_USE_TLS;
	if (cfg->suspend)
		flags |= MHD_ALLOW_SUSPEND_RESUME;
	s->loopback = sockaddr_is_loopback(sa);
	s->tls = tls;
	s->owner_only = cfg->owner_only;
	s->handler = cfg->handler;
	s->completed = cfg->completed;
	s->ctx = cfg->ctx;
	s->address = strdup(cfg->address);
	s->token = cfg->token ? strdup(cfg->token) : NULL;
	if (!s->address || (cfg->token && !s->token)) {
		http_server_stop(s);
		return -ENOMEM;
	}
	/* libmicrohttpd's thread inherits this mask: the poll thread gets every signal. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old_mask);
	errno = 0;
	if (tls)
		s->daemon = MHD_start_daemon(
			flags, cfg->port, NULL, NULL, on_request, s, MHD_OPTION_SOCK_ADDR, sa,
			MHD_OPTION_CONNECTION_TIMEOUT, HTTP_IDLE_TIMEOUT_S,
			MHD_OPTION_CONNECTION_LIMIT, (unsigned)CONNECTION_LIMIT,
			MHD_OPTION_NOTIFY_CONNECTION, on_connection, s, MHD_OPTION_NOTIFY_COMPLETED,
			on_completed, s, MHD_OPTION_HTTPS_MEM_CERT, cfg->tls_cert,
			MHD_OPTION_HTTPS_MEM_KEY, cfg->tls_key, MHD_OPTION_END);
	else
		s->daemon = MHD_start_daemon(
			flags, cfg->port, NULL, NULL, on_request, s, MHD_OPTION_SOCK_ADDR, sa,
			MHD_OPTION_CONNECTION_TIMEOUT, HTTP_IDLE_TIMEOUT_S,
			MHD_OPTION_CONNECTION_LIMIT, (unsigned)CONNECTION_LIMIT,
			MHD_OPTION_NOTIFY_CONNECTION, on_connection, s, MHD_OPTION_NOTIFY_COMPLETED,
			on_completed, s, MHD_OPTION_END);
	err = errno ? errno : EADDRINUSE;
	pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
	if (!s->daemon) {

		if (tls)
			log_error("cannot serve TLS on %s port %u; check that the certificate and "
				  "key are PEM and belong together, and that the port is free",
				  cfg->address, cfg->port);
		else
			log_error(
				"cannot listen on %s port %u (%s); choose another port or address "
				"for %s",
				cfg->address, cfg->port, strerror(err), cfg->option);
		http_server_stop(s);
		return -err;
	}
	info = MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_BIND_PORT);
	s->port = info ? info->port : cfg->port;
	return 0;
}

void http_server_stop(struct http_server *s)
{
	if (s->daemon)
		MHD_stop_daemon(s->daemon);
	s->daemon = NULL;
	free(s->address);
	if (s->token)
		explicit_bzero(s->token, strlen(s->token));
	free(s->token);
	s->address = s->token = NULL;
	peer_limit_free(&s->peers);
}
