/* SPDX-License-Identifier: BSD-2-Clause */
/* An ELF file's bytes by virtual address (interpreter readers); its code's bias: elf_section.h. */
#ifndef BPFPROF_UTIL_ELF_VADDR_H
#define BPFPROF_UTIL_ELF_VADDR_H

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The `len` bytes at ELF address `vaddr`, from the file's PT_LOAD holding them all. */
bool elf_read_vaddr(Elf *elf, uint64_t vaddr, void *out, size_t len);

#endif
