/* SPDX-License-Identifier: BSD-2-Clause */
/* The libdw-built unwind table of before issue 27, for comparisons (tests only). */
#ifndef BPFPROF_TESTS_CFI_TABLE_LIBDW_H
#define BPFPROF_TESTS_CFI_TABLE_LIBDW_H

#include "unwind/cfi_table.h"

int cfi_table_build_libdw(Elf *elf, struct cfi_table *out);

#endif
