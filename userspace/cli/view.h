/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * `bpfprof view FILE`: serve a profile to the Firefox Profiler from this
 * machine and print (or open) the link that loads it.
 */
#ifndef BPFPROF_CLI_VIEW_H
#define BPFPROF_CLI_VIEW_H

/* argv[0] is "view". Returns the exit status. */
int view_main(int argc, char **argv);

#endif
