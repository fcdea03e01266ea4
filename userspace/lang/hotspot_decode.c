// SPDX-License-Identifier: BSD-2-Clause
/* See hotspot_decode.h. */
#include "hotspot_decode.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "../util/unaligned.h"

/*
 * UNSIGNED5: a byte below 192 (with x, below 192 still: HotSpot's L is
 * 192 - x) ends the number; each byte adds (b - x) << 6i; 5 bytes at most.
 */
#define U5_CONTINUE  192u
#define U5_MAX_BYTES 5

int hotspot_read_u5(struct hotspot_stream *s, uint32_t *out)
{
	uint64_t sum = 0;

	for (int i = 0; i < U5_MAX_BYTES; i++) {
		uint8_t b;

		if (s->p >= s->end)
			return -EINVAL;
		b = *s->p++;
		if (b < s->x)
			return -EINVAL;
		sum += (uint64_t)(b - s->x) << (6 * i);
		if (b < U5_CONTINUE)
			break;
	}
	*out = (uint32_t)sum;
	return 0;
}

int hotspot_read_s5(struct hotspot_stream *s, int32_t *out)
{
	uint32_t v;
	int err = hotspot_read_u5(s, &v);

	if (!err)
		*out = (int32_t)(v >> 1) ^ -(int32_t)(v & 1);
	return err;
}

int hotspot_line_of_bci(const uint8_t *table, size_t len, unsigned x, uint32_t bci)
{
	struct hotspot_stream s = { table, table + len, x };
	uint32_t at = 0, line = 0, best_at = 0;
	int best = 0;

	/* Each entry moves bci and line on; a table longer than its method is cut by len. */
	while (s.p < s.end) {
		uint8_t b = *s.p++;

		if (b == 0)
			break;
		if (b == 0xff) {
			int32_t dbci, dline;

			if (hotspot_read_s5(&s, &dbci) || hotspot_read_s5(&s, &dline))
				break;
			at += (uint32_t)dbci;
			line += (uint32_t)dline;
		} else {
			at += b >> 3;
			line += b & 7;
		}
		if (at == bci)
			return (int)(line & 0x7fffffff);
		/* As HotSpot: the last entry before bci, a later one of the same bci winning. */
		if (at < bci && at >= best_at) {
			best_at = at;
			best = (int)(line & 0x7fffffff);
		}
	}
	return best;
}

int hotspot_pcdesc_find(const uint8_t *pcs, size_t n, int32_t pc_offset, struct hotspot_pcdesc *out)
{
	size_t lo = 0, hi = n;
	const uint8_t *p;

	/* The first PcDesc past pc_offset; the one before it covers it. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if ((int32_t)get_u32(pcs + mid * HOTSPOT_PCDESC_SIZE) <= pc_offset)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return -ENOENT;
	p = pcs + (lo - 1) * HOTSPOT_PCDESC_SIZE;
	out->pc_offset = (int32_t)get_u32(p);
	out->scope_decode_offset = (int32_t)get_u32(p + 4);
	out->obj_decode_offset = (int32_t)get_u32(p + 8);
	out->flags = (int32_t)get_u32(p + 12);
	return 0;
}

int hotspot_pcdesc_near(const uint8_t *pcs, size_t n, int32_t pc_offset, struct hotspot_pcdesc *out)
{
	size_t lo = 0, hi = n;
	const uint8_t *p;

	/* The first PcDesc at or past pc_offset; with none, the last before it. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if ((int32_t)get_u32(pcs + mid * HOTSPOT_PCDESC_SIZE) < pc_offset)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == n)
		return hotspot_pcdesc_find(pcs, n, pc_offset, out);
	p = pcs + lo * HOTSPOT_PCDESC_SIZE;
	out->pc_offset = (int32_t)get_u32(p);
	out->scope_decode_offset = (int32_t)get_u32(p + 4);
	out->obj_decode_offset = (int32_t)get_u32(p + 8);
	out->flags = (int32_t)get_u32(p + 12);
	return 0;
}

int hotspot_scopes(const uint8_t *data, size_t len, unsigned x, uint32_t decode_offset,
		   struct hotspot_scope *out, int max)
{
	uint32_t at = decode_offset;
	int n = 0;

	if (max > HOTSPOT_MAX_SCOPES)
		max = HOTSPOT_MAX_SCOPES;
	/* Offset 0 is the serialized null: no scope. */
	while (at && n < max) {
		struct hotspot_stream s = { data, data + len, x };
		uint32_t sender, method, bci_plus;

		if (at >= len)
			return n ? n : -EINVAL;
		s.p = data + at;
		if (hotspot_read_u5(&s, &sender) || hotspot_read_u5(&s, &method) ||
		    hotspot_read_u5(&s, &bci_plus) || !method)
			return n ? n : -EINVAL;
		/* The bci is stored less InvocationEntryBci (-1): one more than it is. */
		out[n].method_index = method;
		out[n].bci = (int32_t)bci_plus - 1;
		n++;
		/* A sender is written before its callee: its offset is smaller, or the chain lies.
		 */
		if (sender >= at)
			break;
		at = sender;
	}
	return n;
}

/* Length of a hidden class's "+0x<hex>" (or "/0x<hex>") address suffix at the end of s, else 0. */
static size_t hidden_suffix(const char *s, size_t n)
{
	size_t i = n;

	while (i > 0 &&
	       ((s[i - 1] >= '0' && s[i - 1] <= '9') || (s[i - 1] >= 'a' && s[i - 1] <= 'f') ||
		(s[i - 1] >= 'A' && s[i - 1] <= 'F')))
		i--;
	if (i == n || i < 3 || s[i - 1] != 'x' || s[i - 2] != '0' ||
	    (s[i - 3] != '+' && s[i - 3] != '/'))
		return 0;
	return n - (i - 3);
}

static size_t append(char *buf, size_t size, size_t at, const char *s, size_t n, bool dots)
{
	for (size_t i = 0; i < n && at + 1 < size; i++)
		buf[at++] = dots && s[i] == '/' ? '.' : s[i];
	return at;
}

size_t hotspot_method_name(const char *klass, size_t klass_len, const char *method,
			   size_t method_len, char *buf, size_t size)
{
	size_t at = 0;

	if (!size)
		return 0;
	klass_len -= hidden_suffix(klass, klass_len);
	at = append(buf, size, at, klass, klass_len, true);
	at = append(buf, size, at, ".", 1, false);
	at = append(buf, size, at, method, method_len, false);
	buf[at] = '\0';
	return at;
}
