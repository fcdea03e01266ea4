// SPDX-License-Identifier: BSD-2-Clause
/*
 * See eh_frame_index.h. The record layout is the LSB's (Linux Standard
 * Base Core, "The .eh_frame section"): a length, a CIE id (0) or an FDE's
 * pointer back to its CIE, and for an FDE its initial location in the
 * pointer encoding its CIE's augmentation 'R' names. Everything read from
 * the file is bounds-checked against `size`: a hostile binary gets -EINVAL,
 * never a read past the section.
 */
#include "eh_frame_index.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* DW_EH_PE_*: the low nibble is the format, the high one how it applies. */
#define PE_ABSPTR  0x00
#define PE_ULEB128 0x01
#define PE_UDATA2  0x02
#define PE_UDATA4  0x03
#define PE_UDATA8  0x04
#define PE_SLEB128 0x09
#define PE_SDATA2  0x0a
#define PE_SDATA4  0x0b
#define PE_SDATA8  0x0c
#define PE_PCREL   0x10
#define PE_OMIT	   0xff

/* LEB128 numbers of .eh_frame fit 64 bits: 10 bytes at most, more is a hostile file. */
#define LEB_MAX_BYTES 10
/* Real augmentation strings are a few letters ("zR", "zPLR", "zRS"). */
#define AUG_MAX_CHARS 16

static bool take(struct eh_cursor *c, void *dst, size_t n)
{
	if ((size_t)(c->end - c->p) < n)
		return false;
	memcpy(dst, c->p, n);
	c->p += n;
	return true;
}

bool eh_uleb(struct eh_cursor *c, uint64_t *v)
{
	unsigned shift = 0;

	*v = 0;
	while (c->p < c->end && shift < 7 * LEB_MAX_BYTES) {
		uint8_t b = *c->p++;

		if (shift < 64)
			*v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			return true;
	}
	return false;
}

bool eh_sleb(struct eh_cursor *c, int64_t *v)
{
	unsigned shift = 0;
	uint64_t r = 0;
	uint8_t b = 0;

	do {
		if (c->p >= c->end || shift >= 7 * LEB_MAX_BYTES)
			return false;
		b = *c->p++;
		if (shift < 64)
			r |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (shift < 64 && (b & 0x40))
		r |= ~0ull << shift;
	*v = (int64_t)r;
	return true;
}

int eh_read_pointer(struct eh_cursor *c, uint8_t enc, uint64_t here, uint64_t *out)
{
	uint64_t u = 0;
	int64_t s = 0;
	uint16_t u16 = 0; /* take() fills them, or fails with ok false */
	uint32_t u32 = 0;
	int16_t s16 = 0;
	int32_t s32 = 0;
	bool ok;

	switch (enc & 0x0f) {
	case PE_ABSPTR:
	case PE_UDATA8:
	case PE_SDATA8:
		ok = take(c, &u, 8);
		break;
	case PE_ULEB128:
		ok = eh_uleb(c, &u);
		break;
	case PE_UDATA2:
		ok = take(c, &u16, 2);
		u = u16;
		break;
	case PE_UDATA4:
		ok = take(c, &u32, 4);
		u = u32;
		break;
	case PE_SLEB128:
		ok = eh_sleb(c, &s);
		u = (uint64_t)s;
		break;
	case PE_SDATA2:
		ok = take(c, &s16, 2);
		u = (uint64_t)(int64_t)s16;
		break;
	case PE_SDATA4:
		ok = take(c, &s32, 4);
		u = (uint64_t)(int64_t)s32;
		break;
	default:
		return -ENOTSUP;
	}
	if (!ok)
		return -EINVAL;
	switch (enc & 0x70) {
	case 0:
		break;
	case PE_PCREL:
		u += here;
		break;
	default:
		return -ENOTSUP; /* textrel, datarel, funcrel: not in .eh_frame of Linux binaries */
	}
	if (enc & 0x80)
		return -ENOTSUP; /* indirect: the location is in memory we do not have */
	*out = u;
	return 0;
}

/*
 * The record at `off`: its cursor over the body after the length, `*id_off`
 * the offset of its id field. -EINVAL past the section or for a terminator.
 */
static int record_at(const uint8_t *data, size_t size, size_t off, struct eh_cursor *c,
		     size_t *id_off)
{
	uint32_t len32;
	uint64_t len;

	if (off > size)
		return -EINVAL;
	*c = (struct eh_cursor){ data + off, data + size };
	if (!take(c, &len32, 4) || !len32)
		return -EINVAL;
	len = len32;
	if (len32 == 0xffffffffu && !take(c, &len, 8))
		return -EINVAL;
	if (len > (uint64_t)(c->end - c->p) || len < 4)
		return -EINVAL;
	*id_off = (size_t)(c->p - data);
	c->end = c->p + len;
	return 0;
}

int eh_frame_cie(const uint8_t *data, size_t size, uint64_t vaddr, size_t off, struct eh_cie *out)
{
	struct eh_cursor c;
	uint64_t ra, aug_len;
	const uint8_t *aug_end = NULL;
	uint8_t version, ignored;
	const char *aug;
	size_t aug_chars, id_off;
	bool unknown = false;
	uint16_t sizes;
	uint32_t id;
	int err;

	if ((err = record_at(data, size, off, &c, &id_off)))
		return err;
	if (!take(&c, &id, 4) || id != 0 || !take(&c, &version, 1))
		return -EINVAL;
	if (version != 1 && version != 3 && version != 4)
		return -ENOTSUP;
	aug = (const char *)c.p;
	aug_chars = strnlen(aug, (size_t)(c.end - c.p) < AUG_MAX_CHARS ? (size_t)(c.end - c.p)
								       : AUG_MAX_CHARS);
	if (aug_chars == (size_t)(c.end - c.p) || aug_chars == AUG_MAX_CHARS)
		return -EINVAL;
	c.p += aug_chars + 1;
	memset(out, 0, sizeof(*out));
	out->fde_encoding = PE_ABSPTR;
	if (strstr(aug, "eh")) /* an old GCC's eh pointer: one absolute pointer */
		c.p = (size_t)(c.end - c.p) >= 8 ? c.p + 8 : c.end;
	if (version == 4 && !take(&c, &sizes, 2)) /* address and segment selector sizes */
		return -EINVAL;
	if (!eh_uleb(&c, &out->code_align) || !eh_sleb(&c, &out->data_align))
		return -EINVAL;
	if (version == 1 ? !take(&c, &ignored, 1) : !eh_uleb(&c, &ra))
		return -EINVAL;
	if (aug[0] == 'z') {
		if (!eh_uleb(&c, &aug_len) || aug_len > (uint64_t)(c.end - c.p))
			return -EINVAL;
		out->aug_data = true;
		aug_end = c.p + aug_len;
	}
	for (const char *a = aug + 1; aug_end && *a && !unknown; a++) {
		uint8_t e;
		uint64_t ptr;

		switch (*a) {
		case 'R':
			if (!take(&c, &out->fde_encoding, 1))
				return -EINVAL;
			break;
		case 'L':
			if (!take(&c, &e, 1))
				return -EINVAL;
			break;
		case 'P':
			if (!take(&c, &e, 1))
				return -EINVAL;
			err = eh_read_pointer(&c, e & 0x7f, vaddr + (uint64_t)(c.p - data), &ptr);
			if (err)
				return err;
			break;
		case 'S':
			out->signal = true;
			break;
		case 'B':
			break;
		default:
			unknown = true; /* the rest is skipped with the length */
			break;
		}
	}
	if (aug_end) {
		if (c.p > aug_end)
			return -EINVAL;
		c.p = aug_end;
	}
	out->insns = c.p;
	out->insns_end = c.end;
	return 0;
}

/*
 * The FDE record at `off` up to its instructions: its CIE (cached, see
 * eh_frame_fde), initial location and range. 0, -EINVAL, -ENOTSUP.
 */
static int fde_head(const uint8_t *data, size_t size, uint64_t vaddr, size_t off,
		    struct eh_fde *out, uint64_t *range, struct eh_cie *cie, size_t *cie_off)
{
	struct eh_cursor c;
	size_t id_off, cie_at;
	uint64_t skip;
	uint32_t id;
	int err;

	if ((err = record_at(data, size, off, &c, &id_off)))
		return err;
	if (!take(&c, &id, 4) || !id || id > id_off)
		return -EINVAL;
	cie_at = id_off - id;
	if (cie_at != *cie_off) {
		*cie_off = SIZE_MAX;
		if ((err = eh_frame_cie(data, size, vaddr, cie_at, cie)))
			return err;
		*cie_off = cie_at;
	}
	if (cie->fde_encoding == PE_OMIT)
		return -ENOTSUP;
	err = eh_read_pointer(&c, cie->fde_encoding, vaddr + (uint64_t)(c.p - data), &out->start);
	if (!err)
		err = eh_read_pointer(&c, cie->fde_encoding & 0x0f, 0, range);
	if (err)
		return err;
	if (cie->aug_data) {
		if (!eh_uleb(&c, &skip) || skip > (uint64_t)(c.end - c.p))
			return -EINVAL;
		c.p += skip;
	}
	out->cie_off = cie_at;
	out->end = out->start + *range;
	out->insns = c.p;
	out->insns_end = c.end;
	return 0;
}

int eh_frame_fde(const uint8_t *data, size_t size, uint64_t vaddr, size_t off, struct eh_fde *out,
		 struct eh_cie *cie, size_t *cie_off)
{
	uint64_t range;
	int err = fde_head(data, size, vaddr, off, out, &range, cie, cie_off);

	if (err)
		return err;
	return range && out->end > out->start ? 0 : -EINVAL; /* covers nothing, or wraps */
}

int eh_frame_fde_refs(const uint8_t *data, size_t size, uint64_t vaddr, size_t max,
		      struct eh_fde_ref **out, size_t *count)
{
	struct eh_fde_ref *refs = NULL;
	size_t n = 0, cap = 0, off = 0, cie_off = SIZE_MAX;
	struct eh_cie cie;
	int err = 0;

	*out = NULL;
	*count = 0;
	while (off + 4 <= size && !err) {
		struct eh_cursor c;
		struct eh_fde fde;
		size_t id_off, next;
		uint64_t range;
		uint32_t id;

		if (!memcmp(data + off, "\0\0\0\0", 4))
			break; /* the terminator */
		if ((err = record_at(data, size, off, &c, &id_off)))
			break;
		next = (size_t)(c.end - data);
		if (!take(&c, &id, 4)) {
			err = -EINVAL;
			break;
		}
		if (id) {
			if ((err = fde_head(data, size, vaddr, off, &fde, &range, &cie, &cie_off)))
				break;
			if (n == max) {
				err = -E2BIG;
				break;
			}
			if (n == cap) {
				size_t ncap = cap ? 2 * cap : 256;
				struct eh_fde_ref *r = realloc(refs, ncap * sizeof(*r));

				if (!r) {
					err = -ENOMEM;
					break;
				}
				refs = r;
				cap = ncap;
			}
			refs[n++] = (struct eh_fde_ref){ fde.start, off };
		}
		off = next;
	}
	if (err) {
		free(refs);
		return err;
	}
	*out = refs;
	*count = n;
	return 0;
}

int eh_frame_fde_starts(const uint8_t *data, size_t size, uint64_t vaddr, uint64_t **out,
			size_t *count)
{
	struct eh_fde_ref *refs;
	uint64_t *starts;
	int err = eh_frame_fde_refs(data, size, vaddr, SIZE_MAX, &refs, count);

	*out = NULL;
	if (err || !*count)
		return err;
	starts = malloc(*count * sizeof(*starts));
	if (starts)
		for (size_t i = 0; i < *count; i++)
			starts[i] = refs[i].start;
	free(refs);
	if (!starts) {
		*count = 0;
		return -ENOMEM;
	}
	*out = starts;
	return 0;
}
