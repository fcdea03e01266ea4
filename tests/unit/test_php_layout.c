// SPDX-License-Identifier: BSD-2-Clause
/*
 * PHP as bpfprof finds it (lang/php_layout.c): on Debian's own
 * /usr/bin/php8.2 (stripped: only its dynamic symbols), the version and the
 * addresses the walk needs; and bpfprof's layout of that version against
 * offsetof() in the engine's own headers (php8.2-dev), field by field.
 */
#include "php.h"
#include "zend_compile.h"
#include "zend_globals.h"

#include <fcntl.h>
#include <gelf.h>
#include <stddef.h>
#include <unistd.h>

#include "lang/php_layout.h"
#include "test.h"

#ifndef PHP_BINARY
#define PHP_BINARY "/usr/bin/php8.2"
#endif

#define HEADERS_VERSION ((uint32_t)PHP_MAJOR_VERSION << 16 | (uint32_t)PHP_MINOR_VERSION << 8)

static void debian_php_is_found(void)
{
	struct php_info info;
	int fd = open(PHP_BINARY, O_RDONLY | O_CLOEXEC);
	Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;

	CHECK(elf != NULL);
	if (!elf)
		return;
	CHECK_EQ_INT(php_info_read(elf, &info), 1);
	/* The headers this test is built with are the binary's own version. */
	CHECK_EQ_INT(info.version >> 8, HEADERS_VERSION >> 8);
	CHECK(info.eg && info.eval_start && info.eval_size > 1000 && info.names);
	/* The handlers' code below execute_ex: zend_execute.c's, tens of KiB at least. */
	CHECK(info.vm_start < info.eval_start && info.eval_start - info.vm_start > 65536);
	elf_end(elf);
	close(fd);
}

static void layout_matches_headers(void)
{
	struct php_layout f;
	const struct php_name_layout *n;

	CHECK(php_layout_for(HEADERS_VERSION, &f, &n));
	if (!n)
		return;
	CHECK_EQ_INT(f.eg_current_execute_data,
		     offsetof(zend_executor_globals, current_execute_data));
	CHECK_EQ_INT(f.ex_opline, offsetof(zend_execute_data, opline));
	CHECK_EQ_INT(f.ex_func, offsetof(zend_execute_data, func));
	CHECK_EQ_INT(f.ex_call_info, offsetof(zend_execute_data, This.u1.type_info));
	CHECK_EQ_INT(f.ex_prev, offsetof(zend_execute_data, prev_execute_data));
	CHECK_EQ_INT(f.func_type, offsetof(zend_function, type));
	CHECK_EQ_INT(f.op_lineno, offsetof(zend_op, lineno));
	CHECK_EQ_INT(f.call_top, ZEND_CALL_TOP);
	CHECK_EQ_INT(n->func_type, offsetof(zend_function, type));
	CHECK_EQ_INT(n->func_name, offsetof(zend_function, common.function_name));
	CHECK_EQ_INT(n->func_scope, offsetof(zend_function, common.scope));
	CHECK_EQ_INT(n->op_filename, offsetof(zend_op_array, filename));
	CHECK_EQ_INT(n->op_line_start, offsetof(zend_op_array, line_start));
	CHECK_EQ_INT(n->class_name, offsetof(zend_class_entry, name));
	CHECK_EQ_INT(n->str_len, offsetof(zend_string, len));
	CHECK_EQ_INT(n->str_val, offsetof(zend_string, val));
	/* Every field names_*.func_read says it holds is in it. */
	CHECK(n->func_read >= offsetof(zend_op_array, line_start) + 4);
	CHECK(n->func_read <= sizeof(zend_op_array));
	/* BPF reads these in one 64-byte window of a frame. */
	CHECK(offsetof(zend_execute_data, prev_execute_data) + 8 <= 64);
	CHECK_EQ_INT(ZEND_INTERNAL_FUNCTION, 1);
	/* A version without a layout says so. */
	CHECK(!php_layout_for(0x070400, &f, &n));
}

int main(void)
{
	elf_version(EV_CURRENT);
	RUN(debian_php_is_found);
	RUN(layout_matches_headers);
	return test_summary();
}
