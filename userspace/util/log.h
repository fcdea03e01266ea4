/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Messages to the user. Errors are one line: what failed, why, what to do.
 * Debug output appears only with -v.
 */
#ifndef BPFPROF_LOG_H
#define BPFPROF_LOG_H

#include <stdbool.h>

extern int log_verbosity; /* 0 quiet, 1 -v, 2 -vv */

void log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
