// SPDX-License-Identifier: BSD-2-Clause
/* See elf_vaddr.h. */
#include "elf_vaddr.h"

#include <string.h>

bool elf_read_vaddr(Elf *elf, uint64_t vaddr, void *out, size_t len)
{
	size_t n;

	if (elf_getphdrnum(elf, &n))
		return false;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		Elf_Data *d;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || vaddr < ph.p_vaddr ||
		    vaddr - ph.p_vaddr > ph.p_filesz || ph.p_filesz - (vaddr - ph.p_vaddr) < len)
			continue;
		d = elf_getdata_rawchunk(elf, (int64_t)(ph.p_offset + (vaddr - ph.p_vaddr)), len,
					 ELF_T_BYTE);
		if (!d || !d->d_buf || d->d_size < len)
			return false;
		memcpy(out, d->d_buf, len);
		return true;
	}
	return false;
}
