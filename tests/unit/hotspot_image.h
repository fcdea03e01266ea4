/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A whole JVM (JDK 17's layout) built in a buffer, read through a callback
 * as bpfprof reads a real one: its vmstructs tables, the code cache (one
 * heap, its segment map), an nmethod whose code inlined Inner.work into
 * Outer.run, a stub, and the Methods, ConstMethods, constant pool, Klass
 * and Symbols that name them. The export variables are the image's first
 * words (exports[i] at HS_IMG_BASE + 8 i), as fuzz_hotspot_vmstructs reads
 * its input, so an image written out is that fuzzer's seed.
 *
 * Tests change what they need in it (an nmethod replaced by another
 * method's) and count the reads.
 */
#ifndef BPFPROF_TESTS_HOTSPOT_IMAGE_H
#define BPFPROF_TESTS_HOTSPOT_IMAGE_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lang/hotspot_vmstructs.h"

#define HS_IMG_BASE   0x10000ull
#define HS_IMG_SIZE   (256u << 10)
/* The words after the exports: an nmethod, a Method and a pc offset, for the fuzzer. */
#define HS_IMG_PARAMS (8 * HS_EXPORT_COUNT)
#define HS_IMG_LOG2   6 /* 64-byte code segments */
#define HS_IMG_CODE   (8u << 10)

struct hs_image {
	unsigned char *mem;
	size_t used;
	uint64_t exports[HS_EXPORT_COUNT];
	uint64_t code_lo, segmap;
	uint64_t nm, nm_code, stub, stub_code; /* blobs, and where their code begins */
	uint64_t interp_q, interp_code;	       /* the interpreter's StubQueue, its code */
	uint64_t outer, inner, other;	       /* Methods */
	uint64_t scopes_data, pcs, metadata;   /* the nmethod's debug information */
	unsigned long reads, bytes;	       /* what was read of it */
	uint64_t fail_lo, fail_hi;	       /* reads touching [fail_lo, fail_hi) fail */
	uint64_t watch_lo, watch_hi;	       /* reads touching [watch_lo, watch_hi) are counted */
	unsigned long watched;
};

static inline int hs_image_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct hs_image *img = ctx;

	img->reads++;
	img->bytes += len;
	if (addr < HS_IMG_BASE || addr - HS_IMG_BASE > HS_IMG_SIZE ||
	    len > HS_IMG_SIZE - (addr - HS_IMG_BASE))
		return -EFAULT;
	if (img->watch_hi && addr < img->watch_hi && addr + len > img->watch_lo)
		img->watched++;
	if (img->fail_hi && addr < img->fail_hi && addr + len > img->fail_lo)
		return -EFAULT;
	memcpy(buf, img->mem + (addr - HS_IMG_BASE), len);
	return 0;
}

static inline unsigned char *hs_at(struct hs_image *img, uint64_t addr)
{
	return img->mem + (addr - HS_IMG_BASE);
}

static inline void hs_put64(struct hs_image *img, uint64_t addr, uint64_t v)
{
	memcpy(hs_at(img, addr), &v, 8);
}

static inline void hs_put32(struct hs_image *img, uint64_t addr, uint32_t v)
{
	memcpy(hs_at(img, addr), &v, 4);
}

static inline void hs_put16(struct hs_image *img, uint64_t addr, uint16_t v)
{
	memcpy(hs_at(img, addr), &v, 2);
}

/* `len` zeroed bytes, 8-aligned (align: a larger power of two). */
static inline uint64_t hs_alloc(struct hs_image *img, size_t len, size_t align)
{
	uint64_t at;

	img->used = (img->used + align - 1) & ~(align - 1);
	at = HS_IMG_BASE + img->used;
	img->used += (len + 7) & ~7ul;
	return at;
}

static inline uint64_t hs_str(struct hs_image *img, const char *s)
{
	uint64_t at = hs_alloc(img, strlen(s) + 1, 8);

	memcpy(hs_at(img, at), s, strlen(s) + 1);
	return at;
}

static inline uint64_t hs_symbol(struct hs_image *img, const char *s)
{
	uint64_t at = hs_alloc(img, 6 + strlen(s), 8);

	hs_put16(img, at + 4, (uint16_t)strlen(s));
	memcpy(hs_at(img, at + 6), s, strlen(s));
	return at;
}

struct hs_field {
	const char *type, *field;
	int is_static;
	uint64_t value;
};
struct hs_named {
	const char *name;
	int64_t value;
};

/* JDK 17's offsets (measured: /work/notes/issue39-vmstructs-jdk17.txt). */
static const struct hs_named hs_types[] = {
	{ "GrowableArrayBase", 8 },
	{ "GrowableArray<int>", 24 },
	{ "CodeHeap", 344 },
	{ "VirtualSpace", 80 },
	{ "HeapBlock", 16 },
	{ "CodeBlob", 104 },
	{ "CompiledMethod", 192 },
	{ "nmethod", 352 },
	{ "Method", 88 },
	{ "ConstMethod", 48 },
	{ "ConstantPool", 72 },
	{ "Klass", 208 },
	{ "Symbol", 8 },
	{ "StubQueue", 48 },
	{ NULL, 0 },
};
static const struct hs_named hs_ints[] = {
	{ "ConstMethod::_has_linenumber_table", 1 },
	{ "frame::interpreter_frame_sender_sp_offset", -1 },
	{ "frame::interpreter_frame_last_sp_offset", -2 },
	{ NULL, 0 },
};

/* A table of (name, value) rows of `stride` bytes, the value `width` bytes at `value_off`. */
static inline uint64_t hs_named_table(struct hs_image *img, const struct hs_named *rows,
				      size_t stride, size_t value_off, size_t width)
{
	size_t n;
	uint64_t t;

	for (n = 0; rows[n].name; n++)
		;
	t = hs_alloc(img, (n + 1) * stride, 8);
	for (size_t i = 0; i < n; i++) {
		hs_put64(img, t + stride * i, hs_str(img, rows[i].name));
		memcpy(hs_at(img, t + stride * i + value_off), &rows[i].value, width);
	}
	return t;
}

/* The tables, and the export variables that point at them (the image's first words). */
static inline void hs_tables(struct hs_image *img, const struct hs_field *fields)
{
	size_t n;
	uint64_t t;
	const uint64_t values[HS_EXPORT_COUNT] = {
		[HS_STRUCT_TYPE_NAME_OFF] = 0,	[HS_STRUCT_FIELD_NAME_OFF] = 8,
		[HS_STRUCT_IS_STATIC_OFF] = 24, [HS_STRUCT_OFFSET_OFF] = 32,
		[HS_STRUCT_ADDRESS_OFF] = 40,	[HS_STRUCT_STRIDE] = 48,
		[HS_TYPE_TYPE_NAME_OFF] = 0,	[HS_TYPE_SIZE_OFF] = 32,
		[HS_TYPE_STRIDE] = 40,		[HS_INT_NAME_OFF] = 0,
		[HS_INT_VALUE_OFF] = 8,		[HS_INT_STRIDE] = 16,
		[HS_LONG_NAME_OFF] = 0,		[HS_LONG_VALUE_OFF] = 8,
		[HS_LONG_STRIDE] = 16,
	};

	for (int i = 0; i < HS_EXPORT_COUNT; i++) {
		img->exports[i] = HS_IMG_BASE + 8ull * i;
		hs_put64(img, img->exports[i], values[i]);
	}
	for (n = 0; fields[n].type; n++)
		;
	t = hs_alloc(img, (n + 1) * 48, 8);
	for (size_t i = 0; i < n; i++) {
		uint64_t e = t + 48 * i;

		hs_put64(img, e, hs_str(img, fields[i].type));
		hs_put64(img, e + 8, hs_str(img, fields[i].field));
		hs_put32(img, e + 24, (uint32_t)fields[i].is_static);
		hs_put64(img, e + (fields[i].is_static ? 40 : 32), fields[i].value);
	}
	hs_put64(img, img->exports[HS_STRUCTS], t);
	hs_put64(img, img->exports[HS_TYPES], hs_named_table(img, hs_types, 40, 32, 8));
	hs_put64(img, img->exports[HS_INTS], hs_named_table(img, hs_ints, 16, 8, 4));
	hs_put64(img, img->exports[HS_LONGS], hs_alloc(img, 16, 8));
}

/*
 * A Method of class `klass` (its pool's holder) named by pool slot
 * `name_slot`, with a line table: bci 0 at `line`, bci 5 at line + 1.
 */
static inline uint64_t hs_method(struct hs_image *img, uint64_t pool, uint16_t name_slot, int line)
{
	uint64_t m = hs_alloc(img, 88, 8), cm = hs_alloc(img, 48 + 8 + 16, 8);
	unsigned char *t = hs_at(img, cm + 48 + 8);

	hs_put64(img, m + 8, cm);
	hs_put64(img, cm + 8, pool);
	hs_put16(img, cm + 28, 1); /* has a line table */
	hs_put16(img, cm + 32, 8); /* bytes of bytecode */
	hs_put16(img, cm + 34, name_slot);
	/* 0xff, zigzag(0), zigzag(line); then bci +5, line +1; then the end. */
	t[0] = 0xff;
	t[1] = 0;
	t[2] = (unsigned char)(2 * line);
	t[3] = (5 << 3) | 1;
	t[4] = 0;
	return m;
}

/* Blob at `blob` spanning `segs` segments of the heap: its segment map says so. */
static inline void hs_segments(struct hs_image *img, uint64_t block, unsigned segs)
{
	uint64_t seg = (block - img->code_lo) >> HS_IMG_LOG2;

	for (unsigned i = 0; i < segs; i++)
		hs_at(img, img->segmap + seg + i)[0] = (unsigned char)(i > 0xfe ? 0xfe : i);
}

/*
 * The nmethod's debug information: at code offset 16 (a call's return
 * address) Inner.work at bci 5 inlined into Outer.run at bci 0; at 48 Outer.run alone.
 */
static inline void hs_nmethod_debug(struct hs_image *img, uint64_t m0, uint64_t m1)
{
	unsigned char *d = hs_at(img, img->scopes_data);
	int32_t pcs[2][4] = { { 16, 4, 0, 0 }, { 48, 1, 0, 0 } };

	hs_put64(img, img->metadata, m0);
	hs_put64(img, img->metadata + 8, m1);
	/* Offset 1: Outer.run (metadata 1), bci 0, no sender; offset 4: Inner.work, bci 5,
	 * sender 1. */
	memcpy(d, (unsigned char[]){ 0, 0, 1, 1, 1, 2, 6, 0 }, 8);
	memcpy(hs_at(img, img->pcs), pcs, sizeof(pcs));
}

/* Make the nmethod another compilation: compile id `id`, of method `m` (no inlining). */
static inline void hs_recompile(struct hs_image *img, int32_t id, uint64_t m)
{
	hs_put32(img, img->nm + 304, (uint32_t)id);
	hs_put64(img, img->nm + 112, m);
	hs_nmethod_debug(img, m, m);
	/* Both PcDescs now say: m alone. */
	hs_put32(img, img->pcs + 4, 1);
}

static inline int hs_image_build(struct hs_image *img)
{
	uint64_t cur, heaps, ga, arr, heap, pool, klass, block, nm, stub;

	memset(img, 0, sizeof(*img));
	img->mem = calloc(1, HS_IMG_SIZE);
	if (!img->mem)
		return -ENOMEM;
	img->used = HS_IMG_PARAMS + 24;
	cur = hs_alloc(img, 8, 8);
	hs_at(img, cur)[0] = 17;
	heaps = hs_alloc(img, 24, 8);
	/* The interpreter's StubQueue (JDK 17: _stub_buffer at 8, _buffer_limit at 20), its
	 * pointer. */
	img->interp_q = hs_alloc(img, 48 + 8, 8);
	{
		const struct hs_field fields[] = {
			{ "JDK_Version", "_current", 1, cur },
			{ "JDK_Version", "_major", 0, 0 },
			{ "CodeCache", "_heaps", 1, heaps },
			{ "CodeCache", "_low_bound", 1, heaps + 8 },
			{ "CodeCache", "_high_bound", 1, heaps + 16 },
			{ "GrowableArrayBase", "_len", 0, 0 },
			{ "GrowableArray<int>", "_data", 0, 8 },
			{ "CodeHeap", "_memory", 0, 8 },
			{ "CodeHeap", "_segmap", 0, 120 },
			{ "CodeHeap", "_log2_segment_size", 0, 256 },
			{ "VirtualSpace", "_low_boundary", 0, 0 },
			{ "VirtualSpace", "_high_boundary", 0, 8 },
			{ "CodeBlob", "_name", 0, 96 },
			{ "CodeBlob", "_frame_size", 0, 28 },
			{ "CodeBlob", "_frame_complete_offset", 0, 20 },
			{ "CodeBlob", "_code_begin", 0, 32 },
			{ "CodeBlob", "_code_end", 0, 40 },
			{ "CompiledMethod", "_method", 0, 112 },
			{ "CompiledMethod", "_scopes_data_begin", 0, 120 },
			{ "nmethod", "_metadata_offset", 0, 260 },
			{ "nmethod", "_scopes_pcs_offset", 0, 268 },
			{ "nmethod", "_dependencies_offset", 0, 272 },
			{ "nmethod", "_compile_id", 0, 304 },
			{ "Method", "_constMethod", 0, 8 },
			{ "ConstMethod", "_constants", 0, 8 },
			{ "ConstMethod", "_flags", 0, 28 },
			{ "ConstMethod", "_code_size", 0, 32 },
			{ "ConstMethod", "_name_index", 0, 34 },
			{ "ConstMethod", "_signature_index", 0, 36 },
			{ "ConstantPool", "_pool_holder", 0, 24 },
			{ "ConstantPool", "_source_file_name_index", 0, 54 },
			{ "Klass", "_name", 0, 24 },
			{ "Symbol", "_length", 0, 4 },
			{ "Symbol", "_body", 0, 6 },
			{ "AbstractInterpreter", "_code", 1, img->interp_q + 48 },
			{ "StubQueue", "_stub_buffer", 0, 8 },
			{ "StubQueue", "_buffer_limit", 0, 20 },
			{ NULL, NULL, 0, 0 },
		};

		hs_tables(img, fields);
	}
	/* Names: one class, its pool's slots 1-3 the methods' names, 4 its file. */
	klass = hs_alloc(img, 208, 8);
	hs_put64(img, klass + 24, hs_symbol(img, "pkg/Outer"));
	pool = hs_alloc(img, 72 + 5 * 8, 8);
	hs_put64(img, pool + 24, klass);
	hs_put16(img, pool + 54, 4);
	hs_put64(img, pool + 72 + 8, hs_symbol(img, "run"));
	hs_put64(img, pool + 72 + 16, hs_symbol(img, "work"));
	hs_put64(img, pool + 72 + 24, hs_symbol(img, "other"));
	hs_put64(img, pool + 72 + 32, hs_symbol(img, "Outer.java"));
	img->outer = hs_method(img, pool, 1, 10);
	img->inner = hs_method(img, pool, 2, 20);
	img->other = hs_method(img, pool, 3, 30);
	/* The code cache: one heap of HS_IMG_CODE bytes, every segment free at first. */
	img->segmap = hs_alloc(img, HS_IMG_CODE >> HS_IMG_LOG2, 8);
	memset(hs_at(img, img->segmap), 0xff, HS_IMG_CODE >> HS_IMG_LOG2);
	img->code_lo = hs_alloc(img, HS_IMG_CODE, 4096);
	ga = hs_alloc(img, 24, 8);
	arr = hs_alloc(img, 8, 8);
	heap = hs_alloc(img, 344, 8);
	hs_put64(img, heaps, ga);
	hs_put64(img, heaps + 8, img->code_lo);
	hs_put64(img, heaps + 16, img->code_lo + HS_IMG_CODE);
	hs_put32(img, ga, 1);
	hs_put64(img, ga + 8, arr);
	hs_put64(img, arr, heap);
	hs_put64(img, heap + 8, img->code_lo);
	hs_put64(img, heap + 16, img->code_lo + HS_IMG_CODE);
	hs_put64(img, heap + 120, img->segmap);
	hs_put32(img, heap + 256, HS_IMG_LOG2);
	/* A stub at segment 4 (2 segments), an nmethod at segment 16 (16 segments). */
	block = img->code_lo + (4u << HS_IMG_LOG2);
	stub = img->stub = block + 16;
	hs_segments(img, block, 2);
	hs_put64(img, stub + 96, hs_str(img, "StubRoutines (1)"));
	img->stub_code = stub + 32;
	hs_put64(img, stub + 32, img->stub_code);
	hs_put64(img, stub + 40, img->stub_code + 64);
	/* The interpreter: a blob at segment 110 (8 segments), its code the StubQueue's buffer. */
	block = img->code_lo + (110u << HS_IMG_LOG2);
	hs_segments(img, block, 8);
	hs_put64(img, block + 16 + 96, hs_str(img, "Interpreter"));
	img->interp_code = block + 16 + 128;
	hs_put64(img, block + 16 + 32, img->interp_code);
	hs_put64(img, block + 16 + 40, img->interp_code + 256);
	hs_put64(img, img->interp_q + 8, img->interp_code);
	hs_put32(img, img->interp_q + 20, 256);
	hs_put64(img, img->interp_q + 48, img->interp_q);
	block = img->code_lo + (16u << HS_IMG_LOG2);
	nm = img->nm = block + 16;
	hs_segments(img, block, 16);
	hs_put64(img, nm + 96, hs_str(img, "nmethod"));
	/* Header 352, metadata 16, scopes data 8, PcDescs 32, then code. */
	img->metadata = nm + 352;
	img->scopes_data = nm + 368;
	img->pcs = nm + 376;
	hs_put32(img, nm + 260, 352);
	hs_put64(img, nm + 120, img->scopes_data);
	hs_put32(img, nm + 268, 376);
	hs_put32(img, nm + 272, 408);
	img->nm_code = nm + 512;
	hs_put64(img, nm + 32, img->nm_code);
	hs_put64(img, nm + 40, img->nm_code + 256);
	hs_put32(img, nm + 304, 7);
	hs_put64(img, nm + 112, img->outer);
	hs_nmethod_debug(img, img->outer, img->inner);
	/* The fuzzer's parameters: the nmethod, a Method, pc offset 16 as a return address. */
	hs_put64(img, HS_IMG_BASE + HS_IMG_PARAMS, nm);
	hs_put64(img, HS_IMG_BASE + HS_IMG_PARAMS + 8, img->inner);
	hs_put64(img, HS_IMG_BASE + HS_IMG_PARAMS + 16, 16 | (1ull << 32));
	return img->used <= HS_IMG_SIZE ? 0 : -ENOSPC;
}

static inline void hs_image_free(struct hs_image *img)
{
	free(img->mem);
	img->mem = NULL;
}

#endif
