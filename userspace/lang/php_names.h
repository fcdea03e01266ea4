/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A PHP function named from its zend_function in the process's memory:
 * "Class::method", "function", or "{main}" for a script's top level, its
 * file and first line; an internal (C) function by its name alone. Every
 * pointer and length is the process's own, so hostile: each read is one
 * call of `read` with a bound length, names are cut at PHP_NAME_MAX bytes
 * and their control bytes replaced, and a failed read is an unnamed frame.
 */
#ifndef BPFPROF_LANG_PHP_NAMES_H
#define BPFPROF_LANG_PHP_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "php_layout.h"

#define PHP_NAME_MAX   160 /* a function's name with its class, NUL included */
#define PHP_FILE_MAX   256 /* a script's path, NUL included */
/* The most reads naming one function takes (the function, its name, class and file). */
#define PHP_NAME_READS 8

/* Reads `len` bytes at `addr` of the process: 0, or a negative errno. */
typedef int (*php_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);

struct php_function {
	char name[PHP_NAME_MAX];
	char file[PHP_FILE_MAX]; /* "" for an internal function */
	int line_start;		 /* 0 when unknown */
	bool internal;
};

/*
 * Names the zend_function at `func`: 0, or a negative errno: a read that
 * failed for now (-EBUSY, -ETIMEDOUT, -ENOMEM: ask again later), or the
 * function itself unreadable or no function (out then says so).
 */
int php_name_function(const struct php_name_layout *l, php_read_fn read, void *ctx, uint64_t func,
		      struct php_function *out);

#endif
