/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * offsetof() of the fields bpfprof's Python layouts name, in one
 * version's own headers (python_layout_probe.c, compiled once per
 * installed version), for test_python_layouts to compare with the tables.
 * Plain integers: this header is read with and without Python.h.
 */
#ifndef BPFPROF_TEST_PYTHON_LAYOUT_PROBE_H
#define BPFPROF_TEST_PYTHON_LAYOUT_PROBE_H

#include <stdint.h>

#define PROBE_NONE 0xffff

struct python_probe {
	uint32_t version_hex;
	uint16_t runtime_interp_head, runtime_tss_key; /* PROBE_NONE before 3.7 */
	uint16_t interp_tstate_head, tstate_next, tstate_thread_id, tstate_frame, cframe_frame;
	uint16_t frame_code, frame_previous, frame_instr, frame_entry;
	uint16_t frame_instr_size; /* 4: int f_lasti (<= 3.10), 8: a pointer */
};

#endif
