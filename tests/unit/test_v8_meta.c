// SPDX-License-Identifier: BSD-2-Clause
/*
 * V8's metadata: the layout node 20 (V8 11.3) describes and what is derived
 * for it, read from this machine's node when it has one; taggings and
 * versions we do not read refused with their reason.
 */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "lang/v8_meta.h"
#include "test.h"

/* Node 20's metadata, the part the layout needs (values of /usr/bin/node v20.20.2). */
static const struct v8_sym node20[] = {
	{ "_ZN2v88internal7Version6major_E", 11 },
	{ "_ZN2v88internal7Version6minor_E", 3 },
	{ "_ZN2v88internal7Version6build_E", 244 },
	{ "_ZN2v88internal7Version6patch_E", 8 },
	{ "v8dbg_SmiShiftSize", 31 },
	{ "v8dbg_SmiTag", 0 },
	{ "v8dbg_SmiTagMask", 1 },
	{ "v8dbg_HeapObjectTag", 1 },
	{ "v8dbg_HeapObjectTagMask", 3 },
	{ "v8dbg_off_fp_context_or_frame_type", -8 },
	{ "v8dbg_off_fp_function", -16 },
	{ "v8dbg_off_fp_bytecode_array", -32 },
	{ "v8dbg_off_fp_bytecode_offset", -40 },
	{ "v8dbg_type_JSFunction__JS_FUNCTION_TYPE", 2066 },
	{ "v8dbg_type_SharedFunctionInfo__SHARED_FUNCTION_INFO_TYPE", 262 },
	{ "v8dbg_type_Code__CODE_TYPE", 245 },
	{ "v8dbg_type_Script__SCRIPT_TYPE", 167 },
	{ "v8dbg_type_ScopeInfo__SCOPE_INFO_TYPE", 261 },
	{ "v8dbg_type_BytecodeArray__BYTECODE_ARRAY_TYPE", 191 },
	{ "v8dbg_type_ByteArray__BYTE_ARRAY_TYPE", 190 },
	{ "v8dbg_type_FixedArray__FIXED_ARRAY_TYPE", 175 },
	{ "v8dbg_type_WeakFixedArray__WEAK_FIXED_ARRAY_TYPE", 240 },
	{ "v8dbg_FirstNonstringType", 128 },
	{ "v8dbg_StringRepresentationMask", 7 },
	{ "v8dbg_StringEncodingMask", 8 },
	{ "v8dbg_SeqStringTag", 0 },
	{ "v8dbg_ConsStringTag", 1 },
	{ "v8dbg_SlicedStringTag", 3 },
	{ "v8dbg_ThinStringTag", 5 },
	{ "v8dbg_OneByteStringTag", 8 },
	{ "v8dbg_class_HeapObject__map__Map", 0 },
	{ "v8dbg_class_Map__instance_type__uint16_t", 12 },
	{ "v8dbg_class_JSFunction__shared__SharedFunctionInfo", 24 },
	{ "v8dbg_class_SharedFunctionInfo__name_or_scope_info__Object", 16 },
	{ "v8dbg_class_SharedFunctionInfo__function_data__Object", 8 },
	{ "v8dbg_class_SharedFunctionInfo__script_or_debug_info__HeapObject", 32 },
	{ "v8dbg_class_Script__source__Object", 8 },
	{ "v8dbg_class_Script__name__Object", 16 },
	{ "v8dbg_class_Script__line_ends__Object", 56 },
	{ "v8dbg_class_String__length__int32_t", 12 },
	{ "v8dbg_class_SeqOneByteString__chars__char", 16 },
	{ "v8dbg_class_ConsString__first__String", 16 },
	{ "v8dbg_class_ConsString__second__String", 24 },
	{ "v8dbg_class_ThinString__actual__String", 16 },
	{ "v8dbg_class_SlicedString__parent__String", 16 },
	{ "v8dbg_class_SlicedString__offset__SMI", 24 },
	{ "v8dbg_class_FixedArrayBase__length__SMI", 8 },
	{ "v8dbg_class_FixedArray__data__uintptr_t", 16 },
	{ "v8dbg_class_BytecodeArray__data__uintptr_t", 54 },
	{ "v8dbg_class_Code__deoptimization_data__FixedArray", 16 },
	{ "v8dbg_class_Code__source_position_table__ByteArray", 24 },
	{ "v8dbg_CodeKindFieldMask", 15 },
	{ "v8dbg_CodeKindFieldShift", 0 },
	{ "v8dbg_CodeKindInterpretedFunction", 10 },
	{ "v8dbg_CodeKindBaseline", 11 },
	{ "v8dbg_frametype_EntryFrame", 1 },
	{ "v8dbg_frametype_InterpretedFrame", 13 },
	{ "v8_Default_embedded_blob_code_", 0x18c4000 },
	{ "v8_Default_embedded_blob_code_size_", 1645248 },
};
#define NODE20_N (sizeof(node20) / sizeof(node20[0]))

static void check_node20(const struct v8_meta *m)
{
	CHECK_EQ_INT(m->version, V8_VERSION(11, 3, 244));
	CHECK_EQ_INT(m->fp_context, -8);
	CHECK_EQ_INT(m->fp_function, -16);
	CHECK_EQ_INT(m->fp_bytecode_array, -32);
	CHECK_EQ_INT(m->fp_bytecode_offset, -40);
	CHECK_EQ_INT(m->t_jsfunc_first, 2066);
	CHECK_EQ_INT(m->t_jsfunc_last, 2080);
	CHECK_EQ_INT(m->fn_code, 48);
	CHECK_EQ_INT(m->code_start, 40);
	CHECK(m->code_start_ptr);
	CHECK_EQ_INT(m->code_flags, 48);
	CHECK_EQ_INT(m->code_size, 56);
	CHECK_EQ_INT(m->ba_spt, 32);
	CHECK_EQ_INT(m->ba_data, 54);
	CHECK_EQ_INT(m->deopt_inlining, 7);
	CHECK_EQ_STR(v8_meta_frametype(m, 1), "EntryFrame");
	CHECK_EQ_STR(v8_meta_frametype(m, 13), "InterpretedFrame");
}

static void test_node20_layout(void)
{
	struct v8_meta m;
	char why[160];

	CHECK_EQ_INT(v8_meta_from_syms(node20, NODE20_N, &m, why, sizeof(why)), 0);
	check_node20(&m);
	CHECK_EQ_INT(m.blob_lo, 0x18c4000);
	CHECK_EQ_INT(m.blob_hi, 0x18c4000 + 1645248);
}

/* One symbol changed: the layout is refused, and says why. */
static int with(const char *name, int64_t value, char *why, size_t len)
{
	struct v8_sym syms[NODE20_N];
	struct v8_meta m;

	for (size_t i = 0; i < NODE20_N; i++) {
		syms[i] = node20[i];
		if (!strcmp(syms[i].name, name))
			syms[i].value = value;
	}
	return v8_meta_from_syms(syms, NODE20_N, &m, why, len);
}

static void test_refused(void)
{
	char why[160];

	/* Pointer compression: 31-bit Smis. */
	CHECK_EQ_INT(with("v8dbg_SmiShiftSize", 0, why, sizeof(why)), -ENOTSUP);
	CHECK(strstr(why, "SmiShiftSize 0") != NULL);
	CHECK(strstr(why, "pointer compression") != NULL);
	/* Code's layout is derived only where it is known. */
	CHECK_EQ_INT(with("_ZN2v88internal7Version6minor_E", 8, why, sizeof(why)), -ENOTSUP);
	CHECK(strstr(why, "Code") != NULL);
	/* An offset no V8 has. */
	CHECK_EQ_INT(with("v8dbg_class_Script__name__Object", 1 << 30, why, sizeof(why)), -ENOTSUP);
	CHECK_EQ_INT(with("v8dbg_off_fp_function", -12, why, sizeof(why)), -ENOTSUP);
	/* A required field missing. */
	CHECK_EQ_INT(with("v8dbg_class_String__length__int32_t", -1, why, sizeof(why)), -ENOTSUP);
	/* No metadata: not V8. */
	CHECK_EQ_INT(v8_meta_from_syms(node20, 4, &(struct v8_meta){ 0 }, why, sizeof(why)),
		     -ENOENT);
}

/* This machine's node, read as bpfprof reads it (skipped where there is none). */
static void test_real_node(void)
{
	struct v8_meta m;
	char why[160] = "";
	int fd = open("/usr/bin/node", O_RDONLY | O_CLOEXEC), err;

	if (fd < 0) {
		fprintf(stderr, "  MISSING: /usr/bin/node; its metadata is not read\n");
		return;
	}
	err = v8_meta_read_fd(fd, &m, why, sizeof(why));
	close(fd);
	if (err == -ENOTSUP && m.major != 11) {
		fprintf(stderr, "  node's V8 %u.%u is not read: %s\n", m.major, m.minor, why);
		return;
	}
	CHECK_EQ_INT(err, 0);
	if (err)
		fprintf(stderr, "  %s\n", why);
	fprintf(stderr, "  /usr/bin/node: V8 %u.%u.%u.%u, blob %#llx-%#llx\n", m.major, m.minor,
		m.build, m.patch, (unsigned long long)m.blob_lo, (unsigned long long)m.blob_hi);
	if (m.version == V8_VERSION(11, 3, 244))
		check_node20(&m);
	CHECK(m.blob_lo && m.blob_hi > m.blob_lo);
	CHECK(v8_meta_frametype(&m, 1) != NULL);
}

static void test_not_elf(void)
{
	struct v8_meta m;
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);

	CHECK(fd >= 0);
	CHECK(v8_meta_read_fd(fd, &m, NULL, 0) < 0);
	close(fd);
}

int main(void)
{
	RUN(test_node20_layout);
	RUN(test_refused);
	RUN(test_real_node);
	RUN(test_not_elf);
	return test_summary();
}
