/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Checks that run before anything is loaded, so that a missing privilege or
 * a kernel without BTF is one clear line instead of a libbpf error dump.
 */
#ifndef BPFPROF_PREFLIGHT_H
#define BPFPROF_PREFLIGHT_H

#include <stdbool.h>

/* Path of the kernel BTF: $BPFPROF_BTF_PATH or /sys/kernel/btf/vmlinux. */
const char *preflight_btf_path(void);
/* True when BPFPROF_BTF_PATH names a BTF file to use instead of the kernel's. */
int preflight_btf_is_custom(void);

/* 0, or a negative errno after printing one line. */
int preflight_check_privileges(void);
int preflight_check_btf(void);

/*
 * Whether the BPF unwinder can ask the kernel for a mapping it has not been
 * given (bpf_find_vma, 5.17+): at exec and for a process userspace has not
 * read yet.
 */
bool preflight_find_vma_supported(void);

/*
 * Whether the BPF CFI unwinder can run here: x86_64, and a kernel whose
 * perf_event programs have bpf_loop (5.17) and bpf_task_pt_regs (5.15).
 */
int preflight_cfi_unwind_supported(void);
/* 0 when the CFI walk can run here; else a one-line error said and -EOPNOTSUPP (--unwind cfi). */
int preflight_cfi_unwind_check(void);
/*
 * Whether the stacks of threads blocked all along can be read at the start
 * and end (an iter/task program with bpf_task_pt_regs, 5.15).
 */
bool preflight_task_stacks_supported(void);
/*
 * Whether a perf_event program may use a hash map that is not preallocated
 * (Linux 6.1 and later); probed once. Tests only: BPFPROF_TEST_NO_NOPREALLOC=1
 * answers no.
 */
bool preflight_noprealloc_hash_supported(void);

#endif
