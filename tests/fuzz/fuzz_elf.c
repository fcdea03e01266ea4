// SPDX-License-Identifier: BSD-2-Clause
/*
 * Binaries anyone can map: ELF symbol tables (with PLT and MiniDebugInfo),
 * DWARF line and inline tables (from a memfd, which anyone may write: read
 * into an image of its debug sections, symbols/dwarf_image.h), debug-link
 * and build-id sections. Seeds are small real binaries, their DWARF plain
 * and compressed both ways, 32-bit and big-endian; mutations give section
 * headers that lie.
 */
#include <libelf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "symbols/debug_file.h"
#include "symbols/dwarf.h"
#include "symbols/elf_symtab.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elf_symtab t = { 0 };
	struct dwarf_info *d = NULL;
	struct dwarf_location loc[8];
	void *copy;
	int fd;

	if (size < 64)
		return 0;
	copy = malloc(size);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	if (!elf_symtab_load_mem(&t, copy, size)) {
		for (uint64_t a = 0; a < 0x4000; a += 0x101) {
			const struct elf_sym *s = elf_symtab_lookup(&t, a);
			uint64_t vaddr;

			if (s)
				(void)elf_symtab_name(&t, s);
			elf_symtab_offset_to_vaddr(&t, a, &vaddr);
		}
		elf_symtab_find(&t, "main");
		elf_symtab_free(&t);
	}
	fd = fuzz_memfd(data, size);
	if (fd >= 0) {
		Elf *elf;

		if (!dwarf_info_open(&d, fd, "/nonexistent-debug-root")) {
			for (uint64_t a = 0; a < 0x4000; a += 0x37)
				dwarf_info_lookup(d, a, loc, 8);
			dwarf_info_free(d);
		}
		/* The debug-section image within a budget the input may or may not fit. */
		if (!dwarf_info_open_capped(&d, fd, "/nonexistent-debug-root", size / 2)) {
			dwarf_info_lookup(d, 0x1139, loc, 8);
			dwarf_info_free(d);
		}
		elf_version(EV_CURRENT);
		elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
		if (elf) {
			int dfd = debug_file_find(elf, "/nonexistent/bin/app",
						  "/nonexistent-debug-root", NULL, NULL, 0);

			if (dfd >= 0)
				close(dfd);
			elf_end(elf);
		}
		close(fd);
	}
	free(copy);
	return 0;
}
