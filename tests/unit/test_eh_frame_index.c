// SPDX-License-Identifier: BSD-2-Clause
/*
 * .eh_frame's FDEs found without .eh_frame_hdr (unwind/eh_frame_index.c):
 * hand-made sections with the encodings linkers write, and hostile ones
 * (lengths past the end, a CIE pointer to nowhere, encodings it does not
 * read), which must fail cleanly. The real files are test_cfi_table's.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "unwind/eh_frame_index.h"

struct builder {
	uint8_t buf[512];
	size_t len;
};

static void put(struct builder *b, const void *p, size_t n)
{
	memcpy(b->buf + b->len, p, n);
	b->len += n;
}

static void put_u32(struct builder *b, uint32_t v)
{
	put(b, &v, 4);
}

/* A CIE with augmentation `aug` and its data; returns its offset. */
static size_t put_cie(struct builder *b, const char *aug, const uint8_t *augdata, size_t n)
{
	size_t at = b->len;
	/* id 0, version 1, aug, code align 1, data align -8, RA reg 16 */
	uint8_t body[64];
	size_t k = 0;

	put_u32(b, 0); /* length, patched below */
	put_u32(b, 0);
	body[k++] = 1;
	memcpy(body + k, aug, strlen(aug) + 1);
	k += strlen(aug) + 1;
	body[k++] = 1;
	body[k++] = 0x78;
	body[k++] = 16;
	if (aug[0] == 'z') {
		body[k++] = (uint8_t)n;
		memcpy(body + k, augdata, n);
		k += n;
	}
	put(b, body, k);
	while ((b->len - at) % 4)
		b->buf[b->len++] = 0; /* DW_CFA_nop */
	{
		uint32_t len = (uint32_t)(b->len - at - 4);

		memcpy(b->buf + at, &len, 4);
	}
	return at;
}

/* An FDE of `cie` whose initial location is the 4 bytes `loc`. */
static void put_fde(struct builder *b, size_t cie, int32_t loc)
{
	uint32_t len = 4 + 4 + 4 + 1, ptr;

	put_u32(b, len);
	ptr = (uint32_t)(b->len - cie);
	put_u32(b, ptr);
	put(b, &loc, 4);
	put_u32(b, 0x20);     /* range, same format */
	b->buf[b->len++] = 0; /* augmentation data length */
}

static void pcrel_and_absolute(void)
{
	struct builder b = { 0 };
	uint8_t pcrel = 0x1b;
	uint64_t *starts;
	size_t n, c1, c2;

	c1 = put_cie(&b, "zR", &pcrel, 1);
	/* The location field sits at byte 8 of the FDE; pc-relative to its own address. */
	put_fde(&b, c1, 0x100 - (int32_t)(b.len + 8));
	c2 = put_cie(&b, "zPLR", (const uint8_t[]){ 0x00, 1, 2, 3, 4, 5, 6, 7, 8, 0x1b, 0x03 }, 11);
	put_fde(&b, c2, 0x4321);
	put_u32(&b, 0);	     /* terminator */
	put_u32(&b, 0xdead); /* not read */

	CHECK_EQ_INT(eh_frame_fde_starts(b.buf, b.len, 0x1000, &starts, &n), 0);
	CHECK_EQ_INT(n, 2);
	if (n == 2) {
		CHECK_EQ_INT(starts[0], 0x1000 + 0x100);
		CHECK_EQ_INT(starts[1], 0x4321);
	}
	free(starts);
}

static void hostile_sections_fail_cleanly(void)
{
	struct builder b = { 0 };
	uint8_t pcrel = 0x1b, indirect = 0x9b, datarel = 0x3b;
	uint64_t *starts;
	size_t n, cie, fde;

	/* A length past the end. */
	put_u32(&b, 1000);
	put_u32(&b, 0);
	CHECK_EQ_INT(eh_frame_fde_starts(b.buf, b.len, 0, &starts, &n), -EINVAL);
	CHECK(!starts && !n);

	/* An FDE whose CIE pointer points before the section. */
	b.len = 0;
	put_u32(&b, 13);
	put_u32(&b, 0x7fffffff);
	put_u32(&b, 0);
	put_u32(&b, 0);
	b.buf[b.len++] = 0;
	CHECK_EQ_INT(eh_frame_fde_starts(b.buf, b.len, 0, &starts, &n), -EINVAL);

	/* An FDE whose "CIE" is another FDE. */
	b.len = 0;
	cie = put_cie(&b, "zR", &pcrel, 1);
	fde = b.len;
	put_fde(&b, cie, 0);
	put_fde(&b, fde, 0);
	CHECK_EQ_INT(eh_frame_fde_starts(b.buf, b.len, 0, &starts, &n), -EINVAL);

	/* Encodings not read: indirect, data-relative. */
	b.len = 0;
	cie = put_cie(&b, "zR", &indirect, 1);
	put_fde(&b, cie, 0);
	CHECK_EQ_INT(eh_frame_fde_starts(b.buf, b.len, 0, &starts, &n), -ENOTSUP);
	b.len = 0;
	cie = put_cie(&b, "zR", &datarel, 1);
	put_fde(&b, cie, 0);
	CHECK_EQ_INT(eh_frame_fde_starts(b.buf, b.len, 0, &starts, &n), -ENOTSUP);

	/* A CIE whose augmentation string runs off its record. */
	b.len = 0;
	put_u32(&b, 8);
	put_u32(&b, 0);
	put(&b, "\001zRRR", 5 - 1);
	b.len = 12;
	put_fde(&b, 0, 0);
	CHECK(eh_frame_fde_starts(b.buf, b.len, 0, &starts, &n) < 0);

	/* An augmentation string longer than any real one is refused at once. */
	b.len = 0;
	put_u32(&b, 0);
	put_u32(&b, 0);
	b.buf[b.len++] = 1;
	memset(b.buf + b.len, 'z', 200);
	b.len += 200;
	b.buf[b.len++] = 0;
	b.buf[b.len++] = 1;
	b.buf[b.len++] = 0x78;
	b.buf[b.len++] = 16;
	{
		uint32_t len = (uint32_t)(b.len - 4);

		memcpy(b.buf, &len, 4);
	}
	cie = 0;
	put_fde(&b, cie, 0);
	CHECK_EQ_INT(eh_frame_fde_starts(b.buf, b.len, 0, &starts, &n), -EINVAL);

	/* Every truncation of a valid section stops cleanly. */
	b.len = 0;
	cie = put_cie(&b, "zR", &pcrel, 1);
	put_fde(&b, cie, 0x40);
	for (size_t cut = 0; cut <= b.len; cut++) {
		int err = eh_frame_fde_starts(b.buf, cut, 0, &starts, &n);

		CHECK(err == 0 || err == -EINVAL);
		if (!err)
			CHECK(n <= 1);
		free(starts);
	}
}

/*
 * The walk stops at the FDE past its budget (issue 37): a ~900 MiB
 * section of FDEs was listed whole (seconds, and a ref per FDE) before the
 * table's budget was ever asked. Here the record after the budget's FDEs
 * is malformed: a walk that stopped never reads it (-E2BIG, not -EINVAL).
 */
static void walk_stops_at_its_budget(void)
{
	struct builder b = { 0 };
	uint8_t pcrel = 0x1b;
	struct eh_fde_ref *refs;
	size_t n, cie;

	cie = put_cie(&b, "zR", &pcrel, 1);
	for (int i = 0; i < 4; i++)
		put_fde(&b, cie, 0x100 * (i + 1));
	put_u32(&b, 1000); /* a length past the end */
	put_u32(&b, 0);

	CHECK_EQ_INT(eh_frame_fde_refs(b.buf, b.len, 0, SIZE_MAX, &refs, &n), -EINVAL);
	CHECK_EQ_INT(eh_frame_fde_refs(b.buf, b.len, 0, 3, &refs, &n), -E2BIG);
	CHECK(!refs && !n);
	/* Exactly at the budget is within it: the terminator ends the walk. */
	b.len -= 8;
	put_u32(&b, 0);
	CHECK_EQ_INT(eh_frame_fde_refs(b.buf, b.len, 0, 4, &refs, &n), 0);
	CHECK_EQ_INT(n, 4);
	free(refs);
}

int main(void)
{
	RUN(pcrel_and_absolute);
	RUN(hostile_sections_fail_cleanly);
	RUN(walk_stops_at_its_budget);
	return test_summary();
}
