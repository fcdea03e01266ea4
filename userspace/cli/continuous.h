/* SPDX-License-Identifier: BSD-2-Clause */
/* `bpfprof continuous`: gap-free snapshots, one profile per interval, until stopped. */
#ifndef BPFPROF_CONTINUOUS_H
#define BPFPROF_CONTINUOUS_H

#include "options.h"

/* Returns the process exit status. */
int continuous_main(const struct options *opts);

#endif
