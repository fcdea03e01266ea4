// SPDX-License-Identifier: BSD-2-Clause
/*
 * PHP functions named from a process's memory (lang/php_names.c) and kept
 * per process (lang/php_procs.c), on a made-up memory in PHP 8.2's layout:
 * "Class::method", a function, a script's top level, an internal function;
 * what a hostile process can put there (a name of gigabytes, newlines, a
 * type that is no function's, pointers to nothing) names a frame wrongly
 * at worst; a function is read once; a process of ever new functions
 * stops at its count.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lang/php_layout.h"
#include "lang/php_names.h"
#include "lang/php_procs.h"
#include "test.h"

#define FUNCS	    0x200000ull /* any 1 KiB slot here is the template function */
#define FUNCS_END   0x2000000ull
#define CLASS	    0x3000000ull
#define STR_NAME    0x4000000ull
#define STR_FILE    0x4001000ull
#define STR_CLASS   0x4002000ull
#define STR_HUGE    0x4003000ull
#define STR_CTRL    0x4004000ull
#define STR_NOWHERE 0x9000000ull

struct memory {
	uint8_t func[256];
	uint8_t cls[64];
	uint8_t strs[5][64];
	unsigned reads;
};

static void put_u64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

static void put_str(uint8_t *p, const char *s, uint64_t len)
{
	put_u64(p + 16, len);
	memcpy(p + 24, s, strlen(s) + 1);
}

/* A user function Nest::inner of /tmp/x.php, from line 7. */
static void memory_init(struct memory *m, const struct php_name_layout *l, uint8_t type,
			uint64_t name, uint64_t scope)
{
	uint32_t line = 7;

	memset(m, 0, sizeof(*m));
	m->func[l->func_type] = type;
	put_u64(m->func + l->func_name, name);
	put_u64(m->func + l->func_scope, scope);
	put_u64(m->func + l->op_filename, STR_FILE);
	memcpy(m->func + l->op_line_start, &line, 4);
	put_u64(m->cls + l->class_name, STR_CLASS);
	put_str(m->strs[0], "inner", 5);
	put_str(m->strs[1], "/tmp/x.php", 10);
	put_str(m->strs[2], "Nest", 4);
	/* Says 4 GiB, holds 30 bytes: the read is cut to the name's room. */
	put_str(m->strs[3], "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", 1ull << 32);
	put_str(m->strs[4], "evil\nline\x1b[2J", 13);
}

static int region(const struct memory *m, uint64_t addr, const uint8_t **base, size_t *size)
{
	static const uint64_t strs[] = { STR_NAME, STR_FILE, STR_CLASS, STR_HUGE, STR_CTRL };

	if (addr >= FUNCS && addr < FUNCS_END) {
		*base = m->func;
		*size = sizeof(m->func);
		return (int)((addr - FUNCS) % 1024);
	}
	if (addr >= CLASS && addr < CLASS + sizeof(m->cls)) {
		*base = m->cls;
		*size = sizeof(m->cls);
		return (int)(addr - CLASS);
	}
	for (int i = 0; i < 5; i++)
		if (addr >= strs[i] && addr < strs[i] + 64) {
			*base = m->strs[i];
			*size = 64;
			return (int)(addr - strs[i]);
		}
	return -1;
}

static int mem_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct memory *m = ctx;
	const uint8_t *base;
	size_t size;
	int off = region(m, addr, &base, &size);

	m->reads++;
	if (off < 0 || (size_t)off + len > size)
		return -EFAULT;
	memcpy(buf, base + off, len);
	return 0;
}

static ssize_t proc_mem_read(void *ctx, uint32_t pid, uint64_t addr, void *buf, size_t len)
{
	(void)pid;
	return mem_read(ctx, addr, buf, len) ? -1 : (ssize_t)len;
}

static const struct php_name_layout *layout(void)
{
	struct php_layout f;
	const struct php_name_layout *n = NULL;

	php_layout_for(0x080224, &f, &n);
	return n;
}

static void names(void)
{
	const struct php_name_layout *l = layout();
	struct php_function fn;
	struct memory m;

	CHECK(l != NULL);
	if (!l)
		return;
	memory_init(&m, l, 2, STR_NAME, CLASS);
	CHECK_EQ_INT(php_name_function(l, mem_read, &m, FUNCS, &fn), 0);
	CHECK_EQ_STR(fn.name, "Nest::inner");
	CHECK_EQ_STR(fn.file, "/tmp/x.php");
	CHECK_EQ_INT(fn.line_start, 7);
	CHECK(!fn.internal);
	CHECK(m.reads <= PHP_NAME_READS);

	memory_init(&m, l, 2, STR_NAME, 0);
	CHECK_EQ_INT(php_name_function(l, mem_read, &m, FUNCS, &fn), 0);
	CHECK_EQ_STR(fn.name, "inner");

	/* A script's top level has no name. */
	memory_init(&m, l, 2, 0, 0);
	CHECK_EQ_INT(php_name_function(l, mem_read, &m, FUNCS, &fn), 0);
	CHECK_EQ_STR(fn.name, "{main}");

	/* An internal function: its name, no file. */
	memory_init(&m, l, 1, STR_NAME, 0);
	CHECK_EQ_INT(php_name_function(l, mem_read, &m, FUNCS, &fn), 0);
	CHECK_EQ_STR(fn.name, "inner");
	CHECK_EQ_STR(fn.file, "");
	CHECK(fn.internal);
}

static void hostile_names(void)
{
	const struct php_name_layout *l = layout();
	struct php_function fn;
	struct memory m;

	if (!l)
		return;
	/* A name of 4 GiB: cut (its bytes past the 30 there are not there: the read fails). */
	memory_init(&m, l, 2, STR_HUGE, 0);
	CHECK_EQ_INT(php_name_function(l, mem_read, &m, FUNCS, &fn), 0);
	CHECK_EQ_STR(fn.name, "{main}");
	/* Control bytes: no line of a report forged. */
	memory_init(&m, l, 2, STR_CTRL, 0);
	CHECK_EQ_INT(php_name_function(l, mem_read, &m, FUNCS, &fn), 0);
	CHECK_EQ_STR(fn.name, "evil?line?[2J");
	/* A type no function has: not a function. */
	memory_init(&m, l, 9, STR_NAME, 0);
	CHECK(php_name_function(l, mem_read, &m, FUNCS, &fn) < 0);
	CHECK_EQ_STR(fn.name, "[unknown PHP function]");
	/* Pointers to nothing: the function unread, or named without its class. */
	CHECK(php_name_function(l, mem_read, &m, STR_NOWHERE, &fn) < 0);
	memory_init(&m, l, 2, STR_NAME, STR_NOWHERE);
	CHECK_EQ_INT(php_name_function(l, mem_read, &m, FUNCS, &fn), 0);
	CHECK_EQ_STR(fn.name, "inner");
}

static void procs(void)
{
	const struct php_name_layout *l = layout();
	struct php_procs *p = php_procs_new();
	struct php_info info = { .version = 0x080224, .names = l };
	struct php_location loc;
	struct memory m;
	struct php_procs_stats st;
	unsigned reads;
	int over = 0;

	CHECK(p != NULL);
	if (!p || !l)
		return;
	memory_init(&m, l, 2, STR_NAME, CLASS);
	php_procs_set_reader(p, proc_mem_read, &m);
	CHECK_EQ_INT(php_procs_resolve(p, 42, FUNCS, 11 << 1, &loc), -ENOENT);
	CHECK_EQ_INT(php_procs_add(p, 42, 1000, &info), 0);
	CHECK_EQ_INT(php_procs_resolve(p, 42, FUNCS, (11 << 1) | 1, &loc), 0);
	CHECK_EQ_STR(loc.name, "Nest::inner");
	CHECK_EQ_STR(loc.file, "/tmp/x.php");
	CHECK_EQ_INT(loc.line, 11);
	/* Read once: the next frame of it reads nothing. */
	reads = m.reads;
	CHECK_EQ_INT(php_procs_resolve(p, 42, FUNCS, 12 << 1, &loc), 0);
	CHECK_EQ_INT(loc.line, 12);
	CHECK_EQ_INT(m.reads, reads);
	/* A forked child has its parent's PHP. */
	CHECK_EQ_INT(php_procs_fork(p, 42, 43), 0);
	CHECK(php_procs_known(p, 43));
	CHECK_EQ_INT(php_procs_version(p, 43), 0x080224);
	/*
	 * Ever new functions: read within the user's read budget (the rest
	 * named as unread, asked again later), kept up to the count. A budget
	 * of 256 KiB that refills at 1 KiB/s: spent within the loop however
	 * long a busy machine takes to run it (at the recording's 4 MiB/s, a
	 * loop slowed past 3 s refilled as fast as it read, and nothing was
	 * refused).
	 */
	CHECK_EQ_INT(php_procs_set_read_limits(p,
					       &(struct read_budget_limits){
						       .user_per_s = 1024,
						       .user_burst = 256 << 10,
						       .global_per_s = 1024,
						       .global_burst = 256 << 10,
						       .min_cost = 512,
					       }),
		     0);
	for (uint64_t i = 0; i < 2 * PHP_PROC_MAX_FUNCS; i++) {
		CHECK_EQ_INT(php_procs_resolve(p, 43, FUNCS + 1024 * i, 2, &loc), 0);
		over += strcmp(loc.name, "Nest::inner") != 0;
		if (strcmp(loc.name, "Nest::inner") && strcmp(loc.name, PHP_UNREAD) &&
		    strcmp(loc.name, PHP_OVER_BUDGET))
			CHECK_EQ_STR(loc.name, PHP_UNREAD);
	}
	php_procs_get_stats(p, &st);
	CHECK(over > 0);
	CHECK(st.reads_refused > 0);
	CHECK(st.functions_read <= PHP_PROC_MAX_FUNCS + 1);
	php_procs_forget(p, 42);
	CHECK(!php_procs_known(p, 42));
	CHECK(php_procs_known(p, 43));
	php_procs_free(p);
}

int main(void)
{
	RUN(names);
	RUN(hostile_names);
	RUN(procs);
	return test_summary();
}
