// SPDX-License-Identifier: BSD-2-Clause
#include "prog_pair.h"

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

bool tp_btf_supported(const char *tp)
{
	char name[128];

	/* Tests (and users debugging the fallback) take the older kernels' path. */
	if (getenv("BPFPROF_FORCE_RAW_TP"))
		return false;
	if (!vmlinux_btf_tried) {
		vmlinux_btf_tried = true;
		vmlinux_btf = btf__load_vmlinux_btf();
	}
	if (!vmlinux_btf)
		return false;
	snprintf(name, sizeof(name), "btf_trace_%s", tp);
	return btf__find_by_name_kind(vmlinux_btf, name, BTF_KIND_TYPEDEF) > 0;
}

void tp_btf_release(void)
{
	btf__free(vmlinux_btf);
	vmlinux_btf = NULL;
	vmlinux_btf_tried = false;
}

bool prog_pair_choose(struct prog_pair *p, bool on)
{
	bool btf = on && tp_btf_supported(p->tp);

	bpf_program__set_autoload(p->btf, btf);
	bpf_program__set_autoload(p->raw, on && !btf);
	if (on)
		log_debug("%s: %s program", p->tp, btf ? "tp_btf" : "raw_tp");
	return btf;
}

int prog_pairs_attach(struct prog_pair *pairs, int n, const char **failed)
{
	for (int i = 0; i < n; i++) {
		bool btf = bpf_program__autoload(pairs[i].btf);
		struct bpf_link **link = btf ? pairs[i].btf_link : pairs[i].raw_link;

		*link = bpf_program__attach(btf ? pairs[i].btf : pairs[i].raw);
		if (!*link) {
			int err = -errno;

			*failed = pairs[i].tp;
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
