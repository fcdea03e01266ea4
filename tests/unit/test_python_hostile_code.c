// SPDX-License-Identifier: BSD-2-Clause
/*
 * Code objects of every CPython layout (2.7, 3.6-3.13) as a hostile
 * process may fake them in its memory, read through lang/python_procs.c
 * with a fake reader: pointers to nowhere, names of a gigabyte, line
 * tables of junk and past the size bpfprof reads, instruction words past
 * any table. Each gives a frame named wrongly or not at all, never a read
 * past what the process gave or more than the bounds allow.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lang/python_procs.h"
#include "test.h"

#define BASE	  0x100000ull
#define CODE_TYPE 0x7000ull
#define MEM_SIZE  (1u << 20)
#define TABLE_AT  0x10000u

struct fake_mem {
	uint8_t *bytes;
	size_t max_read; /* the longest read asked */
};

static ssize_t fake_read(void *ctx, uint32_t pid, uint64_t addr, void *buf, size_t len)
{
	struct fake_mem *m = ctx;

	if (len > m->max_read)
		m->max_read = len;
	if (pid != 42 || addr < BASE || addr - BASE > MEM_SIZE || len > MEM_SIZE - (addr - BASE))
		return -1;
	memcpy(buf, m->bytes + (addr - BASE), len);
	return (ssize_t)len;
}

static void put64(struct fake_mem *m, uint64_t at, uint64_t v)
{
	memcpy(m->bytes + at, &v, 8);
}

/* An ASCII name of the layout's kind at `at`. */
static void put_name(struct fake_mem *m, const struct python_code_layout *l, uint64_t at,
		     const char *s, int64_t len)
{
	uint32_t state = (1u << 2) | (1u << 5) | (1u << 6);

	if (l->str_kind == PY_STR_BYTES) {
		put64(m, at + l->bytes_size, (uint64_t)len);
		memcpy(m->bytes + at + l->bytes_data, s, strlen(s));
		return;
	}
	put64(m, at + l->str_length, (uint64_t)len);
	memcpy(m->bytes + at + l->str_state, &state, 4);
	memcpy(m->bytes + at + l->str_ascii_data, s, strlen(s));
}

static void fake_code(struct fake_mem *m, const struct python_code_layout *l, size_t table_len)
{
	uint16_t name_field = l->co_qualname ? l->co_qualname : l->co_name;
	unsigned seed = 40;

	memset(m->bytes, 0, MEM_SIZE);
	put64(m, l->ob_type, CODE_TYPE);
	memcpy(m->bytes + l->co_firstlineno, &(int32_t){ 7 }, 4);
	put64(m, name_field, BASE + 0x400);
	put64(m, l->co_filename, BASE + 0x800);
	put64(m, l->co_linetable, BASE + TABLE_AT);
	put_name(m, l, 0x400, "f", 1);
	put_name(m, l, 0x800, "/x.py", 5);
	put64(m, TABLE_AT + l->bytes_size, table_len);
	for (size_t i = 0; i < table_len && TABLE_AT + l->bytes_data + i < MEM_SIZE; i++)
		m->bytes[TABLE_AT + l->bytes_data + i] = (uint8_t)rand_r(&seed);
}

static uint64_t instr_of(const struct python_code_layout *l, uint32_t lasti)
{
	return l->instr_kind == PY_INSTR_POINTER ? BASE + l->co_code_adaptive + 2ull * lasti
						 : (uint64_t)lasti << 1;
}

static void every_layout(void)
{
	static const uint32_t versions[] = { 0x02070000, 0x03060000, 0x03070000,
					     0x03080000, 0x03090000, 0x030a0000,
					     0x030b0000, 0x030c0000, 0x030d0000 };
	struct fake_mem m = { .bytes = malloc(MEM_SIZE) };

	CHECK(m.bytes != NULL);
	for (size_t v = 0; m.bytes && v < sizeof(versions) / sizeof(versions[0]); v++) {
		const struct python_code_layout *l = python_code_layout_for(versions[v]);
		struct python_info info = { .version_hex = versions[v],
					    .code_type = CODE_TYPE,
					    .code = l };
		struct python_procs *p = python_procs_new();
		struct python_location loc;
		uint64_t code = BASE;

		python_procs_set_reader(p, fake_read, &m);
		CHECK_EQ_INT(python_procs_add(p, 42, 1000, &info, 0, NULL), 0);
		CHECK_EQ_INT(python_procs_version(p, 42), versions[v]);

		/* A table of 200 KiB of junk: read, indexed, any line, and fast lookups. */
		fake_code(&m, l, 200 * 1024);
		CHECK_EQ_INT(python_procs_resolve(p, 42, code, instr_of(l, 10), &loc), 0);
		CHECK_EQ_STR(loc.qualname, "f");
		CHECK_EQ_STR(loc.filename, "/x.py");
		for (uint32_t lasti = 0; lasti < 100000; lasti += 7)
			CHECK_EQ_INT(python_procs_resolve(p, 42, code, instr_of(l, lasti), &loc),
				     0);
		CHECK_EQ_INT(python_procs_resolve(p, 42, code, ~0ull, &loc), 0);
		python_procs_forget(p, 42);
		CHECK_EQ_INT(python_procs_add(p, 42, 1000, &info, 0, NULL), 0);

		/* A table past what is read (256 KiB), a name of a gigabyte, a file nowhere. */
		fake_code(&m, l, 64u << 20);
		put_name(&m, l, 0x400, "f", 1 << 30);
		put64(&m, l->co_filename, 0xdeadbeef);
		m.max_read = 0;
		CHECK_EQ_INT(python_procs_resolve(p, 42, code, instr_of(l, 3), &loc), 0);
		CHECK_EQ_STR(loc.qualname, "[unknown Python function]");
		CHECK_EQ_STR(loc.filename, "<unknown>");
		/* No table: an lnotab's first line (CPython's answer), none after. */
		CHECK_EQ_INT(loc.line, l->line_format <= PY_LINES_LNOTAB_36 ? 7 : 0);
		CHECK(m.max_read <= 4096);

		/* Not a code object; a code object nowhere. */
		put64(&m, l->ob_type, 0x1234);
		CHECK_EQ_INT(python_procs_resolve(p, 42, BASE + 0x40, 0, &loc), -ENOENT);
		CHECK_EQ_INT(python_procs_resolve(p, 42, BASE + MEM_SIZE - 8, 0, &loc), -EIO);
		python_procs_free(p);
	}
	free(m.bytes);
}

int main(void)
{
	RUN(every_layout);
	return test_summary();
}
