/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A system call issued from the calling function itself, not through glibc.
 *
 * glibc is built without frame pointers. When a thread blocks inside a glibc
 * wrapper, the frame-pointer walk of its user stack starts at the wrapper's
 * syscall instruction and continues from the frame of the wrapper's caller,
 * so the caller's own frame is lost: a test looking for "reader_wait" under a
 * blocked read() would never find it. Inlined here, the syscall instruction
 * lies inside the named function, whose frame is then walked as usual.
 */
#ifndef BPFPROF_RAW_SYSCALL_H
#define BPFPROF_RAW_SYSCALL_H

/* Returns the raw result: >= 0, or -errno. */
static inline __attribute__((always_inline)) long raw_syscall4(long nr, long a0, long a1, long a2,
							       long a3)
{
#if defined(__x86_64__)
	register long rax __asm__("rax") = nr;
	register long rdi __asm__("rdi") = a0;
	register long rsi __asm__("rsi") = a1;
	register long rdx __asm__("rdx") = a2;
	register long r10 __asm__("r10") = a3;

	__asm__ volatile("syscall"
			 : "+r"(rax)
			 : "r"(rdi), "r"(rsi), "r"(rdx), "r"(r10)
			 : "rcx", "r11", "memory");
	return rax;
#elif defined(__aarch64__)
	register long x8 __asm__("x8") = nr;
	register long x0 __asm__("x0") = a0;
	register long x1 __asm__("x1") = a1;
	register long x2 __asm__("x2") = a2;
	register long x3 __asm__("x3") = a3;

	__asm__ volatile("svc #0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3) : "memory");
	return x0;
#else
#error "the workloads support x86_64 and aarch64"
#endif
}

#endif /* BPFPROF_RAW_SYSCALL_H */
