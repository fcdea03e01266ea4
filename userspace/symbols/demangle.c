// SPDX-License-Identifier: BSD-2-Clause
#include "demangle.h"

#include <ctype.h>
#include <stdbool.h>
#include <string.h>

#include <demangle.h> /* libiberty's, found through its include directory */

/*
 * Rust legacy names are Itanium-mangled paths ending in a 16-hex-digit hash
 * ("_ZN4core3fmt5write17h0123456789abcdefE"); rustfilt drops "::h<hash>".
 * libiberty's Rust demangler already does unless asked to be verbose, but
 * a name that only the C++ demangler accepted still carries it.
 */
static void strip_rust_hash(char *s)
{
	size_t len = strlen(s);
	const size_t tail = 3 + 16; /* "::h" + hash */
	char *h;

	if (len <= tail)
		return;
	h = s + len - tail;
	if (strncmp(h, "::h", 3))
		return;
	for (size_t i = 3; i < tail; i++)
		if (!isxdigit((unsigned char)h[i]))
			return;
	*h = '\0';
}

char *demangle(const char *sym)
{
	const int opts = DMGL_PARAMS | DMGL_ANSI;
	char *out;

	/*
	 * Only Itanium (_Z) and Rust v0 (_R) names are mangled. Asking the
	 * demangler about anything else costs time and, in its automatic mode,
	 * may rewrite plain C names as if they were Ada.
	 */
	if (sym[0] != '_' || (sym[1] != 'Z' && sym[1] != 'R'))
		return NULL;
	/* Rust legacy names are valid C++ names too: ask the Rust demangler first. */
	out = cplus_demangle(sym, opts | DMGL_RUST);
	if (!out && sym[1] == 'Z')
		out = cplus_demangle(sym, opts | DMGL_GNU_V3);
	if (out)
		strip_rust_hash(out);
	return out;
}
