/* SPDX-License-Identifier: BSD-2-Clause */
/* Online CPUs, from /sys (CPU ids can have holes: never assume 0..n-1). */
#ifndef BPFPROF_CPUS_H
#define BPFPROF_CPUS_H

#include <stdbool.h>

/* Parse a kernel CPU list ("0-3,8,10-11") into flags[0..max); 0 or -EINVAL. */
int cpu_list_parse(const char *s, bool *flags, int max);
/* Online CPUs as flags over [0, libbpf_num_possible_cpus()); returns count or -errno. */
int cpus_online(bool **flags, int *nr_possible);

#endif
