// SPDX-License-Identifier: BSD-2-Clause
/* See rt_loader.h. */
#include "rt_loader.h"

#include <errno.h>
#include <string.h>

#include "../../bpf/bpfprof_abi.h"
#include "../util/log.h"

void rt_loader_init(struct rt_loader *l, struct proc_shares *shares,
		    const struct rt_module *modules, int n)
{
	memset(l, 0, sizeof(*l));
	l->shares = shares;
	for (int i = 0; i < n && i < RT_MAX_MODULES; i++)
		l->modules[l->nmodules++] = modules[i];
}

void rt_loader_free(struct rt_loader *l)
{
	vec_free(&l->pending);
	memset(l, 0, sizeof(*l));
}

static void unpend(struct rt_loader *l, uint32_t pid)
{
	for (size_t i = 0; i < l->pending.len; i++)
		if (l->pending.data[i].pid == pid) {
			l->pending.data[i] = l->pending.data[--l->pending.len];
			return;
		}
}

static int pend(struct rt_loader *l, uint32_t pid, uint32_t uid, int module)
{
	struct rt_loader_pending p = { pid, uid, module };

	for (size_t i = 0; i < l->pending.len; i++)
		if (l->pending.data[i].pid == pid) {
			l->pending.data[i] = p;
			return 0;
		}
	return vec_push(&l->pending, p) ? -ENOMEM : 0;
}

/* Asks module m about pid: 1 published (or refused its share), 0 not yet, -ENOENT none. */
static int ask(struct rt_loader *l, int m, uint32_t pid, uint32_t uid)
{
	const struct rt_module *mod = &l->modules[m];
	struct rt_proc entry;
	int err = mod->capture(mod->ctx, pid, uid, &entry);

	if (err == -EAGAIN)
		return 0;
	if (err)
		return -ENOENT;
	/* Refused (its user holds its share of the map): admitted when sampled. */
	err = proc_shares_publish(l->shares, PROC_SHARE_RT, pid, uid, &entry);
	if (err < 0)
		return err;
	if (!err) {
		l->processes++;
		log_debug("process %u: runtime frames of kind %u read in BPF", pid, entry.kind);
	}
	return 1;
}

int rt_loader_process(struct rt_loader *l, uint32_t pid, uint32_t uid, const map_entries_t *maps)
{
	int ret = -ENOENT, m;

	/* The first module whose runtime the mappings show now (not an image exec'd away from). */
	for (m = 0; m < l->nmodules; m++) {
		ret = l->modules[m].note_maps(l->modules[m].ctx, pid, maps);
		if (ret < 0)
			return ret;
		if (ret) {
			ret = ask(l, m, pid, uid);
			break;
		}
		ret = -ENOENT;
	}
	if (ret == -ENOMEM)
		return ret;
	if (!ret)
		return pend(l, pid, uid, m);
	unpend(l, pid);
	if (ret < 0)
		proc_shares_withdraw(l->shares, PROC_SHARE_RT, pid);
	return 0;
}

int rt_loader_refresh(struct rt_loader *l)
{
	for (size_t i = 0; i < l->pending.len;) {
		struct rt_loader_pending p = l->pending.data[i];
		int ret = ask(l, p.module, p.pid, p.uid);

		if (ret == -ENOMEM)
			return ret;
		if (ret)
			l->pending.data[i] = l->pending.data[--l->pending.len];
		else
			i++;
	}
	return 0;
}

void rt_loader_exited(struct rt_loader *l, uint32_t pid)
{
	unpend(l, pid);
	proc_shares_withdraw(l->shares, PROC_SHARE_RT, pid);
}
