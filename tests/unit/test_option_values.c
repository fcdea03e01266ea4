// SPDX-License-Identifier: BSD-2-Clause
/*
 * The values options take (util/option_values.c): counts, thresholds,
 * intervals and sizes, the good spellings and the rejected ones; a rejected
 * value leaves the result untouched.
 */
#include "util/option_values.h"
#include "test.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>

static void test_parse_uint(void)
{
	unsigned long long v = 7;

	CHECK_EQ_INT(parse_uint("42", 100, &v), 0);
	CHECK(v == 42);
	CHECK_EQ_INT(parse_uint("100", 100, &v), 0);
	CHECK(v == 100);
	v = 7;
	CHECK_EQ_INT(parse_uint("101", 100, &v), -ERANGE);
	CHECK_EQ_INT(parse_uint("12x", 100, &v), -ERANGE);
	CHECK_EQ_INT(parse_uint("99999999999999999999999", ULLONG_MAX, &v), -ERANGE);
	CHECK_EQ_INT(parse_uint("-1", 100, &v), -EINVAL);
	CHECK_EQ_INT(parse_uint("+1", 100, &v), -EINVAL);
	CHECK_EQ_INT(parse_uint(" 1", 100, &v), -EINVAL);
	CHECK_EQ_INT(parse_uint("", 100, &v), -EINVAL);
	CHECK_EQ_INT(parse_uint(NULL, 100, &v), -EINVAL);
	CHECK(v == 7);
}

static void test_parse_duration(void)
{
	static const struct {
		const char *s;
		uint64_t ns;
	} good[] = {
		{ "1ms", 1000000 },   { "250us", 250000 },
		{ "250µs", 250000 },  { "2s", 2000000000 },
		{ "1.5ms", 1500000 }, { "100ns", 100 },
		{ "3", 3000000 },     { "0", 0 },
		{ ".5ms", 500000 },   { "86400s", 86400000000000ULL },
	};
	static const char *const bad[] = { "",	 "ms",	 "-1ms", "1 ms", "1m",
					   "1h", "1msx", "nan",	 "inf" };
	uint64_t v;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		v = 1;
		CHECK_EQ_INT(parse_duration_ns(good[i].s, &v), 0);
		if (v != good[i].ns)
			fprintf(stderr, "  parse_duration_ns(\"%s\") = %" PRIu64 "\n", good[i].s,
				v);
		CHECK(v == good[i].ns);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v = 1;
		CHECK_EQ_INT(parse_duration_ns(bad[i], &v), -EINVAL);
		CHECK(v == 1);
	}
	CHECK_EQ_INT(parse_duration_ns("86401s", &v), -ERANGE);
}

static void test_parse_interval(void)
{
	uint64_t v = 1;

	CHECK_EQ_INT(parse_interval_ns("500ms", &v), 0);
	CHECK(v == 500000000ULL);
	CHECK_EQ_INT(parse_interval_ns("60s", &v), 0);
	CHECK(v == 60000000000ULL);
	CHECK_EQ_INT(parse_interval_ns("5m", &v), 0);
	CHECK(v == 300000000000ULL);
	CHECK_EQ_INT(parse_interval_ns("2min", &v), 0);
	CHECK(v == 120000000000ULL);
	CHECK_EQ_INT(parse_interval_ns("1h", &v), 0);
	CHECK(v == 3600000000000ULL);
	v = 1;
	/* A bare number is a threshold's spelling, not an interval's. */
	CHECK_EQ_INT(parse_interval_ns("60", &v), -EINVAL);
	CHECK_EQ_INT(parse_interval_ns("1us", &v), -EINVAL);
	CHECK_EQ_INT(parse_interval_ns("25h", &v), -ERANGE);
	CHECK(v == 1);
}

static void test_parse_size(void)
{
	static const struct {
		const char *s;
		uint64_t want;
	} good[] = {
		{ "0", 0 },
		{ "123", 123 },
		{ "123B", 123 },
		{ "512K", 512ULL << 10 },
		{ "512k", 512ULL << 10 },
		{ "1KB", 1024 },
		{ "1KiB", 1024 },
		{ "100M", 100ULL << 20 },
		{ "100MiB", 100ULL << 20 },
		{ "100mb", 100ULL << 20 },
		{ "2G", 2ULL << 30 },
		{ "2GB", 2ULL << 30 },
		{ "2GiB", 2ULL << 30 },
		{ "1T", 1ULL << 40 },
		{ "1TiB", 1ULL << 40 },
		{ "007", 7 },
		{ "18446744073709551615", UINT64_MAX },
		{ "16777215T", 16777215ULL << 40 },
	};
	static const struct {
		const char *s;
		int err;
	} bad[] = {
		{ "", -EINVAL },
		{ "-1", -EINVAL },
		{ "+1", -EINVAL },
		{ " 1", -EINVAL },
		{ "1 ", -EINVAL },
		{ "1 M", -EINVAL },
		{ "M", -EINVAL },
		{ "1.5G", -EINVAL },
		{ "10X", -EINVAL },
		{ "10MBB", -EINVAL },
		{ "10Mi", -EINVAL },
		{ "0x10", -EINVAL },
		{ "18446744073709551616", -ERANGE },
		{ "99999999999999999999999", -ERANGE },
		{ "16777216T", -ERANGE },
		{ "17179869184G", -ERANGE },
	};
	uint64_t v;
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		v = 12345;
		CHECK_EQ_INT(parse_size(good[i].s, &v), 0);
		if (v != good[i].want)
			fprintf(stderr, "  parse_size(\"%s\") = %" PRIu64 ", want %" PRIu64 "\n",
				good[i].s, v, good[i].want);
		CHECK(v == good[i].want);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v = 12345;
		if (parse_size(bad[i].s, &v) != bad[i].err)
			fprintf(stderr, "  parse_size(\"%s\") accepted or wrong error\n", bad[i].s);
		CHECK_EQ_INT(parse_size(bad[i].s, &v), bad[i].err);
		CHECK(v == 12345); /* untouched on error */
	}
	CHECK_EQ_INT(parse_size(NULL, &v), -EINVAL);
}

static void test_parse_file_mode(void)
{
	const struct {
		const char *s;
		unsigned want;
	} good[] = { { "0600", 0600 }, { "644", 0644 }, { "0400", 0400 }, { "0777", 0777 } };
	const char *bad[] = { "",     "0",     "0200", "888",  "0o644",
			      "-644", "00644", "1644", "6 44", "644x" };
	unsigned v;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		v = 1;
		CHECK_EQ_INT(parse_file_mode(good[i].s, &v), 0);
		CHECK_EQ_INT(v, good[i].want);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v = 12345;
		if (parse_file_mode(bad[i], &v) != -EINVAL)
			fprintf(stderr, "  parse_file_mode(\"%s\") was accepted\n", bad[i]);
		CHECK_EQ_INT(parse_file_mode(bad[i], &v), -EINVAL);
		CHECK_EQ_INT(v, 12345);
	}
}

int main(void)
{
	RUN(test_parse_uint);
	RUN(test_parse_duration);
	RUN(test_parse_interval);
	RUN(test_parse_size);
	RUN(test_parse_file_mode);
	return test_summary();
}
