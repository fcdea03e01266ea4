// SPDX-License-Identifier: BSD-2-Clause
#include "log.h"

#include <errno.h>
#include <stdarg.h>
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

void log_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("bpfprof: error: ", fmt, ap);
	va_end(ap);
}

void log_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("bpfprof: warning: ", fmt, ap);
	va_end(ap);
}

void log_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("bpfprof: ", fmt, ap);
	va_end(ap);
}

void log_debug(const char *fmt, ...)
{
	va_list ap;

	if (log_verbosity < 1)
		return;
	va_start(ap, fmt);
	vlog("bpfprof: debug: ", fmt, ap);
	va_end(ap);
}
