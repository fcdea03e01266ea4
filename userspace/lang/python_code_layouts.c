// SPDX-License-Identifier: BSD-2-Clause
/* See python_code_layouts.h. */
#include "python_code_layouts.h"

#include <stddef.h>

/*
 * Bytes objects and compact str of 3.x: PyVarObject's ob_size, ob_sval
 * after the cached hash; a str's header is PyASCIIObject (refcount, type,
 * length, hash, state and, up to 3.11, wstr), then PyCompactUnicodeObject's
 * utf8_length, utf8 and (up to 3.11) wstr_length.
 */
#define BYTES_3X .bytes_size = 16, .bytes_data = 32
#define STR_3X	 .str_length = 16, .str_state = 32, .str_kind = PY_STR_UNICODE
#define STR_WSTR STR_3X, .str_ascii_data = 48, .str_compact_data = 72
#define STR_312	 STR_3X, .str_ascii_data = 40, .str_compact_data = 56

/* 2.7: names, file and co_lnotab are PyStringObject (ob_size, ob_shash, ob_sstate, ob_sval). */
static const struct python_code_layout code_27 = {
	.ob_type = 8,
	.co_firstlineno = 96,
	.co_filename = 80,
	.co_name = 88,
	.co_linetable = 104, /* co_lnotab */
	.head_size = 112,
	.line_format = PY_LINES_LNOTAB_27,
	.instr_kind = PY_INSTR_LASTI_BYTES,
	.str_kind = PY_STR_BYTES,
	.bytes_size = 16,
	.bytes_data = 36,
};

/* 3.6 and 3.7: co_firstlineno after the five int counts and co_flags. */
static const struct python_code_layout code_36 = {
	.ob_type = 8,
	.co_firstlineno = 36,
	.co_filename = 96,
	.co_name = 104,
	.co_linetable = 112, /* co_lnotab */
	.head_size = 120,
	.line_format = PY_LINES_LNOTAB_36,
	.instr_kind = PY_INSTR_LASTI_BYTES,
	BYTES_3X,
	STR_WSTR,
};

/* 3.8 and 3.9 (co_posonlyargcount moved the rest by 8 from 3.8 on). */
static const struct python_code_layout code_38 = {
	.ob_type = 8,
	.co_firstlineno = 40,
	.co_filename = 104,
	.co_name = 112,
	.co_linetable = 120, /* co_lnotab */
	.head_size = 128,
	.line_format = PY_LINES_LNOTAB_36,
	.instr_kind = PY_INSTR_LASTI_BYTES,
	BYTES_3X,
	STR_WSTR,
};

static const struct python_code_layout code_310 = {
	.ob_type = 8,
	.co_firstlineno = 40,
	.co_filename = 104,
	.co_name = 112,
	.co_linetable = 120,
	.head_size = 128,
	.line_format = PY_LINES_310,
	.instr_kind = PY_INSTR_LASTI_UNITS,
	BYTES_3X,
	STR_WSTR,
};

/*
 * 3.11 (Debian 12's python3 and pyenv's 3.11.7 alike), from
 * Include/cpython/code.h: the bytecode is inside the code object.
 */
static const struct python_code_layout code_311 = {
	.ob_type = 8,
	.co_firstlineno = 72,
	.co_filename = 112,
	.co_qualname = 128,
	.co_linetable = 136,
	.co_code_adaptive = 184,
	.head_size = 184,
	.line_format = PY_LINES_311,
	.instr_kind = PY_INSTR_POINTER,
	BYTES_3X,
	STR_WSTR,
};

/* 3.12: co_firstlineno moved before co_nlocalsplus, str lost wstr. */
static const struct python_code_layout code_312 = {
	.ob_type = 8,
	.co_firstlineno = 68,
	.co_filename = 112,
	.co_qualname = 128,
	.co_linetable = 136,
	.co_code_adaptive = 192,
	.head_size = 192,
	.line_format = PY_LINES_311,
	.instr_kind = PY_INSTR_POINTER,
	BYTES_3X,
	STR_312,
};

/* 3.13: as 3.12 but for co_code_adaptive, 8 bytes on. */
static const struct python_code_layout code_313 = {
	.ob_type = 8,
	.co_firstlineno = 68,
	.co_filename = 112,
	.co_qualname = 128,
	.co_linetable = 136,
	.co_code_adaptive = 200,
	.head_size = 200,
	.line_format = PY_LINES_311,
	.instr_kind = PY_INSTR_POINTER,
	BYTES_3X,
	STR_312,
};

const struct python_code_layout *python_code_layout_for(uint32_t version_hex)
{
	switch (version_hex >> 16) {
	case 0x0207:
		return &code_27;
	case 0x0306:
	case 0x0307:
		return &code_36;
	case 0x0308:
	case 0x0309:
		return &code_38;
	case 0x030a:
		return &code_310;
	case 0x030b:
		return &code_311;
	case 0x030c:
		return &code_312;
	case 0x030d:
		return &code_313;
	default:
		return NULL;
	}
}
