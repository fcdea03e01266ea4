/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * `bpfprof report FILE`: a terminal summary of a profile bpfprof wrote (a
 * recording or a continuous snapshot), or the same as JSON for scripts.
 */
#ifndef BPFPROF_REPORT_REPORT_H
#define BPFPROF_REPORT_REPORT_H

/* argv[0] is "report". Returns the exit status. */
int report_main(int argc, char **argv);

#endif
