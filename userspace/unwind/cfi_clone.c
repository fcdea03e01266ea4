// SPDX-License-Identifier: BSD-2-Clause
/* See cfi_clone.h. */
#include "cfi_clone.h"

#include <gelf.h>
#include <stdbool.h>
#include <stdint.h>

/*
 * Whether the code at ELF address `vaddr` is a syscall instruction (0f 05).
 * Only those two bytes are read (a raw chunk), never the whole section: the
 * file may be another user's, with a .text of any size (issue 37).
 */
static bool syscall_at(Elf *elf, uint64_t vaddr)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *d;
		const uint8_t *p;
		uint64_t off;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) || vaddr < sh.sh_addr ||
		    vaddr - sh.sh_addr >= sh.sh_size)
			continue;
		off = vaddr - sh.sh_addr;
		if (sh.sh_size - off < 2 || sh.sh_offset > INT64_MAX - off)
			return false;
		d = elf_getdata_rawchunk(elf, (int64_t)(sh.sh_offset + off), 2, ELF_T_BYTE);
		if (!d || !d->d_buf || d->d_size < 2)
			return false;
		p = d->d_buf;
		return p[0] == 0x0f && p[1] == 0x05;
	}
	return false;
}

size_t cfi_mark_clone_returns(Elf *elf, struct cfi_row *rows, size_t len)
{
	size_t marked = 0, checks = 0;

	for (size_t i = 1; i + 1 < len && checks < CFI_CLONE_MAX_CHECKS; i++) {
		struct cfi_row *gap = &rows[i];
		const struct cfi_row *before = &rows[i - 1];

		if (gap->cfa != UNWIND_CFA_NONE || before->cfa != UNWIND_CFA_SP ||
		    rows[i + 1].cfa != UNWIND_CFA_ROOT ||
		    rows[i + 1].pc - gap->pc > CFI_CLONE_GAP_MAX)
			continue;
		checks++;
		if (!syscall_at(elf, gap->pc))
			continue;
		*gap = (struct cfi_row){ .pc = gap->pc,
					 .cfa = UNWIND_CFA_CLONE,
					 .cfa_offset = before->cfa_offset,
					 .fp = before->fp,
					 .fp_offset = before->fp_offset };
		marked++;
	}
	return marked;
}
