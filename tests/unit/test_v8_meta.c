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
#include "v8_node20.h"

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
	if (m.version == V8_VERSION(11, 3, 244)) {
		check_node20(&m);
		/* interpreter::Bytecodes::kBytecodeSizes: 3 x 198 bytes; op 11: 2 bytes, 3 wide, 5
		 * extra-wide. */
		CHECK_EQ_INT(m.nbytecodes, 198);
		CHECK_EQ_INT(m.bytecode_sizes[0][11], 2);
		CHECK_EQ_INT(m.bytecode_sizes[1][11], 3);
		CHECK_EQ_INT(m.bytecode_sizes[2][11], 5);
		CHECK_EQ_INT(m.code_bytecode, 16);
	}
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
