// SPDX-License-Identifier: BSD-2-Clause
/*
 * The scrape target of `continuous --listen` (scrape_server.h). Three
 * threads meet here: libmicrohttpd's, which takes requests and sends
 * answers; the poll thread, which fills the windows; and the builder,
 * which symbolizes and builds each complete window's profile and answers
 * it. A window is the poll thread's from its request until its samples are
 * all copied (WAITING), then the builder's until it is answered (BUILDING);
 * its samples are touched by no one else but for the poll thread reading
 * their frame objects under `lock` (scrape_for_each_object). The HTTP
 * thread frees it once its connection is done with it. The list and the
 * states are under `lock`.
 */
#include "scrape_server.h"

#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../http/http_server.h"
#include "../model/window.h"
#include "../util/clock.h"
#include "../util/log.h"
#include "../util/option_values.h"
#include "../util/quiet_thread.h"

enum window_state {
	WINDOW_WAITING,	 /* the poll thread's */
	WINDOW_BUILDING, /* complete, the builder's */
	WINDOW_DONE,	 /* answered with `fd` */
	WINDOW_FAILED,	 /* answered with `status` and `why` */
};

struct window {
	struct window *next;
	struct MHD_Connection *conn;
	int sock; /* conn's socket, watched for the client hanging up; -1: not known */
	enum pprof_kind kind;
	uint64_t from, to; /* CLOCK_MONOTONIC ns */
	enum window_state state;
	bool started;  /* samples has been set up */
	bool orphaned; /* its request ended while it waited: whoever answers it frees it */
	struct model samples;
	double wall_offset_ms; /* BUILDING: CLOCK_REALTIME - CLOCK_MONOTONIC, for the profile */
	int fd;		       /* the gzip'd profile (a memfd), DONE */
	unsigned status;
	const char *why;
};

struct scrape_server {
	struct http_server http;
	pthread_mutex_t lock;
	struct window *windows;
	unsigned nr_waiting;
	bool stopping;
	bool offcpu;
	bool firefox;  /* Firefox snapshots are written: /snapshot/latest has one to serve */
	int latest_fd; /* the newest Firefox snapshot, -1: none yet */
	unsigned long answered;
	/* The builder: BUILDING windows, oldest end first, built by `write`. */
	scrape_write_fn write;
	void *write_ctx;
	pthread_t builder;
	pthread_cond_t build_cond; /* a window to build, or stop_builder */
	bool builder_started;
	bool stop_builder;
};

/* *req_cls of a request answered at once (no window). */
static char answered;

static const char index_page[] =
	"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>bpfprof</title></head>\n"
	"<body><h1>bpfprof continuous</h1>\n<ul>\n"
	"<li><a href=\"/debug/pprof/profile?seconds=30\">/debug/pprof/profile?seconds=N</a>: "
	"the CPU profile of the next N seconds (gzip'd pprof, as Go programs serve it)</li>\n"
	"<li><a href=\"/debug/pprof/offcpu?seconds=30\">/debug/pprof/offcpu?seconds=N</a>: "
	"off-CPU time of the next N seconds (needs --off-cpu)</li>\n"
	"<li><a href=\"/snapshot/latest\">/snapshot/latest</a>: the newest snapshot, for the "
	"Firefox Profiler</li>\n</ul>\n"
	"<p>N is from 1 to 300; each request gets its own window.</p></body></html>\n";

static int queue_error(struct MHD_Connection *c, unsigned status, const char *why)
{
	return http_queue_text(c, status, "text/plain; charset=utf-8", why, strlen(why));
}

/* A response of the whole file `fd` (taken over). */
static int queue_fd(struct MHD_Connection *c, int fd, const char *type, const char *encoding,
		    const char *disposition)
{
	struct MHD_Response *r;
	enum MHD_Result ret;
	struct stat st;

	if (fstat(fd, &st)) {
		close(fd);
		return queue_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "cannot read the answer\n");
	}
	r = MHD_create_response_from_fd_at_offset64((uint64_t)st.st_size, fd, 0);
	if (!r) {
		close(fd);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Content-Type", type);
	if (encoding)
		MHD_add_response_header(r, "Content-Encoding", encoding);
	if (disposition)
		MHD_add_response_header(r, "Content-Disposition", disposition);
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(r, "Cache-Control", "no-store");
	ret = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

/* ?seconds=N: whole seconds from 1 to SCRAPE_MAX_SECONDS, Go's default when absent. */
static bool parse_seconds(const char *arg, unsigned *out)
{
	unsigned long long v;

	if (!arg) {
		*out = SCRAPE_DEFAULT_SECONDS;
		return true;
	}
	if (parse_uint(arg, SCRAPE_MAX_SECONDS, &v) || v < 1)
		return false;
	*out = (unsigned)v;
	return true;
}

static int start_window(struct scrape_server *s, struct MHD_Connection *c, enum pprof_kind kind,
			void **req_cls)
{
	const char *arg = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "seconds");
	const union MHD_ConnectionInfo *info;
	struct window *w;
	unsigned seconds;
	char why[160];

	if (!parse_seconds(arg, &seconds)) {
		snprintf(why, sizeof(why),
			 "seconds: give whole seconds from 1 to %u (default %u)\n",
			 SCRAPE_MAX_SECONDS, SCRAPE_DEFAULT_SECONDS);
		return queue_error(c, MHD_HTTP_BAD_REQUEST, why);
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return queue_error(c, MHD_HTTP_SERVICE_UNAVAILABLE, "out of memory\n");
	info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	w->conn = c;
	w->sock = info ? info->connect_fd : -1;
	w->kind = kind;
	w->fd = -1;
	pthread_mutex_lock(&s->lock);
	/*
	 * The time is read under the lock: a snapshot collected (under it)
	 * before this window was listed ended before the window begins.
	 */
	w->from = clock_ns(CLOCK_MONOTONIC);
	w->to = w->from + (uint64_t)seconds * 1000000000ULL;
	if (s->stopping || s->nr_waiting >= SCRAPE_MAX_WINDOWS) {
		bool stopping = s->stopping;

		pthread_mutex_unlock(&s->lock);
		free(w);
		snprintf(why, sizeof(why),
			 stopping ? "bpfprof is stopping\n"
				  : "%u scrapes are waiting already; try again later\n",
			 SCRAPE_MAX_WINDOWS);
		return queue_error(c, MHD_HTTP_SERVICE_UNAVAILABLE, why);
	}
	w->next = s->windows;
	s->windows = w;
	s->nr_waiting++;
	*req_cls = w;
	/* Under the lock: the poll thread resumes it only after this. */
	MHD_suspend_connection(c);
	pthread_mutex_unlock(&s->lock);
	return MHD_YES;
}

/* The window's answer, once the poll thread has resumed its connection. */
static int finish_window(struct scrape_server *s, struct MHD_Connection *c, struct window *w)
{
	enum window_state state;
	int fd;

	pthread_mutex_lock(&s->lock);
	fd = w->fd;
	w->fd = -1;
	state = w->state;
	pthread_mutex_unlock(&s->lock);
	if (state == WINDOW_DONE && fd >= 0)
		return queue_fd(c, fd, "application/octet-stream", NULL,
				"attachment; filename=\"profile\"");
	if (fd >= 0)
		close(fd);
	return queue_error(c, w->status ? w->status : MHD_HTTP_INTERNAL_SERVER_ERROR,
			   w->why ? w->why : "the profile could not be built\n");
}

static int serve_latest(struct scrape_server *s, struct MHD_Connection *c)
{
	int fd;

	pthread_mutex_lock(&s->lock);
	fd = s->latest_fd >= 0 ? fcntl(s->latest_fd, F_DUPFD_CLOEXEC, 0) : -1;
	pthread_mutex_unlock(&s->lock);
	if (fd < 0)
		return queue_error(c, MHD_HTTP_NOT_FOUND,
				   s->firefox
					   ? "no snapshot yet: the first is written one --interval "
					     "after the start\n"
					   : "no Firefox snapshots are written (--format pprof)\n");
	/* Served as written, gzip'd JSON, the way the Firefox Profiler loads a URL. */
	return queue_fd(c, fd, "application/json", "gzip", NULL);
}

static int on_request(void *ctx, struct MHD_Connection *c, const char *url, const char *method,
		      const char *upload, size_t *upload_size, void **req_cls)
{
	struct scrape_server *s = ctx;

	(void)upload;
	/* Nothing is uploaded here: a body sent along is read and dropped. */
	if (*req_cls && *upload_size) {
		*upload_size = 0;
		return MHD_YES;
	}
	if (*req_cls == &answered)
		return MHD_YES;
	if (*req_cls)
		return finish_window(s, c, *req_cls);
	*upload_size = 0;
	/* Answered on this first call; a window (start_window) replaces the mark. */
	*req_cls = &answered;
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return queue_error(c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET is served here\n");
	if (!strcmp(url, "/"))
		return http_queue_text(c, MHD_HTTP_OK, "text/html; charset=utf-8", index_page,
				       sizeof(index_page) - 1);
	if (!strcmp(url, "/debug/pprof/profile"))
		return start_window(s, c, PPROF_CPU, req_cls);
	if (!strcmp(url, "/debug/pprof/offcpu")) {
		if (!s->offcpu)
			return queue_error(c, MHD_HTTP_NOT_FOUND,
					   "off-CPU samples are not recorded: start bpfprof "
					   "continuous with --off-cpu\n");
		return start_window(s, c, PPROF_OFF_CPU, req_cls);
	}
	if (!strcmp(url, "/snapshot/latest"))
		return serve_latest(s, c);
	return queue_error(c, MHD_HTTP_NOT_FOUND,
			   "not here: see / for /debug/pprof/profile, /debug/pprof/offcpu and "
			   "/snapshot/latest\n");
}

static void free_window(struct window *w)
{
	if (w->started)
		model_free(&w->samples);
	if (w->fd >= 0)
		close(w->fd);
	free(w);
}

/* The request is over: its window (answered by now) goes. */
static void on_completed(void *ctx, void *req_cls)
{
	struct scrape_server *s = ctx;
	struct window *w = req_cls, **pp;

	if (req_cls == &answered)
		return;
	pthread_mutex_lock(&s->lock);
	if (w->state == WINDOW_WAITING || w->state == WINDOW_BUILDING) {
		/*
		 * Not expected (a waiting window's connection is suspended), but
		 * the poll thread or the builder may be filling or building it:
		 * it is freed when done.
		 */
		w->orphaned = true;
		pthread_mutex_unlock(&s->lock);
		return;
	}
	for (pp = &s->windows; *pp && *pp != w; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = w->next;
	pthread_mutex_unlock(&s->lock);
	free_window(w);
}

/* Unlink and free an orphaned window (under the lock, on the thread answering it). */
static void drop_orphan_locked(struct scrape_server *s, struct window *w)
{
	struct window **pp;

	for (pp = &s->windows; *pp && *pp != w; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = w->next;
	s->nr_waiting--;
	free_window(w);
}

static void *builder_main(void *arg);

int scrape_server_start(struct scrape_server **out, const struct scrape_config *cfg)
{
	struct scrape_server *s = calloc(1, sizeof(*s));
	struct http_server_config hc = {
		.address = cfg->address,
		.port = cfg->port,
		.option = "--listen",
		.owner = cfg->owner,
		.owner_only = true,
		.token = cfg->token,
		.tls_cert = cfg->tls_cert,
		.tls_key = cfg->tls_key,
		.suspend = true,
		.handler = on_request,
		.completed = on_completed,
	};
	int err;

	*out = NULL;
	if (!s)
		return -ENOMEM;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->build_cond, NULL);
	s->latest_fd = -1;
	s->offcpu = cfg->offcpu;
	s->firefox = cfg->firefox;
	s->write = cfg->write;
	s->write_ctx = cfg->write_ctx;
	hc.ctx = s;
	err = http_server_start(&s->http, &hc);
	if (err) {
		pthread_cond_destroy(&s->build_cond);
		pthread_mutex_destroy(&s->lock);
		free(s);
		return err;
	}
	/* Without it, the poll thread builds each answer itself, as it once did. */
	if (quiet_thread_start(&s->builder, builder_main, s))
		log_warn("cannot start the scrape builder thread; scrapes are answered by the "
			 "reader, which stops reading the rings meanwhile");
	else
		s->builder_started = true;
	*out = s;
	return 0;
}

uint16_t scrape_server_port(const struct scrape_server *s)
{
	return s->http.port;
}

/* Answer `w` (under the lock): its connection is resumed, and the HTTP thread owns it again. */
static void answer_locked(struct scrape_server *s, struct window *w, enum window_state state,
			  unsigned status, const char *why)
{
	if (w->orphaned) {
		drop_orphan_locked(s, w);
		return;
	}
	w->state = state;
	w->status = status;
	w->why = why;
	s->nr_waiting--;
	s->answered++;
	MHD_resume_connection(w->conn);
}

void scrape_server_stop(struct scrape_server *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	s->stopping = true;
	for (struct window *w = s->windows; w; w = w->next)
		if (w->state == WINDOW_WAITING)
			answer_locked(s, w, WINDOW_FAILED, MHD_HTTP_SERVICE_UNAVAILABLE,
				      "bpfprof is stopping; this window was not finished\n");
	pthread_mutex_unlock(&s->lock);
	/* Complete windows are built and answered first: their samples were all recorded. */
	if (s->builder_started)
		quiet_thread_stop(s->builder, &s->lock, &s->build_cond, &s->stop_builder);
	s->builder_started = false;
	/* Let the answers go out before the connections are closed (a second at most). */
	for (int i = 0; i < 100; i++) {
		bool idle;

		pthread_mutex_lock(&s->lock);
		idle = !s->windows;
		pthread_mutex_unlock(&s->lock);
		if (idle)
			break;
		nanosleep(&(struct timespec){ .tv_nsec = 10000000 }, NULL);
	}
	http_server_stop(&s->http);
	/* Windows whose connections never completed. */
	while (s->windows) {
		struct window *w = s->windows;

		s->windows = w->next;
		free_window(w);
	}
	if (s->latest_fd >= 0)
		close(s->latest_fd);
	pthread_cond_destroy(&s->build_cond);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

/*
 * Whether the client of a suspended connection has gone: libmicrohttpd
 * does not watch a suspended connection, so a client that closed would
 * keep its window (and one of SCRAPE_MAX_WINDOWS) until the window ends.
 * A client that shut down only its sending half looks the same from here;
 * Go's net/http server, too, takes that end of its request for a hang-up.
 */
static bool client_gone(int sock)
{
	struct pollfd p = { .fd = sock, .events = POLLRDHUP };

	return sock >= 0 && poll(&p, 1, 0) == 1 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

void scrape_drop_hung_up(struct scrape_server *s)
{
	struct window *w, *next;

	pthread_mutex_lock(&s->lock);
	for (w = s->windows; w; w = next) {
		next = w->next;
		/* An orphan's connection is gone, its socket maybe another's by now. */
		if (w->state == WINDOW_WAITING && !w->orphaned && client_gone(w->sock)) {
			/* Its samples are no one's: freed now, not when the answer fails. */
			if (w->started)
				model_free(&w->samples);
			w->started = false;
			answer_locked(s, w, WINDOW_FAILED, MHD_HTTP_SERVICE_UNAVAILABLE,
				      "the client hung up; this window was cancelled\n");
		}
	}
	pthread_mutex_unlock(&s->lock);
}

/* The earliest end of a waiting window of `kind` (PPROF_ALL: any). */
static uint64_t next_end(struct scrape_server *s, enum pprof_kind kind)
{
	uint64_t end = UINT64_MAX;

	pthread_mutex_lock(&s->lock);
	for (struct window *w = s->windows; w; w = w->next)
		if (w->state == WINDOW_WAITING && w->to < end &&
		    (kind == PPROF_ALL || w->kind == kind))
			end = w->to;
	pthread_mutex_unlock(&s->lock);
	return end;
}

uint64_t scrape_next_end(struct scrape_server *s)
{
	return next_end(s, PPROF_ALL);
}

uint64_t scrape_next_offcpu_end(struct scrape_server *s, uint64_t after)
{
	uint64_t end = UINT64_MAX;

	pthread_mutex_lock(&s->lock);
	for (struct window *w = s->windows; w; w = w->next)
		if (w->state == WINDOW_WAITING && w->kind == PPROF_OFF_CPU && w->to > after &&
		    w->to < end)
			end = w->to;
	pthread_mutex_unlock(&s->lock);
	return end;
}

/* Copy what `src` has of [from, to) into `w` (the poll thread's while it waits). */
static int copy_into(struct window *w, const struct model *src, uint64_t from, uint64_t to,
		     bool live)
{
	uint64_t a = from > w->from ? from : w->from, b = to < w->to ? to : w->to;

	if (!w->started) {
		model_window_init(&w->samples, src, w->from, w->to);
		w->started = true;
	}
	return a < b ? model_window_copy(&w->samples, src, a, b, live) : 0;
}

void scrape_collect(struct scrape_server *s, const struct model *src, uint64_t from, uint64_t to)
{
	struct window *w, *next;

	pthread_mutex_lock(&s->lock);
	for (w = s->windows; w; w = next) {
		next = w->next; /* answer_locked may free an orphan */
		if (w->state == WINDOW_WAITING && w->from < to && w->to > from &&
		    (w->orphaned || copy_into(w, src, from, to, false)))
			answer_locked(s, w, WINDOW_FAILED, MHD_HTTP_INTERNAL_SERVER_ERROR,
				      "out of memory while collecting the window\n");
	}
	pthread_mutex_unlock(&s->lock);
}

void scrape_lost(struct scrape_server *s, uint64_t from, uint64_t to)
{
	struct window *w, *next;

	pthread_mutex_lock(&s->lock);
	for (w = s->windows; w; w = next) {
		next = w->next;
		if (w->state == WINDOW_WAITING && w->from < to && w->to > from)
			answer_locked(s, w, WINDOW_FAILED, MHD_HTTP_INTERNAL_SERVER_ERROR,
				      "part of this window was lost (out of memory); ask again\n");
	}
	pthread_mutex_unlock(&s->lock);
}

/* The next waiting window that ends by `upto`, or NULL. */
static struct window *next_due(struct scrape_server *s, uint64_t upto)
{
	struct window *due = NULL;

	pthread_mutex_lock(&s->lock);
	for (struct window *w = s->windows; w; w = w->next)
		if (w->state == WINDOW_WAITING && w->to <= upto && (!due || w->to < due->to))
			due = w;
	pthread_mutex_unlock(&s->lock);
	return due;
}

/*
 * Build the complete window `w` with s->write and answer it: on the builder
 * thread (or the poll thread without one), without the lock, as the window
 * is BUILDING and only this thread touches it, and a new request need not
 * wait for symbols.
 */
static void build_and_answer(struct scrape_server *s, struct window *w)
{
	uint64_t t0 = clock_ns(CLOCK_MONOTONIC), now;
	double span_s, late_ms;
	int fd = memfd_create("bpfprof-scrape", MFD_CLOEXEC);
	int err = fd < 0 ? -errno
			 : s->write(s->write_ctx, &w->samples, w->kind, w->wall_offset_ms, fd);

	/* The samples are in the answer now: no sweep reads their frames any more. */
	pthread_mutex_lock(&s->lock);
	w->started = false;
	pthread_mutex_unlock(&s->lock);
	model_free(&w->samples);
	/* Read before the answer: once answered, w may be freed. */
	now = clock_ns(CLOCK_MONOTONIC);
	span_s = (double)(w->to - w->from) / 1e9;
	late_ms = (double)(now - w->to) / 1e6;
	pthread_mutex_lock(&s->lock);
	if (err) {
		if (fd >= 0)
			close(fd);
		log_warn("a scrape's profile could not be built (%s)", strerror(-err));
		answer_locked(s, w, WINDOW_FAILED, MHD_HTTP_INTERNAL_SERVER_ERROR,
			      "the profile could not be built\n");
	} else {
		w->fd = fd;
		answer_locked(s, w, WINDOW_DONE, MHD_HTTP_OK, NULL);
	}
	pthread_mutex_unlock(&s->lock);
	/* -v: how long a scraper waited past its window, and how much of that was building. */
	if (!err)
		log_info("scrape of %.0f s answered %.0f ms after its window's end, %.0f ms "
			 "of it building the profile",
			 span_s, late_ms, (double)(now - t0) / 1e6);
}

/* The complete window that ended first, or NULL. */
static struct window *next_to_build_locked(struct scrape_server *s)
{
	struct window *next = NULL;

	for (struct window *w = s->windows; w; w = w->next)
		if (w->state == WINDOW_BUILDING && (!next || w->to < next->to))
			next = w;
	return next;
}

/* The builder thread: answers complete windows in the order they ended, until stopped. */
static void *builder_main(void *arg)
{
	struct scrape_server *s = arg;

	pthread_mutex_lock(&s->lock);
	for (;;) {
		struct window *w = next_to_build_locked(s);

		if (!w) {
			if (s->stop_builder)
				break;
			pthread_cond_wait(&s->build_cond, &s->lock);
			continue;
		}
		pthread_mutex_unlock(&s->lock);
		build_and_answer(s, w);
		pthread_mutex_lock(&s->lock);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

void scrape_answer(struct scrape_server *s, const struct model *live, uint64_t upto,
		   double wall_offset_ms)
{
	struct window *w;

	/* Copied without the lock: the window stays WAITING, so only this thread touches it. */
	while ((w = next_due(s, upto))) {
		int err = copy_into(w, live, live->start_ts, w->to, true);

		if (!err)
			err = model_finish(&w->samples);
		pthread_mutex_lock(&s->lock);
		if (err) {
			w->started = false;
			model_free(&w->samples);
			log_warn("a scrape's profile could not be built (%s)", strerror(-err));
			answer_locked(s, w, WINDOW_FAILED, MHD_HTTP_INTERNAL_SERVER_ERROR,
				      "the profile could not be built\n");
			pthread_mutex_unlock(&s->lock);
			continue;
		}
		/* Complete: symbolized and built off this thread, which goes back to the rings. */
		w->state = WINDOW_BUILDING;
		w->wall_offset_ms = wall_offset_ms;
		pthread_cond_broadcast(&s->build_cond);
		pthread_mutex_unlock(&s->lock);
		if (!s->builder_started)
			build_and_answer(s, w);
	}
}

void scrape_for_each_object(struct scrape_server *s, void (*fn)(void *ctx, uint32_t object),
			    void *ctx)
{
	pthread_mutex_lock(&s->lock);
	for (struct window *w = s->windows; w; w = w->next)
		if ((w->state == WINDOW_WAITING || w->state == WINDOW_BUILDING) && w->started)
			for (size_t i = 0; i < w->samples.frames.len; i++)
				fn(ctx, w->samples.frames.data[i].object);
	pthread_mutex_unlock(&s->lock);
}

void scrape_set_latest(struct scrape_server *s, int fd)
{
	int old;

	/* A snapshot that cannot be opened again leaves the last one served. */
	if (fd < 0)
		return;
	pthread_mutex_lock(&s->lock);
	old = s->latest_fd;
	s->latest_fd = fd;
	pthread_mutex_unlock(&s->lock);
	if (old >= 0)
		close(old);
}
