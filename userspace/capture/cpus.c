// SPDX-License-Identifier: BSD-2-Clause
#include "cpus.h"

#include <bpf/libbpf.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

int cpu_list_parse(const char *s, bool *flags, int max)
{
	while (*s && *s != '\n') {
		char *end;
		long a = strtol(s, &end, 10), b = a;

		if (end == s || a < 0)
			return -EINVAL;
		s = end;
		if (*s == '-') {
			b = strtol(s + 1, &end, 10);
			if (end == s + 1 || b < a)
				return -EINVAL;
			s = end;
		}
		for (long i = a; i <= b && i < max; i++)
			flags[i] = true;
		if (*s == ',')
			s++;
		else if (*s && *s != '\n')
			return -EINVAL;
	}
	return 0;
}

int cpus_online(bool **out, int *nr_possible)
{
	int n = libbpf_num_possible_cpus(), count = 0, err;
	char buf[4096];
	bool *flags;
	FILE *f;

	if (n <= 0)
		return n < 0 ? n : -EINVAL;
	flags = calloc((size_t)n, sizeof(*flags));
	if (!flags)
		return -ENOMEM;
	f = fopen("/sys/devices/system/cpu/online", "re");
	if (!f) {
		err = -errno;
		free(flags);
		return err;
	}
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		free(flags);
		return -EIO;
	}
	fclose(f);
	err = cpu_list_parse(buf, flags, n);
	if (err) {
		free(flags);
		return err;
	}
	for (int i = 0; i < n; i++)
		count += flags[i];
	*out = flags;
	*nr_possible = n;
	return count;
}
