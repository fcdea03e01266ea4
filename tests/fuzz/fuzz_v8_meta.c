// SPDX-License-Identifier: BSD-2-Clause
/*
 * node's ELF file as any user may fake it: v8dbg_* metadata, V8's version
 * and the builtins blob read from its symbol tables (lang/v8_meta.h), from
 * a memory file as a user's file is read.
 */
#include <libelf.h>
#include <unistd.h>

#include "fuzz_util.h"
#include "lang/v8_meta.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct v8_meta m;
	char why[128];
	int fd;

	if (size < 64)
		return 0;
	elf_version(EV_CURRENT);
	fd = fuzz_memfd(data, size);
	if (fd < 0)
		return 0;
	v8_meta_read_fd(fd, &m, why, sizeof(why));
	close(fd);
	return 0;
}
