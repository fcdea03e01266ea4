// SPDX-License-Identifier: BSD-2-Clause
/*
 * The values command-line options take: counts, durations and sizes, each
 * parsed strictly (no sign, no junk, no silent wrap), without printing: the
 * caller names the option in its one-line error.
 */
#include "option_values.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Strict unsigned parse: digits only, no sign, no trailing junk. */
int parse_uint(const char *s, unsigned long long max, unsigned long long *out)
{
	char *end;
	unsigned long long v;

	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

struct time_unit {
	const char *suffix;
	double ns;
};

/* A number (fractions allowed) and one suffix of `units`, at most a day; -EINVAL otherwise. */
static int parse_time_ns(const char *s, const struct time_unit *units, size_t n, uint64_t *out)
{
	char *end;
	double v;

	if (!s || !(isdigit((unsigned char)*s) || *s == '.'))
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || !isfinite(v) || v < 0)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(end, units[i].suffix)) {
			double ns = v * units[i].ns;

			if (ns > 86400e9)
				return -ERANGE;
			*out = (uint64_t)(ns + 0.5);
			return 0;
		}
	return -EINVAL;
}

/* "1ms", "250us", "2s", "1.5ms", "100ns", or a bare number of ms; -EINVAL otherwise. */
int parse_duration_ns(const char *s, uint64_t *out)
{
	static const struct time_unit units[] = { { "ns", 1 },	 { "us", 1e3 }, { "µs", 1e3 },
						  { "ms", 1e6 }, { "", 1e6 },	{ "s", 1e9 } };

	return parse_time_ns(s, units, sizeof(units) / sizeof(units[0]), out);
}

/*
 * --interval: "500ms", "60s", "5m", "1h"; the unit is required (a bare
 * number, ms for the thresholds, is too easy to misread here).
 */
int parse_interval_ns(const char *s, uint64_t *out)
{
	static const struct time_unit units[] = {
		{ "ms", 1e6 }, { "s", 1e9 }, { "m", 60e9 }, { "min", 60e9 }, { "h", 3600e9 }
	};

	return parse_time_ns(s, units, sizeof(units) / sizeof(units[0]), out);
}

int parse_size(const char *s, uint64_t *bytes)
{
	static const struct {
		const char *suffix;
		unsigned shift;
	} units[] = {
		{ "", 0 },     { "b", 0 },   { "k", 10 },   { "kb", 10 },  { "kib", 10 },
		{ "m", 20 },   { "mb", 20 }, { "mib", 20 }, { "g", 30 },   { "gb", 30 },
		{ "gib", 30 }, { "t", 40 },  { "tb", 40 },  { "tib", 40 },
	};
	uint64_t v = 0;
	size_t i;

	/* strtoull would take leading spaces and negate a '-'; read digits by hand. */
	if (!s || s[0] < '0' || s[0] > '9')
		return -EINVAL;
	for (; *s >= '0' && *s <= '9'; s++) {
		unsigned digit = (unsigned)(*s - '0');

		if (v > (UINT64_MAX - digit) / 10)
			return -ERANGE;
		v = v * 10 + digit;
	}
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcasecmp(s, units[i].suffix))
			continue;
		if (v > (UINT64_MAX >> units[i].shift))
			return -ERANGE;
		*bytes = v << units[i].shift;
		return 0;
	}
	return -EINVAL;
}

int parse_file_mode(const char *s, unsigned *mode)
{
	unsigned v = 0;
	size_t n = 0;

	for (; s[n]; n++) {
		if (s[n] < '0' || s[n] > '7' || n >= 4)
			return -EINVAL;
		v = v * 8 + (unsigned)(s[n] - '0');
	}
	if (!n || v > 0777 || !(v & 0400))
		return -EINVAL;
	*mode = v;
	return 0;
}
