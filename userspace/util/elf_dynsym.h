/* SPDX-License-Identifier: BSD-2-Clause */
/* The defined dynamic symbols of an ELF file, one by one (runtimes find their exports so). */
#ifndef BPFPROF_UTIL_ELF_DYNSYM_H
#define BPFPROF_UTIL_ELF_DYNSYM_H

#include <gelf.h>
#include <stdbool.h>

/*
 * Calls fn for each defined symbol of .dynsym, with its name, until fn
 * returns false. Symbols without a name are skipped.
 */
void elf_dynsym_each(Elf *elf, bool (*fn)(void *ctx, const char *name, const GElf_Sym *sym),
		     void *ctx);

#endif
