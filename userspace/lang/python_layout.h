/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What bpfprof must know of a CPython interpreter binary (the python3.x
 * executable or libpython3.x.so) to show Python frames, without its debug
 * symbols: from its dynamic symbol table, where _PyRuntime, the
 * interpreter loop (_PyEval_EvalFrameDefault) and PyCode_Type are; from
 * Py_Version, which version it is; and for that version, where the fields
 * the walk reads sit in the interpreter's structures.
 *
 * Layouts are per minor version: 3.11 is here (Debian 12's python3, the
 * offsets taken from its own headers, Include/internal). 3.12 moved the
 * loop's entry mark to a frame owned by the C stack (PY_ENTRY_OWNER) and
 * 3.13 dropped _PyCFrame (PY_NO_CFRAME) and describes its own layout in
 * _PyRuntime's _Py_DebugOffsets; the tables take those shapes, and a
 * version without a layout is reported once and shows its C frames only.
 */
#ifndef BPFPROF_LANG_PYTHON_LAYOUT_H
#define BPFPROF_LANG_PYTHON_LAYOUT_H

#include <libelf.h>
#include <stdbool.h>
#include <stdint.h>

#include "../../bpf/bpfprof_abi.h"
#include "python_code_layouts.h"

struct python_info {
	uint32_t version_hex; /* PY_VERSION_HEX: 0x030b02f0 is 3.11.2 final */
	/* ELF virtual addresses in the binary. */
	uint64_t runtime, eval_start, eval_size, code_type;
	/* Addresses in a process: ELF address + (mapping start - mapping offset - exec_bias). */
	int64_t exec_bias;		       /* p_vaddr - p_offset of the executable segment */
	struct py_layout frames;	       /* for BPF */
	const struct python_code_layout *code; /* NULL: no layout for this version */
};

/*
 * Whether `elf` is a CPython interpreter, and its info: 1 (a Python with a
 * layout), 0 (not Python), -ENOTSUP (Python, no layout for its version:
 * info->version_hex says which), -ENOMEM.
 */
int python_info_read(Elf *elf, struct python_info *info);

/*
 * The layouts for a PY_VERSION_HEX's minor version; false when bpfprof has
 * none (tests compare them with the installed headers).
 */
bool python_layout_for(uint32_t version_hex, struct py_layout *frames,
		       const struct python_code_layout **code);

/* "3.11" from a PY_VERSION_HEX, into buf. */
const char *python_version_name(uint32_t version_hex, char buf[16]);

#endif
