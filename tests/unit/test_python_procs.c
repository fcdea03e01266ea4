// SPDX-License-Identifier: BSD-2-Clause
/*
 * Naming Python frames (lang/python_procs.c), no root, no BPF:
 *   - line numbers from location tables, against CPython's own answer:
 *     Debian's python3 prints co_linetable and co_lines() for the code
 *     objects of a module (every code unit of every function compared),
 *     by walking the table and through its index;
 *   - a code object laid out in a fake process memory as 3.11 lays it out
 *     (ASCII and UCS-2 names, a relative file made absolute, its line),
 *     the cache, a fork, a forgotten process;
 *   - hostile memory: a wrong type, lengths past every bound, unreadable
 *     pointers, a table of junk, which give errors or no line, never a
 *     read past what was given.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lang/python_linetable.h"
#include "lang/python_procs.h"
#include "test.h"

#ifndef PYTHON_BINARY
#define PYTHON_BINARY "/usr/bin/python3"
#endif

/* A module with loops, branches, comprehensions, nested functions and long lines. */
static const char oracle_script[] =
	"import sys\n"
	"src = '''\n"
	"def a(n):\n"
	"    s = 0\n"
	"    for i in range(n):\n"
	"        if i % 3 == 0:\n"
	"            s += i\n"
	"        else:\n"
	"            s -= 1\n"
	"    return [x * 2 for x in range(s % 7)]\n"
	"\n"
	"def b(xs):\n"
	"    def inner(y):\n"
	"        return (y +\n"
	"                1)\n"
	"    try:\n"
	"        return sum(inner(x) for x in xs)\n"
	"    except ValueError:\n"
	"        return -1\n"
	"''' + '\\n' * 300 + 'def far():\\n    return 1\\n'\n"
	"code = compile(src, 'm.py', 'exec')\n"
	"todo = [code]\n"
	"while todo:\n"
	"    c = todo.pop()\n"
	"    todo += [k for k in c.co_consts if hasattr(k, 'co_lines')]\n"
	"    rows = ' '.join(f'{s}:{e}:{l if l is not None else 0}' for s, e, l in c.co_lines())\n"
	"    print(c.co_firstlineno, c.co_linetable.hex(), rows)\n";

static int hexval(char c)
{
	return c >= 'a' ? c - 'a' + 10 : c - '0';
}

static void lines_match_cpython(void)
{
	char path[] = "/tmp/bpfprof-pyoracle-XXXXXX";
	char cmd[256], *line = NULL;
	size_t cap = 0, codes = 0, units = 0, wrong = 0, index_wrong = 0;
	int fd = mkstemp(path);
	FILE *f;

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	CHECK(write(fd, oracle_script, sizeof(oracle_script) - 1) == sizeof(oracle_script) - 1);
	close(fd);
	snprintf(cmd, sizeof(cmd), "%s %s", PYTHON_BINARY, path);
	f = popen(cmd, "r");
	CHECK(f != NULL);
	while (f && getline(&line, &cap, f) > 0) {
		int first = atoi(strtok(line, " "));
		char *hex = strtok(NULL, " "), *row;
		uint8_t table[4096];
		size_t len = strlen(hex) / 2;
		struct py_line_index index;

		if (len > sizeof(table))
			continue;
		for (size_t i = 0; i < len; i++)
			table[i] = (uint8_t)(hexval(hex[2 * i]) << 4 | hexval(hex[2 * i + 1]));
		CHECK_EQ_INT(py_line_index_build(&index, table, len, first), 0);
		codes++;
		while ((row = strtok(NULL, " \n"))) {
			int start, end, want;

			if (sscanf(row, "%d:%d:%d", &start, &end, &want) != 3)
				continue;
			/* co_lines() counts bytes; the table counts 2-byte code units. */
			for (int b = start; b < end; b += 2) {
				units++;
				if (python_line_of(table, len, first, b / 2) != want) {
					if (!wrong)
						fprintf(stderr,
							"  first mismatch: unit %d want %d got "
							"%d\n",
							b / 2, want,
							python_line_of(table, len, first, b / 2));
					wrong++;
				}
				index_wrong += py_line_index_lookup(&index, b / 2) != want;
			}
		}
		py_line_index_free(&index);
	}
	free(line);
	if (f)
		CHECK_EQ_INT(pclose(f), 0);
	unlink(path);
	fprintf(stderr, "  %zu code objects, %zu code units, %zu lines differ from CPython's\n",
		codes, units, wrong);
	CHECK(codes >= 6 && units > 100);
	CHECK_EQ_INT(wrong, 0);
	CHECK_EQ_INT(index_wrong, 0);
}

/* A fake process: one pid, memory at [base, base + size). */
struct fake_mem {
	uint32_t pid;
	uint64_t base;
	uint8_t bytes[8192];
	unsigned reads;
};

static ssize_t fake_read(void *ctx, uint32_t pid, uint64_t addr, void *buf, size_t len)
{
	struct fake_mem *m = ctx;

	m->reads++;
	if (pid != m->pid || addr < m->base || addr - m->base > sizeof(m->bytes) ||
	    len > sizeof(m->bytes) - (addr - m->base))
		return -1;
	memcpy(buf, m->bytes + (addr - m->base), len);
	return (ssize_t)len;
}

static void put64(struct fake_mem *m, uint64_t at, uint64_t v)
{
	memcpy(m->bytes + at, &v, 8);
}

static void put32(struct fake_mem *m, uint64_t at, uint32_t v)
{
	memcpy(m->bytes + at, &v, 4);
}

/* A compact str at offset `at`: ASCII (kind 1) or UCS-2 (kind 2). */
static void put_str(struct fake_mem *m, const struct python_code_layout *l, uint64_t at,
		    const char *ascii, const uint16_t *ucs2, size_t len)
{
	put64(m, at + l->str_length, len);
	if (ascii) {
		put32(m, at + l->str_state, (1u << 2) | (1u << 5) | (1u << 6));
		memcpy(m->bytes + at + l->str_ascii_data, ascii, len);
	} else {
		put32(m, at + l->str_state, (2u << 2) | (1u << 5));
		memcpy(m->bytes + at + l->str_compact_data, ucs2, 2 * len);
	}
}

#define CODE_TYPE 0x7000
#define BASE	  0x10000

static void fake_code(struct fake_mem *m, const struct python_code_layout *l)
{
	static const uint16_t name[] = { 'C', 0x00e9, '.', 'r', 'u', 'n' }; /* "Cé.run" */
	/* 4 units on line 10 (+0), then 3 on line 12 (+2), one-line forms. */
	static const uint8_t table[] = { 0x80 | (10 << 3) | 3, 0, 0, 0x80 | (12 << 3) | 2, 0, 0 };

	memset(m, 0, sizeof(*m));
	m->pid = 42;
	m->base = BASE;
	put64(m, 0x000 + l->ob_type, CODE_TYPE);
	put32(m, 0x000 + l->co_firstlineno, 10);
	put64(m, 0x000 + l->co_qualname, BASE + 0x400);
	put64(m, 0x000 + l->co_filename, BASE + 0x500);
	put64(m, 0x000 + l->co_linetable, BASE + 0x600);
	put_str(m, l, 0x400, NULL, name, 6);
	put_str(m, l, 0x500, "lib/app.py", NULL, 10);
	put64(m, 0x600 + l->bytes_size, sizeof(table));
	memcpy(m->bytes + 0x600 + l->bytes_data, table, sizeof(table));
}

static void code_objects_are_named(void)
{
	struct python_info info = { .code_type = CODE_TYPE };
	struct python_procs *p = python_procs_new();
	struct python_location loc;
	static struct fake_mem m;
	const struct python_code_layout *l;
	uint64_t code = BASE, first_unit;
	unsigned reads;

	CHECK(python_layout_for(0x030b02f0, &info.frames, &l));
	info.code = l;
	fake_code(&m, l);
	python_procs_set_reader(p, fake_read, &m);
	first_unit = code + l->co_code_adaptive;
	CHECK_EQ_INT(python_procs_resolve(p, 42, code, first_unit, &loc), -ENOENT); /* not added */
	CHECK_EQ_INT(python_procs_add(p, 42, 1000, &info, 0, "/srv"), 0);
	CHECK_EQ_INT(python_procs_resolve(p, 42, code, first_unit + 2 * 5, &loc), 0);
	CHECK_EQ_STR(loc.qualname, "C\xc3\xa9.run");
	CHECK_EQ_STR(loc.filename, "/srv/lib/app.py");
	CHECK_EQ_INT(loc.first_line, 10);
	CHECK_EQ_INT(loc.line, 12);
	/* Cached: the second frame of the same code reads nothing. */
	reads = m.reads;
	CHECK_EQ_INT(python_procs_resolve(p, 42, code, first_unit, &loc), 0);
	CHECK_EQ_INT(loc.line, 10);
	CHECK_EQ_INT(m.reads, reads);
	/* A new frame's instruction pointer is one unit before the first: line of unit 0. */
	CHECK_EQ_INT(python_procs_resolve(p, 42, code, first_unit - 2, &loc), 0);
	CHECK_EQ_INT(loc.line, 10);
	/* Past the table: no line. */
	CHECK_EQ_INT(python_procs_resolve(p, 42, code, first_unit + 2 * 100, &loc), 0);
	CHECK_EQ_INT(loc.line, 0);

	/* Read again (it mapped a C extension): the same interpreter keeps its cache. */
	CHECK_EQ_INT(python_procs_add(p, 42, 1000, &info, 0, "/srv"), 0);
	reads = m.reads;
	CHECK_EQ_INT(python_procs_resolve(p, 42, code, first_unit, &loc), 0);
	CHECK_EQ_INT(m.reads, reads);

	/* A fork: the child's code objects are its own, read from its memory. */
	CHECK_EQ_INT(python_procs_fork(p, 42, 43), 0);
	CHECK(python_procs_known(p, 43));
	CHECK_EQ_INT(python_procs_resolve(p, 43, code, first_unit, &loc),
		     -EIO); /* fake has pid 42 only */

	/* Forgotten: nothing is known of it any more. */
	python_procs_forget(p, 42);
	CHECK(!python_procs_known(p, 42));
	CHECK_EQ_INT(python_procs_resolve(p, 42, code, first_unit, &loc), -ENOENT);
	/* Added again (pid reuse): its code objects are read anew into the freed slot. */
	CHECK_EQ_INT(python_procs_add(p, 42, 1000, &info, 0, NULL), 0);
	reads = m.reads;
	CHECK_EQ_INT(python_procs_resolve(p, 42, code, first_unit, &loc), 0);
	CHECK(m.reads > reads);
	CHECK_EQ_STR(loc.filename, "lib/app.py"); /* no cwd now: left relative */
	python_procs_free(p);
}

static void hostile_memory(void)
{
	struct python_info info = { .code_type = CODE_TYPE };
	struct python_procs *p = python_procs_new();
	struct python_location loc;
	static struct fake_mem m;
	const struct python_code_layout *l;

	python_layout_for(0x030b02f0, &info.frames, &l);
	info.code = l;
	python_procs_set_reader(p, fake_read, &m);
	fake_code(&m, l);
	CHECK_EQ_INT(python_procs_add(p, 42, 1000, &info, 0, NULL), 0);

	/* Not a code object. */
	put64(&m, l->ob_type, 0x1234);
	CHECK_EQ_INT(python_procs_resolve(p, 42, BASE, BASE, &loc), -ENOENT);
	/* Unreadable: the code object outside the process's memory. */
	CHECK_EQ_INT(python_procs_resolve(p, 42, BASE + sizeof(m.bytes) - 8, BASE, &loc), -EIO);

	/* Names and a table with lengths past every bound, or pointing nowhere: no names, no line.
	 */
	fake_code(&m, l);
	put64(&m, 0x400 + l->str_length, 1u << 30);
	put64(&m, l->co_filename, 0xdeadbeef);
	put64(&m, 0x600 + l->bytes_size, (uint64_t)-5);
	CHECK_EQ_INT(python_procs_resolve(p, 42, BASE, BASE + l->co_code_adaptive, &loc), 0);
	CHECK_EQ_STR(loc.qualname, "[unknown Python function]");
	CHECK_EQ_STR(loc.filename, "<unknown>");
	CHECK_EQ_INT(loc.line, 0);
	python_procs_free(p);

	/*
	 * Junk tables end without reading past their end, and the index answers
	 * as the walk does for every unit (mostly entries' first bytes: long runs).
	 */
	{
		uint8_t junk[600];
		unsigned seed = 7, differ = 0;

		for (int round = 0; round < 2000; round++) {
			size_t len = (size_t)(rand_r(&seed) % sizeof(junk));
			struct py_line_index index;

			for (size_t i = 0; i < sizeof(junk); i++)
				junk[i] = (uint8_t)(rand_r(&seed) % 64 ? 0x80 | rand_r(&seed)
								       : rand_r(&seed));
			(void)python_line_of(junk, len, 1, rand_r(&seed) % 100);
			CHECK_EQ_INT(py_line_index_build(&index, junk, len, 1), 0);
			for (int unit = -2; unit < (int)len * 8 + 10; unit++)
				differ += python_line_of(junk, len, 1, unit) !=
					  py_line_index_lookup(&index, unit);
			py_line_index_free(&index);
		}
		CHECK_EQ_INT(differ, 0);
		CHECK_EQ_INT(python_line_of(junk, 0, 5, 0), 0);
	}
	/* Line deltas that would overflow an int (UBSan found it): no line, no undefined behaviour. */
	{
		static const uint8_t big[] = { 0xea, 0xea, 0xff, 0xff, 0xff, 0xff, 0x3f, 0xeb, 0xea, 0x00, 0x00, 0x5f, 0x0a };

		for (int unit = 0; unit < 40; unit++)
			(void)python_line_of(big, sizeof(big), 0x7ffffff0, unit);
	}
}

int main(void)
{
	RUN(lines_match_cpython);
	RUN(code_objects_are_named);
	RUN(hostile_memory);
	return test_summary();
}
