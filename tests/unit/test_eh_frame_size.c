// SPDX-License-Identifier: BSD-2-Clause
/*
 * A hostile .eh_frame's size and number of FDEs (issue 37): a user's binary
 * with a ~900 MiB .eh_frame cost root's bpfprof 1.1 GB of memory (the
 * section, read: a user's file is not mapped) and seconds listing every FDE
 * before the table's budget was asked. A section over EH_FRAME_MAX_BYTES is
 * refused before it is read; more FDEs than the budget has rows, through
 * the index or without it, are refused before they are walked. Built here
 * in memory (eh_image.h): a CIE and K one-byte FDEs. No root.
 */
#include <errno.h>
#include <libelf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "eh_image.h"
#include "test.h"
#include "unwind/cfi_table.h"
#include "unwind/eh_frame_index.h"

enum { K = 64, TEXT = 0x100000, HDR = 0x1000, FDE_BYTES = 17 };

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

/* .eh_frame_hdr then .eh_frame into `out`: K FDEs of one byte each, 16 apart. */
static void sections(uint8_t *out, size_t *hdr_len, size_t *eh_len)
{
	/* version 1, "zR", code 1, data -8, RA 16, pcrel sdata4; CFA = rsp + 8, RA at CFA - 8 */
	static const uint8_t cie[] = { 0,    0, 0,    0,    1,	  'z',	'R',  0,    1, 0x78,
				       0x10, 1, 0x1b, 0x0c, 0x07, 0x08, 0x90, 0x01, 0, 0 };
	uint8_t *hdr = out, *eh;
	uint64_t eh_addr;
	size_t at;

	*hdr_len = 12 + 8 * K;
	eh = out + *hdr_len;
	eh_addr = HDR + *hdr_len;
	put32(eh, sizeof(cie));
	memcpy(eh + 4, cie, sizeof(cie));
	at = 4 + sizeof(cie);
	eh_image_hdr_head(hdr, HDR, eh_addr, K);
	for (uint32_t k = 0; k < K; k++) {
		uint64_t start = TEXT + 16 * (uint64_t)k;

		put32(hdr + 12 + 8 * k, (uint32_t)(start - HDR));
		put32(hdr + 16 + 8 * k, (uint32_t)(eh_addr + at - HDR));
		put32(eh + at, FDE_BYTES - 4);
		put32(eh + at + 4, (uint32_t)(at + 4)); /* back to the CIE */
		put32(eh + at + 8, (uint32_t)(start - (eh_addr + at + 8)));
		put32(eh + at + 12, 1);
		eh[at + 16] = 0; /* augmentation data */
		at += FDE_BYTES;
	}
	put32(eh + at, 0); /* terminator */
	*eh_len = at + 4;
}

/* The image, with or without its index; `eh_size` the size .eh_frame's header claims. */
static Elf *image(uint8_t *img, bool index, uint64_t eh_size)
{
	size_t hdr_len, eh_len, total;
	Elf64_Shdr *sh;

	sections(img + EH_IMAGE_OFF, &hdr_len, &eh_len);
	total = eh_image_finish(img, HDR, hdr_len, HDR + hdr_len, eh_len);
	sh = (Elf64_Shdr *)(img + ((Elf64_Ehdr *)img)->e_shoff);
	if (!index)
		sh[2].sh_name = 25; /* ".shstrtab": no ".eh_frame_hdr" left */
	if (eh_size)
		sh[1].sh_size = eh_size;
	return elf_memory((char *)img, total);
}

/*
 * The image's table within a budget of `rows` rows, with the index and
 * without: K FDEs fit K rows; one row less is refused before any FDE is
 * walked (no row read), and said why.
 */
static void build_within_rows(size_t rows)
{
	uint8_t *img = calloc(1, eh_image_size(1u << 16));

	for (int index = 0; img && index < 2; index++) {
		struct cfi_budget b = cfi_default_budget;
		struct cfi_table t;
		Elf *elf;

		memset(img, 0, eh_image_size(1u << 16));
		elf = image(img, index, 0);
		b.file_rows = rows;
		if (rows >= K) {
			CHECK_EQ_INT(cfi_table_build_within(elf, &b, &t), 0);
			CHECK_EQ_INT(t.stats.fdes, K);
			CHECK(t.len >= K);
			cfi_table_free(&t);
		} else {
			CHECK_EQ_INT(cfi_table_build_within(elf, &b, &t), -E2BIG);
			CHECK(t.stats.over_budget &&
			      !strcmp(t.stats.over_budget, "FDEs in the file"));
			CHECK(!t.rows && !t.stats.rows_read);
		}
		elf_end(elf);
	}
	free(img);
}

static void within_budget_is_built(void)
{
	build_within_rows(K);
}

static void more_fdes_than_rows_is_over_budget(void)
{
	build_within_rows(K - 1);
}

/*
 * A section header claiming more than EH_FRAME_MAX_BYTES: refused on its
 * size alone. The image holds far less: a build that read it would fail
 * another way (libelf finds it past the end of the image).
 */
static void huge_section_is_refused_unread(void)
{
	uint8_t *img = calloc(1, eh_image_size(1u << 16));
	struct cfi_table t;
	Elf *elf;

	if (!img)
		return;
	elf = image(img, false, (uint64_t)EH_FRAME_MAX_BYTES + 1);
	CHECK_EQ_INT(cfi_table_build(elf, &t), -E2BIG);
	CHECK(t.stats.over_budget && !strcmp(t.stats.over_budget, "the size of .eh_frame"));
	elf_end(elf);
	free(img);
}

int main(void)
{
	elf_version(EV_CURRENT);
	RUN(within_budget_is_built);
	RUN(more_fdes_than_rows_is_over_budget);
	RUN(huge_section_is_refused_unread);
	return test_summary();
}
