// SPDX-License-Identifier: BSD-2-Clause
#include "elf_section.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

Elf_Scn *elf_section_by_name(Elf *elf, const char *name, GElf_Shdr *shdr)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, shdr))
			continue;
		n = elf_strptr(elf, shstrndx, shdr->sh_name);
		if (n && !strcmp(n, name))
			return scn;
	}
	return NULL;
}

Elf_Scn *elf_code_section_at(Elf *elf, uint64_t vaddr, GElf_Shdr *shdr)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, shdr) && shdr->sh_type == SHT_PROGBITS &&
		    (shdr->sh_flags & SHF_EXECINSTR) && vaddr >= shdr->sh_addr &&
		    vaddr - shdr->sh_addr < shdr->sh_size)
			return scn;
	return NULL;
}

/* The bytes [off, off + len) of the section `sh`, as a raw chunk; NULL when not all there. */
static const uint8_t *section_chunk(Elf *elf, const GElf_Shdr *sh, uint64_t off, size_t len)
{
	Elf_Data *d;

	if (off > sh->sh_size || sh->sh_size - off < len || sh->sh_offset > INT64_MAX - off)
		return NULL;
	d = elf_getdata_rawchunk(elf, (int64_t)(sh->sh_offset + off), len, ELF_T_BYTE);
	return d && d->d_buf && d->d_size >= len ? d->d_buf : NULL;
}

int elf_read_code(Elf *elf, uint64_t vaddr, void *buf, size_t len)
{
	GElf_Shdr sh;
	const uint8_t *p;

	if (!elf_code_section_at(elf, vaddr, &sh))
		return -ENOENT;
	if (!(p = section_chunk(elf, &sh, vaddr - sh.sh_addr, len)))
		return -EIO;
	memcpy(buf, p, len);
	return 0;
}

int elf_code_reader_read(struct elf_code_reader *r, uint64_t vaddr, void *buf, size_t len)
{
	GElf_Shdr sh;
	uint64_t start, off, size;

	if (len > ELF_CODE_WINDOW)
		return -EINVAL;
	if (!r->bytes || vaddr < r->start || vaddr >= r->end || r->end - vaddr < len) {
		if (r->windows >= ELF_CODE_MAX_WINDOWS)
			return -E2BIG;
		if (!elf_code_section_at(r->elf, vaddr, &sh))
			return -ENOENT;
		/* The page holding vaddr, or from vaddr on where the bytes cross its end. */
		start = vaddr & ~(uint64_t)(ELF_CODE_WINDOW - 1);
		if (start < sh.sh_addr || start + ELF_CODE_WINDOW - vaddr < len)
			start = vaddr;
		off = start - sh.sh_addr;
		size = sh.sh_size - off < ELF_CODE_WINDOW ? sh.sh_size - off : ELF_CODE_WINDOW;
		if (size < vaddr - start + len)
			return -ENOENT;
		r->windows++;
		r->bytes = section_chunk(r->elf, &sh, off, size);
		if (!r->bytes)
			return -EIO;
		r->start = start;
		r->end = start + size;
	}
	memcpy(buf, r->bytes + (vaddr - r->start), len);
	return 0;
}

/*
 * ELF vaddr - file offset of the executable segments, which the unwinder
 * adds to a PC's offset in the file. -EINVAL when there is none, or when
 * two disagree (one bias per file is all the BPF side keeps).
 */
int elf_exec_bias(Elf *elf, int64_t *bias)
{
	size_t n;
	bool found = false;

	if (elf_getphdrnum(elf, &n))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		int64_t b;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		b = (int64_t)(ph.p_vaddr - ph.p_offset);
		if (found && b != *bias)
			return -EINVAL;
		*bias = b;
		found = true;
	}
	return found ? 0 : -EINVAL;
}
