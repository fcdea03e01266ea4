// SPDX-License-Identifier: BSD-2-Clause
/*
 * bpfprof's code object and string layout of one CPython version
 * (lang/python_code_layouts.c) against offsetof() in that version's own
 * headers: python_code_layouts.cmake builds this file once per installed
 * ~/.pyenv version, with its include directory, and reports a version
 * whose headers are missing by name.
 */
#define Py_BUILD_CORE 1
#include <Python.h>

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "lang/python_code_layouts.h"
#include "test.h"

/* Which field holds the line table, and whether names are 2.7's byte strings. */
#if PY_MAJOR_VERSION == 2
#define LINE_TABLE co_lnotab
#define BYTES_TYPE PyStringObject
#define WANT_LINES PY_LINES_LNOTAB_27
#define WANT_INSTR PY_INSTR_LASTI_BYTES
#elif PY_VERSION_HEX < 0x030a0000
#define LINE_TABLE co_lnotab
#define BYTES_TYPE PyBytesObject
#define WANT_LINES PY_LINES_LNOTAB_36
#define WANT_INSTR PY_INSTR_LASTI_BYTES
#elif PY_VERSION_HEX < 0x030b0000
#define LINE_TABLE co_linetable
#define BYTES_TYPE PyBytesObject
#define WANT_LINES PY_LINES_310
#define WANT_INSTR PY_INSTR_LASTI_UNITS
#else
#define LINE_TABLE co_linetable
#define BYTES_TYPE PyBytesObject
#define WANT_LINES PY_LINES_311
#define WANT_INSTR PY_INSTR_POINTER
#endif

/* Every field read lies in the bytes read of the code object. */
static void within_head(const struct python_code_layout *c, size_t off, size_t size)
{
	CHECK(off + size <= c->head_size);
}

static void code_layout_matches_headers(void)
{
	const struct python_code_layout *c = python_code_layout_for(PY_VERSION_HEX);

	printf("checking Python %s's code object layout against %s\n", PY_VERSION, PY_HEADERS);
	CHECK(c != NULL);
	if (!c)
		return;
	CHECK_EQ_INT(c->ob_type, offsetof(PyObject, ob_type));
	CHECK_EQ_INT(c->co_firstlineno, offsetof(PyCodeObject, co_firstlineno));
	CHECK_EQ_INT(c->co_filename, offsetof(PyCodeObject, co_filename));
	CHECK_EQ_INT(c->co_linetable, offsetof(PyCodeObject, LINE_TABLE));
	CHECK_EQ_INT(c->line_format, WANT_LINES);
	CHECK_EQ_INT(c->instr_kind, WANT_INSTR);
	within_head(c, c->co_firstlineno, 4);
	within_head(c, c->co_filename, 8);
	within_head(c, c->co_linetable, 8);
#if PY_VERSION_HEX >= 0x030b0000
	CHECK_EQ_INT(c->co_qualname, offsetof(PyCodeObject, co_qualname));
	CHECK_EQ_INT(c->co_code_adaptive, offsetof(PyCodeObject, co_code_adaptive));
	CHECK_EQ_INT(c->co_name, 0); /* the qualname is read instead */
	within_head(c, c->co_qualname, 8);
#else
	CHECK_EQ_INT(c->co_name, offsetof(PyCodeObject, co_name));
	CHECK_EQ_INT(c->co_qualname, 0);
	CHECK_EQ_INT(c->co_code_adaptive, 0);
	within_head(c, c->co_name, 8);
#endif
	CHECK_EQ_INT(c->bytes_size, offsetof(PyVarObject, ob_size));
	CHECK_EQ_INT(c->bytes_data, offsetof(BYTES_TYPE, ob_sval));
#if PY_MAJOR_VERSION == 2
	CHECK_EQ_INT(c->str_kind, PY_STR_BYTES);
#else
	CHECK_EQ_INT(c->str_kind, PY_STR_UNICODE);
	CHECK_EQ_INT(c->str_length, offsetof(PyASCIIObject, length));
	CHECK_EQ_INT(c->str_state, offsetof(PyASCIIObject, state));
	CHECK_EQ_INT(c->str_ascii_data, sizeof(PyASCIIObject));
	CHECK_EQ_INT(c->str_compact_data, sizeof(PyCompactUnicodeObject));
	/* The state bits python_procs.c reads: kind in bits 2-4, compact (5), ascii (6). */
	{
		PyASCIIObject o;
		uint32_t state;

		memset(&o, 0, sizeof(o));
		o.state.kind = 4;
		o.state.compact = 1;
		o.state.ascii = 1;
		memcpy(&state, (char *)&o + offsetof(PyASCIIObject, state), 4);
		CHECK_EQ_INT(state & 0x7c, (4u << 2) | (1u << 5) | (1u << 6));
	}
#endif
}

int main(void)
{
	RUN(code_layout_matches_headers);
	return test_summary();
}
