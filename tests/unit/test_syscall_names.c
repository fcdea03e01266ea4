// SPDX-License-Identifier: BSD-2-Clause
/*
 * The generated syscall tables against numbers the kernel's ABI fixed long
 * ago, and against the C library's own SYS_ constants for the native
 * architecture: a generator that mis-parses its header fails here.
 */
#include <sys/syscall.h>

#include "syscalls/syscall_names.h"
#include "test.h"

static void native_matches_libc(void)
{
	enum syscall_arch arch = syscall_arch_native();

	CHECK_EQ_STR(syscall_name(arch, SYS_read), "read");
	CHECK_EQ_STR(syscall_name(arch, SYS_write), "write");
	CHECK_EQ_STR(syscall_name(arch, SYS_futex), "futex");
	CHECK_EQ_STR(syscall_name(arch, SYS_getppid), "getppid");
	CHECK_EQ_STR(syscall_name(arch, SYS_epoll_pwait), "epoll_pwait");
	CHECK_EQ_STR(syscall_name(arch, SYS_fcntl), "fcntl");
	CHECK_EQ_STR(syscall_name(arch, SYS_clone3), "clone3");
	CHECK_EQ_INT(syscall_number(arch, "nanosleep"), SYS_nanosleep);
	CHECK_EQ_INT(syscall_number(arch, "openat"), SYS_openat);
}

static void fixed_numbers_per_arch(void)
{
	/* x86_64's table is built wherever its header is installed (x86 machines). */
	if (syscall_name(SYSCALL_ARCH_X86_64, 0)) {
		CHECK_EQ_STR(syscall_name(SYSCALL_ARCH_X86_64, 0), "read");
		CHECK_EQ_STR(syscall_name(SYSCALL_ARCH_X86_64, 39), "getpid");
		CHECK_EQ_STR(syscall_name(SYSCALL_ARCH_X86_64, 202), "futex");
		CHECK_EQ_STR(syscall_name(SYSCALL_ARCH_X86_64, 262), "newfstatat");
	} else {
		CHECK(syscall_arch_native() != SYSCALL_ARCH_X86_64);
	}
	/* arm64 uses the generic table; fcntl and fstat are aliases resolved by the generator. */
	CHECK_EQ_STR(syscall_name(SYSCALL_ARCH_ARM64, 63), "read");
	CHECK_EQ_STR(syscall_name(SYSCALL_ARCH_ARM64, 98), "futex");
	CHECK_EQ_STR(syscall_name(SYSCALL_ARCH_ARM64, 25), "fcntl");
	CHECK_EQ_STR(syscall_name(SYSCALL_ARCH_ARM64, 80), "fstat");
	CHECK_EQ_STR(syscall_name(SYSCALL_ARCH_ARM64, 173), "getppid");
	/* arm64 has no open(2): only openat. */
	CHECK_EQ_INT(syscall_number(SYSCALL_ARCH_ARM64, "open"), -1);
	CHECK(syscall_name(SYSCALL_ARCH_ARM64, 244) == NULL); /* the arch-specific placeholder */
}

static void unknown_numbers(void)
{
	char buf[32];

	CHECK(syscall_name(syscall_arch_native(), -1) == NULL);
	CHECK(syscall_name(syscall_arch_native(), 100000) == NULL);
	CHECK_EQ_STR(syscall_name_or_number(syscall_arch_native(), 100000, buf, sizeof(buf)),
		     "syscall_100000");
	CHECK_EQ_STR(syscall_name_or_number(syscall_arch_native(), SYS_read, buf, sizeof(buf)),
		     "read");
}

int main(void)
{
	RUN(native_matches_libc);
	RUN(fixed_numbers_per_arch);
	RUN(unknown_numbers);
	return test_summary();
}
