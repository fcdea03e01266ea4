// SPDX-License-Identifier: BSD-2-Clause
#include "prog_pair.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "../util/log.h"

bool tp_btf_supported(const char *tp)
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
	snprintf(name, sizeof(name), "btf_trace_%s", tp);
	ok = btf__find_by_name_kind(btf, name, BTF_KIND_TYPEDEF) > 0;
	btf__free(btf);
	return ok;
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
