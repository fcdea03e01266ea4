// SPDX-License-Identifier: BSD-2-Clause
#include "minidebuginfo.h"

#include <errno.h>
#include <gelf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef HAVE_LZMA
#include <lzma.h>
#endif

/* The .gnu_debugdata section's bytes, or NULL. */
static Elf_Data *debugdata_section(Elf *elf)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr shdr;
		const char *name;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_PROGBITS)
			continue;
		name = elf_strptr(elf, shstrndx, shdr.sh_name);
		if (name && !strcmp(name, ".gnu_debugdata"))
			return elf_rawdata(scn, NULL);
	}
	return NULL;
}

int minidebuginfo_read(Elf *elf, void **image, size_t *size)
{
	Elf_Data *data = debugdata_section(elf);

	*image = NULL;
	*size = 0;
	if (!data || !data->d_buf || !data->d_size)
		return -ENOENT;
#ifdef HAVE_LZMA
	{
		lzma_stream strm = LZMA_STREAM_INIT;
		size_t cap = data->d_size * 4 + 4096, len = 0;
		uint8_t *out = NULL;
		lzma_ret ret;

		if (lzma_stream_decoder(&strm, MINIDEBUGINFO_MAX_BYTES, 0) != LZMA_OK)
			return -ENOMEM;
		strm.next_in = data->d_buf;
		strm.avail_in = data->d_size;
		do {
			if (len == cap || !out) {
				uint8_t *grown;

				if (out)
					cap *= 2;
				if (cap > MINIDEBUGINFO_MAX_BYTES)
					cap = MINIDEBUGINFO_MAX_BYTES;
				if (out && len == cap) {
					free(out);
					lzma_end(&strm);
					return -EFBIG;
				}
				grown = realloc(out, cap);
				if (!grown) {
					free(out);
					lzma_end(&strm);
					return -ENOMEM;
				}
				out = grown;
			}
			strm.next_out = out + len;
			strm.avail_out = cap - len;
			ret = lzma_code(&strm, LZMA_FINISH);
			len = cap - strm.avail_out;
		} while (ret == LZMA_OK);
		lzma_end(&strm);
		if (ret != LZMA_STREAM_END) {
			free(out);
			return ret == LZMA_MEMLIMIT_ERROR ? -EFBIG : -EBADMSG;
		}
		*image = out;
		*size = len;
		return 0;
	}
#else
	return -ENOTSUP;
#endif
}
