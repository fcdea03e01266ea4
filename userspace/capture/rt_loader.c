// SPDX-License-Identifier: BSD-2-Clause
/* See rt_loader.h. */
#include "rt_loader.h"

#include <errno.h>
#include <string.h>

#include "../../bpf/bpfprof_abi.h"
#include "../lang/hotspot_procs.h"
#include "../util/log.h"

void rt_loader_init(struct rt_loader *l, struct proc_shares *shares, struct hotspot_procs *jvms)
{
	memset(l, 0, sizeof(*l));
	l->shares = shares;
	l->jvms = jvms;
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

static int pend(struct rt_loader *l, uint32_t pid, uint32_t uid)
{
	struct rt_loader_pending p = { pid, uid };

	for (size_t i = 0; i < l->pending.len; i++)
		if (l->pending.data[i].pid == pid) {
			l->pending.data[i].uid = uid;
			return 0;
		}
	return vec_push(&l->pending, p) ? -ENOMEM : 0;
}

/* Asks the lang modules about pid: 1 published (or refused its share), 0 not yet, -ENOENT none. */
static int ask(struct rt_loader *l, uint32_t pid, uint32_t uid)
{
	struct rt_proc entry;
	int err = hotspot_procs_capture(l->jvms, pid, uid, &entry);

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
	int ret = hotspot_procs_note_maps(l->jvms, pid, maps);

	if (ret < 0)
		return ret;
	/* Only a runtime its mappings show now: not one of an image it exec'd away from. */
	ret = ret ? ask(l, pid, uid) : -ENOENT;
	if (ret == -ENOMEM)
		return ret;
	if (!ret)
		return pend(l, pid, uid);
	unpend(l, pid);
	if (ret < 0)
		proc_shares_withdraw(l->shares, PROC_SHARE_RT, pid);
	return 0;
}

int rt_loader_refresh(struct rt_loader *l)
{
	for (size_t i = 0; i < l->pending.len;) {
		struct rt_loader_pending p = l->pending.data[i];
		int ret = ask(l, p.pid, p.uid);

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
