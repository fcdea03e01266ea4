// SPDX-License-Identifier: BSD-2-Clause
/* See v8_decode.h. */
#include "v8_decode.h"

#include <errno.h>
#include <string.h>

/* Units of a source read at a time while its newlines are counted. */
#define SCAN_CHUNK 2048

/* An unsigned VLQ (V8's base/vlq.h): 7 bits a byte, low first. */
static bool uvlq(const uint8_t *t, size_t len, size_t *i, uint64_t *out)
{
	uint64_t v = 0;

	for (unsigned shift = 0;; shift += 7) {
		uint8_t b;

		if (*i >= len || shift > 63)
			return false;
		b = t[(*i)++];
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			break;
	}
	*out = v;
	return true;
}

/* One VLQ zigzag integer (V8's source-position-table.cc EncodeInt). */
static bool vlq(const uint8_t *t, size_t len, size_t *i, int64_t *out)
{
	uint64_t v;

	if (!uvlq(t, len, i, &v))
		return false;
	*out = (int64_t)((v >> 1) ^ (0 - (v & 1)));
	return true;
}

int v8_spt_position(const uint8_t *table, size_t len, int64_t target, uint64_t *pos)
{
	/* V8's iterator starts at the function entry: code offset -1, position 0. */
	int64_t code = -1, p = 0;
	bool found = false;
	size_t i = 0;

	while (i < len) {
		int64_t dc, dp;

		if (!vlq(table, len, &i, &dc) || !vlq(table, len, &i, &dp))
			break;
		/* A negative code delta marks an expression (not a statement) position. */
		/* Wrapping sums: a fake table's huge deltas stay defined. */
		code = (int64_t)((uint64_t)code + (uint64_t)(dc >= 0 ? dc : -(dc + 1)));
		p = (int64_t)((uint64_t)p + (uint64_t)dp);
		if (code > target)
			break;
		*pos = (uint64_t)p;
		found = true;
	}
	return found ? 0 : -ENOENT;
}

/*
 * The size of the bytecode at `code` (its scaling prefix included: Wide and
 * DebugBreakWide (0, 2) double its operands, ExtraWide and
 * DebugBreakExtraWide (1, 3) quadruple them), or 0 when it is none.
 */
static size_t bytecode_size(const struct v8_meta *m, const uint8_t *code, size_t len)
{
	unsigned op = code[0], scale = 0, prefix = 0;

	if (op <= 3) {
		scale = op == 0 || op == 2 ? 1 : 2;
		prefix = 1;
		if (len < 2)
			return 0;
		op = code[1];
	}
	if (op >= (unsigned)m->nbytecodes || !m->bytecode_sizes[scale][op])
		return 0;
	return prefix + m->bytecode_sizes[scale][op];
}

int v8_baseline_offset(const struct v8_meta *m, const uint8_t *table, size_t table_len,
		       const uint8_t *bytecodes, size_t bytecodes_len, uint64_t target,
		       int32_t *offset)
{
	uint64_t end, delta;
	size_t ti = 0, bi = 0;
	int32_t at = -1; /* the prologue: V8's kFunctionEntryBytecodeOffset */

	if (!m->nbytecodes || !uvlq(table, table_len, &ti, &end))
		return -ENOENT;
	/* Each step takes a byte of the table at least: bounded by its length. */
	while (end < target) {
		size_t size;

		if (!uvlq(table, table_len, &ti, &delta) || bi >= bytecodes_len)
			return -ENOENT;
		size = bytecode_size(m, bytecodes + bi, bytecodes_len - bi);
		if (!size)
			return -EINVAL;
		end += delta;
		at = (int32_t)bi;
		bi += size;
	}
	*offset = at;
	return 0;
}

int v8_line_from_ends(const int32_t *ends, size_t n, int32_t offset)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ends[mid] < offset)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (int)lo + 1;
}

static int rd(const struct v8_heap *h, uint64_t tagged, int64_t off, void *buf, size_t len)
{
	return h->read(h->ctx, tagged - 1 + (uint64_t)(int64_t)off, buf, len);
}

static int word(const struct v8_heap *h, uint64_t tagged, int64_t off, uint64_t *w)
{
	return rd(h, tagged, off, w, 8);
}

int v8_type_of(const struct v8_heap *h, uint64_t obj, uint16_t *type)
{
	uint64_t map;
	int err;

	if (!v8_is_heap_object(obj))
		return -EINVAL;
	err = word(h, obj, h->m->obj_map, &map);
	if (err)
		return err;
	if (!v8_is_heap_object(map))
		return -EINVAL;
	return rd(h, map, h->m->map_type, type, 2);
}

struct walk {
	const struct v8_heap *h;
	int reads;
};

static int units(struct walk *w, uint64_t str, uint32_t skip, uint16_t *out, size_t max,
		 int32_t *len, int depth)
{
	const struct v8_meta *m = w->h->m;
	uint16_t type;
	int32_t n;
	uint32_t want;
	int err;

	*len = 0;
	if (depth > V8_MAX_STRING_DEPTH || (w->reads += 2) > V8_MAX_STRING_READS)
		return -E2BIG;
	if ((err = v8_type_of(w->h, str, &type)))
		return err;
	if (type >= m->t_first_nonstring)
		return -EINVAL;
	if ((err = rd(w->h, str, m->str_length, &n, 4)))
		return err;
	if (n < 0 || n > (1 << 30))
		return -EINVAL;
	*len = n;
	if (skip >= (uint32_t)n || !max)
		return 0;
	want = (uint32_t)n - skip < max ? (uint32_t)n - skip : (uint32_t)max;

	if ((type & m->str_repr_mask) == m->str_seq) {
		w->reads++;
		if ((type & m->str_enc_mask) == m->str_one_byte) {
			uint8_t *bytes = (uint8_t *)out;

			err = rd(w->h, str, m->seq_chars + (int64_t)skip, bytes, want);
			if (err)
				return err;
			/* Widened in place, from the end. */
			for (uint32_t i = want; i-- > 0;)
				out[i] = bytes[i];
		} else {
			err = rd(w->h, str, m->seq_chars + 2 * (int64_t)skip, out, 2ull * want);
			if (err)
				return err;
		}
		return (int)want;
	}
	if ((type & m->str_repr_mask) == m->str_cons) {
		uint64_t first, second;
		int32_t len1, len2;
		int got = 0, more;

		w->reads++;
		if ((err = word(w->h, str, m->cons_first, &first)) ||
		    (err = word(w->h, str, m->cons_second, &second)))
			return err;
		got = units(w, first, skip, out, want, &len1, depth + 1);
		if (got < 0)
			return got;
		if ((uint32_t)got >= want)
			return got;
		more = units(w, second, skip > (uint32_t)len1 ? skip - (uint32_t)len1 : 0,
			     out + got, want - (uint32_t)got, &len2, depth + 1);
		return more < 0 ? more : got + more;
	}
	if ((type & m->str_repr_mask) == m->str_sliced) {
		uint64_t parent, off;
		int32_t plen;

		w->reads++;
		if ((err = word(w->h, str, m->sliced_parent, &parent)) ||
		    (err = word(w->h, str, m->sliced_offset, &off)))
			return err;
		if (!v8_is_smi(off) || v8_smi(off) < 0)
			return -EINVAL;
		return units(w, parent, skip + (uint32_t)v8_smi(off), out, want, &plen, depth + 1);
	}
	if ((type & m->str_repr_mask) == m->str_thin) {
		uint64_t actual;
		int32_t alen;

		w->reads++;
		if ((err = word(w->h, str, m->thin_actual, &actual)))
			return err;
		return units(w, actual, skip, out, want, &alen, depth + 1);
	}
	return -ENOTSUP; /* external: the embedder's memory */
}

int v8_string_units(const struct v8_heap *h, uint64_t str, uint32_t skip, uint16_t *out, size_t max,
		    int32_t *len)
{
	struct walk w = { h, 0 };

	return units(&w, str, skip, out, max, len, 0);
}

int v8_string(const struct v8_heap *h, uint64_t str, char *out, size_t out_len)
{
	uint16_t u[256];
	int32_t len;
	size_t o = 0;
	int n;

	if (!out_len)
		return -EINVAL;
	out[0] = '\0';
	n = v8_string_units(h, str, 0, u, sizeof(u) / sizeof(u[0]), &len);
	if (n < 0)
		return n;
	for (int i = 0; i < n; i++) {
		uint32_t c = u[i];
		char enc[3];
		size_t k;

		/* UTF-16 to UTF-8; a surrogate (outside the BMP) shows as '?'. */
		if (c >= 0xd800 && c < 0xe000)
			c = '?';
		if (c < 0x80) {
			enc[0] = (char)(c ? c : '?');
			k = 1;
		} else if (c < 0x800) {
			enc[0] = (char)(0xc0 | (c >> 6));
			enc[1] = (char)(0x80 | (c & 0x3f));
			k = 2;
		} else {
			enc[0] = (char)(0xe0 | (c >> 12));
			enc[1] = (char)(0x80 | ((c >> 6) & 0x3f));
			enc[2] = (char)(0x80 | (c & 0x3f));
			k = 3;
		}
		if (o + k >= out_len)
			break;
		memcpy(out + o, enc, k);
		o += k;
	}
	out[o] = '\0';
	return (int)o;
}

int v8_scope_info_name(const struct v8_heap *h, const uint64_t words[16], char *name,
		       size_t name_len, int32_t *start_pos)
{
	const struct v8_meta *m = h->m;
	uint64_t nlocals = words[m->scope_ncontext_locals & 15], prev = 1;
	int64_t idx;

	name[0] = '\0';
	*start_pos = -1;
	if (!v8_is_smi(nlocals) || v8_smi(nlocals) < 0)
		return -EINVAL;
	idx = m->scope_first_vars + 2 * (int64_t)v8_smi(nlocals);
	for (; idx < 16; idx++) {
		uint64_t cur = words[idx];

		if (!name[0] && v8_is_heap_object(cur))
			v8_string(h, cur, name, name_len);
		/* The first two Smis a < b: the function's start and end in its script. */
		if (v8_is_smi(cur) && v8_is_smi(prev) && v8_smi(prev) < v8_smi(cur)) {
			*start_pos = v8_smi(prev);
			break;
		}
		prev = cur;
	}
	return 0;
}

int v8_inlining_entry(const uint8_t *data, size_t len, uint32_t id, uint64_t *caller_pos,
		      int32_t *function_id)
{
	uint64_t at;

	if (!id)
		return -EINVAL;
	at = (uint64_t)(id - 1) * 16;
	if (at + 12 > len)
		return -ERANGE;
	memcpy(caller_pos, data + at, 8);
	memcpy(function_id, data + at + 8, 4);
	return 0;
}

/* Lower bound of `offset` in a FixedArray of Smi line ends, by binary search through reads. */
static int line_from_array(const struct v8_heap *h, uint64_t ends, int32_t offset)
{
	const struct v8_meta *m = h->m;
	uint64_t lw;
	uint32_t lo = 0, hi;

	if (word(h, ends, m->fa_length, &lw) || !v8_is_smi(lw) || v8_smi(lw) < 0 ||
	    (uint32_t)v8_smi(lw) > V8_MAX_LINES)
		return 0;
	hi = (uint32_t)v8_smi(lw);
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		uint64_t e;

		if (word(h, ends, m->fa_data + 8 * (int64_t)mid, &e) || !v8_is_smi(e))
			return 0;
		if (v8_smi(e) < offset)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (int)lo + 1;
}

/* Newlines before `offset` in a script's source (bounded): its 1-based line, or 0. */
static int line_by_scan(const struct v8_heap *h, uint64_t source, int32_t offset)
{
	uint16_t chunk[SCAN_CHUNK];
	uint32_t done = 0, line = 1;
	int32_t len;

	if (offset < 0 || (uint32_t)offset > V8_MAX_SOURCE_SCAN)
		return 0;
	while (done < (uint32_t)offset) {
		uint32_t want = (uint32_t)offset - done;
		int n = v8_string_units(h, source, done, chunk,
					want < SCAN_CHUNK ? want : SCAN_CHUNK, &len);

		if (n <= 0)
			return 0;
		for (int i = 0; i < n; i++)
			line += chunk[i] == '\n';
		done += (uint32_t)n;
	}
	return (int)line;
}

int v8_script_line(const struct v8_heap *h, uint64_t script, int32_t offset)
{
	const struct v8_meta *m = h->m;
	uint64_t ends, source;
	uint16_t type;

	if (offset < 0)
		return 0;
	if (!word(h, script, m->script_line_ends, &ends) && v8_is_heap_object(ends) &&
	    !v8_type_of(h, ends, &type) && type == m->t_fixed_array)
		return line_from_array(h, ends, offset);
	if (word(h, script, m->script_source, &source) || !v8_is_heap_object(source))
		return 0;
	return line_by_scan(h, source, offset);
}
