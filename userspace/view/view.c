// SPDX-License-Identifier: BSD-2-Clause
/*
 * `bpfprof view FILE`: the profile goes to the browser without copying it
 * anywhere. It is served on 127.0.0.1 (a free port) under a random,
 * unguessable path; the https://profiler.firefox.com/from-url/ link loads
 * it from there (--profiler-url: a front-end of one's own). With a display
 * and not as root the link is opened (xdg-open or $BROWSER) through a
 * private page, never on a command line (view_redirect.h); over SSH the
 * `ssh -L` line to reach the port is printed. Serves until Ctrl-C or
 * SIGTERM.
 */
#include "view.h"

#include <argp.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../util/log.h"
#include "../util/sudo_user.h"
#include "../util/visible_open.h"
#include "../report/file_command.h"
#include "file_server.h"
#include "../util/option_values.h"
#include "view_redirect.h"

#define PROFILER_URL "https://profiler.firefox.com"

extern char **environ;

struct view_options {
	struct file_command fc;
	const char *address;
	const char *profiler_url;
	unsigned port;
	bool no_open;
};

enum { OPT_PORT = 1000, OPT_ADDRESS, OPT_NO_OPEN, OPT_PROFILER_URL };

static const struct argp_option view_option_defs[] = {
	{ "port", OPT_PORT, "PORT", 0, "Listen on PORT (default: a free one)", 0 },
	{ "address", OPT_ADDRESS, "ADDR", 0,
	  "Listen on ADDR (default 127.0.0.1; anyone who can reach it and knows the link can "
	  "read the profile)",
	  0 },
	{ "no-open", OPT_NO_OPEN, NULL, 0, "Print the link, do not open a browser", 0 },
	{ "profiler-url", OPT_PROFILER_URL, "URL", 0,
	  "The Firefox Profiler front-end to open the profile in (default " PROFILER_URL
	  "; a self-hosted one such as http://localhost:4242): only pages of its origin may "
	  "read what view serves",
	  0 },
	{ "help", FILE_COMMAND_OPT_HELP, NULL, 0, "Give this help list", -1 },
	{ 0 },
};

static const char view_doc[] =
	"Serve a profile bpfprof wrote to the Firefox Profiler, from this machine, until "
	"Ctrl-C.\v"
	"The link opens https://profiler.firefox.com/from-url/..., which fetches the profile "
	"from this machine's port under a random path; nothing is uploaded anywhere. Over SSH, "
	"forward the port first (the line to use is printed). The browser is handed a private "
	"page that leads to the link, never the link itself, which other users could read. The "
	"source and assembly views show the source files and libraries the profile names that "
	"every user here may read, along the whole path, or that you (or the sudo user) own, "
	"never through a symlink.";

static error_t parse_view_opt(int key, char *arg, struct argp_state *state);

static const struct argp view_argp = { view_option_defs, parse_view_opt, "FILE", view_doc };

static error_t parse_view_opt(int key, char *arg, struct argp_state *state)
{
	struct view_options *o = state->input;
	unsigned long long v;

	switch (key) {
	case OPT_PORT:
		if (parse_uint(arg, 65535, &v)) {
			log_error("--port %s: give a port number from 0 (any free one) to 65535",
				  arg);
			o->fc.reported = true;
			return EINVAL;
		}
		o->port = (unsigned)v;
		break;
	case OPT_ADDRESS:
		o->address = arg;
		break;
	case OPT_NO_OPEN:
		o->no_open = true;
		break;
	case OPT_PROFILER_URL:
		o->profiler_url = arg;
		break;
	default:
		return file_command_key(&o->fc, key, arg);
	}
	return 0;
}

/*
 * The file must be a profile bpfprof could have written: gzip, or JSON.
 * Opened once: what is checked here is what is served (file_server.h).
 */
static int open_profile_file(const char *file)
{
	unsigned char head[2] = { 0 };
	struct stat st;
	int fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	ssize_t n;

	if (fd < 0) {
		log_error("cannot open %s (%s); give a profile bpfprof wrote", file,
			  strerror(errno));
		return -errno;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		log_error("%s is not a regular file; give a profile bpfprof wrote", file);
		return -EINVAL;
	}
	n = pread(fd, head, sizeof(head), 0);
	if (n < 1 || !((n == 2 && head[0] == 0x1f && head[1] == 0x8b) || head[0] == '{')) {
		close(fd);
		log_error("%s is neither gzip nor JSON; give a profile bpfprof wrote "
			  "(.json.gz or .json)",
			  file);
		return -EINVAL;
	}
	return fd;
}

/*
 * "scheme://host[:port]" of an http(s) front-end URL, its origin for CORS,
 * into `origin`; the URL without its trailing slashes into `base`.
 */
static int parse_profiler_url(const char *url, char *base, size_t base_len, char *origin,
			      size_t origin_len)
{
	const char *host = strstr(url, "://"), *end;
	size_t n = strlen(url);

	if (!host || (strncmp(url, "http://", 7) && strncmp(url, "https://", 8)))
		return -EINVAL;
	host += 3;
	end = host + strcspn(host, "/?#");
	if (end == host || strpbrk(url, " \"<>\\^`{|}") || *end == '?' || *end == '#')
		return -EINVAL;
	while (n > (size_t)(end - url) && url[n - 1] == '/')
		n--;
	if (n >= base_len || (size_t)(end - url) >= origin_len)
		return -ENAMETOOLONG;
	snprintf(base, base_len, "%.*s", (int)n, url);
	snprintf(origin, origin_len, "%.*s", (int)(end - url), url);
	return 0;
}

/* Who also sees the files they own in the source view (symbol_api.h). */
static uid_t viewing_user(void)
{
	uid_t uid;
	gid_t gid;

	if (geteuid() != 0)
		return geteuid();
	return sudo_user_ids(&uid, &gid) ? uid : VISIBLE_NO_VIEWER;
}

/* "/<32 hex digits>/<the file's name, reduced to [A-Za-z0-9._-]>". */
static int make_path(const char *file, char *out, size_t len)
{
	unsigned char secret[16];
	const char *base = strrchr(file, '/');
	size_t at;

	if (getrandom(secret, sizeof(secret), 0) != (ssize_t)sizeof(secret))
		return -errno;
	at = (size_t)snprintf(out, len, "/");
	for (size_t i = 0; i < sizeof(secret) && at + 3 < len; i++)
		at += (size_t)snprintf(out + at, len - at, "%02x", secret[i]);
	if (at + 2 < len)
		out[at++] = '/';
	for (base = base ? base + 1 : file; *base && at + 1 < len; base++) {
		char c = *base;
		bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			     (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_';

		out[at++] = plain ? c : '_';
	}
	out[at] = '\0';
	return 0;
}

/* encodeURIComponent, which the profiler's from-url route undoes. */
static void url_encode(const char *in, char *out, size_t len)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t at = 0;

	for (; *in && at + 4 < len; in++) {
		unsigned char c = (unsigned char)*in;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    strchr("-_.!~*'()", c)) {
			out[at++] = (char)c;
		} else {
			out[at++] = '%';
			out[at++] = hex[c >> 4];
			out[at++] = hex[c & 15];
		}
	}
	out[at] = '\0';
}

/*
 * Open `link` in the user's browser when there is one to open it in,
 * through the page `redirect` (view_redirect.h): a command line is
 * everyone's to read.
 */
static void open_browser(const char *link, struct view_redirect *redirect)
{
	const char *browser = getenv("BROWSER");
	char *argv[3] = { (char *)(browser && *browser ? browser : "xdg-open"), redirect->url,
			  NULL };
	posix_spawn_file_actions_t fa;
	pid_t pid;

	if (!getenv("DISPLAY") && !getenv("WAYLAND_DISPLAY")) {
		log_info("no display here: open the link in a browser that can reach this port");
		return;
	}
	if (geteuid() == 0) {
		log_info("not opening a browser as root: open the link yourself");
		return;
	}
	if (view_redirect_create(redirect, link))
		return;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
	if (posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ))
		log_warn("cannot run %s to open the link (%s): open it yourself", argv[0],
			 strerror(errno));
	posix_spawn_file_actions_destroy(&fa);
}

/*
 * Over SSH the browser is on the other end: it reaches the port through a
 * forward, for which SSH_CONNECTION names this side's address.
 */
static void print_ssh_hint(unsigned port)
{
	const char *conn = getenv("SSH_CONNECTION");
	const char *user = getenv("SUDO_USER");
	char client[64], client_port[16], server[64];

	if (!conn || sscanf(conn, "%63s %15s %63s", client, client_port, server) != 3)
		return;
	if (!user || !*user)
		user = getenv("USER");
	log_info("over SSH: on your machine run   ssh -N -L %u:127.0.0.1:%u %s%s%s   then open "
		 "the link there",
		 port, port, user ? user : "", user ? "@" : "", server);
}

static int serve(const char *file, const char *address, unsigned port, bool no_open,
		 const char *profiler_url)
{
	char path[160], api_path[64], url[256], server_url[128], encoded[768], encoded_server[384],
		base[512], origin[512], link[sizeof(encoded) + sizeof(encoded_server) + 512 + 32];
	struct view_redirect redirect = { .dir = "" };
	const char *secret_end;
	struct file_server server;
	sigset_t stop;
	int sig, fd, err;

	if (parse_profiler_url(profiler_url ? profiler_url : PROFILER_URL, base, sizeof(base),
			       origin, sizeof(origin))) {
		log_error("--profiler-url %s: give the front-end's http:// or https:// URL, such "
			  "as " PROFILER_URL,
			  profiler_url);
		return 1;
	}
	fd = open_profile_file(file);
	if (fd < 0)
		return 1;
	if (make_path(file, path, sizeof(path))) {
		log_error("cannot get random bytes for the link (%s)", strerror(errno));
		close(fd);
		return 1;
	}
	/* Blocked before the server's thread starts, so only sigwait below sees them. */
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigprocmask(SIG_BLOCK, &stop, NULL);
	/* The secret's directory also answers the source and assembly views (symbol_api.h). */
	secret_end = strchr(path + 1, '/');
	snprintf(api_path, sizeof(api_path), "%.*s", (int)(secret_end ? secret_end - path : 0),
		 path);
	err = file_server_start(&server, file, fd, path, api_path, address, (uint16_t)port, origin,
				viewing_user());
	close(fd);
	if (err)
		return 1;
	snprintf(server_url, sizeof(server_url), "http://%s%s%s:%u%.*s",
		 strchr(address, ':') ? "[" : "", address, strchr(address, ':') ? "]" : "",
		 server.http.port, (int)(secret_end ? secret_end - path : 0), path);
	snprintf(url, sizeof(url), "%s%s", server_url, secret_end ? secret_end : "");
	url_encode(url, encoded, sizeof(encoded));
	url_encode(server_url, encoded_server, sizeof(encoded_server));
	/* symbolServer: where the source and assembly views ask for code (symbol_api.h). */
	snprintf(link, sizeof(link), "%s/from-url/%s/?symbolServer=%s", base, encoded,
		 encoded_server);
	log_info("serving %s at %s until Ctrl-C", file, url);
	/* The link alone on stdout, for scripts and for copying. */
	printf("%s\n", link);
	fflush(stdout);
	print_ssh_hint(server.http.port);
	if (!no_open)
		open_browser(link, &redirect);
	while (sigwait(&stop, &sig))
		;
	file_server_stop(&server);
	view_redirect_remove(&redirect);
	log_info("stopped serving %s", file);
	return 0;
}

int view_serve(const char *file, const char *address, unsigned port, bool no_open)
{
	return serve(file, address, port, no_open, NULL);
}

int view_main(int argc, char **argv)
{
	struct view_options o = { .fc = { .name = "view", .argp = &view_argp },
				  .address = "127.0.0.1" };
	int ret = file_command_parse(&o.fc, argc, argv, &o, "profile.json.gz");

	if (ret)
		return ret < 0 ? 0 : ret;
	return serve(o.fc.file, o.address, o.port, o.no_open, o.profiler_url);
}
