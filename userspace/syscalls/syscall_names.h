/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * System call names by number, for the architecture bpfprof runs on. The
 * tables are generated at build time from the kernel's UAPI headers
 * (scripts/gen_syscall_names.sh), never typed by hand.
 */
#ifndef BPFPROF_SYSCALL_NAMES_H
#define BPFPROF_SYSCALL_NAMES_H

#include <stddef.h>

enum syscall_arch {
	SYSCALL_ARCH_X86_64 = 0,
	SYSCALL_ARCH_ARM64 = 1,
};

/* The architecture this build runs on. */
enum syscall_arch syscall_arch_native(void);

/* The name of syscall `nr` on `arch`, or NULL when it has none (unknown number or table). */
const char *syscall_name(enum syscall_arch arch, long nr);

/* Writes `nr`'s name, or "syscall_NR" for numbers without one, into buf; returns buf. */
const char *syscall_name_or_number(enum syscall_arch arch, long nr, char *buf, size_t size);

/* The number of syscall `name` on `arch`, or -1 when it has no such syscall. */
long syscall_number(enum syscall_arch arch, const char *name);

#endif
