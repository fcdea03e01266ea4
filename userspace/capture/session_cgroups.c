// SPDX-License-Identifier: BSD-2-Clause
/*
 * The --cgroup targets: the knobs the BPF filter is loaded with, and the
 * cgroups handed to it after load (by fd, and as references the kfunc
 * flavour keeps through an iterator).
 */
#include "session_cgroups.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <string.h>

#include "bpfprof.skel.h"
#include "../../bpf/bpfprof_abi.h"
#include "session.h"
#include "tp_flavours.h"
#include "../util/log.h"

/*
 * The kfunc flavour keeps struct cgroup references in a map, which the kernel
 * accepts only for a field whose pointer carries the "kptr" BTF type tag;
 * clang before 15 drops type tags from BTF.
 */
static bool object_has_kptr_tag(const struct bpf_object *obj)
{
	const struct btf *btf = bpf_object__btf(obj);
	const struct btf_type *t;
	int id;

	if (!btf)
		return false;
	id = btf__find_by_name_kind(btf, "cgroup_ref", BTF_KIND_STRUCT);
	if (id <= 0)
		return false;
	t = btf__type_by_id(btf, id);
	if (!t || btf_vlen(t) < 1)
		return false;
	t = btf__type_by_id(btf, btf_members(t)[0].type);
	if (!t || !btf_is_ptr(t))
		return false;
	t = btf__type_by_id(btf, t->type);
	return t && btf_kind(t) == BTF_KIND_TYPE_TAG;
}

/* Before load: the --cgroup knobs, and whether other tasks are tested with the kfunc. */
void session_configure_cgroups(struct session *s, const struct session_config *cfg)
{
	size_t n = cfg->nr_cgroups < BPFPROF_MAX_CGROUPS ? cfg->nr_cgroups : BPFPROF_MAX_CGROUPS;

	s->skel->rodata->nr_cgroups = (uint32_t)n;
	for (size_t i = 0; i < n; i++) {
		s->skel->rodata->cgroup_ids[i] = cfg->cgroups[i].id;
		s->skel->rodata->cgroup_levels[i] = cfg->cgroups[i].level;
	}
	/* Only tp_btf programs can call kfuncs. */
	s->cg_kfunc = n && cgroup_kfunc_supported() && tp_btf_supported("sched_switch");
	if (s->cg_kfunc && !object_has_kptr_tag(s->skel->obj)) {
		log_debug("the BPF object has no kptr type tags (built with clang < 15): no "
			  "cgroup kfunc");
		s->cg_kfunc = false;
	}
	bpf_program__set_autoload(s->skel->progs.stash_target_cgroup, s->cg_kfunc);
	if (n)
		log_debug("cgroup filter: %zu cgroup(s); other tasks tested with %s", n,
			  s->cg_kfunc ? "bpf_task_under_cgroup()" : "a walk of their ancestors");
}

/* Run the stash iterator over one cgroup: it keeps a reference in slot `slot`. */
static int stash_cgroup(struct session *s, uint32_t slot, int cgroup_fd)
{
	DECLARE_LIBBPF_OPTS(bpf_iter_attach_opts, opts);
	union bpf_iter_link_info linfo;
	char buf[64];

	memset(&linfo, 0, sizeof(linfo));
	linfo.cgroup.cgroup_fd = (uint32_t)cgroup_fd;
	linfo.cgroup.order = BPF_CGROUP_ITER_SELF_ONLY;
	opts.link_info = &linfo;
	opts.link_info_len = sizeof(linfo);
	s->skel->bss->stash_slot = slot;
	return session_run_iter(s->skel->progs.stash_target_cgroup, &opts, buf, sizeof(buf), NULL,
				NULL);
}

/* After load: hand the kernel the target cgroups. 0, or -errno after a one-line error. */
int session_install_cgroups(struct session *s, const struct session_config *cfg)
{
	int map_fd = bpf_map__fd(s->skel->maps.target_cgroups);

	for (uint32_t i = 0; i < s->skel->rodata->nr_cgroups; i++) {
		int fd = cfg->cgroups[i].fd, err;

		if (bpf_map_update_elem(map_fd, &i, &fd, BPF_ANY)) {
			log_error("cannot add cgroup %llu to the target filter (%s)",
				  (unsigned long long)cfg->cgroups[i].id, strerror(errno));
			return -errno;
		}
		if (s->cg_kfunc && (err = stash_cgroup(s, i, fd))) {
			log_error("cannot hand cgroup %llu to the BPF filter (%s); "
				  "BPFPROF_CGROUP_NO_KFUNC=1 avoids the kfunc",
				  (unsigned long long)cfg->cgroups[i].id, strerror(-err));
			return err;
		}
	}
	return 0;
}
