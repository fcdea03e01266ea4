// SPDX-License-Identifier: BSD-2-Clause
/*
 * Compiled once per installed CPython (python_layouts.cmake), against its
 * Include/ and, with Py_BUILD_CORE, Include/internal: PROBE_FN fills a
 * python_probe from that version's own structures.
 */
#define Py_BUILD_CORE 1
#include <Python.h>
#if PY_VERSION_HEX >= 0x03080000
#include <internal/pycore_pystate.h>
#if PY_VERSION_HEX >= 0x03090000
#include <internal/pycore_interp.h>
#include <internal/pycore_runtime.h>
#endif
#elif PY_VERSION_HEX >= 0x03070000
#include <internal/pystate.h>
#endif
#if PY_VERSION_HEX >= 0x030b0000
#include <internal/pycore_frame.h>
#else
#include <frameobject.h>
#endif
#include <stddef.h>

#include "python_layout_probe.h"

void PROBE_FN(struct python_probe *p);

void PROBE_FN(struct python_probe *p)
{
	p->version_hex = PY_VERSION_HEX;
	p->runtime_interp_head = PROBE_NONE;
	p->runtime_tss_key = PROBE_NONE;
	p->cframe_frame = PROBE_NONE;
	p->frame_entry = PROBE_NONE;
#if PY_VERSION_HEX >= 0x03070000
	p->runtime_interp_head = offsetof(_PyRuntimeState, interpreters.head);
#if PY_VERSION_HEX >= 0x030c0000
	p->runtime_tss_key = offsetof(_PyRuntimeState, autoTSSkey) + offsetof(Py_tss_t, _key);
#else
	p->runtime_tss_key =
		offsetof(_PyRuntimeState, gilstate.autoTSSkey) + offsetof(Py_tss_t, _key);
#endif
#endif
#if PY_VERSION_HEX >= 0x030b0000
	p->interp_tstate_head = offsetof(PyInterpreterState, threads.head);
#else
	p->interp_tstate_head = offsetof(PyInterpreterState, tstate_head);
#endif
	p->tstate_next = offsetof(PyThreadState, next);
	p->tstate_thread_id = offsetof(PyThreadState, thread_id);
#if PY_VERSION_HEX >= 0x030d0000
	p->tstate_frame = offsetof(PyThreadState, current_frame);
	p->frame_code = offsetof(_PyInterpreterFrame, f_executable);
	p->frame_instr = offsetof(_PyInterpreterFrame, instr_ptr);
#elif PY_VERSION_HEX >= 0x030b0000
	p->tstate_frame = offsetof(PyThreadState, cframe);
	p->cframe_frame = offsetof(_PyCFrame, current_frame);
	p->frame_code = offsetof(_PyInterpreterFrame, f_code);
	p->frame_instr = offsetof(_PyInterpreterFrame, prev_instr);
#else
	p->tstate_frame = offsetof(PyThreadState, frame);
	p->frame_code = offsetof(PyFrameObject, f_code);
	p->frame_instr = offsetof(PyFrameObject, f_lasti);
	p->frame_previous = offsetof(PyFrameObject, f_back);
	p->frame_instr_size = sizeof(((PyFrameObject *)0)->f_lasti);
#endif
#if PY_VERSION_HEX >= 0x030b0000
	p->frame_previous = offsetof(_PyInterpreterFrame, previous);
	p->frame_instr_size = 8;
#if PY_VERSION_HEX >= 0x030c0000
	p->frame_entry = offsetof(_PyInterpreterFrame, owner);
#else
	p->frame_entry = offsetof(_PyInterpreterFrame, is_entry);
#endif
#endif
}
