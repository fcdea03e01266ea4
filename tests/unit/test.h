/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A minimal unit-test harness: each test binary calls RUN(fn) for its cases
 * and returns test_summary(); a failed CHECK prints file:line and the
 * expression and marks the case failed (the case continues, so one run
 * shows every broken check).
 */
#ifndef BPFPROF_TEST_H
#define BPFPROF_TEST_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int test_failed_checks;
static int test_cases_run, test_cases_failed;

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);   \
			test_failed_checks++;                                                      \
		}                                                                                  \
	} while (0)

#define CHECK_EQ_INT(a, b)                                                                         \
	do {                                                                                       \
		long long _a = (long long)(a), _b = (long long)(b);                                \
		if (_a != _b) {                                                                    \
			fprintf(stderr, "%s:%d: CHECK failed: %s == %s (%lld != %lld)\n",          \
				__FILE__, __LINE__, #a, #b, _a, _b);                               \
			test_failed_checks++;                                                      \
		}                                                                                  \
	} while (0)

#define CHECK_EQ_STR(a, b)                                                                         \
	do {                                                                                       \
		const char *_a = (a), *_b = (b);                                                   \
		if (!_a || !_b || strcmp(_a, _b)) {                                                \
			fprintf(stderr, "%s:%d: CHECK failed: %s == %s (\"%s\" != \"%s\")\n",      \
				__FILE__, __LINE__, #a, #b, _a ? _a : "(null)",                    \
				_b ? _b : "(null)");                                               \
			test_failed_checks++;                                                      \
		}                                                                                  \
	} while (0)

#define RUN(fn)                                                                                    \
	do {                                                                                       \
		int _before = test_failed_checks;                                                  \
		fn();                                                                              \
		test_cases_run++;                                                                  \
		if (test_failed_checks != _before) {                                               \
			test_cases_failed++;                                                       \
			fprintf(stderr, "FAIL %s\n", #fn);                                         \
		} else {                                                                           \
			fprintf(stderr, "ok   %s\n", #fn);                                         \
		}                                                                                  \
	} while (0)

static inline int test_summary(void)
{
	fprintf(stderr, "%d passed, %d failed\n", test_cases_run - test_cases_failed,
		test_cases_failed);
	return test_cases_failed ? 1 : 0;
}

#endif
