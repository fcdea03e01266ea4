// SPDX-License-Identifier: BSD-2-Clause
/* See cfi_clone.h. */
#include "cfi_clone.h"

#include <stdbool.h>
#include <stdint.h>

#include "../util/elf_section.h"

/* Whether the code at ELF address `vaddr` is a syscall instruction (0f 05). */
static bool syscall_at(Elf *elf, uint64_t vaddr)
{
	uint8_t p[2];

	return !elf_read_code(elf, vaddr, p, sizeof(p)) && p[0] == 0x0f && p[1] == 0x05;
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
