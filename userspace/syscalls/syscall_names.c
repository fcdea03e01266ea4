// SPDX-License-Identifier: BSD-2-Clause
#include "syscall_names.h"

#include <stdio.h>
#include <string.h>

#define SYSCALL_NAME(nr, name) [nr] = name,

#ifdef BPFPROF_HAVE_SYSCALLS_X86_64
static const char *const x86_64_names[] = {
#include "syscall_names_x86_64.inc"
};
#endif
#ifdef BPFPROF_HAVE_SYSCALLS_ARM64
static const char *const arm64_names[] = {
#include "syscall_names_arm64.inc"
};
#endif

#undef SYSCALL_NAME

struct syscall_table {
	const char *const *names;
	size_t len;
};

static struct syscall_table table_of(enum syscall_arch arch)
{
	switch (arch) {
#ifdef BPFPROF_HAVE_SYSCALLS_X86_64
	case SYSCALL_ARCH_X86_64:
		return (struct syscall_table){ x86_64_names,
					       sizeof(x86_64_names) / sizeof(x86_64_names[0]) };
#endif
#ifdef BPFPROF_HAVE_SYSCALLS_ARM64
	case SYSCALL_ARCH_ARM64:
		return (struct syscall_table){ arm64_names,
					       sizeof(arm64_names) / sizeof(arm64_names[0]) };
#endif
	default:
		return (struct syscall_table){ NULL, 0 };
	}
}

enum syscall_arch syscall_arch_native(void)
{
#if defined(__aarch64__)
	return SYSCALL_ARCH_ARM64;
#else
	return SYSCALL_ARCH_X86_64;
#endif
}

const char *syscall_name(enum syscall_arch arch, long nr)
{
	struct syscall_table t = table_of(arch);

	if (nr < 0 || (size_t)nr >= t.len)
		return NULL;
	return t.names[nr];
}

const char *syscall_name_or_number(enum syscall_arch arch, long nr, char *buf, size_t size)
{
	const char *name = syscall_name(arch, nr);

	if (name)
		snprintf(buf, size, "%s", name);
	else
		snprintf(buf, size, "syscall_%ld", nr);
	return buf;
}

long syscall_number(enum syscall_arch arch, const char *name)
{
	struct syscall_table t = table_of(arch);

	for (size_t i = 0; i < t.len; i++)
		if (t.names[i] && !strcmp(t.names[i], name))
			return (long)i;
	return -1;
}
