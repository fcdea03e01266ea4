// SPDX-License-Identifier: BSD-2-Clause
#include "session.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdatomic.h>
#include <inttypes.h>
#include <stddef.h>
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
#include "held_waits.h"
#include "session_cgroups.h"
#include "preflight.h"
#include "tp_flavours.h"
#include "timer_wakers.h"
#include "sideband.h"
#include "php_loader.h"
#include "python_loader.h"
#include "ruby_loader.h"
#include "rt_loader.h"
#include "stack_finish.h"
#include "unwind_loader.h"
#include "../util/clock.h"
#include "../util/log.h"
#include "../util/option_values.h"

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

/* The scheduler programs: switches, wakeups, new tasks' first wakeups. */
static int sched_tp_flavours(struct session *s, struct tp_flavours tps[3])
{
	struct bpfprof_bpf *k = s->skel;

	tps[0] = (struct tp_flavours){ .tp = "sched_switch",
				       .btf = k->progs.on_switch_btf,
				       .raw = k->progs.on_switch_raw,
				       .btf_cg = k->progs.on_switch_btf_cg,
				       .btf_link = &k->links.on_switch_btf,
				       .raw_link = &k->links.on_switch_raw,
				       .btf_cg_link = &k->links.on_switch_btf_cg };
	tps[1] = (struct tp_flavours){ .tp = "sched_waking",
				       .btf = k->progs.on_waking_btf,
				       .raw = k->progs.on_waking_raw,
				       .btf_cg = k->progs.on_waking_btf_cg,
				       .btf_link = &k->links.on_waking_btf,
				       .raw_link = &k->links.on_waking_raw,
				       .btf_cg_link = &k->links.on_waking_btf_cg };
	tps[2] = (struct tp_flavours){ .tp = "sched_wakeup_new",
				       .btf = k->progs.on_wakeup_new_btf,
				       .raw = k->progs.on_wakeup_new_raw,
				       .btf_cg = k->progs.on_wakeup_new_btf_cg,
				       .btf_link = &k->links.on_wakeup_new_btf,
				       .raw_link = &k->links.on_wakeup_new_raw,
				       .btf_cg_link = &k->links.on_wakeup_new_btf_cg };
	return 3;
}

/* The syscall programs: entry, exit, and the last totals of exiting threads. */
static int syscall_tp_flavours(struct session *s, struct tp_flavours tps[3])
{
	struct bpfprof_bpf *k = s->skel;

	tps[0] = (struct tp_flavours){ "sys_enter", k->progs.on_sys_enter_btf,
				       k->progs.on_sys_enter_raw, &k->links.on_sys_enter_btf,
				       &k->links.on_sys_enter_raw };
	tps[1] = (struct tp_flavours){ "sys_exit", k->progs.on_sys_exit_btf,
				       k->progs.on_sys_exit_raw, &k->links.on_sys_exit_btf,
				       &k->links.on_sys_exit_raw };
	tps[2] =
		(struct tp_flavours){ "sched_process_exit", k->progs.on_exit_syscalls_btf,
				      k->progs.on_exit_syscalls_raw, &k->links.on_exit_syscalls_btf,
				      &k->links.on_exit_syscalls_raw };
	return 3;
}

/*
 * Returns true when the sched_waking program is the BTF-typed one; sets
 * *switch_btf when the sched_switch one is.
 */
static bool choose_sched_programs(struct session *s, bool sched, bool *switch_btf)
{
	struct tp_flavours tps[3];
	int n = sched_tp_flavours(s, tps);
	bool waking_btf = false;

	*switch_btf = false;
	for (int i = 0; i < n; i++) {
		bool btf = tp_flavours_choose(&tps[i], sched, s->cg_kfunc);

		if (tps[i].btf == s->skel->progs.on_waking_btf)
			waking_btf = btf;
		if (tps[i].btf == s->skel->progs.on_switch_btf)
			*switch_btf = btf;
	}
	return waking_btf;
}

static void choose_syscall_programs(struct session *s, bool on)
{
	struct tp_flavours tps[3];
	int n = syscall_tp_flavours(s, tps);

	for (int i = 0; i < n; i++)
		tp_flavours_choose(&tps[i], on, s->cg_kfunc);
	bpf_program__set_autoload(s->skel->progs.dump_syscall_totals, on);
}

/* Attach one group of tps; a failure costs only that group's events. */
static bool attach_flavours(struct tp_flavours *tps, int n, const char *without)
{
	const char *failed = NULL;
	int err = tp_flavours_attach(tps, n, &failed);

	if (err)
		log_warn("cannot attach the %s tracepoint (%s): recording without %s", failed,
			 strerror(-err), without);
	return err == 0;
}

void session_dispatch(struct session *s, void *data, size_t size)
{
	int err;

	/* A stack copy waits for its sample, which is then parked with it (stack_finish.h). */
	if (s->finish && stack_finish_record(s->finish, data, size, clock_ns(CLOCK_MONOTONIC)))
		return;
	err = s->on_record(s->record_ctx, data, size);

	/* Keep draining: a failed record is reported once at the end. */
	if (err && !s->record_error)
		s->record_error = err;
}

static int on_ring_record(void *ctx, void *data, size_t size)
{
	struct session *s = ctx;
	const struct event_header *h = data;
	struct session_deferred d;

	/*
	 * A process refused an entry of the per-process maps is admitted on its
	 * samples; the files its user PCs fall in are kept first in the row store.
	 */
	if (s->unwind && size >= sizeof(*h) && h->kind == EV_SAMPLE) {
		const struct sample_event *ev = data;
		size_t n = 0;

		if (size >= offsetof(struct sample_event, ips) &&
		    size >= offsetof(struct sample_event, ips) +
				    sizeof(ev->ips[0]) * ((size_t)ev->kstack_len + ev->ustack_len))
			n = ev->ustack_len;
		/* A copied stack names the file it met once its copy is walked (stack_finish.h). */
		unwind_loader_sampled(s->unwind, h->pid, h->ts,
				      (ev->flags & SAMPLE_USTACK_COPIED)
					      ? USTACK_END_ROOT
					      : SAMPLE_USTACK_END(ev->flags),
				      n ? (const uint64_t *)ev->ips + ev->kstack_len : NULL, n);
	}
	if (size < sizeof(*h) || h->ts <= s->defer_after_ns) {
		session_dispatch(s, data, size);
		return 0;
	}
	/* Out of memory, decoding it now is still better than losing it. */
	d = (struct session_deferred){ .data = malloc(size), .size = size, .ts = h->ts };
	if (!d.data || vec_push(&s->deferred, d)) {
		free(d.data);
		session_dispatch(s, data, size);
		return 0;
	}
	memcpy(d.data, data, size);
	return 0;
}

/* The held records written up to `upto`, in the order they came; the rest stay held. */
static void dispatch_deferred(struct session *s, uint64_t upto)
{
	size_t kept = 0;

	for (size_t i = 0; i < s->deferred.len; i++) {
		struct session_deferred *d = &s->deferred.data[i];

		if (d->ts > upto) {
			s->deferred.data[kept++] = *d;
			continue;
		}
		session_dispatch(s, d->data, d->size);
		free(d->data);
	}
	s->deferred.len = kept;
}

/*
 * --unwind-memory's default: the unwind slots array and its rules are
 * preallocated by the kernel, 32 MiB (8 bytes a slot, two rows or one
 * 64 KiB page of code: some 8M rows, a build machine's libLLVM,
 * libclang-cpp and cc1 with room to spare, 512 KiB of rules). When it is
 * full, the tables sampled least recently make room (unwind_store_evict_for).
 */
#define UNWIND_MEMORY_DEFAULT (32ull << 20)
#define UNWIND_RULES_BYTES    ((uint64_t)UNWIND_MAX_RULES * sizeof(struct unwind_rule))

/*
 * Tests only: BPFPROF_TEST_PROC_MAPS=N shrinks the per-process maps
 * (unwind_procs, py_procs), so a test fills them with a small flood; the
 * same code decides as at full size.
 */
static size_t test_size(const char *name)
{
	const char *s = getenv(name);

	return s && atol(s) > 0 ? (size_t)atol(s) : 0;
}

/*
 * The slots of a store of cfg->unwind_memory bytes, the rules' taken
 * first. Tests only: BPFPROF_TEST_UNWIND_MEMORY=SIZE (as --unwind-memory
 * takes it) sets the budget below the flag's 4M too, so that a test fills
 * the store with a few programs; at least the rules and 1024 slots.
 */
static size_t unwind_slots_capacity(const struct session_config *cfg)
{
	uint64_t bytes = cfg->unwind_memory ? cfg->unwind_memory : UNWIND_MEMORY_DEFAULT, test;
	const char *env = getenv("BPFPROF_TEST_UNWIND_MEMORY");

	if (env && !parse_size(env, &test) && test >= UNWIND_RULES_BYTES + 1024 * 8 &&
	    test <= (1ull << 30))
		bytes = test;
	return (size_t)((bytes - UNWIND_RULES_BYTES) / sizeof(union unwind_slot));
}

/* 0: the maps' own size (bpf/unwind.bpf.h, bpf/python.bpf.h). */
static uint32_t proc_maps_capacity(void)
{
	size_t n = test_size("BPFPROF_TEST_PROC_MAPS");

	return n && n < 16384 ? (uint32_t)n : 0;
}

/*
 * 0: the file maps' own size (unwind_files, unwind_no_table). Tests only:
 * BPFPROF_TEST_FILE_MAPS=N shrinks them, so that a test fills them with a
 * few hundred files; the same code decides as at full size.
 */
static uint32_t file_maps_capacity(void)
{
	size_t n = test_size("BPFPROF_TEST_FILE_MAPS");

	return n && n < 16384 ? (uint32_t)n : 0;
}

/*
 * Without the CFI walk, on a kernel whose perf_event programs may use only
 * preallocated hash maps (before 6.1): the walk's hash maps are still
 * referenced by on_sample, and the verifier refuses the whole program for
 * them, so they become preallocated maps of one entry, never used.
 */
static void preallocate_unused_maps(struct session *s)
{
	struct bpf_map *map;

	if (preflight_noprealloc_hash_supported())
		return;
	bpf_object__for_each_map(map, s->skel->obj)
	{
		enum bpf_map_type type = bpf_map__type(map);

		if ((type == BPF_MAP_TYPE_HASH || type == BPF_MAP_TYPE_PERCPU_HASH) &&
		    (bpf_map__map_flags(map) & BPF_F_NO_PREALLOC)) {
			bpf_map__set_map_flags(map, bpf_map__map_flags(map) & ~BPF_F_NO_PREALLOC);
			bpf_map__set_max_entries(map, 1);
		}
	}
}

/* How long the start waits for the first tables (all of them, on an ordinary machine). */
#define UNWIND_SETTLE_MS 2000

/*
 * --unwind cfi: the targets' tables now; lifecycle_feed adds what they map
 * later. Without tables the BPF walker still follows frame pointers, so a
 * failure here is a warning: stacks are then what --unwind fp gives.
 */
static void open_unwind_tables(struct session *s, const struct session_config *cfg)
{
	int err;

	s->unwind = calloc(1, sizeof(*s->unwind));
	err = s->unwind ? unwind_loader_open(s->unwind, bpf_map__fd(s->skel->maps.unwind_slots),
					     bpf_map__fd(s->skel->maps.unwind_rules),
					     bpf_map__fd(s->skel->maps.unwind_files),
					     bpf_map__fd(s->skel->maps.unwind_procs),
					     bpf_map__fd(s->skel->maps.proc_uids_capped),
					     unwind_slots_capacity(cfg))
			: -ENOMEM;
	if (!err && cfg->unwind_cache_bytes)
		unwind_loader_use_cache(s->unwind, cfg->state_dir, cfg->unwind_cache_bytes);
	/* Python processes are found among those read (python_loader.h). */
	if (!err && cfg->python) {
		s->py = calloc(1, sizeof(*s->py));
		if (s->py) {
			proc_shares_use(&s->unwind->shares, PROC_SHARE_PY,
					bpf_map__fd(s->skel->maps.py_procs));
			python_loader_init(s->py, &s->unwind->shares, cfg->python);
			s->unwind->py = s->py;
		}
	}
	/* And PHP processes (php_loader.h). */
	if (!err && cfg->php) {
		s->php = calloc(1, sizeof(*s->php));
		if (s->php) {
			proc_shares_use(&s->unwind->shares, PROC_SHARE_PHP,
					bpf_map__fd(s->skel->maps.php_procs));
			php_loader_init(s->php, &s->unwind->shares, cfg->php);
			s->unwind->php = s->php;
		}
	}
	/* So are the Ruby processes (ruby_loader.h). */
	if (!err && cfg->ruby) {
		s->rbl = calloc(1, sizeof(*s->rbl));
		if (s->rbl) {
			int fd = bpf_map__fd(s->skel->maps.rb_procs);

			proc_shares_use(&s->unwind->shares, PROC_SHARE_RB, fd);
			ruby_loader_init(s->rbl, &s->unwind->shares, fd, cfg->ruby);
			s->unwind->rb = s->rbl;
		}
	}
	/* So are the JIT runtimes whose frames BPF reads (rt_loader.h). */
	if (!err && cfg->rt_nmodules) {
		s->rt = calloc(1, sizeof(*s->rt));
		if (s->rt) {
			proc_shares_use(&s->unwind->shares, PROC_SHARE_RT,
					bpf_map__fd(s->skel->maps.rt_procs));
			rt_loader_init(s->rt, &s->unwind->shares, cfg->rt_modules,
				       cfg->rt_nmodules);
			s->unwind->rt = s->rt;
		}
	}
	/*
	 * bpfprof's own libraries first (libc, the dynamic linker): a command it
	 * starts maps the same files, whose tables are then ready when its first
	 * samples come, before the side-band has told about its mappings.
	 */
	if (!err)
		err = unwind_loader_add_process(s->unwind, (uint32_t)getpid());
	if (!err && cfg->tgids)
		for (size_t i = 0; i < cfg->nr_tgids && !err; i++)
			err = unwind_loader_add_process(s->unwind, cfg->tgids[i]);
	else if (!err)
		err = unwind_loader_add_all(s->unwind);
	if (err) {
		log_warn("cannot load the unwind tables (%s); user stacks are walked with frame "
			 "pointers only",
			 strerror(-err));
		if (s->unwind)
			unwind_loader_close(s->unwind);
		free(s->unwind);
		s->unwind = NULL;
		return;
	}
	/*
	 * The tables are built on their own thread; sampling has not started, so
	 * waiting for them here (a bounded while) costs no sample, and a command's
	 * first samples find its libraries' rows.
	 */
	if (!unwind_loader_settle(s->unwind, UNWIND_SETTLE_MS))
		log_debug("unwind tables: still building after %d ms; the rest come while "
			  "recording",
			  UNWIND_SETTLE_MS);
	unwind_loader_log_summary(s->unwind);
	if (s->py)
		log_debug("Python frames: %zu Python processes at the start", s->py->processes);
	if (s->php)
		log_debug("PHP frames: %zu PHP processes at the start", s->php->processes);
	if (s->rbl)
		log_debug("Ruby frames: %zu Ruby processes at the start", s->rbl->processes);
}

/*
 * The perf_event_max_stack sysctl: bpf_get_stack() walks no deeper, so a
 * stack of that many frames was cut. The default when unreadable.
 */
static uint32_t perf_event_max_stack(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_max_stack", "re");
	unsigned int n = BPFPROF_MAX_KSTACK;

	if (f) {
		if (fscanf(f, "%u", &n) != 1 || n == 0)
			n = BPFPROF_MAX_KSTACK;
		fclose(f);
	}
	return n;
}

int session_open(struct session *s, const struct session_config *cfg)
{
	LIBBPF_OPTS(bpf_object_open_opts, open_opts);
	int template_fd, err;
	bool use_btf, want_fork, waking_btf, switch_btf;

	memset(s, 0, sizeof(*s));
	libbpf_set_print(libbpf_print);

	s->nr_online = cpus_online(&s->online, &s->nr_possible);
	if (s->nr_online <= 0) {
		log_error("cannot read the online CPUs from /sys/devices/system/cpu/online (%s)",
			  strerror(-s->nr_online));
		return s->nr_online < 0 ? s->nr_online : -ENODEV;
	}
	s->nr_rings = s->nr_possible;
	s->ring_bytes = ring_size_for(cfg->freq_hz, cfg->sched, s->nr_rings);
	if (cfg->ring_bytes) {
		/* The kernel wants a power of two, a multiple of the page size. */
		size_t page = (size_t)sysconf(_SC_PAGESIZE), size = page;

		while (size < cfg->ring_bytes && size < MAX_RING_BYTES)
			size *= 2;
		s->ring_bytes = size;
	}

	if (preflight_btf_is_custom())
		open_opts.btf_custom_path = preflight_btf_path();
	s->skel = bpfprof_bpf__open_opts(&open_opts);
	if (!s->skel) {
		log_error("cannot open the BPF object (%s)", strerror(errno));
		return -errno;
	}
	s->skel->rodata->include_idle = cfg->include_idle;
	s->skel->rodata->filter_tgid = cfg->tgids != NULL;
	s->skel->rodata->follow_forks = cfg->follow_forks;
	s->skel->rodata->nr_rings = (uint32_t)s->nr_rings;
	s->skel->rodata->wakeup_bytes = s->ring_bytes / 4;
	s->skel->rodata->offcpu_stacks = cfg->offcpu_stacks;
	s->skel->rodata->cfi_unwind = cfg->unwind_cfi;
	s->skel->rodata->unwind_find_vma = cfg->unwind_cfi && preflight_find_vma_supported();
	/* Python frames: the interpreters are found as the unwinder reads each process. */
	s->skel->rodata->python_frames = cfg->unwind_cfi && cfg->python;
	s->skel->rodata->runtime_frames = cfg->unwind_cfi && cfg->rt_nmodules;
	bpf_program__set_autoload(s->skel->progs.on_sample_python, cfg->unwind_cfi && cfg->python);
	s->skel->rodata->php_frames = cfg->unwind_cfi && cfg->php;
	bpf_program__set_autoload(s->skel->progs.on_sample_php, cfg->unwind_cfi && cfg->php);
	s->skel->rodata->ruby_frames = cfg->unwind_cfi && cfg->ruby;
	bpf_program__set_autoload(s->skel->progs.on_sample_ruby, cfg->unwind_cfi && cfg->ruby);
	s->skel->rodata->perf_max_stack = perf_event_max_stack();
	session_copies_configure(s, cfg->unwind_cfi ? cfg->stack_copy_bytes : 0);
	if (cfg->unwind_cfi) {
		bpf_map__set_max_entries(s->skel->maps.unwind_slots, unwind_slots_capacity(cfg));
		if (proc_maps_capacity()) {
			bpf_map__set_max_entries(s->skel->maps.unwind_procs, proc_maps_capacity());
			bpf_map__set_max_entries(s->skel->maps.py_procs, proc_maps_capacity());
			bpf_map__set_max_entries(s->skel->maps.php_procs, proc_maps_capacity());
			bpf_map__set_max_entries(s->skel->maps.rb_procs, proc_maps_capacity());
		}
		if (file_maps_capacity()) {
			bpf_map__set_max_entries(s->skel->maps.unwind_files, file_maps_capacity());
			bpf_map__set_max_entries(s->skel->maps.unwind_no_table,
						 file_maps_capacity());
		}
	} else {
		/* No tables: the rules' 512 KiB are not preallocated for nothing. */
		bpf_map__set_max_entries(s->skel->maps.unwind_rules, 1);
		preallocate_unused_maps(s);
	}
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
		err = -errno;
		log_error("cannot create a %zu KiB BPF ring buffer (%s); bpfprof needs kernel 5.8+",
			  s->ring_bytes / 1024, strerror(-err));
		if (template_fd >= 0)
			close(template_fd);
		return err;
	}

	session_configure_cgroups(s, cfg);
	use_btf = tp_btf_supported("sched_process_fork");
	want_fork = cfg->follow_forks || cfg->unwind_cfi;
	bpf_program__set_autoload(s->skel->progs.on_fork_btf, want_fork && use_btf);
	bpf_program__set_autoload(s->skel->progs.on_fork_raw, want_fork && !use_btf);
	bpf_program__set_autoload(s->skel->progs.on_exec, cfg->unwind_cfi);
	s->sched = cfg->sched;
	s->skel->rodata->sched_min_ns = cfg->sched_min_ns;
	/*
	 * Keeping short waits' wakeups with the task needs the wakee's task
	 * storage, which only the BTF-typed sched_waking program can reach;
	 * with --sched-min 0 every wakeup is shown anyway.
	 */
	waking_btf = choose_sched_programs(s, cfg->sched, &switch_btf);
	timer_wakers_choose(s->skel, cfg->sched);
	s->skel->rodata->defer_wakeups = waking_btf && cfg->sched_min_ns > 0;
	s->syscalls = cfg->syscalls;
	s->syscalls_from_switch = cfg->syscalls_from_switch && cfg->sched;
	s->skel->rodata->syscalls_from_switch = s->syscalls_from_switch;
	held_waits_configure(s, cfg, waking_btf && switch_btf && cfg->sched_min_ns > 0);
	switch_clock_configure(s);
	s->skel->rodata->syscall_min_ns = cfg->syscall_min_ns;
	s->skel->rodata->self_tgid = (uint32_t)getpid();
	choose_syscall_programs(s, cfg->syscalls);
	/* Stacks of threads blocked all along: for their off-CPU samples (bpf_task_pt_regs, 5.15).
	 */
	s->task_stacks = cfg->sched && preflight_task_stacks_supported();
	bpf_program__set_autoload(s->skel->progs.dump_task_stacks, s->task_stacks);
	tp_btf_release();

	err = bpfprof_bpf__load(s->skel);
	close(template_fd); /* the loaded outer map keeps what it needs */
	if (err == -EMFILE || err == -ENFILE) {
		log_error("cannot load bpfprof's BPF programs: %s; raise the open-file limit "
			  "(ulimit -n)",
			  strerror(-err));
		return err;
	}
	if (err) {
		log_error(
			"the kernel rejected bpfprof's BPF programs (%s); run with -vv to see the "
			"verifier log, and check that the kernel is 5.8 or newer",
			strerror(-err));
		return err;
	}

	/* on_sample goes on in on_sample_python for a Python process (a tail call). */
	if (cfg->unwind_cfi && cfg->python) {
		__u32 zero = 0;
		int prog = bpf_program__fd(s->skel->progs.on_sample_python);

		if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.python_tail), &zero, &prog,
					BPF_ANY))
			log_warn("cannot chain the Python frames program (%s): stacks show the "
				 "interpreter's C functions",
				 strerror(errno));
	}
	/* And in on_sample_php for a PHP process. */
	if (cfg->unwind_cfi && cfg->php) {
		__u32 zero = 0;
		int prog = bpf_program__fd(s->skel->progs.on_sample_php);

		if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.php_tail), &zero, &prog, BPF_ANY))
			log_warn("cannot chain the PHP frames program (%s): stacks show the "
				 "engine's C functions",
				 strerror(errno));
	}
	/* And in on_sample_ruby for a Ruby process (bpf/ruby.bpf.h). */
	if (cfg->unwind_cfi && cfg->ruby) {
		__u32 zero = 0;
		int prog = bpf_program__fd(s->skel->progs.on_sample_ruby);

		if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.ruby_tail), &zero, &prog,
					BPF_ANY))
			log_warn("cannot chain the Ruby frames program (%s): stacks show the "
				 "interpreter's C functions",
				 strerror(errno));
	}
	/*
	 * Every slot is "none" before the first can fail: session_close closes
	 * the slots, and an early return must not make it close whatever
	 * numbers malloc left there (the output file, a pipe, stdin).
	 */
	s->ring_fds = malloc(sizeof(*s->ring_fds) * (size_t)s->nr_rings);
	if (!s->ring_fds) {
		log_error("out of memory");
		return -ENOMEM;
	}
	for (int i = 0; i < s->nr_rings; i++)
		s->ring_fds[i] = -1;
	s->on_record = cfg->on_record;
	s->record_ctx = cfg->ctx;
	s->defer_after_ns = UINT64_MAX; /* session_poll sets it at each drain */
	for (int i = 0; i < s->nr_rings; i++) {
		int fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, NULL, 0, 0, (uint32_t)s->ring_bytes,
					NULL);
		uint32_t key = (uint32_t)i;

		if (fd < 0) {
			log_error("cannot create a %zu KiB ring buffer for CPU %d (%s); lower -F, "
				  "or raise the open-file or memlock limit",
				  s->ring_bytes / 1024, i, strerror(errno));
			return -errno;
		}
		s->ring_fds[i] = fd;
		if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.rings), &key, &fd, BPF_ANY)) {
			log_error("cannot install ring buffer %d (%s)", i, strerror(errno));
			return -errno;
		}
		/* A failed add leaves the manager as it was: session_close frees it. */
		if (s->rb ? ring_buffer__add(s->rb, fd, on_ring_record, s) != 0
			  : !(s->rb = ring_buffer__new(fd, on_ring_record, s, NULL))) {
			log_error("cannot poll ring buffer %d (%s); raise the open-file limit", i,
				  strerror(errno));
			return -errno;
		}
	}

	/*
	 * After the rings, which the recording cannot do without: the tables are
	 * optional (frame pointers without them), and under a low open-file limit
	 * the rings must be the one thing that fails, said once.
	 */
	if (cfg->unwind_cfi)
		open_unwind_tables(s, cfg);
	if (session_copies_open(s))
		log_warn("no memory for stack copies: a program's first stacks stop where its "
			 "table is still being built");

	for (size_t i = 0; i < cfg->nr_tgids; i++)
		if ((err = session_add_target(s, cfg->tgids[i])))
			return err;
	if ((err = session_install_cgroups(s, cfg)))
		return err;

	if (want_fork) {
		struct bpf_program *prog =
			use_btf ? s->skel->progs.on_fork_btf : s->skel->progs.on_fork_raw;
		struct bpf_link **link =
			use_btf ? &s->skel->links.on_fork_btf : &s->skel->links.on_fork_raw;

		/* Kept in the skeleton's links so that detach/destroy release it. */
		*link = bpf_program__attach(prog);
		if (!*link) {
			log_error("cannot attach the fork tracepoint (%s)", strerror(errno));
			return -errno;
		}
	}
	if (cfg->unwind_cfi) {
		s->skel->links.on_exec = bpf_program__attach(s->skel->progs.on_exec);
		if (!s->skel->links.on_exec) {
			log_error("cannot attach the exec tracepoint for --unwind cfi (%s); use "
				  "--unwind fp",
				  strerror(errno));
			return -errno;
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
	struct tp_flavours tps[3];

	if (s->sched)
		s->sched_attached =
			attach_flavours(tps, sched_tp_flavours(s, tps), "scheduler events");
	if (s->sched_attached)
		timer_wakers_attach(s->skel);
	if (s->syscalls)
		s->syscalls_attached =
			attach_flavours(tps, syscall_tp_flavours(s, tps), "syscall events");
	return perf_sampler_open(&s->sampler, s->skel->progs.on_sample, freq_hz, kind, s->online,
				 s->nr_possible);
}

int session_watch_fds(struct session *s, struct sideband *sb)
{
	/* session_poll drains after any wakeup and reads no event's data: any value will do. */
	int err = sideband_add_to_epoll(sb, ring_buffer__epoll_fd(s->rb), UINT64_MAX);
	int wake = s->unwind ? unwind_loader_wake_fd(s->unwind) : -1;

	/* A table built wakes the loop too, which publishes it (before_drain). */
	if (!err && wake >= 0) {
		struct epoll_event ev = { .events = EPOLLIN, .data.u64 = UINT64_MAX };

		if (epoll_ctl(ring_buffer__epoll_fd(s->rb), EPOLL_CTL_ADD, wake, &ev))
			err = -errno;
	}
	return err;
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
	if (s->drained_before_ns && before - s->drained_before_ns > s->longest_drain_gap_ns)
		s->longest_drain_gap_ns = before - s->drained_before_ns;
	if (s->before_drain && (n = s->before_drain(s->before_drain_ctx)) < 0)
		return n;
	/* The side-band is read up to `before`: what was written until then can be decoded. */
	dispatch_deferred(s, before);
	s->defer_after_ns = s->before_drain ? before : UINT64_MAX;
	/*
	 * BPF writes without waking us (wakeups are batched), so epoll only
	 * reports a ring once it is a quarter full. Drain every ring on each
	 * pass anyway: a new process must be seen while it is still alive, so
	 * that its mappings can be read for symbolization.
	 */
	n = ring_buffer__consume(s->rb);
	if (n >= 0) {
		s->drained_before_ns = before;
		atomic_fetch_add_explicit(&s->drains, 1, memory_order_relaxed);
	}
	session_copies_poll(s, false);
	return n;
}

uint64_t session_take_longest_drain_gap(struct session *s)
{
	uint64_t gap = s->longest_drain_gap_ns;

	s->longest_drain_gap_ns = 0;
	return gap;
}

void session_stop(struct session *s)
{
	perf_sampler_close(&s->sampler);
	if (s->skel)
		bpfprof_bpf__detach(s->skel);
	/* Whatever was written before the detach is still in the rings. */
	if (s->before_drain)
		s->before_drain(s->before_drain_ctx);
	dispatch_deferred(s, UINT64_MAX);
	s->defer_after_ns = UINT64_MAX;
	if (s->rb)
		ring_buffer__consume(s->rb);
	session_copies_poll(s, true);
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
		for (int c = 0; c < ncpu; c++) {
			for (int k = 0; k < EV_KIND_MAX && k < 8; k++) {
				out->emitted[k] += per_cpu[c].emitted[k];
				out->dropped[k] += per_cpu[c].dropped[k];
			}
			out->stack_copy_no_budget += per_cpu[c].stack_copy_no_budget;
		}
	}
	free(per_cpu);
}

int session_dump_syscall_totals(struct session *s)
{
	struct syscall_totals_event rec;

	if (!s->syscalls_attached)
		return 0;
	return session_run_iter(s->skel->progs.dump_syscall_totals, NULL, &rec, sizeof(rec),
				s->on_record, s->record_ctx);
}

void session_close(struct session *s)
{
	session_copies_close(s);
	for (size_t i = 0; i < s->deferred.len; i++)
		free(s->deferred.data[i].data);
	vec_free(&s->deferred);
	perf_sampler_close(&s->sampler);
	ring_buffer__free(s->rb);
	if (s->ring_fds)
		for (int i = 0; i < s->nr_rings; i++)
			if (s->ring_fds[i] >= 0)
				close(s->ring_fds[i]);
	free(s->ring_fds);
	if (s->py) {
		python_loader_free(s->py);
		free(s->py);
		s->py = NULL;
	}
	if (s->php) {
		php_loader_free(s->php);
		free(s->php);
		s->php = NULL;
	}
	if (s->rbl) {
		ruby_loader_free(s->rbl);
		free(s->rbl);
		s->rbl = NULL;
	}
	if (s->rt) {
		rt_loader_free(s->rt);
		free(s->rt);
		s->rt = NULL;
	}
	if (s->unwind) {
		unwind_loader_log_summary(s->unwind);
		unwind_loader_close(s->unwind);
		free(s->unwind);
	}
	bpfprof_bpf__destroy(s->skel);
	free(s->online);
	memset(s, 0, sizeof(*s));
}
