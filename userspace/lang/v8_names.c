// SPDX-License-Identifier: BSD-2-Clause
/* See v8_names.h. */
#include "v8_names.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/clock.h"
#include "../util/hashmap.h"

static int rd(const struct v8_heap *h, uint64_t tagged, int64_t off, void *buf, size_t len)
{
	return h->read(h->ctx, tagged - 1 + (uint64_t)(int64_t)off, buf, len);
}

static int word(const struct v8_heap *h, uint64_t tagged, int64_t off, uint64_t *w)
{
	return rd(h, tagged, off, w, 8);
}

/* Whether `obj` is a heap object of instance type `want`. */
static bool is_type(const struct v8_heap *h, uint64_t obj, int32_t want)
{
	uint16_t type;

	return !v8_type_of(h, obj, &type) && type == want;
}

bool v8_frame_type(const struct v8_meta *m, uint64_t marker, const char **name)
{
	/* StackFrame::TypeToMarker: the type shifted past the Smi tag, in a full word. */
	if ((marker & 1) || marker > (255u << 1))
		return false;
	*name = v8_meta_frametype(m, (int32_t)(marker >> 1));
	return *name != NULL;
}

/* A ByteArray's bytes (bounded): a malloc'd copy and its length, or NULL. */
static uint8_t *byte_array(const struct v8_heap *h, uint64_t arr, size_t *len)
{
	uint64_t lw;
	uint8_t *buf;

	if (!is_type(h, arr, h->m->t_byte_array) || word(h, arr, h->m->fa_length, &lw) ||
	    !v8_is_smi(lw) || v8_smi(lw) <= 0 || (uint32_t)v8_smi(lw) > V8_MAX_TABLE)
		return NULL;
	*len = (size_t)v8_smi(lw);
	buf = malloc(*len);
	if (buf && rd(h, arr, h->m->fa_data, buf, *len)) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* Element `i` of a (Weak)FixedArray, a weak reference made strong: 0 or an error. */
static int element(const struct v8_heap *h, uint64_t arr, int32_t i, uint64_t *out)
{
	uint64_t lw;
	int err;

	if (i < 0 || (err = word(h, arr, h->m->fa_length, &lw)) || !v8_is_smi(lw) ||
	    v8_smi(lw) <= i)
		return -ERANGE;
	err = word(h, arr, h->m->fa_data + 8 * (int64_t)i, out);
	/* A weak reference has both low bits set; cleared ones are no objects. */
	if (!err && (*out & 3) == 3)
		*out &= ~2ull;
	return err;
}

static size_t slot(uint64_t a, uint64_t b, size_t n)
{
	return (size_t)(hash_u64(a ^ hash_u64(b)) & (n - 1));
}

static int script_line(const struct v8_heap *h, struct v8_name_cache *c, uint64_t script,
		       int32_t offset)
{
	struct v8_line_entry *e;

	if (!script || offset < 0)
		return 0;
	e = &c->lines[slot(script, (uint64_t)offset, V8_CACHED_LINES)];
	if (e->script != script || e->offset != offset) {
		e->script = script;
		e->offset = offset;
		e->line = v8_script_line(h, script, offset);
	}
	return e->line;
}

/* The path's end when it is longer than the room: the file's name matters most. */
static void copy_tail(char *dst, size_t room, const char *src)
{
	size_t n = strlen(src), skip = n >= room ? n - (room - 1) : 0;

	memcpy(dst, src + skip, n - skip + 1);
}

/* What a SharedFunctionInfo says of its function (cached by address). */
static const struct v8_sfi_entry *sfi_info(const struct v8_heap *h, struct v8_name_cache *c,
					   uint64_t sfi)
{
	const struct v8_meta *m = h->m;
	struct v8_sfi_entry *e = &c->sfis[slot(sfi, 0, V8_CACHED_SFIS)];
	uint64_t name_or_scope, script, sname;
	int32_t start = -1;
	uint16_t type;

	if (e->sfi == sfi)
		return e;
	if (!is_type(h, sfi, m->t_sfi))
		return NULL;
	memset(e, 0, sizeof(*e));
	if (!word(h, sfi, m->sfi_name, &name_or_scope) && !v8_type_of(h, name_or_scope, &type)) {
		if (type < m->t_first_nonstring) {
			v8_string(h, name_or_scope, e->name, sizeof(e->name));
		} else if (type == m->t_scope_info) {
			uint64_t words[16];

			if (!rd(h, name_or_scope, m->obj_map + 8, words, sizeof(words)))
				v8_scope_info_name(h, words, e->name, sizeof(e->name), &start);
		}
	}
	if (!e->name[0])
		snprintf(e->name, sizeof(e->name), "<anonymous>");
	if (!word(h, sfi, m->sfi_script, &script) && is_type(h, script, m->t_script)) {
		char file[512];

		e->script = script;
		if (!word(h, script, m->script_name, &sname) &&
		    v8_string(h, sname, file, sizeof(file)) > 0)
			copy_tail(e->file, sizeof(e->file), file);
	}
	e->sfi = sfi;
	e->start_line = start >= 0 ? script_line(h, c, e->script, start) : 0;
	return e;
}

/* One frame of function `sfi` at source offset `offset` (-1: its first line). */
static int emit(const struct v8_heap *h, struct v8_name_cache *c, uint64_t sfi, int32_t offset,
		struct hotspot_frame *out)
{
	const struct v8_sfi_entry *e = sfi_info(h, c, sfi);
	int line;

	if (!e)
		return -ENOENT;
	if (c->rec && c->rec->n < V8_CACHED_INLINED) {
		c->rec->f[c->rec->n].sfi = sfi;
		c->rec->f[c->rec->n].offset = offset;
		c->rec->n++;
	} else if (c->rec) {
		c->rec->n = V8_CACHED_INLINED + 1;
	}
	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "%s", e->name);
	snprintf(out->file, sizeof(out->file), "%s", e->file);
	line = offset >= 0 ? script_line(h, c, e->script, offset) : 0;
	out->line = line > 0 ? line : e->start_line;
	return 1;
}

/* The source position at `target` in the position table `table` (a ByteArray). */
static int position(const struct v8_heap *h, uint64_t table, int64_t target, uint64_t *pos)
{
	size_t len;
	uint8_t *t = byte_array(h, table, &len);
	int err;

	if (!t)
		return -ENOENT;
	err = v8_spt_position(t, len, target, pos);
	free(t);
	return err;
}

/* Optimized code: one frame per function inlined at pc, innermost first. */
static int optimized(const struct v8_heap *h, struct v8_name_cache *c, uint64_t code,
		     uint64_t shared, int64_t pc_offset, struct hotspot_frame *out, int max)
{
	const struct v8_meta *m = h->m;
	uint64_t spt, deopt = 0, pos, inl_arr, literals = 0;
	uint8_t *inl = NULL;
	size_t inl_len = 0;
	int n = 0;

	if (word(h, code, m->code_spt, &spt) || position(h, spt, pc_offset, &pos))
		return emit(h, c, shared, -1, out);
	if (!word(h, code, m->code_deopt, &deopt) && is_type(h, deopt, m->t_fixed_array) &&
	    !element(h, deopt, m->deopt_inlining, &inl_arr)) {
		inl = byte_array(h, inl_arr, &inl_len);
		if (element(h, deopt, m->deopt_literals, &literals))
			literals = 0;
	}
	for (int level = 0; n < max && level <= V8_MAX_INLINED; level++) {
		uint32_t id = v8_pos_inlining(pos);
		uint64_t caller, sfi = shared;
		int32_t fid;

		if (!id) {
			n += emit(h, c, shared, v8_pos_offset(pos), &out[n]) > 0;
			break;
		}
		if (!inl || v8_inlining_entry(inl, inl_len, id, &caller, &fid))
			break;
		if (fid >= 0 && (!literals || element(h, literals, fid, &sfi)))
			break;
		n += emit(h, c, sfi, v8_pos_offset(pos), &out[n]) > 0;
		pos = caller;
	}
	free(inl);
	return n ? n : emit(h, c, shared, -1, out);
}

/* The position of bytecode offset `offset` (-1: the function's entry) of BytecodeArray `bytecode`.
 */
static int at_bytecode(const struct v8_heap *h, struct v8_name_cache *c, uint64_t shared,
		       int64_t offset, uint64_t bytecode, struct hotspot_frame *out)
{
	const struct v8_meta *m = h->m;
	uint64_t spt, pos;

	if (offset < 0 || !is_type(h, bytecode, m->t_bytecode_array) ||
	    word(h, bytecode, m->ba_spt, &spt) || position(h, spt, offset, &pos))
		return emit(h, c, shared, -1, out);
	return emit(h, c, shared, v8_pos_offset(pos), out);
}

/* An interpreted frame: the slot holds the offset from the BytecodeArray's tagged address. */
static int interpreted(const struct v8_heap *h, struct v8_name_cache *c, uint64_t shared,
		       uint64_t offset_smi, uint64_t bytecode, struct hotspot_frame *out)
{
	return at_bytecode(h, c, shared, (int64_t)v8_smi(offset_smi) - (h->m->ba_data - 1),
			   bytecode, out);
}

/* Bytecode offset of baseline code at code offset `target` (cached): 0 or an error. */
static int baseline_offset(const struct v8_heap *h, struct v8_name_cache *c, uint64_t code,
			   uint64_t bytecode, uint64_t target, int32_t *offset)
{
	const struct v8_meta *m = h->m;
	struct v8_line_entry *e = &c->baselines[slot(code, target, V8_CACHED_BASELINE)];
	uint8_t *table = NULL, *bytecodes = NULL;
	size_t table_len, len;
	uint64_t t, lw;
	int err = -ENOENT;

	if (e->script == code && e->offset == (int32_t)target) {
		*offset = e->line;
		return 0;
	}
	if (!m->nbytecodes || word(h, code, m->code_spt, &t) ||
	    !(table = byte_array(h, t, &table_len)) || word(h, bytecode, m->fa_length, &lw) ||
	    !v8_is_smi(lw) || v8_smi(lw) <= 0 || (uint32_t)v8_smi(lw) > V8_MAX_TABLE)
		goto out;
	len = (size_t)v8_smi(lw);
	bytecodes = malloc(len);
	if (!bytecodes || rd(h, bytecode, m->ba_data, bytecodes, len))
		goto out;
	err = v8_baseline_offset(m, table, table_len, bytecodes, len, target, offset);
	if (!err)
		*e = (struct v8_line_entry){ code, (int32_t)target, *offset };
out:
	free(table);
	free(bytecodes);
	return err;
}

/* Baseline code: the bytecode its pc was compiled from, as for an interpreted frame. */
static int baseline(const struct v8_heap *h, struct v8_name_cache *c, uint64_t code,
		    uint64_t shared, uint64_t target, struct hotspot_frame *out)
{
	uint64_t bytecode;
	int32_t offset;

	if (word(h, code, h->m->code_bytecode, &bytecode) ||
	    !is_type(h, bytecode, h->m->t_bytecode_array) ||
	    baseline_offset(h, c, code, bytecode, target, &offset))
		return emit(h, c, shared, -1, out);
	return at_bytecode(h, c, shared, offset, bytecode, out);
}

/* Code's header up to its instruction size: what is read of it. */
static size_t header_len(const struct v8_meta *m)
{
	size_t n = (size_t)m->code_size + 4;

	if ((size_t)m->code_start + 8 > n)
		n = (size_t)m->code_start + 8;
	if ((size_t)m->code_flags + 4 > n)
		n = (size_t)m->code_flags + 4;
	return n;
}

/* What `fn` holds at `off` names this frame as long as it holds it. */
static void check_by(struct v8_name_cache *c, int32_t off, uint64_t value)
{
	if (c->rec) {
		c->rec->check_off = off;
		c->rec->check = value;
	}
}

static int name_frame(const struct v8_heap *h, struct v8_name_cache *c, uint64_t pc, bool is_return,
		      const uint64_t words[V8_WORDS], struct hotspot_frame *out, int max)
{
	const struct v8_meta *m = h->m;
	uint64_t fn = words[V8_W_FUNCTION], shared, code;
	uint8_t hdr[128];
	bool has_code;
	uint16_t type;
	int err;

	if (max < 1)
		return 0;
	/* A JS frame's marker slot holds its context, a heap object. */
	if (!v8_is_heap_object(words[V8_W_CONTEXT]) || !v8_is_heap_object(fn))
		return -ENOENT;
	if ((err = v8_type_of(h, fn, &type)))
		return err;
	if (type < m->t_jsfunc_first || type > m->t_jsfunc_last)
		return -ENOENT;
	if ((err = word(h, fn, m->fn_shared, &shared)))
		return err;
	if (!is_type(h, shared, m->t_sfi))
		return -ENOENT;
	/*
	 * Its code: optimized or baseline code holds pc; the interpreter's is a
	 * builtin. The frame's name stands while the function keeps that code.
	 */
	has_code = !word(h, fn, m->fn_code, &code);
	if (has_code)
		check_by(c, m->fn_code, code);
	else
		check_by(c, m->fn_shared, shared);
	if (has_code && is_type(h, code, m->t_code) && header_len(m) <= sizeof(hdr) &&
	    !rd(h, code, 0, hdr, header_len(m))) {
		uint64_t start;
		uint32_t flags, kind;
		int32_t size;

		memcpy(&start, hdr + m->code_start, 8);
		memcpy(&flags, hdr + m->code_flags, 4);
		memcpy(&size, hdr + m->code_size, 4);
		if (!m->code_start_ptr)
			start = code - 1 + start;
		kind = (flags >> m->kind_shift) & (uint32_t)m->kind_mask;
		/* A return address may be the code's end: the call was its last instruction. */
		if (size > 0 && pc >= start && pc - start <= (uint64_t)size - !is_return) {
			/* V8 looks up a return address's position one byte back, at the call. */
			int64_t at = (int64_t)(pc - start) - (is_return ? 1 : 0);

			if (kind > (uint32_t)m->kind_baseline)
				return optimized(h, c, code, shared, at, out, max);
			/* V8 looks a leaf up one byte on: the bytecode whose code holds pc. */
			if (kind == (uint32_t)m->kind_baseline)
				return baseline(h, c, code, shared, pc - start + !is_return, out);
		}
	}
	if (v8_is_smi(words[V8_W_BYTECODE_OFFSET]) && words[V8_W_BYTECODE_OFFSET])
		return interpreted(h, c, shared, words[V8_W_BYTECODE_OFFSET],
				   words[V8_W_BYTECODE_ARRAY], out);
	return emit(h, c, shared, -1, out);
}

int v8_name_js_frame(const struct v8_heap *h, struct v8_name_cache *c, uint64_t pc, bool is_return,
		     const uint64_t words[V8_WORDS], struct hotspot_frame *out, int max)
{
	uint64_t fn = words[V8_W_FUNCTION], w2 = words[V8_W_BYTECODE_OFFSET];
	uint64_t w3 = words[V8_W_BYTECODE_ARRAY], held;
	struct v8_frame_entry *e = &c->frames[slot(fn ^ hash_u64(pc), w2 ^ hash_u64(w3 ^ is_return),
						   V8_CACHED_FRAMES)];
	struct v8_frame_entry rec = {
		.fn = fn, .pc = pc, .w_offset = w2, .w_array = w3, .is_return = is_return
	};
	uint64_t now = c->check_period_ns ? clock_ns(CLOCK_MONOTONIC) : 0;
	int n;

	if (max < 1)
		return 0;
	if (e->n && e->n <= V8_CACHED_INLINED && e->fn == fn && e->pc == pc && e->w_offset == w2 &&
	    e->w_array == w3 && e->is_return == is_return &&
	    v8_is_heap_object(words[V8_W_CONTEXT]) &&
	    ((now && now - e->checked_ns < c->check_period_ns) ||
	     (!word(h, fn, e->check_off, &held) && held == e->check &&
	      (e->checked_ns = now, true)))) {
		n = 0;
		for (int i = 0; i < e->n && n < max; i++)
			n += emit(h, c, e->f[i].sfi, e->f[i].offset, &out[n]) > 0;
		if (n)
			return n;
	}
	c->rec = &rec;
	n = name_frame(h, c, pc, is_return, words, out, max);
	c->rec = NULL;
	/* Kept when whole: every function it was named by, none cut by `max`. */
	if (n > 0 && n < max && rec.n == n && rec.check) {
		rec.checked_ns = now;
		*e = rec;
	}
	return n;
}
