/* SPDX-License-Identifier: BSD-2-Clause */
/* Symbol names as people read them: C++ (Itanium ABI) and Rust (legacy and v0). */
#ifndef BPFPROF_DEMANGLE_H
#define BPFPROF_DEMANGLE_H

/*
 * The demangled form of `sym` (malloc'd, caller frees), or NULL when `sym`
 * is not a mangled name (plain C) or cannot be demangled, so the caller
 * keeps the original. Rust legacy names lose their "::h<16 hex>" hash.
 */
char *demangle(const char *sym);

#endif
