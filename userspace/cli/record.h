/* SPDX-License-Identifier: BSD-2-Clause */
/* `bpfprof record`: the whole recording flow, from checks to the written profile. */
#ifndef BPFPROF_RECORD_H
#define BPFPROF_RECORD_H

#include "options.h"

/* Returns the process exit status. */
int record_main(const struct options *opts);

#endif
