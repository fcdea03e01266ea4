/* SPDX-License-Identifier: BSD-2-Clause */
/* A section of an ELF file by name, for readers of one section's data. */
#ifndef BPFPROF_UTIL_ELF_SECTION_H
#define BPFPROF_UTIL_ELF_SECTION_H

#include <gelf.h>

/* The first section called `name`, its header in *shdr; NULL when there is none. */
Elf_Scn *elf_section_by_name(Elf *elf, const char *name, GElf_Shdr *shdr);

#endif
