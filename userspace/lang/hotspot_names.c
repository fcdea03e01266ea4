// SPDX-License-Identifier: BSD-2-Clause
/* See hotspot_names.h. */
#include "hotspot_names.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../util/unaligned.h"

/* A line table read at most this far: a method of 64 KiB of bytecode has far fewer bytes of lines.
 */
#define LINE_TABLE_MAX HOTSPOT_LINE_TABLE_MAX
/* The headers read whole: a JVM's types are a few hundred bytes (checked by the layout). */
#define HEADER_MAX     HOTSPOT_MAX_HEADER

void hotspot_jvm_init(struct hotspot_jvm *j, const struct hotspot_layout *l, hotspot_read_fn read,
		      void *ctx)
{
	j->layout = *l;
	j->read = read;
	j->ctx = ctx;
	j->x = hotspot_unsigned5_excluded(l->major);
	j->debug_cache = NULL;
}

/* One nmethod's debug information as read: PcDescs, then scopes data, in one buffer. */
struct debug_entry {
	uint64_t nm, pcs, pcs_end, data, data_end;
	int32_t compile_id;
	uint8_t *bytes; /* NULL: a free slot */
};

struct hotspot_debug_cache {
	struct debug_entry e[HOTSPOT_DEBUG_CACHE_ENTRIES];
	unsigned next; /* the slot taken next (round robin) */
	size_t bytes;
};

struct hotspot_debug_cache *hotspot_debug_cache_new(void)
{
	return calloc(1, sizeof(struct hotspot_debug_cache));
}

static void entry_drop(struct hotspot_debug_cache *c, struct debug_entry *e)
{
	if (e->bytes)
		c->bytes -= (e->pcs_end - e->pcs) + (e->data_end - e->data);
	free(e->bytes);
	memset(e, 0, sizeof(*e));
}

void hotspot_debug_cache_free(struct hotspot_debug_cache *c)
{
	if (!c)
		return;
	for (unsigned i = 0; i < HOTSPOT_DEBUG_CACHE_ENTRIES; i++)
		entry_drop(c, &c->e[i]);
	free(c);
}

static int read_u64(const struct hotspot_jvm *j, uint64_t addr, uint64_t *v)
{
	return j->read(j->ctx, addr, v, sizeof(*v));
}

/* Up to `len` bytes at addr, a page at a time: how many could be read (a table near a mapping's
 * end). */
static size_t read_upto(const struct hotspot_jvm *j, uint64_t addr, void *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		uint64_t at = addr + got;
		size_t n = 4096 - (at & 4095);

		if (n > len - got)
			n = len - got;
		if (j->read(j->ctx, at, (char *)buf + got, n))
			break;
		got += n;
	}
	return got;
}

/* A Symbol's bytes into buf (NUL-terminated, cut to size); their length, or an error. */
static int read_symbol(const struct hotspot_jvm *j, uint64_t sym, char *buf, size_t size)
{
	const struct hotspot_layout *l = &j->layout;
	uint16_t len;
	int err;

	buf[0] = '\0';
	if (!sym)
		return -ENOENT;
	if ((err = j->read(j->ctx, sym + l->symbol_length, &len, sizeof(len))))
		return err;
	if (len >= size)
		len = (uint16_t)(size - 1);
	if (len && (err = j->read(j->ctx, sym + l->symbol_body, buf, len)))
		return err;
	buf[len] = '\0';
	/* A name holds no NUL; one that does ends there. */
	return (int)strlen(buf);
}

/* The Symbol in constant pool slot `index`; 0 for an empty slot. */
static int pool_symbol(const struct hotspot_jvm *j, uint64_t cp, uint16_t index, uint64_t *sym)
{
	int err = read_u64(j, cp + j->layout.pool_size + 8ull * index, sym);

	/* The low bit tags a slot (a resolved entry's marker): the Symbol is the rest. */
	*sym &= ~1ull;
	return err;
}

/*
 * hotspot_name_method, into buffers of exactly the ConstMethod's and the
 * ConstantPool's size (the bytes read of them: a field past them is read
 * from no one's memory, which ASan tells).
 */
static int name_method(const struct hotspot_jvm *j, uint64_t method, int32_t bci,
		       struct hotspot_frame *out, unsigned char *cm_buf, unsigned char *cp_buf,
		       struct hotspot_method_lines *lines)
{
	const struct hotspot_layout *l = &j->layout;
	char klass[HOTSPOT_FRAME_NAME], mname[HOTSPOT_FRAME_NAME];
	uint64_t cm, cp, holder, sym;
	uint16_t name_index, code_size, file_index;
	int klen, mlen, err;

	if ((err = read_u64(j, method + l->method_const, &cm)))
		return err;
	if (!cm || (err = j->read(j->ctx, cm, cm_buf, l->const_method_size)))
		return err ? err : -EINVAL;
	cp = get_u64(cm_buf + l->const_method_constants);
	memcpy(&name_index, cm_buf + l->const_method_name_index, 2);
	memcpy(&code_size, cm_buf + l->const_method_code_size, 2);
	if (!cp || (err = j->read(j->ctx, cp, cp_buf, l->pool_size)))
		return err ? err : -EINVAL;
	holder = get_u64(cp_buf + l->pool_holder);
	memcpy(&file_index, cp_buf + l->pool_source_file_index, 2);
	if (!holder || (err = read_u64(j, holder + l->klass_name, &sym)))
		return err ? err : -EINVAL;
	klen = read_symbol(j, sym, klass, sizeof(klass));
	if (klen < 0)
		return klen;
	if ((err = pool_symbol(j, cp, name_index, &sym)))
		return err;
	mlen = read_symbol(j, sym, mname, sizeof(mname));
	if (mlen < 0)
		return mlen;
	hotspot_method_name(klass, (size_t)klen, mname, (size_t)mlen, out->name, sizeof(out->name));
	/* The file and line are extras: a method is named without them. */
	if (file_index && !pool_symbol(j, cp, file_index, &sym))
		(void)read_symbol(j, sym, out->file, sizeof(out->file));
	if (lines) {
		memset(lines, 0, sizeof(*lines));
		lines->const_method = cm;
		lines->code = cm + l->const_method_size;
		lines->code_size = code_size;
		lines->has_table =
			(get_u32(cm_buf + l->const_method_flags) & l->flag_has_line_table) != 0;
		if (lines->has_table) {
			unsigned char table[LINE_TABLE_MAX];
			size_t n = read_upto(j, lines->code + code_size, table, sizeof(table));

			if (n && (lines->table = malloc(n))) {
				memcpy(lines->table, table, n);
				lines->table_len = n;
			}
		}
	}
	if (bci >= 0 && (get_u32(cm_buf + l->const_method_flags) & l->flag_has_line_table)) {
		unsigned char table[LINE_TABLE_MAX];
		size_t n =
			read_upto(j, cm + l->const_method_size + code_size, table, sizeof(table));

		out->line = hotspot_line_of_bci(table, n, j->x, (uint32_t)bci);
	}
	return 0;
}

int hotspot_method_line(const struct hotspot_jvm *j, const struct hotspot_method_lines *lines,
			int32_t bci)
{
	if (bci < 0 || !lines->table_len)
		return 0;
	return hotspot_line_of_bci(lines->table, lines->table_len, j->x, (uint32_t)bci);
}

int hotspot_name_method(const struct hotspot_jvm *j, uint64_t method, int32_t bci,
			struct hotspot_frame *out)
{
	const struct hotspot_layout *l = &j->layout;
	unsigned char *buf;
	int err;

	memset(out, 0, sizeof(*out));
	if (!method || l->const_method_size > HEADER_MAX || l->pool_size > HEADER_MAX)
		return -EINVAL;
	buf = malloc(l->const_method_size + l->pool_size);
	if (!buf)
		return -ENOMEM;
	err = name_method(j, method, bci, out, buf, buf + l->const_method_size, NULL);
	free(buf);
	return err;
}

int hotspot_name_method_lines(const struct hotspot_jvm *j, uint64_t method,
			      struct hotspot_frame *out, struct hotspot_method_lines *lines)
{
	const struct hotspot_layout *l = &j->layout;
	unsigned char *buf;
	int err;

	memset(out, 0, sizeof(*out));
	memset(lines, 0, sizeof(*lines));
	if (!method || l->const_method_size > HEADER_MAX || l->pool_size > HEADER_MAX)
		return -EINVAL;
	buf = malloc(l->const_method_size + l->pool_size);
	if (!buf)
		return -ENOMEM;
	err = name_method(j, method, -1, out, buf, buf + l->const_method_size, lines);
	free(buf);
	if (err) {
		free(lines->table);
		memset(lines, 0, sizeof(*lines));
	}
	return err;
}

/* Where an nmethod's debug information is: PcDescs, scopes data, the Method* array. */
struct debug_info {
	uint64_t pcs, pcs_end, data, data_end, metadata;
	size_t nmetadata;
	uint64_t nm;
	int32_t compile_id;
};

/*
 * The PcDescs (npcs whole ones) and scopes data of `d`: kept ones (*owned
 * NULL), or read now (*owned: the caller frees it). -EAGAIN when a read
 * failed, -ENOMEM.
 */
static int debug_bytes(const struct hotspot_jvm *j, const struct debug_info *d, size_t npcs,
		       const uint8_t **pcs, const uint8_t **data, uint8_t **owned)
{
	struct hotspot_debug_cache *c = j->debug_cache;
	size_t np = npcs * HOTSPOT_PCDESC_SIZE, nd = d->data_end - d->data;
	uint8_t *buf;

	*owned = NULL;
	for (unsigned i = 0; c && i < HOTSPOT_DEBUG_CACHE_ENTRIES; i++) {
		const struct debug_entry *e = &c->e[i];

		if (e->bytes && e->nm == d->nm && e->compile_id == d->compile_id &&
		    e->pcs == d->pcs && e->pcs_end == d->pcs + np && e->data == d->data &&
		    e->data_end == d->data_end) {
			*pcs = e->bytes;
			*data = e->bytes + np;
			return 0;
		}
	}
	buf = malloc(np + nd + 1);
	if (!buf)
		return -ENOMEM;
	if (j->read(j->ctx, d->pcs, buf, np) || j->read(j->ctx, d->data, buf + np, nd)) {
		free(buf);
		return -EAGAIN;
	}
	*pcs = buf;
	*data = buf + np;
	/* Kept where it fits: the oldest slot goes. */
	if (c && np + nd <= HOTSPOT_DEBUG_CACHE_BYTES) {
		struct debug_entry *e;

		for (unsigned tries = 0; tries < HOTSPOT_DEBUG_CACHE_ENTRIES &&
					 c->bytes + np + nd > HOTSPOT_DEBUG_CACHE_BYTES;
		     tries++) {
			entry_drop(c, &c->e[c->next]);
			c->next = (c->next + 1) % HOTSPOT_DEBUG_CACHE_ENTRIES;
		}
		e = &c->e[c->next];
		entry_drop(c, e);
		c->next = (c->next + 1) % HOTSPOT_DEBUG_CACHE_ENTRIES;
		*e = (struct debug_entry){ d->nm,	d->pcs,	       d->pcs + np, d->data,
					   d->data_end, d->compile_id, buf };
		c->bytes += np + nd;
		return 0;
	}
	*owned = buf;
	return 0;
}

static bool ordered(uint64_t a, uint64_t b)
{
	return a <= b && b - a <= HOTSPOT_MAX_DEBUG;
}

static int debug_info_of(const struct hotspot_jvm *j, uint64_t nm, const unsigned char *hdr,
			 struct debug_info *d)
{
	const struct hotspot_layout *l = &j->layout;

	if (l->nmethod_debug == HS_DEBUG_OFFSETS) {
		uint64_t meta = nm + (int32_t)get_u32(hdr + l->nm_metadata_off);

		d->data = get_u64(hdr + l->nm_scopes_data);
		d->pcs = nm + (int32_t)get_u32(hdr + l->nm_pcs_off);
		d->pcs_end = nm + (int32_t)get_u32(hdr + l->nm_deps_off);
		d->data_end = d->pcs;
		/* metadata, scopes data, PcDescs, dependencies: in that order, each bounded. */
		if (!ordered(meta, d->data) || !ordered(d->data, d->pcs) ||
		    !ordered(d->pcs, d->pcs_end))
			return -EINVAL;
		d->metadata = meta;
		d->nmetadata = (d->data - meta) / 8;
		return 0;
	}
	if (l->nmethod_debug == HS_DEBUG_IMMUTABLE) {
		uint64_t imm = get_u64(hdr + l->nm_immutable), mut = get_u64(hdr + l->blob_mutable);
		int32_t size = (int32_t)get_u32(hdr + l->nm_immutable_size);
		int32_t reloc = (int32_t)get_u32(hdr + l->blob_relocation_size);
		int32_t msize = (int32_t)get_u32(hdr + l->blob_mutable_size);

		d->pcs = imm + (int32_t)get_u32(hdr + l->nm_pcs_off);
		d->pcs_end = d->data = imm + (int32_t)get_u32(hdr + l->nm_data_off);
		d->data_end = imm + size;
		if (!imm || size < 0 || !ordered(imm, d->pcs) || !ordered(d->pcs, d->data) ||
		    !ordered(d->data, d->data_end) || reloc < 0 || msize < reloc ||
		    (uint64_t)(msize - reloc) > HOTSPOT_MAX_DEBUG)
			return -EINVAL;
		d->metadata = mut + (uint64_t)reloc;
		d->nmetadata = (size_t)(msize - reloc) / 8;
		return 0;
	}
	return -ENOTSUP;
}

/*
 * The frames C2 inlined at pc_offset, from the nmethod's debug information:
 * the outermost `max` of a chain of up to HOTSPOT_MAX_SCOPES, innermost
 * first. -ENOENT where the nmethod records nothing there (for a return
 * address, nothing at it exactly: HotSpot's pc_desc_at), -EAGAIN where a
 * read failed or a method of the chain could not be named (a chain cut
 * short would hang its inner methods under the caller's frame).
 */
static int inlined_frames(const struct hotspot_jvm *j, const struct debug_info *d,
			  uint32_t pc_offset, bool is_return, struct hotspot_frame *out, int max)
{
	struct hotspot_scope scopes[HOTSPOT_MAX_SCOPES];
	size_t npcs = (d->pcs_end - d->pcs) / HOTSPOT_PCDESC_SIZE, nd = d->data_end - d->data;
	struct hotspot_pcdesc pc;
	const uint8_t *pcs, *data;
	uint8_t *owned = NULL;
	int n, skip;

	n = debug_bytes(j, d, npcs, &pcs, &data, &owned);
	if (n)
		return n;
	n = -ENOENT;
	if ((is_return ? hotspot_pcdesc_find(pcs, npcs, (int32_t)pc_offset, &pc)
		       : hotspot_pcdesc_near(pcs, npcs, (int32_t)pc_offset, &pc)) ||
	    (is_return && pc.pc_offset != (int32_t)pc_offset) || pc.scope_decode_offset <= 0)
		goto out;
	n = hotspot_scopes(data, nd, j->x, (uint32_t)pc.scope_decode_offset, scopes,
			   HOTSPOT_MAX_SCOPES);
	if (n <= 0) {
		n = -ENOENT;
		goto out;
	}
	/* Past max, the innermost go: the outermost is the method its caller called. */
	skip = n > max ? n - max : 0;
	for (int i = skip; i < n; i++) {
		uint64_t method;

		if (scopes[i].method_index < 1 || scopes[i].method_index > d->nmetadata ||
		    read_u64(j, d->metadata + 8ull * (scopes[i].method_index - 1), &method) ||
		    hotspot_name_method(j, method, scopes[i].bci, &out[i - skip])) {
			n = -EAGAIN;
			goto out;
		}
	}
	n -= skip;
out:
	free(owned);
	return n;
}

/* hotspot_name_nmethod, the header into `hdr`: exactly nmethod_size bytes (see name_method). */
static int name_nmethod(const struct hotspot_jvm *j, uint64_t nm, uint32_t pc_offset,
			bool is_return, int32_t compile_id, struct hotspot_frame *out, int max,
			struct hotspot_named *named, unsigned char *hdr)
{
	const struct hotspot_layout *l = &j->layout;
	struct debug_info d;
	uint64_t method;
	int err, n = -ENOENT;

	if ((err = j->read(j->ctx, nm, hdr, l->nmethod_size)))
		return err;
	named->compile_id = (int32_t)get_u32(hdr + l->nmethod_compile_id);
	if (compile_id >= 0 && named->compile_id != compile_id)
		return -ESTALE;
	d.nm = nm;
	d.compile_id = named->compile_id;
	if (!debug_info_of(j, nm, hdr, &d)) {
		n = inlined_frames(j, &d, pc_offset, is_return, out, max);
		if (n > 0)
			return n;
	}
	/*
	 * No debug information there: the nmethod's own method, without a
	 * line; where it could not be read (-EAGAIN), an answer to ask again.
	 */
	named->complete = n != -EAGAIN && n != -ENOMEM;
	method = get_u64(hdr + l->nmethod_method);
	err = hotspot_name_method(j, method, -1, out);
	return err ? err : 1;
}

int hotspot_name_nmethod(const struct hotspot_jvm *j, uint64_t nm, uint32_t pc_offset,
			 bool is_return, int32_t compile_id, struct hotspot_frame *out, int max,
			 struct hotspot_named *named)
{
	const struct hotspot_layout *l = &j->layout;
	struct hotspot_named dummy;
	unsigned char *hdr;
	int n;

	if (!named)
		named = &dummy;
	*named = (struct hotspot_named){ .complete = true, .compile_id = -1 };
	if (max < 1 || !l->nmethod_size || l->nmethod_size > HEADER_MAX)
		return -EINVAL;
	hdr = malloc(l->nmethod_size);
	if (!hdr)
		return -ENOMEM;
	n = name_nmethod(j, nm, pc_offset, is_return, compile_id, out, max, named, hdr);
	free(hdr);
	return n;
}
