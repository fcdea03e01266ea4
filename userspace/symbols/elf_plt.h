/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Names for PLT stubs. The linker gives the stubs in .plt, .plt.sec and
 * .plt.got no symbols, so a sample in one (a call through the PLT, lazy
 * binding) would show as "prog+0x1030". Like perf and objdump, each stub is
 * named after the function it jumps to, "getenv@plt", found by decoding the
 * stub's indirect jump to its GOT slot and the dynamic relocation that fills
 * that slot; the lazy-binding stub at the head of .plt is "[plt]".
 */
#ifndef BPFPROF_ELF_PLT_H
#define BPFPROF_ELF_PLT_H

#include <libelf.h>
#include <stdint.h>

#include "../util/vec.h"

struct plt_stub {
	uint64_t start, size; /* virtual address and bytes of the stub */
	char *name;	      /* malloc'd: "getenv@plt", or "[plt]" */
};

typedef VEC(struct plt_stub) plt_stubs_t;

/*
 * Append the named stubs of `elf` (x86_64 and arm64; other machines and
 * files without PLT sections give none) to `out`. 0 or -ENOMEM; a
 * malformed file is not an error, its stubs just stay unnamed.
 */
int elf_plt_stubs(Elf *elf, plt_stubs_t *out);

void plt_stubs_free(plt_stubs_t *stubs);

#endif
