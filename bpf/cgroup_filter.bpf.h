/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * --cgroup (included by bpfprof.bpf.c before its handlers): a task is a
 * target when it is inside one of up to BPFPROF_MAX_CGROUPS cgroup v2 trees,
 * decided at each event from the task's cgroup of that instant, so
 * processes forked inside or moved in count from then on, and moved-out ones
 * stop counting. Three ways to ask, all the kernel's own ancestry test
 * (cgroup->ancestors[level of the target] == target):
 *
 *  - current task, any program type: bpf_current_task_under_cgroup() with
 *    the targets in a cgroup array (kernel 4.9+);
 *  - another task (switch's next, a wakee) in tp_btf programs on 6.5+: the
 *    bpf_task_under_cgroup() kfunc, with the targets' struct cgroup kept as
 *    kptrs that an iter/cgroup program stored once per target;
 *  - another task elsewhere (raw_tp, older kernels): the same test done by
 *    reading task->cgroups->dfl_cgrp's ancestor at the target's level.
 *
 * Only the kfunc flavour's programs (the *_btf_cg ones) reference kfuncs,
 * and they are loaded only when the kernel has them: a kernel without a
 * kfunc rejects any program that names it, even in dead code.
 */

/* Knobs: nr_cgroups == 0 means no cgroup filter. ids and levels are the targets'. */
const volatile __u32 nr_cgroups = 0;
const volatile __u64 cgroup_ids[BPFPROF_MAX_CGROUPS] = {};
const volatile __u32 cgroup_levels[BPFPROF_MAX_CGROUPS] = {};

/* Target cgroups by index, for bpf_current_task_under_cgroup(); filled by userspace. */
struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, BPFPROF_MAX_CGROUPS);
	__type(key, __u32);
	__type(value, __u32);
} target_cgroups SEC(".maps");

/* The same targets as referenced struct cgroup pointers, for the kfunc. */
struct cgroup_ref {
	struct cgroup __kptr *cgrp;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, BPFPROF_MAX_CGROUPS);
	__type(key, __u32);
	__type(value, struct cgroup_ref);
} target_cgroup_refs SEC(".maps");

/* Which target_cgroup_refs slot the next run of stash_target_cgroup fills. */
__u32 stash_slot = 0;

extern struct cgroup *bpf_cgroup_acquire(struct cgroup *cgrp) __ksym __weak;
extern void bpf_cgroup_release(struct cgroup *cgrp) __ksym __weak;
extern bool bpf_task_under_cgroup(struct task_struct *task, struct cgroup *ancestor) __ksym __weak;

/* Kernels before 6.1 keep ancestor ids instead of pointers. */
struct cgroup___pre61 {
	__u64 ancestor_ids[0];
} __attribute__((preserve_access_index));

/* The id of `cg`'s ancestor at `level` (cg itself at its own level); 0 if unreadable. */
static __always_inline __u64 cgroup_ancestor_id(struct cgroup *cg, __u32 level)
{
	__u64 id = 0;

	if (bpf_core_field_exists(cg->ancestors)) {
		struct cgroup *anc = NULL;

		bpf_core_read(&anc, sizeof(anc), &cg->ancestors[level]);
		return anc ? BPF_CORE_READ(anc, kn, id) : 0;
	}
	bpf_core_read(&id, sizeof(id), &((struct cgroup___pre61 *)cg)->ancestor_ids[level]);
	return id;
}

static __always_inline bool current_in_target_cgroups(void)
{
#pragma unroll
	for (__u32 i = 0; i < BPFPROF_MAX_CGROUPS; i++) {
		if (i >= nr_cgroups)
			break;
		if (bpf_current_task_under_cgroup(&target_cgroups, i) == 1)
			return true;
	}
	return false;
}

static __always_inline bool task_in_target_cgroups(struct task_struct *task, bool cg_kfunc)
{
	struct cgroup *cg;
	__u32 level;

	if (cg_kfunc) {
		/* A bounded loop, not unrolled (the lookup takes the index's address): 6.5+ only.
		 */
		for (__u32 i = 0; i < BPFPROF_MAX_CGROUPS; i++) {
			struct cgroup_ref *ref;
			struct cgroup *target;

			if (i >= nr_cgroups)
				break;
			ref = bpf_map_lookup_elem(&target_cgroup_refs, &i);
			if (!ref)
				continue;
			target = ref->cgrp;
			if (target && bpf_task_under_cgroup(task, target))
				return true;
		}
		return false;
	}
	cg = BPF_CORE_READ(task, cgroups, dfl_cgrp);
	if (!cg)
		return false;
	level = BPF_CORE_READ(cg, level);
#pragma unroll
	for (__u32 i = 0; i < BPFPROF_MAX_CGROUPS; i++) {
		if (i >= nr_cgroups)
			break;
		if (cgroup_levels[i] <= level &&
		    cgroup_ancestor_id(cg, cgroup_levels[i]) == cgroup_ids[i])
			return true;
	}
	return false;
}

/* The running task (any program type): its process passes -p/-- cmd and --cgroup. */
static __always_inline bool current_is_target(__u32 tgid)
{
	if (!tgid_is_target(tgid))
		return false;
	return !nr_cgroups || current_in_target_cgroups();
}

/* Another task (not `current`): see the file comment for cg_kfunc. */
static __always_inline bool task_is_target(struct task_struct *task, __u32 tgid, bool cg_kfunc)
{
	if (!tgid_is_target(tgid))
		return false;
	return !nr_cgroups || task_in_target_cgroups(task, cg_kfunc);
}

/*
 * Run once per target (userspace sets stash_slot and iterates over that one
 * cgroup): keeps a reference to the target's struct cgroup for the kfunc.
 */
SEC("iter/cgroup")
int stash_target_cgroup(struct bpf_iter__cgroup *ctx)
{
	struct cgroup *cg = ctx->cgroup, *ref, *old;
	struct cgroup_ref *slot;
	__u32 key = stash_slot;

	if (!cg)
		return 0;
	slot = bpf_map_lookup_elem(&target_cgroup_refs, &key);
	if (!slot)
		return 0;
	ref = bpf_cgroup_acquire(cg);
	if (!ref)
		return 0;
	old = bpf_kptr_xchg(&slot->cgrp, ref);
	if (old)
		bpf_cgroup_release(old);
	return 0;
}
