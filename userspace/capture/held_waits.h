/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Held switch-outs (bpf/fold_waits.bpf.h): short waits counted in the kernel
 * instead of sent, how they are configured before load, and the end
 * iterator that sends what is still held at the end of a recording or a
 * snapshot window.
 */
#ifndef BPFPROF_HELD_WAITS_H
#define BPFPROF_HELD_WAITS_H

#include <stdbool.h>
#include <stdint.h>

struct session;
struct session_config;

/* Before load: fold short waits when `btf_programs` (both BTF-typed scheduler programs). */
void held_waits_configure(struct session *s, const struct session_config *cfg, bool btf_programs);

#endif
