// SPDX-License-Identifier: BSD-2-Clause
#include "held_waits.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/membarrier.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bpfprof.skel.h"
#include "../../bpf/bpfprof_abi.h"
#include "session.h"
#include "../util/log.h"

/*
 * Whether this kernel lets us wait for an RCU grace period: membarrier's
 * MEMBARRIER_CMD_GLOBAL is synchronize_rcu(), and every BPF program run on a
 * tracepoint is inside an RCU read-side section (and sched_switch's inside
 * __schedule(), with interrupts off). Refused on nohz_full kernels.
 */
static bool can_wait_grace_period(void)
{
	long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);

	return cmds > 0 && (cmds & MEMBARRIER_CMD_GLOBAL);
}

static int wait_grace_period(void)
{
	return syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) ? -errno : 0;
}

/*
 * Whether the kernel keeps sched_info (CONFIG_SCHED_INFO, and on kernels
 * before 5.14 delay accounting or schedstats switched on): then this
 * thread's run count, the third figure of /proc/self/schedstat, is not 0.
 * bpf/switch_clock.bpf.h reads wakeup times from it.
 */
static bool kernel_stamps_sched_info(void)
{
	unsigned long long runtime, run_delay, pcount = 0;
	FILE *f = fopen("/proc/self/schedstat", "re");

	if (!f)
		return false;
	if (fscanf(f, "%llu %llu %llu", &runtime, &run_delay, &pcount) != 3)
		pcount = 0;
	fclose(f);
	return pcount > 0;
}

/*
 * Short waits counted in the kernel instead of sent (bpf/fold_waits.bpf.h):
 * with both BTF-typed scheduler programs, no --cgroup, and a threshold
 * below which waits show nothing (the smallest of --sched-min, of
 * --syscall-min when blocking syscalls are named, and nothing when either
 * is 0). BPFPROF_FOLD_WAITS=0 turns it off, to compare.
 */
void held_waits_configure(struct session *s, const struct session_config *cfg, bool btf_programs)
{
	const char *env = getenv("BPFPROF_FOLD_WAITS");
	uint64_t min_ns = cfg->sched_min_ns;

	if (s->syscalls_from_switch && cfg->syscall_min_ns < min_ns)
		min_ns = cfg->syscall_min_ns;
	s->fold_waits = cfg->sched && btf_programs && !cfg->nr_cgroups && min_ns > 0 &&
			!(env && !strcmp(env, "0"));
	s->skel->rodata->fold_waits = s->fold_waits;
	s->skel->rodata->fold_min_ns = min_ns;
	/* Folded off-CPU time must still become off-CPU samples, one per interval. */
	s->skel->rodata->fold_off_ns =
		cfg->offcpu_stacks ? 1000000000ULL / (cfg->freq_hz ? cfg->freq_hz : 1) : ~0ULL;
	bpf_program__set_autoload(s->skel->progs.flush_held_waits, s->fold_waits);
	/* Switch-ins claim held switch-outs with plain stores but while the iterator runs. */
	env = getenv("BPFPROF_HELD_CLAIMS"); /* "cmpxchg": always atomic, to compare */
	s->plain_claims =
		s->fold_waits && can_wait_grace_period() && !(env && !strcmp(env, "cmpxchg"));
	s->skel->data->flush_in_progress = !s->plain_claims;
	if (s->fold_waits)
		log_debug("waits under %" PRIu64 " us are counted in the kernel, not sent;"
			  " held switch-outs are claimed %s",
			  min_ns / 1000, s->plain_claims ? "with plain stores" : "with cmpxchg");
}

void switch_clock_configure(struct session *s)
{
	/* BPFPROF_SWITCH_CLOCK=ktime: read the clock at every switch, to compare. */
	const char *env = getenv("BPFPROF_SWITCH_CLOCK");

	s->skel->rodata->switch_clock_from_rq = !(env && !strcmp(env, "ktime"));
	s->skel->rodata->sched_info_stamps = kernel_stamps_sched_info();
}

int session_flush_held_waits(struct session *s, uint64_t before_ns)
{
	struct switch_event rec;
	int err;

	if (!s->fold_waits || !s->sched_attached)
		return 0;
	s->skel->bss->flush_folded_ts = before_ns;
	if (s->plain_claims) {
		s->skel->data->flush_in_progress = true;
		if (wait_grace_period()) {
			/* Not known to be safe any more: claim with cmpxchg from now on. */
			log_debug("membarrier failed: held waits are claimed by cmpxchg now");
			s->plain_claims = false;
		}
	}
	err = session_run_iter(s->skel->progs.flush_held_waits, NULL, &rec,
			       offsetof(struct switch_event, ips), s->on_record, s->record_ctx);
	if (s->plain_claims)
		s->skel->data->flush_in_progress = false;
	return err;
}
