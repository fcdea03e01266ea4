// SPDX-License-Identifier: BSD-2-Clause
/*
 * Unwind tables from a binary's CFI (issue 27): .eh_frame and
 * .eh_frame_hdr as a hostile binary has them, in a small ELF made here
 * around them, through unwind_file_build (the index, the FDE and CIE
 * records, the CFI programs, the row shapes, Go's table) within a small
 * budget. The input:
 *   u32 .eh_frame_hdr's address, u32 .eh_frame's, u16 the index's length,
 *   the index, then .eh_frame.
 * Seed: the .eh_frame and .eh_frame_hdr of tests/unit's cfi_fix, at their
 * own addresses.
 */
#include <elf.h>
#include <libelf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/file_table.h"

static const char shstrtab[] = "\0.eh_frame\0.eh_frame_hdr\0.shstrtab";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct cfi_budget small = {
		.fde_rows = 4096,
		.file_rows = 65536,
		.file_ops = 1u << 20,
		.file_cpu_ns = 0,
	};
	uint32_t hdr_addr, eh_addr;
	uint16_t hdr_len;
	struct unwind_built b;
	size_t eh_len, off, total;
	Elf64_Ehdr *eh;
	Elf64_Phdr *ph;
	Elf64_Shdr *sh;
	uint8_t *img;

	if (size < 10)
		return 0;
	memcpy(&hdr_addr, data, 4);
	memcpy(&eh_addr, data + 4, 4);
	memcpy(&hdr_len, data + 8, 2);
	data += 10;
	size -= 10;
	if (hdr_len > size)
		hdr_len = (uint16_t)size;
	eh_len = size - hdr_len;
	/* Header, one program header, the two sections, the names, four section headers. */
	off = sizeof(*eh) + sizeof(*ph);
	total = off + size + sizeof(shstrtab) + 7 + 4 * sizeof(*sh);
	img = calloc(1, total);
	if (!img)
		return 0;
	eh = (Elf64_Ehdr *)img;
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_DYN;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_ehsize = sizeof(*eh);
	eh->e_phoff = sizeof(*eh);
	eh->e_phentsize = sizeof(*ph);
	eh->e_phnum = 1;
	eh->e_shentsize = sizeof(*sh);
	eh->e_shnum = 4;
	eh->e_shstrndx = 3;
	ph = (Elf64_Phdr *)(img + sizeof(*eh));
	*ph = (Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = PF_R | PF_X, .p_memsz = 1u << 20 };
	memcpy(img + off, data, size);
	memcpy(img + off + size, shstrtab, sizeof(shstrtab));
	eh->e_shoff = (off + size + sizeof(shstrtab) + 7) & ~(size_t)7;
	sh = (Elf64_Shdr *)(img + eh->e_shoff);
	sh[1] = (Elf64_Shdr){ .sh_name = 1,
			      .sh_type = SHT_PROGBITS,
			      .sh_flags = SHF_ALLOC,
			      .sh_addr = eh_addr,
			      .sh_offset = off + hdr_len,
			      .sh_size = eh_len,
			      .sh_addralign = 1 };
	sh[2] = (Elf64_Shdr){ .sh_name = 11,
			      .sh_type = SHT_PROGBITS,
			      .sh_flags = SHF_ALLOC,
			      .sh_addr = hdr_addr,
			      .sh_offset = off,
			      .sh_size = hdr_len,
			      .sh_addralign = 1 };
	sh[3] = (Elf64_Shdr){ .sh_name = 25,
			      .sh_type = SHT_STRTAB,
			      .sh_offset = off + size,
			      .sh_size = sizeof(shstrtab),
			      .sh_addralign = 1 };
	elf_version(EV_CURRENT);
	if (!unwind_file_build(elf_memory((char *)img, total), &small, &b))
		unwind_built_free(&b);
	free(img);
	return 0;
}
