/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Which language runtime a binary's code belongs to, as far as stacks go:
 * each unwinds differently (CFI, Go's pcsp, the Python interpreter's own
 * frames), so how whole the stacks are is told per runtime.
 */
#ifndef BPFPROF_LANG_CODE_RUNTIME_H
#define BPFPROF_LANG_CODE_RUNTIME_H

enum code_runtime {
	CODE_RUNTIME_NATIVE = 0, /* C, C++, Rust...: CFI or frame pointers */
	CODE_RUNTIME_GO = 1,	 /* a Go binary (it has .gopclntab) */
	CODE_RUNTIME_PYTHON = 2, /* the CPython interpreter (python3, libpython) */
	CODE_RUNTIME_COUNT,
};

static inline const char *code_runtime_name(enum code_runtime r)
{
	switch (r) {
	case CODE_RUNTIME_GO:
		return "Go";
	case CODE_RUNTIME_PYTHON:
		return "Python";
	default:
		return "native";
	}
}

#endif
