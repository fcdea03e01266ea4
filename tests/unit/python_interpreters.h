/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The CPython interpreters the version tests run (python_versions.cmake):
 * PYTHON_INTERPRETERS is "2.7=/path/python2.7,3.6=,..." with an empty path
 * for a version not installed, which the tests name as skipped.
 */
#ifndef BPFPROF_TEST_PYTHON_INTERPRETERS_H
#define BPFPROF_TEST_PYTHON_INTERPRETERS_H

#include <stdio.h>
#include <string.h>

#ifndef PYTHON_INTERPRETERS
#define PYTHON_INTERPRETERS ""
#endif

/* Calls fn(version, path, ctx) for each installed one; returns how many ran. */
static inline int
python_each_interpreter(void (*fn)(const char *version, const char *path, void *ctx), void *ctx)
{
	char list[] = PYTHON_INTERPRETERS, *save = NULL;
	int ran = 0;

	for (char *item = strtok_r(list, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(item, '=');

		if (!eq)
			continue;
		*eq = '\0';
		if (!eq[1]) {
			printf("Python %s: not installed, skipped\n", item);
			continue;
		}
		printf("Python %s: %s\n", item, eq + 1);
		fn(item, eq + 1, ctx);
		ran++;
	}
	return ran;
}

#endif
