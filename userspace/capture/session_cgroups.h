/* SPDX-License-Identifier: BSD-2-Clause */
/* The --cgroup targets of a session (session.c's helpers; see session_cgroups.c). */
#ifndef BPFPROF_SESSION_CGROUPS_H
#define BPFPROF_SESSION_CGROUPS_H

struct session;
struct session_config;

/* Before load: the --cgroup knobs, and whether other tasks are tested with the kfunc. */
void session_configure_cgroups(struct session *s, const struct session_config *cfg);
/* After load: hand the kernel the target cgroups. 0, or -errno after a one-line error. */
int session_install_cgroups(struct session *s, const struct session_config *cfg);

#endif
