/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * `bpfprof continuous --listen`: the recording as a scrape target, in the
 * pull protocol of Go programs that Parca, Grafana Alloy (pyroscope.scrape)
 * and the OpenTelemetry Collector already speak:
 *
 *   GET /debug/pprof/profile?seconds=N   the CPU profile (gzip'd pprof) of
 *                                        the next N seconds (default 30)
 *   GET /debug/pprof/offcpu?seconds=N    the same, off-CPU time (--off-cpu)
 *   GET /snapshot/latest                 the newest snapshot, Firefox format
 *   GET /                                what is served here
 *
 * Each request gets its own window, from when it came to N seconds later,
 * whatever the other scrapers and the snapshots do: concurrent scrapers
 * each get whole windows. A request waits with its connection suspended
 * (no thread per scrape); the poll thread copies the window's samples out
 * of each snapshot it cuts and, once the rings are drained past the
 * window's end, out of the live model; then the server's builder thread
 * symbolizes and builds the profile and sends it, while the poll thread
 * goes on draining the rings. Nothing is copied while no scrape is waiting.
 */
#ifndef BPFPROF_SCRAPE_SCRAPE_SERVER_H
#define BPFPROF_SCRAPE_SCRAPE_SERVER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../emit/pprof_writer.h"
#include "../model/model.h"

/* A window is at most this long (Go's default is 30 s). */
#define SCRAPE_MAX_SECONDS     300u
#define SCRAPE_DEFAULT_SECONDS 30u
/* Windows waiting at once, all scrapers together; more are answered 503. */
#define SCRAPE_MAX_WINDOWS     16u

struct scrape_server;

/*
 * Build the profile of a finished window `m` (its samples) of `kind` into
 * `fd`; `wall_offset_ms` is CLOCK_REALTIME - CLOCK_MONOTONIC when the
 * window was complete. On the builder thread. 0 or -errno.
 */
typedef int (*scrape_write_fn)(void *ctx, struct model *m, enum pprof_kind kind,
			       double wall_offset_ms, int fd);

struct scrape_config {
	const char *address; /* an IPv4 or IPv6 literal */
	uint16_t port;
	const char *token;		/* NULL: none, and only loopback (checked by the caller) */
	const char *tls_cert, *tls_key; /* PEM, or NULL */
	bool offcpu;			/* off-CPU samples are recorded: /debug/pprof/offcpu */
	bool firefox;			/* Firefox snapshots are written: /snapshot/latest */
	uid_t owner;			/* who runs bpfprof (or ran sudo) */
	/* What builds each answer, on the builder thread: it may use what ctx holds then. */
	scrape_write_fn write;
	void *write_ctx;
};

/* Listen. 0, or -errno after a one-line error. */
int scrape_server_start(struct scrape_server **out, const struct scrape_config *cfg);

/*
 * Answer every waiting scrape 503 (bpfprof is stopping), and every complete
 * one with its profile (the builder ends after it), then close. NULL is fine.
 */
void scrape_server_stop(struct scrape_server *s);

/* The port listened on. */
uint16_t scrape_server_port(const struct scrape_server *s);

/* On the poll thread, from here on. */

/*
 * Cancel each waiting window whose client has closed its connection: its
 * place among the SCRAPE_MAX_WINDOWS is free again at once, not when the
 * window would have ended (up to SCRAPE_MAX_SECONDS later).
 */
void scrape_drop_hung_up(struct scrape_server *s);

/* The earliest end of a waiting window (CLOCK_MONOTONIC ns); UINT64_MAX when none waits. */
uint64_t scrape_next_end(struct scrape_server *s);

/*
 * The earliest end after `after` of a waiting off-CPU window; UINT64_MAX
 * when none. At its end the waits the kernel holds are flushed
 * (session_flush_held_waits), as at a snapshot's boundary: else a thread
 * asleep across it would show nothing of its wait.
 */
uint64_t scrape_next_offcpu_end(struct scrape_server *s, uint64_t after);

/*
 * The samples of `src` in [from, to) go to every waiting window they fall
 * in: `src` is a snapshot cut out of the live model, about to be written
 * and freed. A window that cannot hold them (no memory) is answered 500.
 */
void scrape_collect(struct scrape_server *s, const struct model *src, uint64_t from, uint64_t to);

/* [from, to) was lost (a snapshot that could not be cut): windows overlapping it get a 500. */
void scrape_lost(struct scrape_server *s, uint64_t from, uint64_t to);

/*
 * Every waiting window that ends at or before `upto` is complete once its
 * part still in the live model `live` is copied (`live` replayed past
 * `upto`): it goes to the builder thread, which builds it with the
 * config's `write` and answers it.
 */
void scrape_answer(struct scrape_server *s, const struct model *live, uint64_t upto,
		   double wall_offset_ms);

/* Call `fn` with every frame object the waiting windows' samples name (to keep them cached). */
void scrape_for_each_object(struct scrape_server *s, void (*fn)(void *ctx, uint32_t object),
			    void *ctx);

/* The newest Firefox snapshot, open as `fd` (taken over; -1: none), for /snapshot/latest. */
void scrape_set_latest(struct scrape_server *s, int fd);

#endif
