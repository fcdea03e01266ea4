// SPDX-License-Identifier: BSD-2-Clause
#include "preflight.h"

#include <errno.h>
#include <linux/capability.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

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

int preflight_cfi_unwind_supported(void)
{
#if defined(__x86_64__)
	static const enum bpf_func_id helpers[] = { BPF_FUNC_loop, BPF_FUNC_task_pt_regs };

	for (size_t i = 0; i < sizeof(helpers) / sizeof(helpers[0]); i++)
		if (libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT, helpers[i], NULL) != 1) {
			log_debug("--unwind auto: the kernel lacks BPF helper %d; unwinding with "
				  "frame pointers",
				  (int)helpers[i]);
			return 0;
		}
	return 1;
#else
	return 0;
#endif
}
