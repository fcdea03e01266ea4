// SPDX-License-Identifier: BSD-2-Clause
#include "listen_options.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../http/http_server.h"
#include "../util/log.h"
#include "../util/option_values.h"

/*
 * "ADDR:PORT", "[V6]:PORT", "localhost:PORT", or a bare PORT (loopback:
 * safe unless told otherwise) into l->address and l->port.
 */
static int parse_listen(struct listen_options *l, const char *arg)
{
	const char *colon, *host = arg;
	size_t host_len;
	unsigned long long port;
	int lo;

	if (!parse_uint(arg, 65535, &port)) {
		strcpy(l->address, "127.0.0.1");
		l->loopback = true;
		l->port = (uint16_t)port;
		l->listen = arg;
		return 0;
	}
	if (arg[0] == '[') {
		const char *end = strchr(arg, ']');

		colon = end && end[1] == ':' ? end + 1 : NULL;
		host = arg + 1;
		host_len = end ? (size_t)(end - host) : 0;
	} else {
		colon = strrchr(arg, ':');
		host_len = colon ? (size_t)(colon - arg) : 0;
		/* An IPv6 address needs brackets: its colons would take the port's. */
		if (colon && memchr(arg, ':', host_len))
			colon = NULL;
	}
	if (!colon || !host_len || host_len >= sizeof(l->address) ||
	    parse_uint(colon + 1, 65535, &port)) {
		log_error("--listen %s: give PORT (on 127.0.0.1) or ADDRESS:PORT, such as "
			  "0.0.0.0:6060 or [::1]:6060 (port 0: any free one)",
			  arg);
		return -EINVAL;
	}
	if (host_len == strlen("localhost") && !strncmp(host, "localhost", host_len)) {
		strcpy(l->address, "127.0.0.1");
	} else {
		memcpy(l->address, host, host_len);
		l->address[host_len] = '\0';
	}
	lo = http_address_is_loopback(l->address);
	if (lo < 0) {
		log_error("--listen %s: %s is not an IPv4 or IPv6 address (names are not looked "
			  "up); give one such as 127.0.0.1 or 0.0.0.0",
			  arg, l->address);
		return -EINVAL;
	}
	l->loopback = lo;
	l->port = (uint16_t)port;
	l->listen = arg;
	return 0;
}

static int parse_tls(struct listen_options *l, const char *arg)
{
	const char *comma = strchr(arg, ',');

	if (!comma || comma == arg || !comma[1] || strchr(comma + 1, ',')) {
		log_error("--listen-tls %s: give CERT,KEY, two PEM files (the certificate chain "
			  "and its private key)",
			  arg);
		return -EINVAL;
	}
	free(l->tls_cert);
	free(l->tls_key);
	l->tls_cert = strndup(arg, (size_t)(comma - arg));
	l->tls_key = strdup(comma + 1);
	return l->tls_cert && l->tls_key ? 0 : -ENOMEM;
}

/* The labels every sample has already: --label may not name them again. */
static const char *const own_labels[] = { "pid",	  "tid",	  "thread_name",
					  "process_name", "container_id", "cgroup" };

/*
 * KEY=VALUE: a key as Prometheus and Pyroscope take label names
 * ([A-Za-z_][A-Za-z0-9_]*), not one of the samples' own nor given twice;
 * a value of printable ASCII.
 */
static int parse_label(struct listen_options *l, const char *arg)
{
	const char *eq = strchr(arg, '=');
	size_t key_len = eq ? (size_t)(eq - arg) : 0;
	bool ok = key_len > 0 && key_len <= LABEL_KEY_MAX && eq[1] &&
		  strlen(eq + 1) <= LABEL_VALUE_MAX && !(arg[0] >= '0' && arg[0] <= '9');

	for (size_t i = 0; ok && i < key_len; i++)
		ok = (arg[i] >= 'a' && arg[i] <= 'z') || (arg[i] >= 'A' && arg[i] <= 'Z') ||
		     (arg[i] >= '0' && arg[i] <= '9') || arg[i] == '_';
	for (const char *p = eq ? eq + 1 : ""; ok && *p; p++)
		ok = (unsigned char)*p >= 0x20 && (unsigned char)*p < 0x7f;
	if (!ok) {
		log_error("--label %s: give KEY=VALUE, a key of letters, digits and _ (not first "
			  "a digit, up to %d) and a value of up to %d printable ASCII characters",
			  arg, LABEL_KEY_MAX, LABEL_VALUE_MAX);
		return -EINVAL;
	}
	for (size_t i = 0; i < sizeof(own_labels) / sizeof(own_labels[0]); i++)
		if (strlen(own_labels[i]) == key_len && !strncmp(arg, own_labels[i], key_len)) {
			log_error(
				"--label %s: every sample has its own %s label; choose another key",
				arg, own_labels[i]);
			return -EINVAL;
		}
	for (size_t i = 0; i < l->nr_labels; i++)
		if (strlen(l->labels[i].key) == key_len &&
		    !strncmp(arg, l->labels[i].key, key_len)) {
			log_error("--label %s: the key %s is given twice; give each key once", arg,
				  l->labels[i].key);
			return -EINVAL;
		}
	if (l->nr_labels == PPROF_MAX_LABELS - 1) {
		log_error("--label: at most %d labels", PPROF_MAX_LABELS - 1);
		return -EINVAL;
	}
	l->labels[l->nr_labels].key = strndup(arg, key_len);
	l->labels[l->nr_labels].value = strdup(eq + 1);
	if (!l->labels[l->nr_labels].key || !l->labels[l->nr_labels].value) {
		free((char *)l->labels[l->nr_labels].key);
		free((char *)l->labels[l->nr_labels].value);
		return -ENOMEM;
	}
	l->nr_labels++;
	return 0;
}

int listen_option(struct listen_options *l, int key, const char *arg)
{
	static const char *const names[] = {
		[OPT_LISTEN - OPT_LISTEN] = "--listen",
		[OPT_LISTEN_TOKEN_FILE - OPT_LISTEN] = "--listen-token-file",
		[OPT_LISTEN_TLS - OPT_LISTEN] = "--listen-tls",
		[OPT_LABEL - OPT_LISTEN] = "--label",
	};

	if (key < OPT_LISTEN || key > OPT_LABEL)
		return 1;
	if (!l->given)
		l->given = names[key - OPT_LISTEN];
	switch (key) {
	case OPT_LISTEN:
		return parse_listen(l, arg);
	case OPT_LISTEN_TOKEN_FILE:
		if (!*arg) {
			log_error("--listen-token-file: empty path; give the file that holds the "
				  "token scrapers send");
			return -EINVAL;
		}
		l->token_file = arg;
		return 0;
	case OPT_LISTEN_TLS:
		return parse_tls(l, arg);
	default:
		return parse_label(l, arg);
	}
}

int listen_options_check(const struct listen_options *l)
{
	if (!l->given)
		return 0;
	if (!l->listen) {
		log_error("%s is for --listen; add --listen ADDRESS:PORT", l->given);
		return -EINVAL;
	}
	if (!l->loopback && !l->token_file) {
		log_error(
			"--listen %s would serve every process's stacks and command lines to "
			"anyone who reaches this machine; give --listen-token-file FILE (scrapers "
			"send it as Authorization: Bearer), or listen on 127.0.0.1",
			l->listen);
		return -EINVAL;
	}
	return 0;
}

void listen_options_free(struct listen_options *l)
{
	free(l->tls_cert);
	free(l->tls_key);
	for (size_t i = 0; i < l->nr_labels; i++) {
		free((char *)l->labels[i].key);
		free((char *)l->labels[i].value);
	}
	memset(l, 0, sizeof(*l));
}
