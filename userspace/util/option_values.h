/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The values command-line options take: counts, durations and sizes. Each
 * returns 0 and sets its result, or a negative errno (-EINVAL or -ERANGE)
 * and leaves the result alone; none prints anything: the caller names the
 * option in its one-line error.
 */
#ifndef BPFPROF_UTIL_OPTION_VALUES_H
#define BPFPROF_UTIL_OPTION_VALUES_H

#include <stdint.h>

/* Decimal digits only, no sign and no trailing junk (-ERANGE), at most `max`. */
int parse_uint(const char *s, unsigned long long max, unsigned long long *out);

/*
 * A threshold: "1ms", "250us", "2s", "1.5ms", "100ns", or a bare number of
 * milliseconds; at most a day.
 */
int parse_duration_ns(const char *s, uint64_t *out);

/* An interval: "500ms", "60s", "5m", "1h"; the unit is required; at most a day. */
int parse_interval_ns(const char *s, uint64_t *out);

/*
 * Parse a size in bytes: digits, then optionally a unit, case-insensitive:
 * B; K, KB, KiB; M, MB, MiB; G, GB, GiB; T, TB, TiB. Every unit is a power
 * of 1024 (KB too: this is a disk budget, and one meaning per letter is
 * easier to remember than two). No sign, no spaces, no fractions. 0 (the
 * value in *bytes), or -EINVAL for malformed input, -ERANGE when the value
 * does not fit 64 bits. Prints nothing: the caller names the option.
 */
int parse_size(const char *s, uint64_t *bytes);

/*
 * File permissions in octal ("0600", "644"): at most 0777, and readable by
 * the owner (a profile nobody can open is a mistake). 0 or -EINVAL.
 */
int parse_file_mode(const char *s, unsigned *mode);

#endif
