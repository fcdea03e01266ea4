// SPDX-License-Identifier: BSD-2-Clause
#include "log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "term_escape.h"

int log_verbosity;

/*
 * errno survives a message, so that a caller can log a failure and then
 * return -errno. Messages name processes, threads, functions and files that
 * other users chose: the whole line is escaped (term_escape.h), so that a
 * name cannot clear the screen or forge a line of its own.
 */
static void vlog(const char *prefix, const char *fmt, va_list ap)
{
	char line[1024], *text = line;
	int saved = errno, n;
	va_list again;

	va_copy(again, ap);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	if (n >= (int)sizeof(line)) {
		text = malloc((size_t)n + 1);
		if (text)
			vsnprintf(text, (size_t)n + 1, fmt, again);
		else
			text = line; /* cut, rather than lost */
	}
	va_end(again);
	/* One line, not interleaved with another thread's. */
	flockfile(stderr);
	fputs(prefix, stderr);
	if (n > 0)
		term_escape_write(stderr, text, strnlen(text, (size_t)n));
	fputc('\n', stderr);
	funlockfile(stderr);
	if (text != line)
		free(text);
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
