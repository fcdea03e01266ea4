/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The target part of the command line: -p's ids resolved to processes
 * (a thread id names its process), and the one-line description of what
 * is profiled that messages and the profile's meta show.
 */
#ifndef BPFPROF_CLI_OPTION_TARGETS_H
#define BPFPROF_CLI_OPTION_TARGETS_H

#include "options.h"

/* -p PID[,PID...]: add each process to o->pids. 0, or -EINVAL/-ENOMEM after a one-line error. */
int options_add_pids(struct options *o, const char *arg);

/* argv joined with spaces, malloc'd; NULL without memory. */
char *options_join_args(char **argv, int argc);

/* Set o->target_desc ("all", "pid 1,2", "command: make", "cgroup X"). 0 or -ENOMEM. */
int options_describe_target(struct options *o);

#endif
