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

struct cursor {
	const uint8_t *p, *end;
};

static bool take(struct cursor *c, void *dst, size_t n)
{
	if ((size_t)(c->end - c->p) < n)
		return false;
	memcpy(dst, c->p, n);
	c->p += n;
	return true;
}

/* LEB128 numbers of .eh_frame fit 64 bits: 10 bytes at most, more is a hostile file. */
#define LEB_MAX_BYTES 10
/* Real augmentation strings are a few letters ("zR", "zPLR", "zRS"). */
#define AUG_MAX_CHARS 16

static bool uleb(struct cursor *c, uint64_t *v)
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

static bool sleb(struct cursor *c, int64_t *v)
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

/* A pointer in `enc` at the cursor, whose own address is `here`; -ENOTSUP, -EINVAL or 0. */
static int read_pointer(struct cursor *c, uint8_t enc, uint64_t here, uint64_t *out)
{
	uint64_t u = 0;
	int64_t s = 0;
	uint16_t u16;
	uint32_t u32;
	int16_t s16;
	int32_t s32;
	bool ok;

	switch (enc & 0x0f) {
	case PE_ABSPTR:
	case PE_UDATA8:
	case PE_SDATA8:
		ok = take(c, &u, 8);
		break;
	case PE_ULEB128:
		ok = uleb(c, &u);
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
		ok = sleb(c, &s);
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

/* The FDE pointer encoding of the CIE at `off`: its augmentation's 'R', absptr without. */
static int cie_fde_encoding(const uint8_t *data, size_t size, uint64_t vaddr, size_t off,
			    uint8_t *enc)
{
	struct cursor c = { data + off, data + size };
	uint32_t len32, id;
	uint64_t len, skip;
	int64_t ignored_s;
	uint8_t version, ignored;
	const char *aug;
	size_t aug_len;

	if (!take(&c, &len32, 4) || !len32)
		return -EINVAL;
	len = len32;
	if (len32 == 0xffffffffu && !take(&c, &len, 8))
		return -EINVAL;
	if (len > (uint64_t)(c.end - c.p))
		return -EINVAL;
	c.end = c.p + len;
	if (!take(&c, &id, 4) || id != 0 || !take(&c, &version, 1))
		return -EINVAL;
	aug = (const char *)c.p;
	aug_len = strnlen(aug, (size_t)(c.end - c.p) < AUG_MAX_CHARS ? (size_t)(c.end - c.p)
								   : AUG_MAX_CHARS);
	if (aug_len == (size_t)(c.end - c.p) || aug_len == AUG_MAX_CHARS)
		return -EINVAL;
	c.p += aug_len + 1;
	*enc = PE_ABSPTR;
	if (strstr(aug, "eh")) /* an old GCC's eh pointer: one absolute pointer */
		c.p = (size_t)(c.end - c.p) >= 8 ? c.p + 8 : c.end;
	/* Code and data alignment, return address register. */
	if (!uleb(&c, &skip) || !sleb(&c, &ignored_s))
		return -EINVAL;
	if (version == 1 ? !take(&c, &ignored, 1) : !uleb(&c, &skip))
		return -EINVAL;
	if (aug[0] != 'z')
		return 0;
	if (!uleb(&c, &skip) || skip > (uint64_t)(c.end - c.p))
		return -EINVAL;
	for (const char *a = aug + 1; *a; a++) {
		uint8_t e;
		uint64_t ptr;
		int err;

		switch (*a) {
		case 'R':
			return take(&c, enc, 1) ? 0 : -EINVAL;
		case 'L':
			if (!take(&c, &e, 1))
				return -EINVAL;
			break;
		case 'P':
			if (!take(&c, &e, 1))
				return -EINVAL;
			err = read_pointer(&c, e & 0x7f, vaddr + (uint64_t)(c.p - data), &ptr);
			if (err)
				return err;
			break;
		case 'S':
		case 'B':
			break;
		default:
			return 0; /* unknown letters: the 'R' we need came before them, or absptr */
		}
	}
	return 0;
}

int eh_frame_fde_starts(const uint8_t *data, size_t size, uint64_t vaddr, uint64_t **out,
			size_t *count)
{
	uint64_t *starts = NULL;
	size_t n = 0, cap = 0, off = 0, cie_off = SIZE_MAX;
	uint8_t enc = PE_ABSPTR;
	int err = 0;

	*out = NULL;
	*count = 0;
	while (off + 4 <= size) {
		struct cursor c = { data + off, data + size };
		uint32_t len32, id;
		uint64_t len, loc;
		size_t id_off, next;

		if (!take(&c, &len32, 4))
			break;
		if (!len32)
			break; /* the terminator */
		len = len32;
		if (len32 == 0xffffffffu && !take(&c, &len, 8)) {
			err = -EINVAL;
			break;
		}
		if (len > (uint64_t)(c.end - c.p) || len < 4) {
			err = -EINVAL;
			break;
		}
		id_off = (size_t)(c.p - data);
		next = id_off + (size_t)len;
		c.end = data + next;
		if (!take(&c, &id, 4)) {
			err = -EINVAL;
			break;
		}
		if (id) {
			/* An FDE: id is the distance back from this field to its CIE. */
			size_t cie = id <= id_off ? id_off - id : SIZE_MAX;

			if (cie == SIZE_MAX) {
				err = -EINVAL;
				break;
			}
			if (cie != cie_off) {
				err = cie_fde_encoding(data, size, vaddr, cie, &enc);
				if (err)
					break;
				cie_off = cie;
			}
			if (enc == PE_OMIT) {
				err = -ENOTSUP;
				break;
			}
			err = read_pointer(&c, enc, vaddr + (uint64_t)(c.p - data), &loc);
			if (err)
				break;
			if (n == cap) {
				size_t ncap = cap ? 2 * cap : 256;
				uint64_t *s = realloc(starts, ncap * sizeof(*s));

				if (!s) {
					err = -ENOMEM;
					break;
				}
				starts = s;
				cap = ncap;
			}
			starts[n++] = loc;
		}
		off = next;
	}
	if (err) {
		free(starts);
		return err;
	}
	*out = starts;
	*count = n;
	return 0;
}
