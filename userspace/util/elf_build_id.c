// SPDX-License-Identifier: BSD-2-Clause
/* See elf_build_id.h. */
#include "elf_build_id.h"

#include <gelf.h>
#include <string.h>

#ifndef NT_GNU_BUILD_ID
#define NT_GNU_BUILD_ID 3
#endif

static size_t build_id_from_notes(Elf_Data *data, uint8_t *out)
{
	size_t off = 0, next, name_off, desc_off;
	GElf_Nhdr nh;

	while ((next = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		off = next;
		if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
		    memcmp((const char *)data->d_buf + name_off, "GNU", 4))
			continue;
		if (!nh.n_descsz || nh.n_descsz > ELF_BUILD_ID_MAX)
			continue;
		memcpy(out, (const uint8_t *)data->d_buf + desc_off, nh.n_descsz);
		return nh.n_descsz;
	}
	return 0;
}

size_t elf_build_id(Elf *elf, uint8_t out[ELF_BUILD_ID_MAX])
{
	Elf_Scn *scn = NULL;
	size_t n, len;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(scn, NULL);
		if (data && (len = build_id_from_notes(data, out)))
			return len;
	}
	if (elf_getphdrnum(elf, &n))
		return 0;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		Elf_Data *data;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_NOTE)
			continue;
		data = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_NHDR);
		if (data && (len = build_id_from_notes(data, out)))
			return len;
	}
	return 0;
}
