// SPDX-License-Identifier: BSD-2-Clause
/*
 * A JVM's tables (gHotSpotVMStructs and company) built in a fake address
 * space, as JDK 17 and JDK 25 lay them out, and as a fake JVM could: a
 * layout derived from each, and every bound a hostile table breaks.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hotspot_image.h"
#include "lang/hotspot_vmstructs.h"
#include "test.h"

#define BASE	 0x100000ull
#define IMG_SIZE (1u << 20)

/* The fake JVM's memory: IMG_SIZE bytes at BASE, filled from the start. */
struct image {
	unsigned char *mem;
	size_t used;
};

static int read_image(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct image *img = ctx;

	if (addr < BASE || addr - BASE > IMG_SIZE || len > IMG_SIZE - (addr - BASE))
		return -EFAULT;
	memcpy(buf, img->mem + (addr - BASE), len);
	return 0;
}

static uint64_t put(struct image *img, const void *p, size_t len)
{
	uint64_t at = BASE + img->used;

	memcpy(img->mem + img->used, p, len);
	img->used += (len + 7) & ~7ul;
	return at;
}

static uint64_t put_u64(struct image *img, uint64_t v)
{
	return put(img, &v, sizeof(v));
}

static uint64_t put_str(struct image *img, const char *s)
{
	return put(img, s, strlen(s) + 1);
}

struct field {
	const char *type, *field;
	int is_static;
	uint64_t value;
};

/* What each test may break in the tables it builds. */
struct breakage {
	uint64_t struct_stride; /* 0: the real 48 */
	bool no_sentinel;	/* the struct table runs on with copies of its last entry */
	bool long_name;		/* one field name of 200 bytes, no NUL within the bound */
};

/* The four tables and their export variables, as libjvm lays them out (vmStructs.hpp). */
static void build(struct image *img, const struct field *fields, const struct hs_named *types,
		  const struct hs_named *ints, const struct breakage *b, uint64_t exports[])
{
	uint64_t stride = b && b->struct_stride ? b->struct_stride : 48, structs, t;
	size_t n;

	memset(exports, 0, HS_EXPORT_COUNT * sizeof(*exports));
	/* Structs: typeName 0, fieldName 8, typeString 16, isStatic 24, offset 32, address 40. */
	for (n = 0; fields[n].type; n++)
		;
	{
		size_t rows = b && b->no_sentinel ? HOTSPOT_MAX_ENTRIES + 1 : n + 1;
		unsigned char *tab = calloc(rows, stride < 48 ? 48 : stride);

		for (size_t i = 0; i < rows; i++) {
			const struct field *f = &fields[i < n ? i : n - 1];
			unsigned char *e = tab + i * stride;
			uint64_t tn, fn, v = f->value;
			uint32_t st = (uint32_t)f->is_static;

			if (i >= n && !(b && b->no_sentinel))
				break; /* the sentinel: all zero */
			if (i < n || i == n) {
				tn = put_str(img, f->type);
				if (b && b->long_name && i == 0) {
					char longname[201];

					memset(longname, 'x', 200);
					longname[200] = '\0';
					fn = put_str(img, longname);
				} else {
					fn = put_str(img, f->field);
				}
			} else {
				/* Copies past the fields: the same names again. */
				memcpy(&tn, tab + (n - 1) * stride, 8);
				memcpy(&fn, tab + (n - 1) * stride + 8, 8);
			}
			memcpy(e, &tn, 8);
			memcpy(e + 8, &fn, 8);
			memcpy(e + 24, &st, 4);
			memcpy(e + (st ? 40 : 32), &v, 8);
		}
		structs = put(img, tab, rows * stride);
		free(tab);
	}
	exports[HS_STRUCTS] = put_u64(img, structs);
	exports[HS_STRUCT_TYPE_NAME_OFF] = put_u64(img, 0);
	exports[HS_STRUCT_FIELD_NAME_OFF] = put_u64(img, 8);
	exports[HS_STRUCT_IS_STATIC_OFF] = put_u64(img, 24);
	exports[HS_STRUCT_OFFSET_OFF] = put_u64(img, 32);
	exports[HS_STRUCT_ADDRESS_OFF] = put_u64(img, 40);
	exports[HS_STRUCT_STRIDE] = put_u64(img, stride);
	/* Types: typeName 0, size 32, stride 40. */
	for (n = 0; types[n].name; n++)
		;
	{
		unsigned char *tab = calloc(n + 1, 40);

		for (size_t i = 0; i < n; i++) {
			uint64_t nm = put_str(img, types[i].name), sz = (uint64_t)types[i].value;

			memcpy(tab + i * 40, &nm, 8);
			memcpy(tab + i * 40 + 32, &sz, 8);
		}
		t = put(img, tab, (n + 1) * 40);
		free(tab);
	}
	exports[HS_TYPES] = put_u64(img, t);
	exports[HS_TYPE_TYPE_NAME_OFF] = put_u64(img, 0);
	exports[HS_TYPE_SIZE_OFF] = put_u64(img, 32);
	exports[HS_TYPE_STRIDE] = put_u64(img, 40);
	/* Int constants: name 0, value 8, stride 16; long constants: an empty table. */
	for (n = 0; ints[n].name; n++)
		;
	{
		unsigned char *tab = calloc(n + 1, 16);

		for (size_t i = 0; i < n; i++) {
			uint64_t nm = put_str(img, ints[i].name);
			int32_t v = (int32_t)ints[i].value;

			memcpy(tab + i * 16, &nm, 8);
			memcpy(tab + i * 16 + 8, &v, 4);
		}
		t = put(img, tab, (n + 1) * 16);
		free(tab);
	}
	exports[HS_INTS] = put_u64(img, t);
	exports[HS_INT_NAME_OFF] = put_u64(img, 0);
	exports[HS_INT_VALUE_OFF] = put_u64(img, 8);
	exports[HS_INT_STRIDE] = put_u64(img, 16);
	t = put(img, (uint64_t[2]){ 0, 0 }, 16);
	exports[HS_LONGS] = put_u64(img, t);
	exports[HS_LONG_NAME_OFF] = put_u64(img, 0);
	exports[HS_LONG_VALUE_OFF] = put_u64(img, 8);
	exports[HS_LONG_STRIDE] = put_u64(img, 16);
}

/* JDK 17's fields (offsets measured on OpenJDK 17), static ones at addresses set by the test. */
#define JDK17_FIELDS(major_addr)                                                                   \
	{ "JDK_Version", "_current", 1, major_addr }, { "JDK_Version", "_major", 0, 0 },           \
		{ "CodeCache", "_heaps", 1, 0x7000 }, { "CodeCache", "_low_bound", 1, 0x7008 },    \
		{ "CodeCache", "_high_bound", 1, 0x7010 }, { "GrowableArrayBase", "_len", 0, 0 },  \
		{ "GrowableArray<int>", "_data", 0, 8 }, { "CodeHeap", "_memory", 0, 8 },          \
		{ "CodeHeap", "_segmap", 0, 120 }, { "CodeHeap", "_log2_segment_size", 0, 256 },   \
		{ "VirtualSpace", "_low_boundary", 0, 0 },                                         \
		{ "VirtualSpace", "_high_boundary", 0, 8 }, { "CodeBlob", "_name", 0, 96 },        \
		{ "CodeBlob", "_frame_size", 0, 28 },                                              \
		{ "CodeBlob", "_frame_complete_offset", 0, 20 },                                   \
		{ "CodeBlob", "_code_begin", 0, 32 }, { "CodeBlob", "_code_end", 0, 40 },          \
		{ "CompiledMethod", "_method", 0, 112 }, { "nmethod", "_compile_id", 0, 304 },     \
		{ "Method", "_constMethod", 0, 8 }, { "ConstMethod", "_constants", 0, 8 },         \
		{ "ConstMethod", "_flags", 0, 28 }, { "ConstMethod", "_code_size", 0, 32 },        \
		{ "ConstMethod", "_name_index", 0, 34 },                                           \
		{ "ConstMethod", "_signature_index", 0, 36 },                                      \
		{ "ConstantPool", "_pool_holder", 0, 24 },                                         \
		{ "ConstantPool", "_source_file_name_index", 0, 54 }, { "Klass", "_name", 0, 24 }, \
		{ "Symbol", "_length", 0, 4 },                                                     \
	{                                                                                          \
		"Symbol", "_body", 0, 6                                                            \
	}

/* JDK 17's types and constants: hotspot_image.h's hs_types and hs_ints. */

static struct image new_image(void)
{
	struct image img = { calloc(1, IMG_SIZE), 0 };

	return img;
}

static void test_jdk17(void)
{
	struct image img = new_image();
	uint64_t exports[HS_EXPORT_COUNT], major = put(&img, "\x11\0\0\0\0\0\0\0", 8);
	const struct field fields[] = { JDK17_FIELDS(major), { NULL, NULL, 0, 0 } };
	struct hotspot_vmstructs *vm = NULL;
	struct hotspot_layout l;
	char missing[128];
	size_t counts[4];

	build(&img, fields, hs_types, hs_ints, NULL, exports);
	CHECK_EQ_INT(hotspot_vmstructs_read(exports, read_image, &img, &vm), 0);
	if (!vm)
		goto out;
	hotspot_vmstructs_counts(vm, counts);
	CHECK_EQ_INT(counts[0], sizeof(fields) / sizeof(fields[0]) - 1);
	CHECK_EQ_INT(hotspot_layout_derive(vm, read_image, &img, &l, missing, sizeof(missing)), 0);
	CHECK_EQ_INT(l.major, 17);
	CHECK_EQ_INT(l.code_heaps_addr, 0x7000);
	CHECK(!l.blob_code_offsets);
	CHECK_EQ_INT(l.blob_code_begin, 32);
	CHECK_EQ_INT(l.blob_kind, -1);
	/* JDK 17's nmethod has its Method in CompiledMethod. */
	CHECK_EQ_INT(l.nmethod_method, 112);
	CHECK_EQ_INT(l.const_method_flags, 28);
	CHECK_EQ_INT(l.heap_block_size, 16);
	CHECK_EQ_INT(l.interp_last_sp, -2);
	hotspot_vmstructs_free(vm);
out:
	free(img.mem);
}

static void test_jdk25(void)
{
	struct image img = new_image();
	uint64_t exports[HS_EXPORT_COUNT], major = put(&img, "\x19\0\0\0\0\0\0\0", 8);
	const struct field fields[] = {
		{ "Abstract_VM_Version", "_vm_major_version", 1, major },
		{ "CodeCache", "_heaps", 1, 0x7000 },
		{ "CodeCache", "_low_bound", 1, 0x7008 },
		{ "CodeCache", "_high_bound", 1, 0x7010 },
		{ "GrowableArrayBase", "_len", 0, 0 },
		{ "GrowableArray<int>", "_data", 0, 8 },
		{ "CodeHeap", "_memory", 0, 0 },
		{ "CodeHeap", "_segmap", 0, 112 },
		{ "CodeHeap", "_log2_segment_size", 0, 248 },
		{ "VirtualSpace", "_low_boundary", 0, 0 },
		{ "VirtualSpace", "_high_boundary", 0, 8 },
		{ "CodeBlob", "_name", 0, 8 },
		{ "CodeBlob", "_frame_size", 0, 44 },
		{ "CodeBlob", "_frame_complete_offset", 0, 54 },
		{ "CodeBlob", "_code_offset", 0, 36 },
		{ "CodeBlob", "_data_offset", 0, 40 },
		{ "CodeBlob", "_kind", 0, 56 },
		{ "nmethod", "_method", 0, 80 },
		{ "nmethod", "_compile_id", 0, 212 },
		{ "Method", "_constMethod", 0, 8 },
		{ "ConstMethod", "_constants", 0, 8 },
		{ "ConstMethod", "_flags._flags", 0, 28 },
		{ "ConstMethod", "_code_size", 0, 34 },
		{ "ConstMethod", "_name_index", 0, 36 },
		{ "ConstMethod", "_signature_index", 0, 38 },
		{ "ConstantPool", "_pool_holder", 0, 24 },
		{ "ConstantPool", "_source_file_name_index", 0, 54 },
		{ "Klass", "_name", 0, 24 },
		{ "Symbol", "_length", 0, 4 },
		{ "Symbol", "_body", 0, 6 },
		{ NULL, NULL, 0, 0 },
	};
	const struct hs_named types[] = {
		{ "GrowableArrayBase", 8 },
		{ "GrowableArray<int>", 24 },
		{ "CodeHeap", 336 },
		{ "VirtualSpace", 80 },
		{ "HeapBlock", 8 },
		{ "CodeBlob", 64 },
		{ "nmethod", 224 },
		{ "Method", 88 },
		{ "ConstMethod", 56 },
		{ "ConstantPool", 72 },
		{ "Klass", 200 },
		{ "Symbol", 8 },
		{ NULL, 0 },
	};
	const struct hs_named ints[] = {
		{ "ConstMethodFlags::_misc_has_linenumber_table", 1 },
		{ "CodeBlobKind::Nmethod", 1 },
		{ "frame::interpreter_frame_sender_sp_offset", -1 },
		{ "frame::interpreter_frame_last_sp_offset", -2 },
		{ NULL, 0 },
	};
	struct hotspot_vmstructs *vm = NULL;
	struct hotspot_layout l;
	char missing[128];

	build(&img, fields, types, ints, NULL, exports);
	CHECK_EQ_INT(hotspot_vmstructs_read(exports, read_image, &img, &vm), 0);
	if (!vm)
		goto out;
	CHECK_EQ_INT(hotspot_layout_derive(vm, read_image, &img, &l, missing, sizeof(missing)), 0);
	CHECK_EQ_INT(l.major, 25);
	CHECK(l.blob_code_offsets);
	CHECK_EQ_INT(l.blob_code_begin, 36);
	CHECK_EQ_INT(l.blob_code_end, 40);
	CHECK_EQ_INT(l.blob_kind, 56);
	CHECK_EQ_INT(l.blob_kind_nmethod, 1);
	CHECK_EQ_INT(l.nmethod_method, 80);
	CHECK_EQ_INT(l.heap_block_size, 8);
	hotspot_vmstructs_free(vm);
out:
	free(img.mem);
}

/* sizeof(nmethod) in derive_jdk17's tables: 0 for JDK 17's own. */
static uint64_t nmethod_size_override;

/* derive on JDK 17's tables with fields[drop] left out, or its offset set to `offset`. */
static int derive_jdk17(size_t drop, int64_t offset, uint64_t release, char *missing, size_t len)
{
	struct image img = new_image();
	uint64_t exports[HS_EXPORT_COUNT], major = put_u64(&img, release);
	struct field fields[] = { JDK17_FIELDS(major), { NULL, NULL, 0, 0 } };
	size_t n = sizeof(fields) / sizeof(fields[0]) - 1;
	struct hotspot_vmstructs *vm = NULL;
	struct hotspot_layout l;
	int err;

	if (offset >= 0)
		fields[drop].value = (uint64_t)offset;
	else if (drop < n)
		memmove(&fields[drop], &fields[drop + 1], (n - drop) * sizeof(fields[0]));
	{
		struct hs_named types[sizeof(hs_types) / sizeof(hs_types[0])];

		memcpy(types, hs_types, sizeof(types));
		for (size_t i = 0; types[i].name; i++)
			if (nmethod_size_override && !strcmp(types[i].name, "nmethod"))
				types[i].value = (int64_t)nmethod_size_override;
		build(&img, fields, types, hs_ints, NULL, exports);
	}
	err = hotspot_vmstructs_read(exports, read_image, &img, &vm);
	if (!err)
		err = hotspot_layout_derive(vm, read_image, &img, &l, missing, len);
	hotspot_vmstructs_free(vm);
	free(img.mem);
	return err;
}

/* A field missing, or past its type's size: the JVM is refused, and the field named. */
static void test_missing_and_lying(void)
{
	char missing[128];

	/* Field 12 is CodeBlob::_name. */
	CHECK_EQ_INT(derive_jdk17(99, -1, 17, missing, sizeof(missing)), 0);
	CHECK_EQ_INT(derive_jdk17(12, -1, 17, missing, sizeof(missing)), -ENOTSUP);
	CHECK_EQ_STR(missing, "CodeBlob::_name");
	CHECK_EQ_INT(derive_jdk17(12, 104, 17, missing, sizeof(missing)), -ENOTSUP);
	CHECK_EQ_STR(missing, "CodeBlob::_name");
	CHECK_EQ_INT(derive_jdk17(12, 1ll << 40, 17, missing, sizeof(missing)), -ENOTSUP);
	/* JDK 8 (major 1 in its version): what is used here came with 9. */
	CHECK_EQ_INT(derive_jdk17(99, -1, 1, missing, sizeof(missing)), -ENOTSUP);
	CHECK(strstr(missing, "JDK_Version") != NULL);
	/* Neither version export: refused, named. */
	CHECK_EQ_INT(derive_jdk17(0, -1, 17, missing, sizeof(missing)), -ENOTSUP);
	CHECK(strstr(missing, "Abstract_VM_Version") != NULL);
}

/*
 * A field read wider than its type has room for, or from an nmethod's
 * header of fewer bytes than its base types claim: refused (names read
 * each field whole, from a buffer of the type's size).
 */
static void test_fields_past_their_bytes(void)
{
	char missing[128];

	/* Field 18 is nmethod::_compile_id (4 bytes) in an nmethod of 352. */
	CHECK_EQ_INT(derive_jdk17(18, 348, 17, missing, sizeof(missing)), 0);
	CHECK_EQ_INT(derive_jdk17(18, 351, 17, missing, sizeof(missing)), -ENOTSUP);
	CHECK_EQ_STR(missing, "nmethod::_compile_id");
	/* Field 17 is CompiledMethod::_method (8 bytes) in a CompiledMethod of 192. */
	CHECK_EQ_INT(derive_jdk17(17, 185, 17, missing, sizeof(missing)), -ENOTSUP);
	/* Field 28 is Symbol::_length (2 bytes) in a Symbol of 8. */
	CHECK_EQ_INT(derive_jdk17(28, 7, 17, missing, sizeof(missing)), -ENOTSUP);
	/* An nmethod declared smaller than the CompiledMethod field read from its bytes. */
	nmethod_size_override = 110;
	CHECK_EQ_INT(derive_jdk17(18, 100, 17, missing, sizeof(missing)), -ENOTSUP);
	CHECK_EQ_STR(missing, "nmethod::_method");
	/* One larger than the buffer an nmethod's header is read into. */
	nmethod_size_override = HOTSPOT_MAX_HEADER + 8;
	CHECK_EQ_INT(derive_jdk17(99, -1, 17, missing, sizeof(missing)), -ENOTSUP);
	nmethod_size_override = 0;
}

/* Tables that break a bound: refused, never read on and on. */
static void test_hostile_tables(void)
{
	const struct field fields[] = { { "CodeBlob", "_name", 0, 8 }, { NULL, NULL, 0, 0 } };
	const struct hs_named none[] = { { NULL, 0 } };
	struct hotspot_vmstructs *vm = NULL;
	struct image img = new_image();
	uint64_t exports[HS_EXPORT_COUNT];

	/* A stride past the bound; one too small for its members. */
	build(&img, fields, none, none, &(struct breakage){ .struct_stride = 512 }, exports);
	CHECK_EQ_INT(hotspot_vmstructs_read(exports, read_image, &img, &vm), -EINVAL);
	img.used = 0;
	build(&img, fields, none, none, &(struct breakage){ .struct_stride = 40 }, exports);
	CHECK_EQ_INT(hotspot_vmstructs_read(exports, read_image, &img, &vm), -EINVAL);
	/* No end within HOTSPOT_MAX_ENTRIES. */
	img.used = 0;
	build(&img, fields, none, none, &(struct breakage){ .no_sentinel = true }, exports);
	CHECK_EQ_INT(hotspot_vmstructs_read(exports, read_image, &img, &vm), -EINVAL);
	/* A name with no NUL within HOTSPOT_MAX_NAME bytes. */
	img.used = 0;
	build(&img, fields, none, none, &(struct breakage){ .long_name = true }, exports);
	CHECK_EQ_INT(hotspot_vmstructs_read(exports, read_image, &img, &vm), -EINVAL);
	/* A table pointer into nothing; an export missing. */
	img.used = 0;
	build(&img, fields, none, none, NULL, exports);
	memcpy(img.mem + (exports[HS_STRUCTS] - BASE), &(uint64_t){ 0x42 }, 8);
	CHECK_EQ_INT(hotspot_vmstructs_read(exports, read_image, &img, &vm), -EFAULT);
	img.used = 0;
	build(&img, fields, none, none, NULL, exports);
	exports[HS_INT_VALUE_OFF] = 0;
	CHECK_EQ_INT(hotspot_vmstructs_read(exports, read_image, &img, &vm), -ENOENT);
	CHECK(vm == NULL);
	free(img.mem);
}

int main(void)
{
	RUN(test_jdk17);
	RUN(test_jdk25);
	RUN(test_missing_and_lying);
	RUN(test_fields_past_their_bytes);
	RUN(test_hostile_tables);
	return test_summary();
}
