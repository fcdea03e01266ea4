/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What bpfprof must know of a PHP binary (the php CLI, php-fpm, or the
 * embedding libphp.so) to show PHP frames, without its debug symbols: from
 * its dynamic symbol table (the engine's API is exported for extensions),
 * where executor_globals and the VM loop execute_ex are; from the
 * "X-Powered-By: PHP/x.y.z" header text it sends, which version it is;
 * and for that version, where the fields the walk and the names read sit.
 *
 * A thread-safe (ZTS) build keeps executor_globals per thread (TSRM):
 * it exports executor_globals_offset instead, and is reported as such. Layouts are per
 * minor version: 8.2 (Debian 12's php8.2, from its own headers, checked by
 * tests/unit/test_php_layout.c where php8.2-dev is installed); another
 * version is reported once and shows its C frames only.
 */
#ifndef BPFPROF_LANG_PHP_LAYOUT_H
#define BPFPROF_LANG_PHP_LAYOUT_H

#include <libelf.h>
#include <stdbool.h>
#include <stdint.h>

#include "../../bpf/bpfprof_abi.h"

/* Where a zend_function's naming fields are (userspace reads them, not BPF). */
struct php_name_layout {
	uint16_t func_type;	   /* zend_function.type (u8) */
	uint16_t func_name;	   /* common.function_name: zend_string * (NULL: the script) */
	uint16_t func_scope;	   /* common.scope: zend_class_entry * */
	uint16_t op_filename;	   /* zend_op_array.filename: zend_string * */
	uint16_t op_line_start;	   /* zend_op_array.line_start: u32 */
	uint16_t class_name;	   /* zend_class_entry.name: zend_string * */
	uint16_t str_len, str_val; /* zend_string: len (size_t), val[] */
	uint16_t func_read;	   /* bytes of a zend_function read to get these */
};

struct php_info {
	uint32_t version; /* major << 16 | minor << 8 | release: 0x080224 is 8.2.36 */
	/* ELF virtual addresses in the binary. */
	uint64_t eg, eval_start, eval_size;
	/*
	 * Where the VM's handlers start: the engine's code below execute_ex
	 * up to the exported function before zend_execute.c's first
	 * (zend_vm_stack_init), execute_ex itself when that is not found.
	 */
	uint64_t vm_start;
	/* Addresses in a process: ELF address + (mapping start - mapping offset - exec_bias). */
	int64_t exec_bias;		     /* p_vaddr - p_offset of the executable segment */
	struct php_layout frames;	     /* for BPF */
	const struct php_name_layout *names; /* NULL: no layout for this version */
	bool zts; /* a thread-safe build (-ENOTSUP): its globals are per thread */
};

/*
 * Whether `elf` is a PHP binary, and its info: 1 (with a layout), 0 (not
 * PHP), -ENOTSUP (PHP, no layout for its version, or a ZTS build:
 * info->version and info->zts say which).
 */
int php_info_read(Elf *elf, struct php_info *info);

/* The layouts for a version's minor version; false when bpfprof has none. */
bool php_layout_for(uint32_t version, struct php_layout *frames,
		    const struct php_name_layout **names);

/* "x.y.z" from the text after "PHP/" (at most len bytes): the version, 0 when none. */
uint32_t php_version_parse(const char *s, size_t len);

/* "8.2" from a version, into buf. */
const char *php_version_name(uint32_t version, char buf[16]);

#endif
