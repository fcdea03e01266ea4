// SPDX-License-Identifier: BSD-2-Clause
/* See hotspot_vmstructs.h. */
#include "hotspot_vmstructs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/elf_dynsym.h"
#include "../util/strtab.h"
#include "../util/unaligned.h"
#include "../util/vec.h"

const char *const hotspot_export_names[HS_EXPORT_COUNT] = {
	[HS_STRUCTS] = "gHotSpotVMStructs",
	[HS_STRUCT_TYPE_NAME_OFF] = "gHotSpotVMStructEntryTypeNameOffset",
	[HS_STRUCT_FIELD_NAME_OFF] = "gHotSpotVMStructEntryFieldNameOffset",
	[HS_STRUCT_IS_STATIC_OFF] = "gHotSpotVMStructEntryIsStaticOffset",
	[HS_STRUCT_OFFSET_OFF] = "gHotSpotVMStructEntryOffsetOffset",
	[HS_STRUCT_ADDRESS_OFF] = "gHotSpotVMStructEntryAddressOffset",
	[HS_STRUCT_STRIDE] = "gHotSpotVMStructEntryArrayStride",
	[HS_TYPES] = "gHotSpotVMTypes",
	[HS_TYPE_TYPE_NAME_OFF] = "gHotSpotVMTypeEntryTypeNameOffset",
	[HS_TYPE_SIZE_OFF] = "gHotSpotVMTypeEntrySizeOffset",
	[HS_TYPE_STRIDE] = "gHotSpotVMTypeEntryArrayStride",
	[HS_INTS] = "gHotSpotVMIntConstants",
	[HS_INT_NAME_OFF] = "gHotSpotVMIntConstantEntryNameOffset",
	[HS_INT_VALUE_OFF] = "gHotSpotVMIntConstantEntryValueOffset",
	[HS_INT_STRIDE] = "gHotSpotVMIntConstantEntryArrayStride",
	[HS_LONGS] = "gHotSpotVMLongConstants",
	[HS_LONG_NAME_OFF] = "gHotSpotVMLongConstantEntryNameOffset",
	[HS_LONG_VALUE_OFF] = "gHotSpotVMLongConstantEntryValueOffset",
	[HS_LONG_STRIDE] = "gHotSpotVMLongConstantEntryArrayStride",
};

struct hs_field {
	uint32_t type, field; /* names, in `names` */
	uint64_t value;	      /* offset, or a static field's address */
	bool is_static;
};

struct hs_named {
	uint32_t name;
	int64_t value; /* a type's size, or a constant */
};

typedef VEC(struct hs_named) named_vec_t;

struct hotspot_vmstructs {
	struct strtab names;
	VEC(struct hs_field) fields;
	named_vec_t types, ints, longs;
};

/* ---- exports ----------------------------------------------------------------- */

static bool note_export(void *ctx, const char *name, const GElf_Sym *sym)
{
	uint64_t *vaddr = ctx;

	if (strncmp(name, "gHotSpotVM", 10))
		return true;
	for (int i = 0; i < HS_EXPORT_COUNT; i++)
		if (!strcmp(name, hotspot_export_names[i]))
			vaddr[i] = sym->st_value;
	return true;
}

bool hotspot_exports_find(Elf *elf, uint64_t vaddr[HS_EXPORT_COUNT])
{
	memset(vaddr, 0, HS_EXPORT_COUNT * sizeof(*vaddr));
	elf_dynsym_each(elf, note_export, vaddr);
	return vaddr[HS_STRUCTS] != 0;
}

int hotspot_exports_mapped(Elf *elf, uint64_t map_start, uint64_t map_pgoff,
			   uint64_t exports[HS_EXPORT_COUNT])
{
	size_t nph;

	if (!hotspot_exports_find(elf, exports) || elf_getphdrnum(elf, &nph))
		return -ENOENT;
	/* The bias: where the PT_LOAD holding the mapping's file offset landed. */
	for (size_t k = 0; k < nph; k++) {
		GElf_Phdr ph;
		uint64_t bias;

		if (!gelf_getphdr(elf, (int)k, &ph) || ph.p_type != PT_LOAD ||
		    map_pgoff < ph.p_offset || map_pgoff >= ph.p_offset + ph.p_filesz)
			continue;
		bias = map_start - (ph.p_vaddr + (map_pgoff - ph.p_offset));
		for (int x = 0; x < HS_EXPORT_COUNT; x++)
			if (exports[x])
				exports[x] += bias;
		return 0;
	}
	return -ENOENT;
}

/* ---- reading ----------------------------------------------------------------- */

struct reader {
	hotspot_read_fn read;
	void *ctx;
};

static int read_u64(const struct reader *r, uint64_t addr, uint64_t *v)
{
	return r->read(r->ctx, addr, v, sizeof(*v));
}

/*
 * The NUL-terminated name at `addr`, at most HOTSPOT_MAX_NAME bytes; read a
 * page at a time, so that a name near the end of a mapping is not lost to
 * a read past it. -EINVAL when it has no NUL within the bound.
 */
static int read_name(const struct reader *r, uint64_t addr, char *buf)
{
	size_t got = 0;

	while (got < HOTSPOT_MAX_NAME) {
		uint64_t at = addr + got;
		size_t n = 4096 - (at & 4095);
		char *nul;
		int err;

		if (at < addr)
			return -EINVAL; /* wraps */
		if (n > HOTSPOT_MAX_NAME - got)
			n = HOTSPOT_MAX_NAME - got;
		err = r->read(r->ctx, at, buf + got, n);
		if (err)
			return err;
		nul = memchr(buf + got, '\0', n);
		if (nul)
			return 0;
		got += n;
	}
	return -EINVAL;
}

/* An entry's member at `off` of `width` bytes must lie inside its stride. */
static bool member_fits(uint64_t off, uint64_t width, uint64_t stride)
{
	return off <= stride && width <= stride - off;
}

struct table {
	uint64_t base, stride, name_off;
};

/*
 * Reads the export variables into a table description: where its entries
 * start (the variable holds a pointer to them), their stride, and where an
 * entry's name is.
 */
static int table_of(const struct reader *r, const uint64_t *ex, enum hotspot_export base,
		    enum hotspot_export stride, enum hotspot_export name_off, struct table *t)
{
	int err;

	if (!ex[base] || !ex[stride] || !ex[name_off])
		return -ENOENT;
	if ((err = read_u64(r, ex[base], &t->base)) ||
	    (err = read_u64(r, ex[stride], &t->stride)) ||
	    (err = read_u64(r, ex[name_off], &t->name_off)))
		return err;
	/* Zero: libjvm's initialisers have not run yet. */
	if (!t->base || !t->stride)
		return -EAGAIN;
	if (t->stride > HOTSPOT_MAX_STRIDE || !member_fits(t->name_off, 8, t->stride))
		return -EINVAL;
	return 0;
}

/*
 * Entry i of table t into `entry` (t->stride bytes); its name interned in
 * *name. 1 at the table's end (a NULL name), 0, or an error.
 */
static int read_entry(struct hotspot_vmstructs *vm, const struct reader *r, const struct table *t,
		      size_t i, unsigned char *entry, uint32_t *name)
{
	char buf[HOTSPOT_MAX_NAME];
	uint64_t at = t->base + i * t->stride, p;
	int64_t idx;
	int err;

	if (at < t->base)
		return -EINVAL;
	err = r->read(r->ctx, at, entry, t->stride);
	if (err)
		return err;
	p = get_u64(entry + t->name_off);
	if (!p)
		return 1;
	err = read_name(r, p, buf);
	if (err)
		return err;
	idx = strtab_intern(&vm->names, buf);
	if (idx < 0)
		return -ENOMEM;
	*name = (uint32_t)idx;
	return 0;
}

static int read_structs(struct hotspot_vmstructs *vm, const struct reader *r, const uint64_t *ex)
{
	unsigned char entry[HOTSPOT_MAX_STRIDE];
	uint64_t field_off, static_off, offset_off, address_off;
	struct table t;
	int err = table_of(r, ex, HS_STRUCTS, HS_STRUCT_STRIDE, HS_STRUCT_TYPE_NAME_OFF, &t);

	if (err)
		return err;
	if (!ex[HS_STRUCT_FIELD_NAME_OFF] || !ex[HS_STRUCT_IS_STATIC_OFF] ||
	    !ex[HS_STRUCT_OFFSET_OFF] || !ex[HS_STRUCT_ADDRESS_OFF])
		return -ENOENT;
	if ((err = read_u64(r, ex[HS_STRUCT_FIELD_NAME_OFF], &field_off)) ||
	    (err = read_u64(r, ex[HS_STRUCT_IS_STATIC_OFF], &static_off)) ||
	    (err = read_u64(r, ex[HS_STRUCT_OFFSET_OFF], &offset_off)) ||
	    (err = read_u64(r, ex[HS_STRUCT_ADDRESS_OFF], &address_off)))
		return err;
	if (!member_fits(field_off, 8, t.stride) || !member_fits(static_off, 4, t.stride) ||
	    !member_fits(offset_off, 8, t.stride) || !member_fits(address_off, 8, t.stride))
		return -EINVAL;
	for (size_t i = 0;; i++) {
		struct hs_field f = { 0 };
		char buf[HOTSPOT_MAX_NAME];
		int64_t idx;
		uint64_t p;

		if (i >= HOTSPOT_MAX_ENTRIES)
			return -EINVAL; /* no end in sight: not a table */
		err = read_entry(vm, r, &t, i, entry, &f.type);
		if (err == 1)
			return 0;
		if (err)
			return err;
		p = get_u64(entry + field_off);
		/* The end is a NULL type name; a NULL field name alone is no field. */
		if (!p)
			continue;
		if ((err = read_name(r, p, buf)))
			return err;
		if ((idx = strtab_intern(&vm->names, buf)) < 0)
			return -ENOMEM;
		f.field = (uint32_t)idx;
		f.is_static = get_u32(entry + static_off) != 0;
		f.value = get_u64(entry + (f.is_static ? address_off : offset_off));
		if (vec_push(&vm->fields, f))
			return -ENOMEM;
	}
}

/* A table of (name, value): types (value = size), int or long constants. */
static int read_named(struct hotspot_vmstructs *vm, const struct reader *r, const uint64_t *ex,
		      enum hotspot_export base, enum hotspot_export stride,
		      enum hotspot_export name, enum hotspot_export value, unsigned width,
		      bool is_signed, named_vec_t *out)
{
	unsigned char entry[HOTSPOT_MAX_STRIDE];
	uint64_t value_off;
	struct table t;
	int err = table_of(r, ex, base, stride, name, &t);

	if (err)
		return err;
	if (!ex[value])
		return -ENOENT;
	if ((err = read_u64(r, ex[value], &value_off)))
		return err;
	if (!member_fits(value_off, width, t.stride))
		return -EINVAL;
	for (size_t i = 0;; i++) {
		struct hs_named n = { 0 };

		if (i >= HOTSPOT_MAX_ENTRIES)
			return -EINVAL;
		err = read_entry(vm, r, &t, i, entry, &n.name);
		if (err == 1)
			return 0;
		if (err)
			return err;
		if (width == 4)
			n.value = is_signed ? (int64_t)(int32_t)get_u32(entry + value_off)
					    : (int64_t)get_u32(entry + value_off);
		else
			n.value = (int64_t)get_u64(entry + value_off);
		if (vec_push(out, n))
			return -ENOMEM;
	}
}

int hotspot_vmstructs_read(const uint64_t exports[HS_EXPORT_COUNT], hotspot_read_fn read, void *ctx,
			   struct hotspot_vmstructs **out)
{
	struct hotspot_vmstructs *vm = calloc(1, sizeof(*vm));
	struct reader r = { read, ctx };
	int err;

	*out = NULL;
	if (!vm)
		return -ENOMEM;
	err = read_named(vm, &r, exports, HS_TYPES, HS_TYPE_STRIDE, HS_TYPE_TYPE_NAME_OFF,
			 HS_TYPE_SIZE_OFF, 8, false, &vm->types);
	if (!err)
		err = read_structs(vm, &r, exports);
	if (!err)
		err = read_named(vm, &r, exports, HS_INTS, HS_INT_STRIDE, HS_INT_NAME_OFF,
				 HS_INT_VALUE_OFF, 4, true, &vm->ints);
	if (!err)
		err = read_named(vm, &r, exports, HS_LONGS, HS_LONG_STRIDE, HS_LONG_NAME_OFF,
				 HS_LONG_VALUE_OFF, 8, false, &vm->longs);
	if (err) {
		hotspot_vmstructs_free(vm);
		return err;
	}
	*out = vm;
	return 0;
}

void hotspot_vmstructs_free(struct hotspot_vmstructs *vm)
{
	if (!vm)
		return;
	strtab_free(&vm->names);
	vec_free(&vm->fields);
	vec_free(&vm->types);
	vec_free(&vm->ints);
	vec_free(&vm->longs);
	free(vm);
}

/* ---- lookups ----------------------------------------------------------------- */

static bool name_is(const struct hotspot_vmstructs *vm, uint32_t idx, const char *s)
{
	return !strcmp(strtab_get(&vm->names, idx), s);
}

bool hotspot_field(const struct hotspot_vmstructs *vm, const char *type, const char *field,
		   uint64_t *value, bool *is_static)
{
	for (size_t i = 0; i < vm->fields.len; i++) {
		const struct hs_field *f = &vm->fields.data[i];

		if (name_is(vm, f->type, type) && name_is(vm, f->field, field)) {
			*value = f->value;
			if (is_static)
				*is_static = f->is_static;
			return true;
		}
	}
	return false;
}

static bool find_named(const struct hotspot_vmstructs *vm, const struct hs_named *v, size_t n,
		       const char *name, int64_t *value)
{
	for (size_t i = 0; i < n; i++)
		if (name_is(vm, v[i].name, name)) {
			*value = v[i].value;
			return true;
		}
	return false;
}

bool hotspot_type_size(const struct hotspot_vmstructs *vm, const char *type, uint64_t *size)
{
	int64_t v;

	if (!find_named(vm, vm->types.data, vm->types.len, type, &v))
		return false;
	*size = (uint64_t)v;
	return true;
}

bool hotspot_int_constant(const struct hotspot_vmstructs *vm, const char *name, int64_t *value)
{
	return find_named(vm, vm->ints.data, vm->ints.len, name, value) ||
	       find_named(vm, vm->longs.data, vm->longs.len, name, value);
}

void hotspot_vmstructs_counts(const struct hotspot_vmstructs *vm, size_t counts[4])
{
	counts[0] = vm->fields.len;
	counts[1] = vm->types.len;
	counts[2] = vm->ints.len;
	counts[3] = vm->longs.len;
}
