// SPDX-License-Identifier: BSD-2-Clause
/*
 * An .eh_frame_hdr index whose entries all point at one long FDE (issue
 * 27): each entry, 1M addresses apart, walked that FDE again, so a 3 MB
 * binary of 32 entries read 32M rows (1.3 GB) only for the file to be
 * thrown away as FULL. The FDE is walked once; the other entries are
 * broken (no rows). Built here in memory: a CIE, one FDE of N rows, and
 * an index of K entries N bytes apart at it. No root.
 */
#include <libelf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "eh_image.h"
#include "test.h"
#include "unwind/cfi_table.h"

enum { N = 100000, K = 16, TEXT = 0x100000, HDR = 0x1000 };

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

/* .eh_frame_hdr then .eh_frame into `out` (room enough); their sizes. */
static void sections(uint8_t *out, size_t *hdr_len, size_t *eh_len)
{
	uint8_t *hdr = out, *eh;
	uint64_t eh_addr;
	size_t at, fde;

	*hdr_len = 12 + 8 * K;
	eh = out + *hdr_len;
	eh_addr = HDR + *hdr_len;
	/* CIE: version 1, "zR", code 1, data -8, RA 16, pcrel sdata4; CFA = rsp + 8, RA at CFA - 8.
	 */
	static const uint8_t cie[] = { 0,    0, 0,    0,    1,	  'z',	'R',  0,    1, 0x78,
				       0x10, 1, 0x1b, 0x0c, 0x07, 0x08, 0x90, 0x01, 0, 0 };
	memcpy(eh + 4, cie, sizeof(cie));
	put32(eh, sizeof(cie));
	fde = 4 + sizeof(cie);
	at = fde + 4;
	put32(eh + at, (uint32_t)at); /* back to the CIE */
	at += 4;
	put32(eh + at, (uint32_t)(TEXT - (eh_addr + at))); /* pc_begin, pcrel */
	at += 4;
	put32(eh + at, (uint32_t)K * N); /* pc_range: every entry inside it */
	at += 4;
	eh[at++] = 0; /* augmentation data */
	for (uint32_t i = 0; i < N; i++) {
		eh[at++] = 0x41; /* advance_loc 1 */
		eh[at++] = 0x0e; /* def_cfa_offset */
		eh[at++] = i & 1 ? 8 : 16;
	}
	while ((at - fde) % 4)
		eh[at++] = 0;
	put32(eh + fde, (uint32_t)(at - fde - 4));
	put32(eh + at, 0); /* terminator */
	*eh_len = at + 4;

	eh_image_hdr_head(hdr, HDR, eh_addr, K);
	for (uint32_t k = 0; k < K; k++) {
		put32(hdr + 12 + 8 * k, (uint32_t)(TEXT + (uint64_t)k * N - HDR));
		put32(hdr + 16 + 8 * k, (uint32_t)(eh_addr + fde - HDR));
	}
}

static void one_fde_is_walked_once(void)
{
	size_t hdr_len, eh_len, total;
	uint8_t *img = calloc(1, eh_image_size(4u << 20));
	struct cfi_table t;
	Elf *elf;

	CHECK(img != NULL);
	if (!img)
		return;
	sections(img + EH_IMAGE_OFF, &hdr_len, &eh_len);
	total = eh_image_finish(img, HDR, hdr_len, HDR + hdr_len, eh_len);
	elf = elf_memory((char *)img, total);
	CHECK(elf != NULL);
	CHECK_EQ_INT(cfi_table_build(elf, &t), 0);
	CHECK_EQ_INT(t.stats.fdes, K);
	/* The FDE's rows once (and its first entry's: unwinding there works), not K times. */
	CHECK(t.stats.rows_read >= N && t.stats.rows_read <= N + K);
	CHECK(t.len >= N);
	{
		const struct cfi_row *r = cfi_table_lookup(&t, TEXT + 10);

		CHECK(r && r->cfa == UNWIND_CFA_SP);
		r = cfi_table_lookup(&t, TEXT + N + 10);
		CHECK(r && r->cfa == UNWIND_CFA_NONE);
	}
	cfi_table_free(&t);
	elf_end(elf);
	free(img);
}

int main(void)
{
	elf_version(EV_CURRENT);
	RUN(one_fde_is_walked_once);
	return test_summary();
}
