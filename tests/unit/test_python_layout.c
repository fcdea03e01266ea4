// SPDX-License-Identifier: BSD-2-Clause
/*
 * CPython interpreters as bpfprof finds them (lang/python_layout.c): on
 * Debian's own /usr/bin/python3 (stripped: only its dynamic symbols), the
 * version and the addresses the walk needs; and bpfprof's layout of that
 * version against offsetof() in the interpreter's own headers
 * (python3-dev, Include/internal with Py_BUILD_CORE), field by field.
 */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <internal/pycore_frame.h>
#include <internal/pycore_runtime.h>

#include <fcntl.h>
#include <gelf.h>
#include <stddef.h>
#include <unistd.h>

#include "lang/python_layout.h"
#include "test.h"

#ifndef PYTHON_BINARY
#define PYTHON_BINARY "/usr/bin/python3"
#endif

static void debian_python_is_found(void)
{
	struct python_info info;
	int fd = open(PYTHON_BINARY, O_RDONLY | O_CLOEXEC);
	Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;

	CHECK(elf != NULL);
	if (!elf)
		return;
	CHECK_EQ_INT(python_info_read(elf, &info), 1);
	/* The headers this test is built with are the interpreter's own version. */
	CHECK_EQ_INT(info.version_hex >> 16, PY_VERSION_HEX >> 16);
	CHECK(info.runtime && info.eval_start && info.eval_size > 1000 && info.code_type);
	CHECK_EQ_INT(info.interp_head - info.runtime, offsetof(_PyRuntimeState, interpreters.head));
	CHECK_EQ_INT(info.tss_key - info.runtime,
		     offsetof(_PyRuntimeState, gilstate.autoTSSkey) + offsetof(Py_tss_t, _key));
	CHECK(info.code != NULL);
	elf_end(elf);
	close(fd);
}

static void layout_matches_headers(void)
{
	struct py_layout f;
	const struct python_code_layout *c;

	CHECK(python_layout_for(PY_VERSION_HEX, &f, &c));
	if (!c)
		return;
	CHECK_EQ_INT(f.interp_tstate_head, offsetof(PyInterpreterState, threads.head));
	CHECK_EQ_INT(f.tstate_next, offsetof(PyThreadState, next));
	CHECK_EQ_INT(f.tstate_thread_id, offsetof(PyThreadState, thread_id));
	CHECK_EQ_INT(f.tstate_frame, offsetof(PyThreadState, cframe));
	CHECK_EQ_INT(f.cframe_frame, offsetof(_PyCFrame, current_frame));
	CHECK_EQ_INT(f.frame_code, offsetof(_PyInterpreterFrame, f_code));
	CHECK_EQ_INT(f.frame_previous, offsetof(_PyInterpreterFrame, previous));
	CHECK_EQ_INT(f.frame_instr, offsetof(_PyInterpreterFrame, prev_instr));
	CHECK_EQ_INT(f.frame_entry, offsetof(_PyInterpreterFrame, is_entry));
	CHECK_EQ_INT(c->ob_type, offsetof(PyObject, ob_type));
	CHECK_EQ_INT(c->co_firstlineno, offsetof(PyCodeObject, co_firstlineno));
	CHECK_EQ_INT(c->co_filename, offsetof(PyCodeObject, co_filename));
	CHECK_EQ_INT(c->co_qualname, offsetof(PyCodeObject, co_qualname));
	CHECK_EQ_INT(c->co_linetable, offsetof(PyCodeObject, co_linetable));
	CHECK_EQ_INT(c->co_code_adaptive, offsetof(PyCodeObject, co_code_adaptive));
	CHECK_EQ_INT(c->bytes_size, offsetof(PyVarObject, ob_size));
	CHECK_EQ_INT(c->bytes_data, offsetof(PyBytesObject, ob_sval));
	CHECK_EQ_INT(c->str_length, offsetof(PyASCIIObject, length));
	CHECK_EQ_INT(c->str_state, offsetof(PyASCIIObject, state));
	CHECK_EQ_INT(c->str_ascii_data, sizeof(PyASCIIObject));
	CHECK_EQ_INT(c->str_compact_data, sizeof(PyCompactUnicodeObject));
	/* The state bits python_procs.c reads: compact (5) and ascii (6), kind in 2-4. */
	{
		PyASCIIObject o = { 0 };
		uint32_t state;

		o.state.kind = 4;
		o.state.compact = 1;
		o.state.ascii = 1;
		memcpy(&state, (char *)&o + offsetof(PyASCIIObject, state), 4);
		CHECK_EQ_INT((state >> 2) & 7, 4);
		CHECK(state & (1u << 5));
		CHECK(state & (1u << 6));
	}
	/* A version without a layout says so. */
	CHECK(!python_layout_for(0x03050000, &f, &c));
}

int main(void)
{
	elf_version(EV_CURRENT);
	RUN(debian_python_is_found);
	RUN(layout_matches_headers);
	return test_summary();
}
