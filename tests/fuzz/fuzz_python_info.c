// SPDX-License-Identifier: BSD-2-Clause
/*
 * A CPython binary as bpfprof reads it (lang/python_info.c,
 * python_layout.c): any user's file can claim to be one. From its dynamic
 * symbols, the version (Py_Version, or the string Py_GetVersion's code
 * loads), the static roots decoded from two functions' first bytes, and
 * 3.13's _Py_DebugOffsets, whose offsets must all be checked. Seeds: three
 * small shared objects shaped as 2.7, 3.8 and 3.13 (tests/fuzz/corpus).
 * The input's first bytes also go to the debug-offsets parser directly.
 */
#include <libelf.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_util.h"
#include "lang/python_layout.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct python_info info;
	struct py_layout frames;
	uint64_t head;
	int fd;

	if (size >= 8) {
		uint32_t version;

		memcpy(&version, data + size - 4, 4);
		(void)python_debug_offsets_parse(data, size, 0x030d0000 | (version & 0xffff), &frames,
						 &head);
	}
	fd = fuzz_memfd(data, size);
	if (fd < 0)
		return 0;
	elf_version(EV_CURRENT);
	{
		Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);

		if (elf) {
			(void)python_info_read(elf, &info);
			elf_end(elf);
		}
	}
	close(fd);
	return 0;
}
