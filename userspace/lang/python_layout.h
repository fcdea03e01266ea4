/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What bpfprof must know of a CPython interpreter binary (the python
 * executable or libpython2.7/3.x.so) to show Python frames, without its
 * debug symbols: from its dynamic symbol table, where its roots are (the
 * first interpreter, the pthread key of its thread states), the
 * interpreter loop (_PyEval_EvalFrameDefault; 2.7's PyEval_EvalFrameEx)
 * and PyCode_Type; which version it is (Py_Version from 3.11, the
 * PY_VERSION string Py_GetVersion formats before); and for that version,
 * where the fields the walk reads sit in the interpreter's structures.
 *
 * Layouts are per minor version, 2.7 and 3.6-3.13, as data (offsetof in
 * each version's own headers: test_python_layouts checks them against
 * every installed version). 3.13 on also describes itself in the
 * _Py_DebugOffsets _PyRuntime starts with: read from the file and checked
 * against sane bounds, they are the walk's layout there, so a version
 * with no table still has its frames walked (its thread found through its
 * interpreter's thread list: the key's place is in no debug offset).
 */
#ifndef BPFPROF_LANG_PYTHON_LAYOUT_H
#define BPFPROF_LANG_PYTHON_LAYOUT_H

#include <libelf.h>
#include <stdbool.h>
#include <stdint.h>

#include "../../bpf/bpfprof_abi.h"
#include "python_code_layouts.h"

struct python_info {
	uint32_t version_hex; /* PY_VERSION_HEX: 0x030b02f0 is 3.11.2 final (2.7-3.10: no micro) */
	/* ELF virtual addresses in the binary (runtime: _PyRuntime, 0 before 3.7). */
	uint64_t runtime, eval_start, eval_size, code_type;
	/* Roots, ELF virtual addresses (struct py_proc's interp_head, tss_key; 0: none). */
	uint64_t interp_head, tss_key;
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
 * no frame layout (tests compare them with the installed headers). *code
 * is NULL where bpfprof cannot name that version's code objects.
 */
bool python_layout_for(uint32_t version_hex, struct py_layout *frames,
		       const struct python_code_layout **code);

/* Where a version's roots sit in _PyRuntime (3.7 on). */
struct python_runtime_roots {
	uint16_t interp_head; /* interpreters.head */
	uint16_t tss_key;     /* autoTSSkey._key; 0: unknown */
};

/* The roots in _PyRuntime of a 3.7+ minor version with a table; false if none. */
bool python_runtime_roots_for(uint32_t version_hex, struct python_runtime_roots *roots);

/*
 * The layout a 3.13+ interpreter describes in the _Py_DebugOffsets its
 * _PyRuntime starts with (`buf`, `len` bytes of it): 0 with *frames and
 * *interp_head (its offset in _PyRuntime) set, -EINVAL when the cookie,
 * version or any offset is not sane (each field within its structure's
 * size, each structure within bounds the walk can read).
 */
int python_debug_offsets_parse(const uint8_t *buf, size_t len, uint32_t version_hex,
			       struct py_layout *frames, uint64_t *interp_head);

/* "3.11" from a PY_VERSION_HEX, into buf. */
const char *python_version_name(uint32_t version_hex, char buf[16]);

#endif
