/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * HotSpot's own description of its data structures, read from a running
 * JVM: the tables libjvm.so exports for serviceability tools
 * (gHotSpotVMStructs, gHotSpotVMTypes, gHotSpotVMIntConstants,
 * gHotSpotVMLongConstants; openjdk src/hotspot/share/runtime/vmStructs.hpp).
 * Each struct entry names a field of a type (its offset, or the address of
 * a static field), each type entry its size, each constant its value. The
 * entries' own layout (strides, offsets of their members) is exported too,
 * as variables that libjvm's initialisers set: they are read from the
 * process like the tables, never from the file, where they are zero.
 *
 * So the layouts of the JVM's code heaps, code blobs, methods and symbols
 * come from the JVM itself, not from a table per JDK build; what differs
 * between JDKs (a field renamed or moved to another type) is a short list
 * of alternatives (hotspot_layout_derive).
 *
 * The JVM is another user's process and may be a fake: every table,
 * string and count is bounded, and a table that breaks a bound is refused.
 */
#ifndef BPFPROF_LANG_HOTSPOT_VMSTRUCTS_H
#define BPFPROF_LANG_HOTSPOT_VMSTRUCTS_H

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Reads `len` bytes of the JVM's memory at `addr`: 0, or a negative errno. */
typedef int (*hotspot_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);

/* The variables libjvm.so exports, by symbol name (hotspot_export_names). */
enum hotspot_export {
	HS_STRUCTS,
	HS_STRUCT_TYPE_NAME_OFF,
	HS_STRUCT_FIELD_NAME_OFF,
	HS_STRUCT_IS_STATIC_OFF,
	HS_STRUCT_OFFSET_OFF,
	HS_STRUCT_ADDRESS_OFF,
	HS_STRUCT_STRIDE,
	HS_TYPES,
	HS_TYPE_TYPE_NAME_OFF,
	HS_TYPE_SIZE_OFF,
	HS_TYPE_STRIDE,
	HS_INTS,
	HS_INT_NAME_OFF,
	HS_INT_VALUE_OFF,
	HS_INT_STRIDE,
	HS_LONGS,
	HS_LONG_NAME_OFF,
	HS_LONG_VALUE_OFF,
	HS_LONG_STRIDE,
	HS_EXPORT_COUNT,
};

extern const char *const hotspot_export_names[HS_EXPORT_COUNT];

/*
 * The ELF addresses (before load bias) of the exports in libjvm.so's
 * dynamic symbols, 0 for those it lacks; false when it has no
 * gHotSpotVMStructs (no JVM, or one too old).
 */
bool hotspot_exports_find(Elf *elf, uint64_t vaddr[HS_EXPORT_COUNT]);
/*
 * The same as addresses in a process that maps the file's offset
 * map_pgoff at map_start (its load bias applied). 0, or -ENOENT.
 */
int hotspot_exports_mapped(Elf *elf, uint64_t map_start, uint64_t map_pgoff,
			   uint64_t exports[HS_EXPORT_COUNT]);

/* Bounds on what a JVM's tables may claim (a real one: under 1000 entries a table). */
#define HOTSPOT_MAX_ENTRIES (1u << 14)
#define HOTSPOT_MAX_STRIDE  256u
#define HOTSPOT_MAX_NAME    128u	/* bytes of a type, field or constant name, NUL included */
#define HOTSPOT_MAX_SIZEOF  (64u << 10) /* of any type we use */
#define HOTSPOT_MAX_HEADER  1024u	/* of an nmethod, ConstMethod, ConstantPool: read whole */

struct hotspot_vmstructs;

/*
 * Read the four tables. `exports` holds each variable's address in the
 * JVM (0: not exported; the tables and strides are required). 0, or
 * -EAGAIN (a table pointer or stride still zero: libjvm's initialisers have
 * not run yet), -EINVAL (a table breaks a bound: an unterminated table, a
 * stride too large for its members, a name without its NUL), -ENOENT (an
 * export is missing), -ENOMEM, or the read's error.
 */
int hotspot_vmstructs_read(const uint64_t exports[HS_EXPORT_COUNT], hotspot_read_fn read, void *ctx,
			   struct hotspot_vmstructs **out);
void hotspot_vmstructs_free(struct hotspot_vmstructs *vm);

/* Field `field` of `type`: its offset, or for a static field its address (*is_static). */
bool hotspot_field(const struct hotspot_vmstructs *vm, const char *type, const char *field,
		   uint64_t *value, bool *is_static);
bool hotspot_type_size(const struct hotspot_vmstructs *vm, const char *type, uint64_t *size);
bool hotspot_int_constant(const struct hotspot_vmstructs *vm, const char *name, int64_t *value);
/* Entries read: structs, types, ints, longs (for what bpfprof says of a JVM). */
void hotspot_vmstructs_counts(const struct hotspot_vmstructs *vm, size_t counts[4]);

/*
 * What walking and naming Java frames needs, from the tables (each field's
 * bytes checked to lie within its type's size, and those read from an
 * nmethod's, ConstMethod's or ConstantPool's header within the bytes read
 * of it: nmethod_size, const_method_size, pool_size, each at most
 * HOTSPOT_MAX_HEADER). Addresses are the JVM's.
 */
struct hotspot_layout {
	unsigned major; /* the JDK's feature release: 17, 21, 25 */
	/* Static fields of CodeCache: where the heap list and the code bounds live. */
	uint64_t code_heaps_addr, code_low_addr, code_high_addr;
	uint32_t array_len, array_data; /* GrowableArray: _len, _data */
	/* CodeHeap: its reserved code and its segment map (VirtualSpaces), segment size. */
	uint32_t heap_memory, heap_segmap, heap_log2_segment;
	uint32_t vspace_low, vspace_high; /* VirtualSpace::_low_boundary, _high_boundary */
	uint32_t heap_block_size;	  /* sizeof(HeapBlock): a blob follows its header */
	/* CodeBlob */
	uint32_t blob_name, blob_frame_size, blob_frame_complete;
	bool blob_code_offsets;	   /* JDK 23+: code at blob + _code_offset .. + _data_offset */
	uint32_t blob_code_begin;  /* the pointer (JDK <= 22), or the int offset */
	uint32_t blob_code_end;	   /* the pointer (JDK <= 22), or _data_offset */
	int32_t blob_kind;	   /* CodeBlob::_kind (JDK 23+), -1 where blobs are told by name */
	int64_t blob_kind_nmethod; /* CodeBlobKind::Nmethod, where kinds exist */
	/* nmethod (its Method and compile id; CompiledMethod's fields on JDK <= 22) */
	uint32_t nmethod_method, nmethod_compile_id, nmethod_size;
	/*
	 * Where an nmethod keeps its debug information (PcDescs, scopes, the
	 * Methods they index), as the JDK lays it out; HS_DEBUG_NONE where
	 * this reader does not know it (JDK 23 and 24): only the nmethod's own
	 * method is named there, without what it inlined.
	 */
	enum { HS_DEBUG_NONE, HS_DEBUG_OFFSETS, HS_DEBUG_IMMUTABLE } nmethod_debug;
	/*
	 * HS_DEBUG_OFFSETS (JDK 9-22): metadata at nm + metadata_off, scopes
	 * data at the pointer scopes_data, PcDescs from nm + pcs_off to nm +
	 * deps_off. HS_DEBUG_IMMUTABLE (25+): PcDescs from immutable +
	 * pcs_off to immutable + data_off, scopes data to immutable +
	 * immutable_size; metadata at blob mutable + relocation_size, to
	 * mutable + mutable_size.
	 */
	uint32_t nm_metadata_off, nm_scopes_data, nm_pcs_off, nm_deps_off;
	uint32_t nm_immutable, nm_immutable_size, nm_data_off, blob_mutable, blob_relocation_size,
		blob_mutable_size;
	/* Method -> ConstMethod -> ConstantPool -> holder Klass -> name Symbol */
	uint32_t method_const, const_method_constants, const_method_flags, const_method_code_size,
		const_method_name_index, const_method_signature_index, const_method_size;
	uint32_t flag_has_line_table; /* the flag's bit value in const_method_flags */
	uint32_t pool_holder, pool_source_file_index, pool_size;
	uint32_t klass_name;
	uint32_t symbol_length, symbol_body;
	/* Interpreter frames, in words from fp: sender sp and last sp (the exported pair). */
	int32_t interp_sender_sp, interp_last_sp;
	/*
	 * The template interpreter's code: AbstractInterpreter::_code, a
	 * StubQueue whose _stub_buffer holds _buffer_limit bytes of it. 0
	 * when a JVM does not export them (its compiled frames then keep
	 * the frame-pointer walk).
	 */
	uint64_t interp_code_addr;
	uint32_t stubq_buffer, stubq_limit;
};

/*
 * Derive the layout. 0, -EAGAIN while the VM has not set its version (it
 * is starting), or -ENOTSUP with the first field or constant not
 * found (or out of its type's bounds) in `missing`, for the one line that
 * says which JVM cannot be read, or the read's error (the JDK version is
 * read from the JVM's memory).
 */
int hotspot_layout_derive(const struct hotspot_vmstructs *vm, hotspot_read_fn read, void *ctx,
			  struct hotspot_layout *out, char *missing, size_t missing_len);

#endif
