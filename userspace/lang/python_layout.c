// SPDX-License-Identifier: BSD-2-Clause
/* See python_layout.h. */
#include "python_layout.h"

#include <errno.h>
#include <gelf.h>
#include <stdio.h>
#include <string.h>

#include "../util/elf_dynsym.h"
#include "../util/elf_vaddr.h"

/*
 * CPython 3.11 on x86_64 and arm64 (LP64), from Include/cpython/code.h,
 * pystate.h, unicodeobject.h and Include/internal/pycore_frame.h,
 * pycore_runtime.h (offsetof with Py_BUILD_CORE; test_python_layout checks
 * them against the installed headers where python3.11-dev is).
 */
static const struct python_code_layout code_311 = {
	.ob_type = 8,
	.co_firstlineno = 72,
	.co_filename = 112,
	.co_qualname = 128,
	.co_linetable = 136,
	.co_code_adaptive = 184,
	.bytes_size = 16,
	.bytes_data = 32,
	.str_length = 16,
	.str_state = 32,
	.str_ascii_data = 48,
	.str_compact_data = 72,
};

static const struct py_layout frames_311 = {
	.runtime_tstate = 576, /* gilstate.tstate_current */
	.tstate_thread_id = 152,
	.tstate_frame = 56, /* cframe */
	.cframe_frame = 8,  /* current_frame */
	.frame_code = 32,
	.frame_previous = 48,
	.frame_instr = 56, /* prev_instr */
	.frame_entry = 68, /* is_entry */
	.entry_kind = PY_ENTRY_IS_ENTRY,
};

const char *python_version_name(uint32_t v, char buf[16])
{
	snprintf(buf, 16, "%u.%u", (v >> 24) & 0xff, (v >> 16) & 0xff);
	return buf;
}

struct found_symbols {
	struct python_info *info;
	uint64_t *version_vaddr;
	bool runtime;
};

static bool note_symbol(void *ctx, const char *name, const GElf_Sym *sym)
{
	struct found_symbols *f = ctx;

	if (!strcmp(name, "_PyRuntime")) {
		f->info->runtime = sym->st_value;
		f->runtime = true;
	} else if (!strcmp(name, "_PyEval_EvalFrameDefault")) {
		f->info->eval_start = sym->st_value;
		f->info->eval_size = sym->st_size;
	} else if (!strcmp(name, "PyCode_Type")) {
		f->info->code_type = sym->st_value;
	} else if (!strcmp(name, "Py_Version")) {
		*f->version_vaddr = sym->st_value;
	}
	return true;
}

/* The dynamic symbols the walk needs; false when `elf` exports no _PyRuntime. */
static bool find_symbols(Elf *elf, struct python_info *info, uint64_t *version_vaddr)
{
	struct found_symbols f = { info, version_vaddr, false };

	elf_dynsym_each(elf, note_symbol, &f);
	return f.runtime;
}

bool python_layout_for(uint32_t version_hex, struct py_layout *frames,
		       const struct python_code_layout **code)
{
	switch (version_hex >> 16) {
	case 0x030b:
		*frames = frames_311;
		*code = &code_311;
		return true;
	default:
		return false;
	}
}

int python_info_read(Elf *elf, struct python_info *info)
{
	uint64_t version_vaddr = 0;

	memset(info, 0, sizeof(*info));
	if (elf_kind(elf) != ELF_K_ELF || !find_symbols(elf, info, &version_vaddr))
		return 0;
	if (!info->eval_start || !info->eval_size || !info->code_type || !version_vaddr ||
	    !elf_read_vaddr(elf, version_vaddr, &info->version_hex, 4) ||
	    !elf_exec_bias(elf, &info->exec_bias))
		return -ENOTSUP; /* older than 3.11 (no Py_Version), or not whole */
	return python_layout_for(info->version_hex, &info->frames, &info->code) ? 1 : -ENOTSUP;
}
