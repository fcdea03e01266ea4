/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A small ELF image around an .eh_frame_hdr and an .eh_frame, for tests
 * and fuzz targets of the unwind tables: one executable segment, the two
 * sections at the addresses given, their names. The sections' bytes are
 * at `off` (EH_IMAGE_OFF): the index, then .eh_frame.
 */
#ifndef BPFPROF_TESTS_EH_IMAGE_H
#define BPFPROF_TESTS_EH_IMAGE_H

#include <elf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define EH_IMAGE_OFF (sizeof(Elf64_Ehdr) + sizeof(Elf64_Phdr))

/* Room for an image of `size` bytes of sections. */
static inline size_t eh_image_size(size_t size)
{
	static const char names[] = "\0.eh_frame\0.eh_frame_hdr\0.shstrtab";

	return ((EH_IMAGE_OFF + size + sizeof(names) + 7) & ~(size_t)7) + 4 * sizeof(Elf64_Shdr);
}

/*
 * Fill the headers of `img` (eh_image_size(hdr_len + eh_len) bytes, zeroed,
 * the sections' bytes already at EH_IMAGE_OFF); its total size.
 */
static inline size_t eh_image_finish(uint8_t *img, uint64_t hdr_addr, size_t hdr_len,
				     uint64_t eh_addr, size_t eh_len)
{
	static const char names[] = "\0.eh_frame\0.eh_frame_hdr\0.shstrtab";
	Elf64_Ehdr *eh = (Elf64_Ehdr *)img;
	Elf64_Phdr *ph = (Elf64_Phdr *)(img + sizeof(*eh));
	size_t off = EH_IMAGE_OFF, size = hdr_len + eh_len;
	Elf64_Shdr *sh;

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
	*ph = (Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = PF_R | PF_X, .p_memsz = 1u << 20 };
	memcpy(img + off + size, names, sizeof(names));
	eh->e_shoff = (off + size + sizeof(names) + 7) & ~(size_t)7;
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
			      .sh_size = sizeof(names),
			      .sh_addralign = 1 };
	return eh->e_shoff + 4 * sizeof(*sh);
}

/*
 * The head of an .eh_frame_hdr at `hdr_addr` (`hdr`, its bytes) indexing
 * `count` FDEs of the .eh_frame at `eh_addr`, in the encodings every linker
 * writes; the table's entries (start, FDE: each 4 bytes, relative to
 * `hdr_addr`) follow from byte 12.
 */
static inline void eh_image_hdr_head(uint8_t *hdr, uint64_t hdr_addr, uint64_t eh_addr,
				     uint32_t count)
{
	uint32_t eh_frame_ptr = (uint32_t)(eh_addr - (hdr_addr + 4));

	hdr[0] = 1;
	hdr[1] = 0x1b; /* eh_frame_ptr: pcrel sdata4 */
	hdr[2] = 0x03; /* fde_count: udata4 */
	hdr[3] = 0x3b; /* table: datarel sdata4 */
	memcpy(hdr + 4, &eh_frame_ptr, 4);
	memcpy(hdr + 8, &count, 4);
}

#endif
