/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The header of a hand-made Go 1.20 function table (.gopclntab), for the
 * tests of lang/go_pclntab.c and lang/go_lines.c: magic, quantum 1,
 * 8-byte pointers, then where each part of the table lies.
 */
#ifndef BPFPROF_TESTS_GO_IMAGE_H
#define BPFPROF_TESTS_GO_IMAGE_H

#include <stdint.h>
#include <string.h>

/* The table's first 72 bytes, in `t`; its parts start at these offsets. */
static inline void go_image_header(uint8_t *t, uint64_t nfunc, uint64_t text, uint64_t funcnametab,
				   uint64_t cutab, uint64_t filetab, uint64_t pctab,
				   uint64_t functab)
{
	const uint32_t magic = 0xfffffff1u; /* Go 1.20 */
	const uint64_t at[] = { nfunc, 0, text, funcnametab, cutab, filetab, pctab, functab };

	memcpy(t, &magic, 4);
	t[4] = t[5] = 0;
	t[6] = 1; /* quantum */
	t[7] = 8; /* pointer size */
	memcpy(t + 8, at, sizeof(at));
}

#endif
