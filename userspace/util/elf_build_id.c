// SPDX-License-Identifier: BSD-2-Clause
/* See elf_build_id.h. */
#include "elf_build_id.h"

#include <gelf.h>
#include <stdbool.h>
#include <string.h>

#ifndef NT_GNU_BUILD_ID
#define NT_GNU_BUILD_ID 3
#endif
/* Go's linker: the note "Go" of type 4, its build ID as text (cmd/link, elf.go). */
#define NT_GO_BUILD_ID 4

/* Which note, and how much of it: GNU's whole, Go's last ELF_BUILD_ID_MAX bytes. */
struct note_kind {
	const char name[4];
	uint32_t type;
	bool tail;
};

static const struct note_kind gnu_note = { "GNU", NT_GNU_BUILD_ID, false };
static const struct note_kind go_note = { "Go", NT_GO_BUILD_ID, true };

static size_t build_id_from_notes(Elf_Data *data, const struct note_kind *kind, uint8_t *out)
{
	size_t off = 0, next, name_off, desc_off;
	GElf_Nhdr nh;

	while ((next = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		size_t len = nh.n_descsz;

		off = next;
		/* Both names are 4 bytes: "GNU\0", and "Go\0\0" as Go's linker pads it. */
		if (nh.n_type != kind->type || nh.n_namesz != sizeof(kind->name) ||
		    memcmp((const char *)data->d_buf + name_off, kind->name, sizeof(kind->name)))
			continue;
		if (!len || (len > ELF_BUILD_ID_MAX && !kind->tail))
			continue;
		if (len > ELF_BUILD_ID_MAX) {
			desc_off += len - ELF_BUILD_ID_MAX;
			len = ELF_BUILD_ID_MAX;
		}
		memcpy(out, (const uint8_t *)data->d_buf + desc_off, len);
		return len;
	}
	return 0;
}

/*
 * What is read of a file's notes, which any user may craft: a build-id note
 * is 36 bytes, Go's about 100, and the PT_NOTE that holds them a few
 * hundred; a note section or segment past NOTE_MAX_BYTES is no one's
 * build-id and is skipped unread (libelf would allocate and read, or touch
 * through the map, all it claims, and keep it until elf_end), and at most
 * NOTE_MAX_READ are read in all.
 */
#define NOTE_MAX_BYTES 4096
#define NOTE_MAX_READ  16

static size_t note_of(Elf *elf, const struct note_kind *kind, uint8_t out[ELF_BUILD_ID_MAX])
{
	Elf_Scn *scn = NULL;
	size_t n, len, read = 0;

	while (read < NOTE_MAX_READ && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE ||
		    sh.sh_size > NOTE_MAX_BYTES)
			continue;
		read++;
		data = elf_getdata(scn, NULL);
		if (data && (len = build_id_from_notes(data, kind, out)))
			return len;
	}
	if (elf_getphdrnum(elf, &n))
		return 0;
	for (size_t i = 0; i < n && read < NOTE_MAX_READ; i++) {
		GElf_Phdr ph;
		Elf_Data *data;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_NOTE ||
		    ph.p_filesz > NOTE_MAX_BYTES)
			continue;
		read++;
		data = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_NHDR);
		if (data && (len = build_id_from_notes(data, kind, out)))
			return len;
	}
	return 0;
}

size_t elf_build_id(Elf *elf, uint8_t out[ELF_BUILD_ID_MAX])
{
	return note_of(elf, &gnu_note, out);
}

size_t elf_go_build_id(Elf *elf, uint8_t out[ELF_BUILD_ID_MAX])
{
	return note_of(elf, &go_note, out);
}
