// SPDX-License-Identifier: BSD-2-Clause
#include "preflight.h"

#include <errno.h>
#include <linux/capability.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "../util/log.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

const char *preflight_btf_path(void)
{
	const char *env = getenv("BPFPROF_BTF_PATH");

	return env && *env ? env : "/sys/kernel/btf/vmlinux";
}

int preflight_btf_is_custom(void)
{
	const char *env = getenv("BPFPROF_BTF_PATH");

	return env && *env;
}

static bool has_cap(const struct __user_cap_data_struct *d, int cap)
{
	return d[cap / 32].effective & (1u << (cap % 32));
}

int preflight_check_privileges(void)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2] = { 0 };
	bool admin, bpf, perfmon;

	if (syscall(SYS_capget, &hdr, data)) {
		log_error("cannot read this process's capabilities (%s); run bpfprof as root",
			  strerror(errno));
		return -errno;
	}
	admin = has_cap(data, CAP_SYS_ADMIN);
	bpf = has_cap(data, CAP_BPF);
	perfmon = has_cap(data, CAP_PERFMON);
	if (!admin && !(bpf && perfmon)) {
		log_error(
			"not enough privileges: loading BPF programs and opening system-wide perf "
			"events needs root (or CAP_BPF and CAP_PERFMON); run it with sudo");
		return -EPERM;
	}
	if (!has_cap(data, CAP_SYSLOG))
		log_warn("no CAP_SYSLOG: kernel addresses in /proc/kallsyms are hidden, kernel "
			 "frames will not be named");
	if (!has_cap(data, CAP_SYS_PTRACE))
		log_warn("no CAP_SYS_PTRACE: other users' processes cannot be symbolized");
	return 0;
}

int preflight_check_btf(void)
{
	const char *path = preflight_btf_path();

	if (access(path, R_OK) == 0)
		return 0;
	if (preflight_btf_is_custom())
		log_error("BPFPROF_BTF_PATH=%s: cannot read it (%s); point it at a BTF file for "
			  "this kernel or unset it",
			  path, strerror(errno));
	else
		log_error("this kernel has no BTF (%s: %s); bpfprof needs a kernel built with "
			  "CONFIG_DEBUG_INFO_BTF=y (Debian 11+, Ubuntu 20.10+, RHEL 8.2+ have it), "
			  "or "
			  "set BPFPROF_BTF_PATH to a BTF file for it",
			  path, strerror(errno));
	return -errno;
}

bool preflight_find_vma_supported(void)
{
	return libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT, BPF_FUNC_find_vma, NULL) == 1 &&
	       libbpf_probe_bpf_helper(BPF_PROG_TYPE_RAW_TRACEPOINT, BPF_FUNC_find_vma, NULL) == 1;
}

/*
 * Whether a perf_event program may use a hash map that is not preallocated:
 * Linux 6.1 and later (bpf_mem_alloc). Before, the verifier refuses such a
 * program ("perf_event programs can only use preallocated hash map"), and
 * the CFI walk's per-process and per-file maps are not preallocated (a
 * preallocated per-process map would take 160 MB). Probed by loading a
 * two-instruction program that refers to such a map. Tests only:
 * BPFPROF_TEST_NO_NOPREALLOC=1 answers no, as a 6.0 kernel would.
 */
bool preflight_noprealloc_hash_supported(void)
{
	static int known = -1;
	LIBBPF_OPTS(bpf_map_create_opts, mopts, .map_flags = BPF_F_NO_PREALLOC);
	struct bpf_insn insns[4];
	int map, prog;

	if (known >= 0)
		return known;
	if (getenv("BPFPROF_TEST_NO_NOPREALLOC") &&
	    !strcmp(getenv("BPFPROF_TEST_NO_NOPREALLOC"), "1"))
		return (known = 0);
	map = bpf_map_create(BPF_MAP_TYPE_HASH, "bpfprof_probe", 4, 4, 1, &mopts);
	if (map < 0) {
		/*
		 * Every kernel that loads bpfprof creates such maps (4.6+): a
		 * failure here (no memory, a cgroup's limit) says nothing of the
		 * verifier, and answering no would take the CFI walk away for
		 * the whole run. The load says what is wrong if it is.
		 */
		log_debug("probing hash maps without preallocation: %s; assuming they may be used",
			  strerror(errno));
		return (known = 1);
	}
	memset(insns, 0, sizeof(insns));
	/* r1 = the map (ld_imm64, two slots); r0 = 0; exit */
	insns[0].code = BPF_LD | BPF_DW | BPF_IMM;
	insns[0].dst_reg = BPF_REG_1;
	insns[0].src_reg = BPF_PSEUDO_MAP_FD;
	insns[0].imm = map;
	insns[2].code = BPF_ALU64 | BPF_MOV | BPF_K;
	insns[2].dst_reg = BPF_REG_0;
	insns[3].code = BPF_JMP | BPF_EXIT;
	prog = bpf_prog_load(BPF_PROG_TYPE_PERF_EVENT, "bpfprof_probe", "GPL", insns, 4, NULL);
	known = prog >= 0;
	if (prog >= 0)
		close(prog);
	close(map);
	return known;
}

/* The first of `n` helpers a perf_event program cannot call here, or -1 when it can call all. */
static int missing_helper(const enum bpf_func_id *helpers, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT, helpers[i], NULL) != 1)
			return (int)helpers[i];
	return -1;
}

/*
 * Why the CFI walk cannot run here, for people, or NULL when it can;
 * probed and said once (the recording and the session both ask).
 */
static const char *cfi_unwind_refusal(void)
{
#if defined(__x86_64__)
	static const enum bpf_func_id helpers[] = { BPF_FUNC_loop, BPF_FUNC_task_pt_regs };
	static char why[128];
	static int known = -1;
	int missing;

	if (known >= 0)
		return known ? NULL : why;
	known = 0;
	if (!preflight_noprealloc_hash_supported()) {
		snprintf(why, sizeof(why),
			 "the kernel's perf_event programs cannot use hash maps that are not "
			 "preallocated (before Linux 6.1)");
		return why;
	}
	missing = missing_helper(helpers, sizeof(helpers) / sizeof(helpers[0]));
	if (missing >= 0) {
		snprintf(why, sizeof(why),
			 "the kernel lacks BPF helper %d (bpf_loop: 5.17, bpf_task_pt_regs: 5.15)",
			 missing);
		return why;
	}
	known = 1;
	return NULL;
#else
	return "the CFI walk is written for x86_64";
#endif
}

int preflight_cfi_unwind_supported(void)
{
	static int said;
	const char *why = cfi_unwind_refusal();

	if (why && !said++)
		log_debug("--unwind auto: %s; unwinding with frame pointers", why);
	return !why;
}

int preflight_cfi_unwind_check(void)
{
	const char *why = cfi_unwind_refusal();

	if (!why)
		return 0;
	log_error("--unwind cfi cannot run here: %s; use --unwind fp (or auto, which chooses it)",
		  why);
	return -EOPNOTSUPP;
}

bool preflight_task_stacks_supported(void)
{
#if defined(__x86_64__)
	/*
	 * An iter/task program with bpf_task_pt_regs (5.15): unlike the CFI
	 * walk it is not a perf_event program, so the preallocation rule of
	 * kernels before 6.1 does not touch it (it uses no hash map).
	 */
	static const enum bpf_func_id helpers[] = { BPF_FUNC_task_pt_regs };
	static int known = -1;

	if (known < 0)
		known = missing_helper(helpers, 1) < 0;
	return known;
#else
	return false;
#endif
}
