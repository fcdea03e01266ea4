// SPDX-License-Identifier: BSD-2-Clause
/* /proc/kallsyms as the kernel (and its modules) write it. */
#include <stdio.h>
#include <string.h>

#include "fuzz_util.h"
#include "symbols/kallsyms.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = fuzz_memfd(data, size);
	struct kallsyms k;
	char path[64];
	uint64_t lo, hi, addr = 0;

	if (fd < 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (!kallsyms_load(&k, path)) {
		for (size_t i = 0; i + 8 <= size && i < 64; i += 8) {
			const struct ksym *s;

			memcpy(&addr, data + i, 8);
			s = kallsyms_lookup(&k, addr);
			if (s) {
				(void)kallsyms_name(&k, s);
				(void)kallsyms_module(&k, s);
			}
		}
		kallsyms_free(&k);
	}
	kallsyms_find_range(path, "__schedule", &lo, &hi);
	close(fd);
	return 0;
}
