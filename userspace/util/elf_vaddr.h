/* SPDX-License-Identifier: BSD-2-Clause */
/* An ELF file's bytes by virtual address, and where its code's segment sits (interpreter readers).
 */
#ifndef BPFPROF_UTIL_ELF_VADDR_H
#define BPFPROF_UTIL_ELF_VADDR_H

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The `len` bytes at ELF address `vaddr`, from the file's PT_LOAD holding them all. */
bool elf_read_vaddr(Elf *elf, uint64_t vaddr, void *out, size_t len);

/*
 * p_vaddr - p_offset of the executable PT_LOAD: a process's address of an
 * ELF address is vaddr + (mapping start - mapping offset - this).
 */
bool elf_exec_bias(Elf *elf, int64_t *bias);

#endif
