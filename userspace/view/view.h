/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * `bpfprof view FILE`: serve a profile to the Firefox Profiler from this
 * machine and print (or open) the link that loads it.
 */
#ifndef BPFPROF_VIEW_VIEW_H
#define BPFPROF_VIEW_VIEW_H

#include <stdbool.h>

/* argv[0] is "view". Returns the exit status. */
int view_main(int argc, char **argv);

/*
 * Serve `file` on `address`:`port` (0: a free port) until SIGINT or SIGTERM,
 * after printing the link (and opening it unless `no_open`). The exit
 * status: 0, or 1 after a one-line error.
 */
int view_serve(const char *file, const char *address, unsigned port, bool no_open);

#endif
