/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What a raw frame's object id means: the one id space of every frame
 * source. The model stores frames as (object, offset) and knows nothing of
 * how they resolve; symbols/frame_resolver.c dispatches each id to its
 * source. A new source (an interpreter, say) takes a range here.
 */
#ifndef BPFPROF_FRAME_OBJECTS_H
#define BPFPROF_FRAME_OBJECTS_H

enum {
	OBJ_KERNEL = 0,	 /* offset = kernel virtual address (kallsyms) */
	OBJ_UNKNOWN = 1, /* offset = user virtual address outside any known mapping */
	/* Synthetic frames, no code: named where the profile's tables are built. */
	OBJ_TRUNCATED = 2, /* marks where a stack was cut (see BPFPROF_MAX_*STACK) */
	OBJ_OFFCPU = 3,	   /* leaf of an off-CPU sample; offset = enum offcpu_reason */
	/* Executable files and the vDSO, as the symbolizer hands them out. */
	OBJ_FIRST_FILE = 4,
	/* Python frames: offset = entry of symbols/python_frames.h. */
	OBJ_PYTHON = 0x30000000,
	/* Java frames read from a JVM: offset = entry of symbols/java_frames.h. */
	OBJ_JAVA = 0x30000001,
	/* PHP frames: offset = entry of symbols/java_frames.h (JAVA_FRAMES_PHP). */
	OBJ_PHP = 0x30000004,
	/* Ruby frames: offset = entry of the Ruby frames' symbols/python_frames.h table. */
	OBJ_RUBY = 0x30000002,
	/* JIT code described by a process's perf map (symbols/jit_maps.c), far above any file. */
	OBJ_FIRST_JIT = 0x40000000,
};

#endif
