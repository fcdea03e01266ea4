/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The options of `continuous --listen` (scrape/scrape_server.h): where to
 * listen, the token and TLS files, and the labels every sample carries.
 * Parsed here, apart from the rest of the command line; the files are read
 * when continuous starts.
 */
#ifndef BPFPROF_CLI_LISTEN_OPTIONS_H
#define BPFPROF_CLI_LISTEN_OPTIONS_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>

#include "../emit/pprof_writer.h"

/* Their argp keys, in options.c's table. */
enum {
	OPT_LISTEN = 2000,
	OPT_LISTEN_TOKEN_FILE,
	OPT_LISTEN_TLS,
	OPT_LABEL,
};

/* A label's key and value are at most this long. */
#define LABEL_KEY_MAX	64
#define LABEL_VALUE_MAX 256

struct listen_options {
	const char *given;  /* the first of these options given, for messages; NULL: none */
	const char *listen; /* --listen as given; NULL: no server */
	char address[INET6_ADDRSTRLEN];
	uint16_t port;
	bool loopback;
	const char *token_file;
	char *tls_cert, *tls_key; /* --listen-tls CERT,KEY */
	struct pprof_label labels[PPROF_MAX_LABELS];
	size_t nr_labels; /* --label KEY=VALUE, in order; keys and values are malloc'd */
};

/*
 * Parse one of the keys above: 0, -EINVAL after a one-line error, or 1
 * when `key` is not one of them.
 */
int listen_option(struct listen_options *l, int key, const char *arg);

/* After the whole command line: what the options need of each other. 0 or -EINVAL (said). */
int listen_options_check(const struct listen_options *l);

void listen_options_free(struct listen_options *l);

#endif
