/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The one HTTP layer of bpfprof (libmicrohttpd, one internal thread), for
 * `bpfprof view` and `bpfprof continuous --listen`. What both need from a
 * server that other users of the machine, and other machines, can reach:
 *
 *  - a request naming another host (DNS rebinding) is refused (403);
 *  - with a token, every request must carry `Authorization: Bearer TOKEN`
 *    (401 otherwise), compared in constant time; the Host is then not
 *    checked (a page rebound to this address has no token to send), so
 *    that scrapers may name the machine by any of its DNS names;
 *  - `owner_only`: without a token, only root's and the owner's processes
 *    may ask anything (403 for other users' and other machines');
 *  - TLS when given a certificate and key (GnuTLS, through libmicrohttpd);
 *  - no client but the owner and root holds more than PEER_MAX_CONNECTIONS
 *    (peer_limit.h), PEER_SLOTS in all, idle ones closed after
 *    HTTP_IDLE_TIMEOUT_S;
 *  - request bodies are the handler's business, bounded by it.
 *
 * What a path means is the handler's: it is called as libmicrohttpd's
 * access handler, after the checks above.
 */
#ifndef BPFPROF_HTTP_HTTP_SERVER_H
#define BPFPROF_HTTP_HTTP_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "peer_limit.h"

struct MHD_Daemon;
struct MHD_Connection;
struct MHD_Response;

/* An idle connection is closed after this long (a client opens another). */
#define HTTP_IDLE_TIMEOUT_S  10u
/* The most a token, a certificate or a key file may hold. */
#define HTTP_SECRET_FILE_MAX (1u << 20)

/*
 * libmicrohttpd's access handler, after the Host and token checks: returns
 * MHD_YES (1) or MHD_NO (0). *req_cls is the handler's, NULL at a request's
 * first call; `completed` (optional) is told when the request ends.
 */
typedef int (*http_handler_fn)(void *ctx, struct MHD_Connection *c, const char *url,
			       const char *method, const char *upload, size_t *upload_size,
			       void **req_cls);
typedef void (*http_completed_fn)(void *ctx, void *req_cls);

struct http_server_config {
	const char *address; /* an IPv4 or IPv6 literal */
	uint16_t port;	     /* 0: a free one */
	const char *option;  /* the option that named the address, for messages: "--address" */
	uid_t owner;	     /* not limited in connections (with root) */
	bool owner_only;     /* no token: only root and `owner` may ask */
	const char *token;   /* NULL: no Authorization asked for */
	/* PEM, both or neither: TLS. */
	const char *tls_cert, *tls_key;
	bool suspend; /* handlers may suspend connections (MHD_suspend_connection) */
	http_handler_fn handler;
	http_completed_fn completed;
	void *ctx;
};

struct http_server {
	struct MHD_Daemon *daemon;
	uint16_t port; /* the one listened on */
	char *address;
	bool loopback; /* 127.0.0.0/8 or ::1: only this machine's users can connect */
	bool tls;
	bool owner_only;
	char *token;
	http_handler_fn handler;
	http_completed_fn completed;
	void *ctx;
	struct peer_limit peers;
};

/* Start listening. 0, or -errno after a one-line error. */
int http_server_start(struct http_server *s, const struct http_server_config *cfg);
void http_server_stop(struct http_server *s);

/* How http_read_secret_file reads a file. */
enum {
	/* Drop trailing white space (a token's newline). */
	HTTP_FILE_TRIM = 1,
	/*
	 * Refuse it unless root, we or the user who ran sudo (SUDO_UID) own
	 * it; warn when other users may read or change it.
	 */
	HTTP_FILE_SECRET = 2,
};

/*
 * Read a file the server is given (a token, a certificate, a key): at most
 * HTTP_SECRET_FILE_MAX bytes, a regular file, not through a symlink, no NUL
 * byte. NUL-terminated, malloc'd; NULL after a one-line error naming
 * `option`.
 */
char *http_read_secret_file(const char *path, const char *option, unsigned flags);

/* Whether `address` (an IPv4 or IPv6 literal) is a loopback one; -EINVAL when neither. */
int http_address_is_loopback(const char *address);

/*
 * Queue an answer of `len` bytes of `body` (copied), with `type` as
 * Content-Type (NULL: none) and Cache-Control: no-store. MHD_YES or MHD_NO.
 */
int http_queue_text(struct MHD_Connection *c, unsigned status, const char *type, const char *body,
		    size_t len);

#endif
