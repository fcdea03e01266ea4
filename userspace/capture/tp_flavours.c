// SPDX-License-Identifier: BSD-2-Clause
#include "tp_flavours.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "../util/log.h"

/*
 * The kernel's BTF, parsed once for all the questions a session asks (it is
 * megabytes; parsing it per tracepoint cost tens of ms each at startup).
 */
static struct btf *vmlinux_btf;
static bool vmlinux_btf_tried;

static const struct btf *kernel_btf(void)
{
	if (!vmlinux_btf_tried) {
		vmlinux_btf_tried = true;
		vmlinux_btf = btf__load_vmlinux_btf();
	}
	return vmlinux_btf;
}

bool tp_btf_supported(const char *tp)
{
	char name[128];

	/* Tests (and users debugging the fallback) take the older kernels' path. */
	if (getenv("BPFPROF_FORCE_RAW_TP") || !kernel_btf())
		return false;
	snprintf(name, sizeof(name), "btf_trace_%s", tp);
	return btf__find_by_name_kind(vmlinux_btf, name, BTF_KIND_TYPEDEF) > 0;
}

bool cgroup_kfunc_supported(void)
{
	static const char *const funcs[] = { "bpf_task_under_cgroup", "bpf_cgroup_acquire",
					     "bpf_cgroup_release" };

	if (getenv("BPFPROF_CGROUP_NO_KFUNC") || !kernel_btf())
		return false;
	for (size_t i = 0; i < sizeof(funcs) / sizeof(funcs[0]); i++)
		if (btf__find_by_name_kind(vmlinux_btf, funcs[i], BTF_KIND_FUNC) <= 0)
			return false;
	/* The iterator that hands the program each target's struct cgroup (6.1+). */
	return btf__find_by_name_kind(vmlinux_btf, "bpf_iter__cgroup", BTF_KIND_STRUCT) > 0;
}

void tp_btf_release(void)
{
	btf__free(vmlinux_btf);
	vmlinux_btf = NULL;
	vmlinux_btf_tried = false;
}

bool tp_flavours_choose(struct tp_flavours *p, bool on, bool cg_kfunc)
{
	bool btf = on && tp_btf_supported(p->tp);
	bool cg = btf && cg_kfunc && p->btf_cg;

	bpf_program__set_autoload(p->btf, btf && !cg);
	bpf_program__set_autoload(p->raw, on && !btf);
	if (p->btf_cg)
		bpf_program__set_autoload(p->btf_cg, cg);
	if (on)
		log_debug("%s: %s program", p->tp,
			  cg	? "tp_btf (cgroup kfunc)"
			  : btf ? "tp_btf"
				: "raw_tp");
	return btf;
}

/* The loaded flavour of a tracepoint and where its link goes. */
static struct bpf_program *chosen(const struct tp_flavours *p, struct bpf_link ***link)
{
	if (p->btf_cg && bpf_program__autoload(p->btf_cg)) {
		*link = p->btf_cg_link;
		return p->btf_cg;
	}
	if (bpf_program__autoload(p->btf)) {
		*link = p->btf_link;
		return p->btf;
	}
	*link = p->raw_link;
	return p->raw;
}

int tp_flavours_attach(struct tp_flavours *tps, int n, const char **failed)
{
	for (int i = 0; i < n; i++) {
		struct bpf_link **link;
		struct bpf_program *prog = chosen(&tps[i], &link);

		*link = bpf_program__attach(prog);
		if (!*link) {
			int err = -errno;

			*failed = tps[i].tp;
			for (int j = 0; j < n; j++) {
				chosen(&tps[j], &link);
				bpf_link__destroy(*link);
				*link = NULL;
			}
			return err;
		}
	}
	return 0;
}
