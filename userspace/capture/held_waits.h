/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Held switch-outs (bpf/fold_waits.bpf.h): short waits counted in the kernel
 * instead of sent, how they are configured before load, and the end
 * iterator that sends what is still held at the end of a recording or a
 * snapshot window; and the clock the switch programs read, which the held
 * waits' times are measured on.
 */
#ifndef BPFPROF_HELD_WAITS_H
#define BPFPROF_HELD_WAITS_H

#include <stdbool.h>
#include <stdint.h>

struct session;
struct session_config;

/* Before load: fold short waits when `btf_programs` (both BTF-typed scheduler programs). */
void held_waits_configure(struct session *s, const struct session_config *cfg, bool btf_programs);

/*
 * Before load: where the switch programs take their time from
 * (bpf/switch_clock.bpf.h): the runqueue clock, and wakeup times from
 * sched_info where the kernel keeps it.
 */
void switch_clock_configure(struct session *s);

/*
 * With fold_waits, hand the record callback every switch-out the kernel
 * still holds (its thread's wait is on) and every thread's short waits
 * counted since its last switch record, as EV_SWITCH records; the latter
 * are stamped `before_ns` (0: now), the end of the window they belong to.
 * At the end of a recording and at each snapshot boundary. 0 or -errno.
 */
int session_flush_held_waits(struct session *s, uint64_t before_ns);

#endif
