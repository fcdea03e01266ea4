// SPDX-License-Identifier: BSD-2-Clause
/*
 * A fake libjvm.so (built under that name): it exports HotSpot's
 * serviceability tables (gHotSpotVMStructs and company) as any user's
 * library may, describing a JDK 17 whose code cache is the code page that
 * fakejvm (its loader) writes, and whose every nmethod claims the most
 * debug information a reader accepts. FAKEJVM_MODE picks the lie:
 *
 *   huge     valid tables; each nmethod's PcDescs and scopes span 250 KiB
 *            each, so that naming one address reads half a megabyte
 *   endless  a struct table with no end: the reader must stop and refuse
 *   tiny     valid tables; the segment map leads nowhere (every segment
 *            "one back" from a free first one), so that every sampled
 *            address names nothing, after a long walk of one-byte steps,
 *            and is asked again at every sample
 *
 * fakejvm calls fakejvm_setup(code, size) once its code page exists.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

/* The entries' layout, as JDK 17 exports it (vmStructs.hpp). */
EXPORT uint64_t gHotSpotVMStructEntryTypeNameOffset = 0, gHotSpotVMStructEntryFieldNameOffset = 8,
		gHotSpotVMStructEntryTypeStringOffset = 16,
		gHotSpotVMStructEntryIsStaticOffset = 24, gHotSpotVMStructEntryOffsetOffset = 32,
		gHotSpotVMStructEntryAddressOffset = 40, gHotSpotVMStructEntryArrayStride = 48;
EXPORT uint64_t gHotSpotVMTypeEntryTypeNameOffset = 0, gHotSpotVMTypeEntrySizeOffset = 32,
		gHotSpotVMTypeEntryArrayStride = 40;
EXPORT uint64_t gHotSpotVMIntConstantEntryNameOffset = 0, gHotSpotVMIntConstantEntryValueOffset = 8,
		gHotSpotVMIntConstantEntryArrayStride = 16;
EXPORT uint64_t gHotSpotVMLongConstantEntryNameOffset = 0,
		gHotSpotVMLongConstantEntryValueOffset = 8,
		gHotSpotVMLongConstantEntryArrayStride = 16;
EXPORT void *gHotSpotVMStructs, *gHotSpotVMTypes, *gHotSpotVMIntConstants, *gHotSpotVMLongConstants;

struct struct_entry {
	const char *type, *field, *type_string;
	int32_t is_static;
	uint64_t offset;
	void *address;
};
struct type_entry {
	const char *name, *super;
	int32_t is_oop, is_int, is_unsigned;
	uint64_t size;
};
struct int_entry {
	const char *name;
	int32_t value;
};
struct long_entry {
	const char *name;
	uint64_t value;
};

/* The JVM's statics the tables point at. */
static unsigned char jdk_version[8] = { 17 };
static void *code_low, *code_high;
static struct {
	int32_t len, cap;
	void **data;
} heaps;
static void *heap_list[1];
static void *heaps_ptr = &heaps; /* CodeCache::_heaps: a pointer to the heap list */
static unsigned char code_heap[344];
static unsigned char fake_method[88], fake_const_method[48], fake_pool[72 + 8 * 4], fake_klass[208],
	fake_symbol[64];

#define F(t, f, off)                     \
	{                                \
		t, f, NULL, 0, off, NULL \
	}
#define S(t, f, addr)                  \
	{                              \
		t, f, NULL, 1, 0, addr \
	}
static struct struct_entry structs[] = {
	S("JDK_Version", "_current", jdk_version),
	F("JDK_Version", "_major", 0),
	S("CodeCache", "_heaps", &heaps_ptr),
	S("CodeCache", "_low_bound", &code_low),
	S("CodeCache", "_high_bound", &code_high),
	F("GrowableArrayBase", "_len", 0),
	F("GrowableArray<int>", "_data", 8),
	F("CodeHeap", "_memory", 8),
	F("CodeHeap", "_segmap", 120),
	F("CodeHeap", "_log2_segment_size", 256),
	F("VirtualSpace", "_low_boundary", 0),
	F("VirtualSpace", "_high_boundary", 8),
	F("CodeBlob", "_name", 96),
	F("CodeBlob", "_frame_size", 28),
	F("CodeBlob", "_frame_complete_offset", 20),
	F("CodeBlob", "_code_begin", 32),
	F("CodeBlob", "_code_end", 40),
	F("CompiledMethod", "_method", 112),
	F("CompiledMethod", "_scopes_data_begin", 120),
	F("nmethod", "_compile_id", 304),
	F("nmethod", "_metadata_offset", 260),
	F("nmethod", "_scopes_pcs_offset", 268),
	F("nmethod", "_dependencies_offset", 272),
	F("Method", "_constMethod", 8),
	F("ConstMethod", "_constants", 8),
	F("ConstMethod", "_flags", 28),
	F("ConstMethod", "_code_size", 32),
	F("ConstMethod", "_name_index", 34),
	F("ConstMethod", "_signature_index", 36),
	F("ConstantPool", "_pool_holder", 24),
	F("ConstantPool", "_source_file_name_index", 54),
	F("Klass", "_name", 24),
	F("Symbol", "_length", 4),
	F("Symbol", "_body", 6),
	{ NULL, NULL, NULL, 0, 0, NULL },
};

static struct type_entry types[] = {
	{ "JDK_Version", NULL, 0, 0, 0, 5 },
	{ "GrowableArrayBase", NULL, 0, 0, 0, 8 },
	{ "GrowableArray<int>", NULL, 0, 0, 0, 24 },
	{ "CodeHeap", NULL, 0, 0, 0, 344 },
	{ "VirtualSpace", NULL, 0, 0, 0, 80 },
	{ "HeapBlock", NULL, 0, 0, 0, 16 },
	{ "CodeBlob", NULL, 0, 0, 0, 104 },
	{ "CompiledMethod", NULL, 0, 0, 0, 192 },
	{ "nmethod", NULL, 0, 0, 0, 352 },
	{ "Method", NULL, 0, 0, 0, 88 },
	{ "ConstMethod", NULL, 0, 0, 0, 48 },
	{ "ConstantPool", NULL, 0, 0, 0, 72 },
	{ "Klass", NULL, 0, 0, 0, 208 },
	{ "Symbol", NULL, 0, 0, 0, 8 },
	{ NULL, NULL, 0, 0, 0, 0 },
};

static struct int_entry ints[] = {
	{ "ConstMethod::_has_linenumber_table", 1 },
	{ "frame::interpreter_frame_sender_sp_offset", -1 },
	{ "frame::interpreter_frame_last_sp_offset", -2 },
	{ NULL, 0 },
};

static struct long_entry longs[] = { { NULL, 0 } };

/* Endless: the first entry again and again, never the NULL that ends a table. */
#define ENDLESS_ENTRIES 100000
static struct struct_entry *endless;

/* The code's blocks: a header and a CodeBlob at each block's start, code after. */
#define BLOCK	     4096u
#define BLOCK_CODE   512u
#define LOG2_SEGMENT 7
#define DEBUG_SPAN   (250u << 10)

static void put64(unsigned char *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

static void put32(unsigned char *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

/*
 * The code page [code, code + size) (writable now; fakejvm makes it
 * executable after): every BLOCK an nmethod of fake_method, its code from
 * BLOCK_CODE on, its debug information claiming DEBUG_SPAN bytes of
 * PcDescs and as many of scopes (the code pages themselves, readable).
 */
__attribute__((visibility("default"))) void fakejvm_setup(unsigned char *code, size_t size,
							  unsigned char *segmap)
{
	static const char klass_name[] = "FakeJvm", method_name[] = "hostileMethod";
	const char *mode = getenv("FAKEJVM_MODE");

	code_low = code;
	code_high = code + size;
	/* One heap, the whole page; the segment map marks a block start every BLOCK. */
	put64(code_heap + 8, (uint64_t)(uintptr_t)code);
	put64(code_heap + 16, (uint64_t)(uintptr_t)(code + size));
	put64(code_heap + 120, (uint64_t)(uintptr_t)segmap);
	put32(code_heap + 256, LOG2_SEGMENT);
	for (size_t seg = 0; seg < size >> LOG2_SEGMENT; seg++)
		segmap[seg] = (unsigned char)(seg % (BLOCK >> LOG2_SEGMENT));
	if (mode && !strcmp(mode, "tiny")) {
		memset(segmap, 1, size >> LOG2_SEGMENT);
		segmap[0] = 0xff;
	}
	heap_list[0] = code_heap;
	heaps.len = 1;
	heaps.cap = 1;
	heaps.data = heap_list;
	/* Method -> ConstMethod -> ConstantPool -> Klass: "FakeJvm.hostileMethod". */
	put64(fake_method + 8, (uint64_t)(uintptr_t)fake_const_method);
	put64(fake_const_method + 8, (uint64_t)(uintptr_t)fake_pool);
	fake_const_method[34] = 1; /* name index */
	put64(fake_pool + 24, (uint64_t)(uintptr_t)fake_klass);
	put64(fake_pool + 72 + 8, (uint64_t)(uintptr_t)(fake_symbol + 32));
	put64(fake_klass + 24, (uint64_t)(uintptr_t)fake_symbol);
	fake_symbol[4] = sizeof(klass_name) - 1;
	memcpy(fake_symbol + 6, klass_name, sizeof(klass_name) - 1);
	fake_symbol[32 + 4] = sizeof(method_name) - 1;
	memcpy(fake_symbol + 32 + 6, method_name, sizeof(method_name) - 1);
	for (size_t b = 0; b + BLOCK <= size; b += BLOCK) {
		unsigned char *blob = code + b + 16;

		put64(blob + 96, (uint64_t)(uintptr_t) "nmethod");
		put64(blob + 32, (uint64_t)(uintptr_t)(code + b + BLOCK_CODE));
		put64(blob + 40, (uint64_t)(uintptr_t)(code + b + BLOCK));
		put64(blob + 112, (uint64_t)(uintptr_t)fake_method);
		/* metadata at the header's end, scopes right after, PcDescs after those: all huge.
		 */
		put32(blob + 260, 352);
		put64(blob + 120, (uint64_t)(uintptr_t)(blob + 360));
		put32(blob + 268, 360 + DEBUG_SPAN);
		put32(blob + 272, 360 + 2 * DEBUG_SPAN);
	}
	gHotSpotVMStructs = structs;
	gHotSpotVMTypes = types;
	gHotSpotVMIntConstants = ints;
	gHotSpotVMLongConstants = longs;
	if (mode && !strcmp(mode, "endless")) {
		endless = calloc(ENDLESS_ENTRIES, sizeof(*endless));
		for (size_t i = 0; endless && i < ENDLESS_ENTRIES; i++)
			endless[i] = structs[0];
		gHotSpotVMStructs = endless;
	}
}
