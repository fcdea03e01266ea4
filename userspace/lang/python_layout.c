// SPDX-License-Identifier: BSD-2-Clause
/* See python_layout.h. */
#include "python_layout.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/*
 * The frame walk's layout per minor version, x86_64 and arm64 (LP64), from
 * each version's Include/ (pystate.h, frameobject.h; from 3.11
 * Include/internal/pycore_frame.h with Py_BUILD_CORE): test_python_layouts
 * compares them with offsetof() in every installed version's headers.
 */
#define PY_FRAME_OBJECT(next, thread_id, frame, instr)                                           \
	{                                                                                        \
		.interp_tstate_head = 8, .tstate_next = (next), .tstate_thread_id = (thread_id), \
		.tstate_frame = (frame), .cframe_frame = PY_NO_CFRAME, .frame_code = 32,         \
		.frame_previous = 24, .frame_instr = (instr), .entry_kind = PY_ENTRY_EVERY       \
	}

static const struct py_layout frames_27 = PY_FRAME_OBJECT(0, 144, 16, 120);
static const struct py_layout frames_36 = PY_FRAME_OBJECT(8, 152, 24, 120);
/* 3.7-3.9 */
static const struct py_layout frames_37 = PY_FRAME_OBJECT(8, 176, 24, 104);
static const struct py_layout frames_310 = PY_FRAME_OBJECT(8, 176, 24, 96);

static const struct py_layout frames_311 = {
	.interp_tstate_head = 16, /* threads.head */
	.tstate_next = 8,
	.tstate_thread_id = 152,
	.tstate_frame = 56, /* cframe */
	.cframe_frame = 8,  /* current_frame */
	.frame_code = 32,
	.frame_previous = 48,
	.frame_instr = 56, /* prev_instr */
	.frame_entry = 68, /* is_entry */
	.entry_kind = PY_ENTRY_IS_ENTRY,
};

static const struct py_layout frames_312 = {
	.interp_tstate_head = 72,
	.tstate_next = 8,
	.tstate_thread_id = 136,
	.tstate_frame = 56,
	.cframe_frame = 0,
	.frame_code = 0,
	.frame_previous = 8,
	.frame_instr = 56,
	.frame_entry = 70, /* owner */
	.entry_kind = PY_ENTRY_OWNER,
};

static const struct py_layout frames_313 = {
	.interp_tstate_head = 7344,
	.tstate_next = 8,
	.tstate_thread_id = 152,
	.tstate_frame = 72, /* current_frame */
	.cframe_frame = PY_NO_CFRAME,
	.frame_code = 0, /* f_executable */
	.frame_previous = 8,
	.frame_instr = 56, /* instr_ptr */
	.frame_entry = 70,
	.entry_kind = PY_ENTRY_OWNER,
};

/* interpreters.head and autoTSSkey._key in _PyRuntime (gilstate.autoTSSkey before 3.12). */
static const struct {
	uint16_t minor;
	struct python_runtime_roots roots;
} runtime_roots[] = {
	{ 7, { 24, 1508 } }, { 8, { 32, 1396 } },  { 9, { 32, 588 } },	  { 10, { 32, 588 } },
	{ 11, { 40, 596 } }, { 12, { 40, 1548 } }, { 13, { 632, 2164 } },
};

bool python_runtime_roots_for(uint32_t version_hex, struct python_runtime_roots *roots)
{
	if (version_hex >> 24 != 3)
		return false;
	for (size_t i = 0; i < sizeof(runtime_roots) / sizeof(runtime_roots[0]); i++)
		if (runtime_roots[i].minor == ((version_hex >> 16) & 0xff)) {
			*roots = runtime_roots[i].roots;
			return true;
		}
	return false;
}

const char *python_version_name(uint32_t v, char buf[16])
{
	snprintf(buf, 16, "%u.%u", (v >> 24) & 0xff, (v >> 16) & 0xff);
	return buf;
}

bool python_layout_for(uint32_t version_hex, struct py_layout *frames,
		       const struct python_code_layout **code)
{
	*code = python_code_layout_for(version_hex);
	switch (version_hex >> 16) {
	case 0x0207:
		*frames = frames_27;
		return true;
	case 0x0306:
		*frames = frames_36;
		return true;
	case 0x0307:
	case 0x0308:
	case 0x0309:
		*frames = frames_37;
		return true;
	case 0x030a:
		*frames = frames_310;
		return true;
	case 0x030b:
		*frames = frames_311;
		return true;
	case 0x030c:
		*frames = frames_312;
		return true;
	case 0x030d:
		*frames = frames_313;
		return true;
	default:
		return false;
	}
}

/* Where each section of 3.13's _Py_DebugOffsets is (8-byte fields; a section starts with its size).
 */
enum {
	DBG_VERSION = 8,
	DBG_FREE_THREADED = 16,
	DBG_RUNTIME = 24, /* size, finalizing, interpreters_head */
	DBG_INTERP = 48,  /* size, id, next, threads_head, ... (13 fields) */
	DBG_TSTATE = 152, /* size, prev, next, interp, current_frame, thread_id, ... (9) */
	DBG_FRAME = 224,  /* size, previous, executable, instr_ptr, localsplus, owner */
	DBG_END = 272,
};

static uint64_t dbg_u64(const uint8_t *buf, size_t off)
{
	uint64_t v;

	memcpy(&v, buf + off, sizeof(v));
	return v;
}

/*
 * Field `field` of the section at `section`, when it lies within that
 * structure (its size the section's first word, at most `max`) with room
 * for `width` bytes: its offset, or -1.
 */
static int64_t dbg_field(const uint8_t *buf, size_t section, size_t field, uint64_t max,
			 uint64_t width)
{
	uint64_t size = dbg_u64(buf, section), off = dbg_u64(buf, section + 8 * field);

	if (size > max || off >= size || size - off < width || off > UINT16_MAX - width)
		return -1;
	return (int64_t)off;
}

int python_debug_offsets_parse(const uint8_t *buf, size_t len, uint32_t version_hex,
			       struct py_layout *frames, uint64_t *interp_head)
{
	int64_t f[9];

	/* Sections placed as 3.13 places them: a later version moves them (3.14 adds fields). */
	if (len < DBG_END || memcmp(buf, "xdebugpy", 8) || (version_hex >> 16) != 0x030d ||
	    dbg_u64(buf, DBG_VERSION) >> 16 != version_hex >> 16 ||
	    dbg_u64(buf, DBG_FREE_THREADED) != 0)
		return -EINVAL;
	/*
	 * Bounds: _PyRuntime and an interpreter are large (tens of KiB), a
	 * thread state smaller; a frame's fields must fit the window the walk
	 * reads at once (PY_FRAME_WINDOW, 128 bytes), its words 8-aligned there.
	 */
	f[0] = dbg_field(buf, DBG_RUNTIME, 2, 1u << 20, 8); /* interpreters_head */
	f[1] = dbg_field(buf, DBG_INTERP, 3, 1u << 20, 8);  /* threads_head */
	f[2] = dbg_field(buf, DBG_TSTATE, 2, 1u << 14, 8);  /* next */
	f[3] = dbg_field(buf, DBG_TSTATE, 4, 1u << 14, 8);  /* current_frame */
	f[4] = dbg_field(buf, DBG_TSTATE, 5, 1u << 14, 8);  /* thread_id */
	f[5] = dbg_field(buf, DBG_FRAME, 1, 1u << 12, 8);   /* previous */
	f[6] = dbg_field(buf, DBG_FRAME, 2, 1u << 12, 8);   /* executable */
	f[7] = dbg_field(buf, DBG_FRAME, 3, 1u << 12, 8);   /* instr_ptr */
	f[8] = dbg_field(buf, DBG_FRAME, 5, 1u << 12, 1);   /* owner */
	for (size_t i = 0; i < 9; i++)
		if (f[i] < 0 || (i >= 5 && f[i] >= 128 - (i == 8 ? 1 : 8)) ||
		    (i >= 5 && i < 8 && f[i] % 8))
			return -EINVAL;
	memset(frames, 0, sizeof(*frames));
	*interp_head = (uint64_t)f[0];
	frames->interp_tstate_head = (uint16_t)f[1];
	frames->tstate_next = (uint16_t)f[2];
	frames->tstate_frame = (uint16_t)f[3];
	frames->tstate_thread_id = (uint16_t)f[4];
	frames->cframe_frame = PY_NO_CFRAME;
	frames->frame_previous = (uint16_t)f[5];
	frames->frame_code = (uint16_t)f[6];
	frames->frame_instr = (uint16_t)f[7];
	frames->frame_entry = (uint16_t)f[8];
	frames->entry_kind = PY_ENTRY_OWNER;
	return 0;
}
