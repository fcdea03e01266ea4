// SPDX-License-Identifier: BSD-2-Clause
#include "session.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "bpfprof.skel.h"
#include "../../bpf/bpfprof_abi.h"
#include "cpus.h"
#include "preflight.h"
#include "../util/clock.h"
#include "../util/log.h"

#define MIN_RING_BYTES	  (256u * 1024)
#define MAX_RING_BYTES	  (64u * 1024 * 1024)
/*
 * With scheduler capture, a ring must absorb a CPU's switches between two
 * drains: 100k switches/s on one CPU with ~300-byte records is 30 MB/s,
 * 1.5 MB per 50 ms drain, so 8 MiB leaves room for a consumer stalled for
 * a quarter second. Rings are per CPU, so the total is capped: big machines
 * get smaller rings (their per-CPU switch rates are no higher).
 */
#define SCHED_RING_BYTES  (8u * 1024 * 1024)
#define TOTAL_RING_BUDGET (512ull * 1024 * 1024)

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	/* libbpf's own messages are multi-line dumps: only with -vv. */
	if (log_verbosity < 2 && level != LIBBPF_WARN)
		return 0;
	if (log_verbosity < 1)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/*
 * Room for a quarter second of worst-case (full-stack) samples per CPU: the
 * consumer drains at least every 100 ms, so a full ring means a stalled
 * consumer, not a burst.
 */
static size_t ring_size_for(unsigned freq_hz, bool sched, int nr_rings)
{
	size_t want = (size_t)freq_hz * sizeof(struct sample_event) / 4, size = MIN_RING_BYTES;

	if (sched && want < SCHED_RING_BYTES)
		want = SCHED_RING_BYTES;
	while (size < want && size < MAX_RING_BYTES)
		size *= 2;
	while (size > MIN_RING_BYTES &&
	       (unsigned long long)size * (unsigned)nr_rings > TOTAL_RING_BUDGET)
		size /= 2;
	return size;
}

/* tp_btf needs the tracepoint's BTF types; fall back to raw_tp where it cannot load. */
static bool tp_btf_supported(const char *tp_name)
{
	char name[128];
	struct btf *btf;
	bool ok;

	/* Tests (and users debugging the fallback) take the older kernels' path. */
	if (getenv("BPFPROF_FORCE_RAW_TP"))
		return false;
	btf = btf__load_vmlinux_btf();
	if (!btf)
		return false;
	snprintf(name, sizeof(name), "btf_trace_%s", tp_name);
	ok = btf__find_by_name_kind(btf, name, BTF_KIND_TYPEDEF) > 0;
	btf__free(btf);
	return ok;
}

/*
 * The scheduler programs, each in a tp_btf flavour and a raw_tp fallback;
 * one of each pair is loaded, chosen by what this kernel's BTF describes.
 */
struct sched_prog_pair {
	const char *tp;
	struct bpf_program *btf, *raw;
	struct bpf_link **btf_link, **raw_link;
};

static int sched_prog_pairs(struct session *s, struct sched_prog_pair pairs[3])
{
	struct bpfprof_bpf *k = s->skel;

	pairs[0] = (struct sched_prog_pair){ "sched_switch", k->progs.on_switch_btf,
					     k->progs.on_switch_raw, &k->links.on_switch_btf,
					     &k->links.on_switch_raw };
	pairs[1] = (struct sched_prog_pair){ "sched_waking", k->progs.on_waking_btf,
					     k->progs.on_waking_raw, &k->links.on_waking_btf,
					     &k->links.on_waking_raw };
	pairs[2] =
		(struct sched_prog_pair){ "sched_wakeup_new", k->progs.on_wakeup_new_btf,
					  k->progs.on_wakeup_new_raw, &k->links.on_wakeup_new_btf,
					  &k->links.on_wakeup_new_raw };
	return 3;
}

/* Returns true when the sched_waking program is the BTF-typed one. */
static bool choose_sched_programs(struct session *s, bool sched)
{
	struct sched_prog_pair pairs[3];
	int n = sched_prog_pairs(s, pairs);
	bool waking_btf = false;

	for (int i = 0; i < n; i++) {
		bool btf = sched && tp_btf_supported(pairs[i].tp);

		bpf_program__set_autoload(pairs[i].btf, btf);
		bpf_program__set_autoload(pairs[i].raw, sched && !btf);
		if (pairs[i].btf == s->skel->progs.on_waking_btf)
			waking_btf = btf;
		if (sched)
			log_debug("%s: %s program", pairs[i].tp, btf ? "tp_btf" : "raw_tp");
	}
	return waking_btf;
}

/* Attach the loaded half of each pair; 0 or -errno (nothing stays attached then). */
static int attach_sched_programs(struct session *s)
{
	struct sched_prog_pair pairs[3];
	int n = sched_prog_pairs(s, pairs);

	for (int i = 0; i < n; i++) {
		bool btf = bpf_program__autoload(pairs[i].btf);
		struct bpf_link **link = btf ? pairs[i].btf_link : pairs[i].raw_link;

		*link = bpf_program__attach(btf ? pairs[i].btf : pairs[i].raw);
		if (!*link) {
			int err = -errno;

			log_warn("cannot attach the %s tracepoint (%s): recording without "
				 "scheduler events",
				 pairs[i].tp, strerror(-err));
			for (int j = 0; j < n; j++) {
				bpf_link__destroy(*pairs[j].btf_link);
				bpf_link__destroy(*pairs[j].raw_link);
				*pairs[j].btf_link = *pairs[j].raw_link = NULL;
			}
			return err;
		}
	}
	return 0;
}

static int on_ring_record(void *ctx, void *data, size_t size)
{
	struct session *s = ctx;
	int err = s->on_record(s->record_ctx, data, size);

	/* Keep draining: a failed record is reported once at the end. */
	if (err && !s->record_error)
		s->record_error = err;
	return 0;
}

int session_open(struct session *s, const struct session_config *cfg)
{
	LIBBPF_OPTS(bpf_object_open_opts, open_opts);
	int template_fd, err;
	bool use_btf;

	memset(s, 0, sizeof(*s));
	libbpf_set_print(libbpf_print);

	s->nr_online = cpus_online(&s->online, &s->nr_possible);
	if (s->nr_online <= 0) {
		log_error("cannot read the online CPUs from /sys/devices/system/cpu/online (%s)",
			  strerror(-s->nr_online));
		return 1;
	}
	s->nr_rings = s->nr_possible;
	s->ring_bytes = ring_size_for(cfg->freq_hz, cfg->sched, s->nr_rings);

	if (preflight_btf_is_custom())
		open_opts.btf_custom_path = preflight_btf_path();
	s->skel = bpfprof_bpf__open_opts(&open_opts);
	if (!s->skel) {
		log_error("cannot open the BPF object (%s)", strerror(errno));
		return 1;
	}
	s->skel->rodata->include_idle = cfg->include_idle;
	s->skel->rodata->filter_tgid = cfg->tgids != NULL;
	s->skel->rodata->follow_forks = cfg->follow_forks;
	s->skel->rodata->nr_rings = (uint32_t)s->nr_rings;
	s->skel->rodata->wakeup_bytes = s->ring_bytes / 4;
	s->skel->rodata->offcpu_stacks = cfg->offcpu_stacks;
	s->skel->rodata->offcpu_stack_interval_ns =
		1000000000ULL / (cfg->freq_hz ? cfg->freq_hz : 1);

	/*
	 * The inner map template must have the ring size we will insert (the
	 * kernel compares max_entries of map-in-map values). libbpf 1.1 cannot
	 * resize its own template, so hand it a real ring buffer as the template.
	 */
	bpf_map__set_max_entries(s->skel->maps.rings, (uint32_t)s->nr_rings);
	template_fd =
		bpf_map_create(BPF_MAP_TYPE_RINGBUF, NULL, 0, 0, (uint32_t)s->ring_bytes, NULL);
	if (template_fd < 0 || bpf_map__set_inner_map_fd(s->skel->maps.rings, template_fd)) {
		log_error("cannot create a %zu KiB BPF ring buffer (%s); bpfprof needs kernel 5.8+",
			  s->ring_bytes / 1024, strerror(errno));
		if (template_fd >= 0)
			close(template_fd);
		return 1;
	}

	use_btf = tp_btf_supported("sched_process_fork");
	bpf_program__set_autoload(s->skel->progs.on_fork_btf, cfg->follow_forks && use_btf);
	bpf_program__set_autoload(s->skel->progs.on_fork_raw, cfg->follow_forks && !use_btf);
	s->sched = cfg->sched;
	s->skel->rodata->sched_min_ns = cfg->sched_min_ns;
	/*
	 * Keeping short waits' wakeups with the task needs the wakee's task
	 * storage, which only the BTF-typed sched_waking program can reach;
	 * with --sched-min 0 every wakeup is shown anyway.
	 */
	s->skel->rodata->defer_wakeups =
		choose_sched_programs(s, cfg->sched) && cfg->sched_min_ns > 0;

	err = bpfprof_bpf__load(s->skel);
	close(template_fd); /* the loaded outer map keeps what it needs */
	if (err) {
		log_error(
			"the kernel rejected bpfprof's BPF programs (%s); run with -vv to see the "
			"verifier log, and check that the kernel is 5.8 or newer",
			strerror(-err));
		return 1;
	}

	s->ring_fds = malloc(sizeof(*s->ring_fds) * (size_t)s->nr_rings);
	if (!s->ring_fds)
		return 1;
	s->on_record = cfg->on_record;
	s->record_ctx = cfg->ctx;
	for (int i = 0; i < s->nr_rings; i++) {
		int fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, NULL, 0, 0, (uint32_t)s->ring_bytes,
					NULL);
		uint32_t key = (uint32_t)i;

		s->ring_fds[i] = fd;
		if (fd < 0) {
			log_error(
				"cannot create a %zu KiB ring buffer for CPU %d (%s); lower -F or "
				"raise the memlock limit",
				s->ring_bytes / 1024, i, strerror(errno));
			return 1;
		}
		if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.rings), &key, &fd, BPF_ANY)) {
			log_error("cannot install ring buffer %d (%s)", i, strerror(errno));
			return 1;
		}
		if (!s->rb)
			s->rb = ring_buffer__new(fd, on_ring_record, s, NULL);
		else if (ring_buffer__add(s->rb, fd, on_ring_record, s))
			s->rb = NULL;
		if (!s->rb) {
			log_error("cannot poll ring buffer %d (%s)", i, strerror(errno));
			return 1;
		}
	}

	for (size_t i = 0; i < cfg->nr_tgids; i++)
		if (session_add_target(s, cfg->tgids[i]))
			return 1;

	if (cfg->follow_forks) {
		struct bpf_program *prog =
			use_btf ? s->skel->progs.on_fork_btf : s->skel->progs.on_fork_raw;
		struct bpf_link **link =
			use_btf ? &s->skel->links.on_fork_btf : &s->skel->links.on_fork_raw;

		/* Kept in the skeleton's links so that detach/destroy release it. */
		*link = bpf_program__attach(prog);
		if (!*link) {
			log_error("cannot attach the fork tracepoint (%s)", strerror(errno));
			return 1;
		}
	}
	log_debug("%d ring buffers of %zu KiB", s->nr_rings, s->ring_bytes / 1024);
	return 0;
}

int session_add_target(struct session *s, uint32_t tgid)
{
	uint8_t one = 1;

	if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.target_tgids), &tgid, &one, BPF_ANY)) {
		log_error("cannot add pid %u to the target filter (%s)", tgid, strerror(errno));
		return -errno;
	}
	return 0;
}

int session_start(struct session *s, unsigned freq_hz, enum sample_event_kind kind)
{
	if (s->sched)
		s->sched_attached = attach_sched_programs(s) == 0;
	return perf_sampler_open(&s->sampler, s->skel->progs.on_sample, freq_hz, kind, s->online,
				 s->nr_possible);
}

int session_poll(struct session *s, int timeout_ms)
{
	struct epoll_event ev[8];
	uint64_t before;
	int n;

	/* Wait, but drain only after before_drain: it must run before any record is decoded. */
	n = epoll_wait(ring_buffer__epoll_fd(s->rb), ev, 8, timeout_ms);
	if (n < 0 && errno != EINTR)
		return -errno;
	before = clock_ns(CLOCK_MONOTONIC);
	if (s->before_drain && (n = s->before_drain(s->before_drain_ctx)) < 0)
		return n;
	/*
	 * BPF writes without waking us (wakeups are batched), so epoll only
	 * reports a ring once it is a quarter full. Drain every ring on each
	 * pass anyway: a new process must be seen while it is still alive, so
	 * that its mappings can be read for symbolization.
	 */
	n = ring_buffer__consume(s->rb);
	if (n >= 0)
		s->drained_before_ns = before;
	return n;
}

void session_stop(struct session *s)
{
	perf_sampler_close(&s->sampler);
	if (s->skel)
		bpfprof_bpf__detach(s->skel);
	/* Whatever was written before the detach is still in the rings. */
	if (s->before_drain)
		s->before_drain(s->before_drain_ctx);
	if (s->rb)
		ring_buffer__consume(s->rb);
}

void session_read_stats(struct session *s, struct session_stats *out)
{
	int ncpu = s->nr_possible;
	struct bpfprof_stats *per_cpu;
	uint32_t zero = 0;

	memset(out, 0, sizeof(*out));
	if (!s->skel)
		return;
	per_cpu = calloc((size_t)ncpu, sizeof(*per_cpu));
	if (!per_cpu)
		return;
	if (!bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.stats), &zero, per_cpu)) {
		for (int c = 0; c < ncpu; c++)
			for (int k = 0; k < EV_KIND_MAX && k < 8; k++) {
				out->emitted[k] += per_cpu[c].emitted[k];
				out->dropped[k] += per_cpu[c].dropped[k];
			}
	}
	free(per_cpu);
}

void session_close(struct session *s)
{
	perf_sampler_close(&s->sampler);
	ring_buffer__free(s->rb);
	if (s->ring_fds)
		for (int i = 0; i < s->nr_rings; i++)
			if (s->ring_fds[i] >= 0)
				close(s->ring_fds[i]);
	free(s->ring_fds);
	bpfprof_bpf__destroy(s->skel);
	free(s->online);
	memset(s, 0, sizeof(*s));
}
