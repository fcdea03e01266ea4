// SPDX-License-Identifier: BSD-2-Clause
/*
 * The language runtimes' tables a binary or a process hands us (issue 26):
 * the first byte picks the parser, the rest is its input.
 *   0  .eh_frame without its index (unwind/eh_frame_index.c), whole and within a budget
 *   1  Go's .gopclntab: functions, value tables, files and lines (lang/go_pclntab.c),
 *      the lines also decoded once (lang/go_lines.c): the same, or abort()
 *   2  a CPython location table (lang/python_linetable.c): walked, and
 *      indexed, whose lookups must answer as the walk does
 * Seeds: a small binary's .eh_frame, a hand-made two-function Go table, and
 * CPython's own table of a function.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lang/go_lines.h"
#include "lang/go_pclntab.h"
#include "lang/python_linetable.h"
#include "unwind/eh_frame_index.h"

static void go_table(const uint8_t *data, size_t size)
{
	uint8_t *copy = malloc(size ? size : 1);
	struct go_lines *lines = go_lines_new();
	struct go_pclntab t;

	if (!copy || !lines) {
		free(copy);
		go_lines_free(lines);
		return;
	}
	memcpy(copy, data, size);
	if (go_pclntab_from_bytes(copy, size, 0x401000, &t)) {
		go_lines_free(lines);
		return; /* `copy` freed there */
	}
	for (uint32_t i = 0; i < t.nfunc && i < 256; i++) {
		struct go_pcvalue_iter it;
		struct go_func f;
		const char *file;
		uint64_t a, b;
		int32_t v;
		int line;

		if (!go_pclntab_func(&t, i, &f))
			continue;
		(void)strlen(f.name);
		go_pcvalue_begin(&it, &t, f.pcsp, f.entry, f.end);
		while (go_pcvalue_next(&it, &a, &b, &v))
			;
		if (go_pclntab_line(&t, &f, f.entry, &file, &line))
			(void)strlen(file);
		for (uint64_t pc = f.entry; pc < f.entry + 64 && pc <= f.end; pc += 7) {
			const char *fa = NULL, *fb = NULL;
			int la = 0, lb = 0;
			bool a = go_pclntab_line(&t, &f, pc, &fa, &la);
			bool b = go_lines_at(lines, &t, &f, pc, &fb, &lb);

			/* Past its budget go_lines says nothing; before, what the walk says. */
			if (go_lines_steps(lines) < GO_LINES_STEPS &&
			    (a != b || (a && (la != lb || strcmp(fa, fb)))))
				abort();
		}
		(void)go_pclntab_find(&t, f.entry + 1);
	}
	go_lines_free(lines);
	go_pclntab_close(&t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct eh_fde_ref *refs;
	uint64_t *starts;
	size_t n;

	if (size < 2)
		return 0;
	switch (data[0] % 3) {
	case 0:
		if (!eh_frame_fde_starts(data + 1, size - 1, 0x1000, &starts, &n))
			free(starts);
		if (!eh_frame_fde_refs(data + 1, size - 1, 0x1000, 4, &refs, &n)) {
			if (n > 4)
				abort();
			free(refs);
		}
		break;
	case 1:
		go_table(data + 1, size - 1);
		break;
	default: {
		struct py_line_index index;
		bool indexed = !py_line_index_build(&index, data + 2, size - 2, data[1]);

		for (int64_t unit = -1; unit < 64; unit += 3) {
			int line = python_line_of(data + 2, size - 2, data[1], unit);

			if (indexed && py_line_index_lookup(&index, unit) != line)
				abort();
		}
		if (indexed)
			py_line_index_free(&index);
		break;
	}
	}
	return 0;
}
