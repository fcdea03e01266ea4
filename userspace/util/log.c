// SPDX-License-Identifier: BSD-2-Clause
#include "log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

int log_verbosity;

/* errno survives a message, so that a caller can log a failure and then return -errno. */
static void vlog(const char *prefix, const char *fmt, va_list ap)
{
	int saved = errno;

	fputs(prefix, stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	errno = saved;
}

/* Each level: its prefix, and whether it is shown at all. */
#define LOG_LEVEL(name, prefix, shown)  \
	void name(const char *fmt, ...) \
	{                               \
		va_list ap;             \
                                        \
		if (!(shown))           \
			return;         \
		va_start(ap, fmt);      \
		vlog(prefix, fmt, ap);  \
		va_end(ap);             \
	}

LOG_LEVEL(log_error, "bpfprof: error: ", true)
LOG_LEVEL(log_warn, "bpfprof: warning: ", true)
LOG_LEVEL(log_info, "bpfprof: ", true)
LOG_LEVEL(log_debug, "bpfprof: debug: ", log_verbosity >= 1)
