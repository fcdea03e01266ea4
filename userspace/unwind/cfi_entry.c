// SPDX-License-Identifier: BSD-2-Clause
/* See cfi_entry.h. */
#include "cfi_entry.h"

#include <gelf.h>
#include <stdlib.h>

bool cfi_mark_entry_root(Elf *elf, struct cfi_table *t)
{
	struct cfi_row_vec v = { 0 };
	GElf_Ehdr eh;
	uint64_t entry, end;
	size_t at, i;
	int err = 0;

	if (!t->len || !gelf_getehdr(elf, &eh) || !eh.e_entry)
		return false;
	entry = eh.e_entry;
	/* The rows at or before the entry: the last of them holds for it. */
	for (at = 0; at < t->len && t->rows[at].pc <= entry; at++)
		;
	if (at && t->rows[at - 1].cfa != UNWIND_CFA_NONE)
		return false;
	end = entry + CFI_ENTRY_GAP_MAX;
	if (at < t->len && t->rows[at].pc < end)
		end = t->rows[at].pc;
	/* Rebuilt through cfi_row_push, which keeps the table's form (no equal neighbours). */
	for (i = 0; i < at && !err; i++)
		err = cfi_row_push(&v, &t->rows[i]);
	if (!err)
		err = cfi_row_push(&v, &(struct cfi_row){ .pc = entry, .cfa = UNWIND_CFA_ROOT });
	if (!err && (at == t->len || t->rows[at].pc > end))
		err = cfi_row_push(&v, &(struct cfi_row){ .pc = end, .cfa = UNWIND_CFA_NONE });
	for (i = at; i < t->len && !err; i++)
		err = cfi_row_push(&v, &t->rows[i]);
	if (err) {
		free(v.data);
		return false;
	}
	free(t->rows);
	t->rows = v.data;
	t->len = v.len;
	return true;
}
