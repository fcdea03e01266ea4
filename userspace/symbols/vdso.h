/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The vDSO: code the kernel maps into every process, with no file behind
 * it. Every process of one architecture maps the same image, so ours serves
 * for all of them.
 */
#ifndef BPFPROF_VDSO_H
#define BPFPROF_VDSO_H

#include "elf_symtab.h"

/*
 * Load this process's vDSO into `t` (zeroed). Frame offsets into the vDSO
 * are `address - start of the [vdso] mapping`, since it is mapped whole from
 * offset 0. Returns 0, -ENOENT when there is no vDSO, or another -errno.
 */
int vdso_load(struct elf_symtab *t);

/*
 * A malloc'd copy of this process's vDSO image (the whole [vdso] mapping,
 * which libelf may parse and write to); 0, -ENOENT or -ENOMEM.
 */
int vdso_copy(void **image, size_t *size);

#endif
