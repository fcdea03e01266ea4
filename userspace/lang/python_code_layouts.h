/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Where a CPython code object keeps what names a frame (its name or
 * qualified name, file, first line and line table), and how its strings
 * and bytes objects are laid out, for every version bpfprof names: 2.7,
 * 3.6 to 3.13 on LP64 (x86_64, arm64). Data, one table a version, taken
 * from each version's own headers (test_python_code_layouts compares them
 * with offsetof() against every installed ~/.pyenv version).
 *
 * What changes between versions: 2.7's names are PyStringObject (bytes);
 * 3.x's are compact unicode, whose header lost its wstr pointer in 3.12;
 * the line table is 2.7's co_lnotab (unsigned line deltas), 3.6-3.9's
 * (signed), 3.10's co_linetable and 3.11's PEP 657 location table; only
 * 3.11+ have co_qualname and keep their bytecode inside the code object
 * (co_code_adaptive), which a 3.11+ frame's instruction pointer points
 * into; before, a frame holds f_lasti, an offset (2.7-3.9 in bytes, 3.10
 * in code units).
 */
#ifndef BPFPROF_LANG_PYTHON_CODE_LAYOUTS_H
#define BPFPROF_LANG_PYTHON_CODE_LAYOUTS_H

#include <stdint.h>

/* The line table's format (python_linetable.h decodes each). */
enum py_line_format {
	PY_LINES_LNOTAB_27 = 0, /* (byte delta, unsigned line delta) pairs */
	PY_LINES_LNOTAB_36,	/* (byte delta, signed line delta) pairs */
	PY_LINES_310,		/* (byte delta, signed line delta, -128: none) ranges */
	PY_LINES_311,		/* PEP 657 location entries, in code units */
};

/* What a frame's instruction word holds (bpfprof_abi.h: bit 0 is the entry flag). */
enum py_instr_kind {
	PY_INSTR_POINTER = 0, /* 3.11+: an address in co_code_adaptive */
	PY_INSTR_LASTI_BYTES, /* 2.7-3.9: f_lasti << 1, a byte offset */
	PY_INSTR_LASTI_UNITS, /* 3.10: f_lasti << 1, in 2-byte code units */
};

/* How the names are stored. */
enum py_str_kind {
	PY_STR_UNICODE = 0, /* 3.x str: compact unicode (PyASCIIObject) */
	PY_STR_BYTES,	    /* 2.7 str: PyStringObject, bytes_size/bytes_data */
};

/* Where a code object's fields are (userspace reads them, not BPF). */
struct python_code_layout {
	uint16_t ob_type;				 /* PyObject.ob_type */
	uint16_t co_firstlineno;			 /* int */
	uint16_t co_filename, co_qualname, co_linetable; /* PyObject * */
	uint16_t co_name;				 /* PyObject *: 0 from 3.11 (co_qualname) */
	/* 3.11+: the first code unit, instruction pointers count from it; before: 0. */
	uint16_t co_code_adaptive;
	uint16_t head_size; /* bytes of the code object read: every field above is in them */
	uint8_t line_format, instr_kind, str_kind; /* enums above */
	uint16_t bytes_size, bytes_data;	   /* PyBytesObject (2.7: PyStringObject) */
	uint16_t str_length, str_state;		   /* PyASCIIObject: length, state */
	uint16_t str_ascii_data,
		str_compact_data; /* data after PyASCIIObject / PyCompactUnicodeObject */
};

/* The layout of a PY_VERSION_HEX's minor version, or NULL when bpfprof has none. */
const struct python_code_layout *python_code_layout_for(uint32_t version_hex);

#endif
