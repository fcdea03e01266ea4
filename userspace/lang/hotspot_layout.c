// SPDX-License-Identifier: BSD-2-Clause
/*
 * The layout bpfprof needs of a JVM, picked from its own tables
 * (hotspot_vmstructs.h) with the alternatives JDKs differ by: JDK 23 moved
 * CodeBlob's code to offsets and gave blobs a kind, dropped CompiledMethod
 * (its fields moved to nmethod) and ConstMethod's flags became a struct;
 * JDK 22 dropped JDK_Version (the version is then Abstract_VM_Version's).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "hotspot_vmstructs.h"

struct deriver {
	const struct hotspot_vmstructs *vm;
	char *missing;
	size_t missing_len;
	bool failed;
};

static void say_missing(struct deriver *d, const char *type, const char *field)
{
	if (d->failed)
		return;
	d->failed = true;
	if (d->missing && d->missing_len)
		snprintf(d->missing, d->missing_len, "%s%s%s", type, field ? "::" : "",
			 field ? field : "");
}

/*
 * The offset of the first (type, field) pair found, the field's `width`
 * bytes checked to lie within the type's size (a field past it is a table
 * that lies: fields are read whole, from buffers of the type's size). -1
 * and noted as missing when `required`, else -1 quietly.
 */
static int64_t offset_of(struct deriver *d, bool required, unsigned width, const char *const *pairs)
{
	for (const char *const *p = pairs; p[0]; p += 2) {
		uint64_t off, size;
		bool is_static;

		if (!hotspot_field(d->vm, p[0], p[1], &off, &is_static) || is_static)
			continue;
		if (!hotspot_type_size(d->vm, p[0], &size) || size > HOTSPOT_MAX_SIZEOF ||
		    off > size || size - off < width) {
			say_missing(d, p[0], p[1]);
			return -1;
		}
		return (int64_t)off;
	}
	if (required)
		say_missing(d, pairs[0], pairs[1]);
	return -1;
}

/* A field of `width` bytes (2, 4, 8: how it is read). */
#define OFF(d, width, ...) \
	offset_of(d, true, width, (const char *const[]){ __VA_ARGS__, NULL, NULL })
#define OFF_OPT(d, width, ...) \
	offset_of(d, false, width, (const char *const[]){ __VA_ARGS__, NULL, NULL })

/*
 * A field read from a buffer of `size` bytes (an nmethod's header holds
 * its CodeBlob's and CompiledMethod's fields too, read from nmethod_size
 * bytes, which a fake JVM may declare smaller than its base types).
 */
static void within(struct deriver *d, const char *what, uint64_t off, unsigned width, uint64_t size)
{
	if (off > size || size - off < width)
		say_missing(d, what, NULL);
}

static uint64_t static_addr(struct deriver *d, const char *type, const char *field)
{
	uint64_t addr;
	bool is_static;

	if (!hotspot_field(d->vm, type, field, &addr, &is_static) || !is_static || !addr) {
		say_missing(d, type, field);
		return 0;
	}
	return addr;
}

static uint64_t size_of(struct deriver *d, const char *type)
{
	uint64_t size;

	if (!hotspot_type_size(d->vm, type, &size) || !size || size > HOTSPOT_MAX_SIZEOF) {
		say_missing(d, type, NULL);
		return 0;
	}
	return size;
}

static int64_t constant(struct deriver *d, bool required, const char *a, const char *b)
{
	int64_t v;

	if (hotspot_int_constant(d->vm, a, &v) || (b && hotspot_int_constant(d->vm, b, &v)))
		return v;
	if (required)
		say_missing(d, a, NULL);
	return 0;
}

/* The feature release: JDK_Version::_current's _major (to 21), else Abstract_VM_Version's. */
static int read_major(struct deriver *d, hotspot_read_fn read, void *ctx, unsigned *major)
{
	uint64_t addr, off;
	bool is_static;
	int32_t v32;
	uint8_t v8;
	int err;

	if (hotspot_field(d->vm, "JDK_Version", "_current", &addr, &is_static) && is_static &&
	    hotspot_field(d->vm, "JDK_Version", "_major", &off, &is_static) && !is_static &&
	    off < 64) {
		if ((err = read(ctx, addr + off, &v8, 1)))
			return err;
		*major = v8;
	} else if (hotspot_field(d->vm, "Abstract_VM_Version", "_vm_major_version", &addr,
				 &is_static) &&
		   is_static) {
		if ((err = read(ctx, addr, &v32, sizeof(v32))))
			return err;
		*major = v32 > 0 && v32 < 1000 ? (unsigned)v32 : 0;
	} else {
		say_missing(d, "Abstract_VM_Version", "_vm_major_version");
		return 0;
	}
	/* 0: the VM is not started yet (the version is set as it starts). */
	if (*major == 0)
		return -EAGAIN;
	/* HotSpot since JDK 9 exports what is used here; older ones say 1 (1.8). */
	if (*major < 9)
		say_missing(d, "JDK_Version", "_major (JDK 9 or later)");
	return 0;
}

/* Where nmethods keep their debug information, when the layout is one this reader knows. */
static void derive_debug(struct deriver *d, struct hotspot_layout *l)
{
	int64_t a, b, c, e, f, g;

	a = OFF_OPT(d, 4, "nmethod", "_metadata_offset");
	b = OFF_OPT(d, 8, "CompiledMethod", "_scopes_data_begin", "nmethod", "_scopes_data_begin");
	c = OFF_OPT(d, 4, "nmethod", "_scopes_pcs_offset");
	e = OFF_OPT(d, 4, "nmethod", "_dependencies_offset");
	if (a >= 0 && b >= 0 && c >= 0 && e >= 0) {
		l->nmethod_debug = HS_DEBUG_OFFSETS;
		l->nm_metadata_off = a;
		l->nm_scopes_data = b;
		l->nm_pcs_off = c;
		l->nm_deps_off = e;
		return;
	}
	a = OFF_OPT(d, 8, "nmethod", "_immutable_data");
	b = OFF_OPT(d, 4, "nmethod", "_immutable_data_size");
	e = OFF_OPT(d, 4, "nmethod", "_scopes_data_offset");
	f = OFF_OPT(d, 8, "CodeBlob", "_mutable_data");
	g = OFF_OPT(d, 4, "CodeBlob", "_mutable_data_size");
	if (a >= 0 && b >= 0 && c >= 0 && e >= 0 && f >= 0 && g >= 0 &&
	    OFF_OPT(d, 4, "CodeBlob", "_relocation_size") >= 0 && l->major >= 25) {
		l->nmethod_debug = HS_DEBUG_IMMUTABLE;
		l->nm_immutable = a;
		l->nm_immutable_size = b;
		l->nm_pcs_off = c;
		l->nm_data_off = e;
		l->blob_mutable = f;
		l->blob_mutable_size = g;
		l->blob_relocation_size = OFF_OPT(d, 4, "CodeBlob", "_relocation_size");
	}
}

int hotspot_layout_derive(const struct hotspot_vmstructs *vm, hotspot_read_fn read, void *ctx,
			  struct hotspot_layout *out, char *missing, size_t missing_len)
{
	struct deriver d = { vm, missing, missing_len, false };
	struct hotspot_layout l = { 0 };
	bool is_static;
	uint64_t u;
	int64_t v;
	int err;

	if (missing && missing_len)
		missing[0] = '\0';
	err = read_major(&d, read, ctx, &l.major);
	if (err)
		return err;
	l.code_heaps_addr = static_addr(&d, "CodeCache", "_heaps");
	l.code_low_addr = static_addr(&d, "CodeCache", "_low_bound");
	l.code_high_addr = static_addr(&d, "CodeCache", "_high_bound");
	l.array_len = OFF(&d, 4, "GrowableArrayBase", "_len", "GenericGrowableArray", "_len");
	l.array_data = OFF(&d, 8, "GrowableArray<int>", "_data");
	l.heap_memory = OFF(&d, 1, "CodeHeap", "_memory");
	l.heap_segmap = OFF(&d, 1, "CodeHeap", "_segmap");
	l.heap_log2_segment = OFF(&d, 4, "CodeHeap", "_log2_segment_size");
	l.vspace_low = OFF(&d, 8, "VirtualSpace", "_low_boundary");
	l.vspace_high = OFF(&d, 8, "VirtualSpace", "_high_boundary");
	l.heap_block_size = size_of(&d, "HeapBlock");
	l.blob_name = OFF(&d, 8, "CodeBlob", "_name");
	l.blob_frame_size = OFF(&d, 4, "CodeBlob", "_frame_size");
	l.blob_frame_complete = OFF(&d, 4, "CodeBlob", "_frame_complete_offset");
	v = OFF_OPT(&d, 4, "CodeBlob", "_code_offset");
	l.blob_code_offsets = v >= 0;
	if (l.blob_code_offsets) {
		l.blob_code_begin = v;
		l.blob_code_end = OFF(&d, 4, "CodeBlob", "_data_offset");
	} else {
		l.blob_code_begin = OFF(&d, 8, "CodeBlob", "_code_begin");
		l.blob_code_end = OFF(&d, 8, "CodeBlob", "_code_end");
	}
	l.blob_kind = (int32_t)OFF_OPT(&d, 1, "CodeBlob", "_kind");
	l.blob_kind_nmethod =
		l.blob_kind >= 0 ? constant(&d, true, "CodeBlobKind::Nmethod", NULL) : -1;
	l.nmethod_method = OFF(&d, 8, "nmethod", "_method", "CompiledMethod", "_method");
	l.nmethod_compile_id = OFF(&d, 4, "nmethod", "_compile_id");
	l.nmethod_size = size_of(&d, "nmethod");
	if (!d.failed)
		derive_debug(&d, &l);
	l.method_const = OFF(&d, 8, "Method", "_constMethod");
	l.const_method_constants = OFF(&d, 8, "ConstMethod", "_constants");
	l.const_method_flags = OFF(&d, 4, "ConstMethod", "_flags._flags", "ConstMethod", "_flags");
	l.const_method_code_size = OFF(&d, 2, "ConstMethod", "_code_size");
	l.const_method_name_index = OFF(&d, 2, "ConstMethod", "_name_index");
	l.const_method_signature_index = OFF(&d, 2, "ConstMethod", "_signature_index");
	l.const_method_size = size_of(&d, "ConstMethod");
	l.flag_has_line_table = constant(&d, true, "ConstMethodFlags::_misc_has_linenumber_table",
					 "ConstMethod::_has_linenumber_table");
	l.pool_holder = OFF(&d, 8, "ConstantPool", "_pool_holder");
	l.pool_source_file_index = OFF(&d, 2, "ConstantPool", "_source_file_name_index");
	l.pool_size = size_of(&d, "ConstantPool");
	l.klass_name = OFF(&d, 8, "Klass", "_name");
	l.symbol_length = OFF(&d, 2, "Symbol", "_length");
	l.symbol_body = OFF(&d, 1, "Symbol", "_body");
	l.interp_sender_sp =
		(int32_t)constant(&d, true, "frame::interpreter_frame_sender_sp_offset", NULL);
	l.interp_last_sp =
		(int32_t)constant(&d, true, "frame::interpreter_frame_last_sp_offset", NULL);
	/*
	 * Optional: without them the user walk does not tell the interpreter
	 * from other code of frame size 0 (its callers' SP: fp + 16, not the
	 * one it saved).
	 */
	if (hotspot_field(vm, "AbstractInterpreter", "_code", &u, &is_static) && is_static && u) {
		uint64_t buf, lim, size;
		bool s1, s2;

		/* Each inside StubQueue's size; anything else leaves them out, quietly. */
		if (hotspot_field(vm, "StubQueue", "_stub_buffer", &buf, &s1) && !s1 &&
		    hotspot_field(vm, "StubQueue", "_buffer_limit", &lim, &s2) && !s2 &&
		    hotspot_type_size(vm, "StubQueue", &size) && size <= HOTSPOT_MAX_SIZEOF &&
		    buf <= size && size - buf >= 8 && lim <= size && size - lim >= 4) {
			l.interp_code_addr = u;
			l.stubq_buffer = (uint32_t)buf;
			l.stubq_limit = (uint32_t)lim;
		}
	}
	/* Headers read whole, into buffers of HOTSPOT_MAX_HEADER. */
	if (l.nmethod_size > HOTSPOT_MAX_HEADER || l.const_method_size > HOTSPOT_MAX_HEADER ||
	    l.pool_size > HOTSPOT_MAX_HEADER)
		say_missing(&d, "nmethod, ConstMethod, ConstantPool (a header too large)", NULL);
	/* What hotspot_names reads from the nmethod's bytes: each field inside them. */
	if (!d.failed) {
		uint64_t n = l.nmethod_size;

		within(&d, "nmethod::_method", l.nmethod_method, 8, n);
		within(&d, "nmethod::_compile_id", l.nmethod_compile_id, 4, n);
		if (l.nmethod_debug == HS_DEBUG_OFFSETS) {
			within(&d, "nmethod::_metadata_offset", l.nm_metadata_off, 4, n);
			within(&d, "nmethod::_scopes_data_begin", l.nm_scopes_data, 8, n);
			within(&d, "nmethod::_scopes_pcs_offset", l.nm_pcs_off, 4, n);
			within(&d, "nmethod::_dependencies_offset", l.nm_deps_off, 4, n);
		} else if (l.nmethod_debug == HS_DEBUG_IMMUTABLE) {
			within(&d, "nmethod::_immutable_data", l.nm_immutable, 8, n);
			within(&d, "nmethod::_immutable_data_size", l.nm_immutable_size, 4, n);
			within(&d, "nmethod::_scopes_pcs_offset", l.nm_pcs_off, 4, n);
			within(&d, "nmethod::_scopes_data_offset", l.nm_data_off, 4, n);
			within(&d, "CodeBlob::_mutable_data", l.blob_mutable, 8, n);
			within(&d, "CodeBlob::_mutable_data_size", l.blob_mutable_size, 4, n);
			within(&d, "CodeBlob::_relocation_size", l.blob_relocation_size, 4, n);
		}
	}
	/* A flag is one bit; a segment of code is 2^4 to 2^16 bytes in any JVM. */
	if (!d.failed &&
	    (!l.flag_has_line_table || (l.flag_has_line_table & (l.flag_has_line_table - 1))))
		say_missing(&d, "ConstMethodFlags::_misc_has_linenumber_table (one bit)", NULL);
	if (d.failed)
		return -ENOTSUP;
	*out = l;
	return 0;
}
