// SPDX-License-Identifier: BSD-2-Clause
/* See php_names.h. */
#include "php_names.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "../util/unaligned.h"

/* zend_function.type */
#define PHP_INTERNAL_FUNCTION 1
#define PHP_USER_FUNCTION     2
#define PHP_EVAL_CODE	      4

/* A zend_string's first bytes: at most this much of its header is read. */
#define PHP_STR_HEADER 32

/*
 * The text of the zend_string at `str` into buf (size bytes, NUL ended),
 * cut to fit; control bytes (a newline in a name would forge a line of a
 * report) become '?'. 0 or an error.
 */
static int read_string(const struct php_name_layout *l, php_read_fn read, void *ctx, uint64_t str,
		       char *buf, size_t size)
{
	uint8_t head[PHP_STR_HEADER];
	uint64_t len;
	int err;

	buf[0] = '\0';
	if (!str || (size_t)l->str_len + 8 > sizeof(head) || l->str_val > sizeof(head))
		return -EINVAL;
	if ((err = read(ctx, str, head, l->str_val)))
		return err;
	len = get_u64(head + l->str_len);
	if (len > size - 1)
		len = size - 1;
	if (len && (err = read(ctx, str + l->str_val, buf, (size_t)len)))
		return err;
	buf[len] = '\0';
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)buf[i] < 0x20 || buf[i] == 0x7f)
			buf[i] = '?';
	return 0;
}

/*
 * A read that failed for now (the reader's deadline, the read budget, no
 * memory), not for what the process holds: the function is asked again
 * later rather than named without the part.
 */
static bool transient(int err)
{
	return err == -EBUSY || err == -ETIMEDOUT || err == -ENOMEM || err == -EAGAIN;
}

int php_name_function(const struct php_name_layout *l, php_read_fn read, void *ctx, uint64_t func,
		      struct php_function *out)
{
	uint8_t fn[256];
	/* Each half of "Class::method" cut to fit the whole. */
	char name[PHP_NAME_MAX / 2 - 1], cls[PHP_NAME_MAX / 2 - 1];
	uint64_t scope, class_name;
	uint8_t type;
	int err;

	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "[unknown PHP function]");
	if (l->func_read > sizeof(fn) || l->func_type >= l->func_read ||
	    l->func_name + 8 > l->func_read || l->func_scope + 8 > l->func_read ||
	    l->op_filename + 8 > l->func_read || l->op_line_start + 4 > l->func_read)
		return -EINVAL;
	if ((err = read(ctx, func, fn, l->func_read)))
		return err;
	type = fn[l->func_type];
	if (type != PHP_INTERNAL_FUNCTION && type != PHP_USER_FUNCTION && type != PHP_EVAL_CODE)
		return -EINVAL;
	out->internal = type == PHP_INTERNAL_FUNCTION;
	/* A user function's name, or none: the script's top level (or eval'd code's). */
	err = read_string(l, read, ctx, get_u64(fn + l->func_name), name, sizeof(name));
	if (transient(err))
		return err;
	if (err)
		snprintf(name, sizeof(name), "%s",
			 out->internal		 ? "[unknown internal function]"
			 : type == PHP_EVAL_CODE ? "{eval}"
						 : "{main}");
	cls[0] = '\0';
	scope = get_u64(fn + l->func_scope);
	if (scope) {
		err = read(ctx, scope + l->class_name, &class_name, sizeof(class_name));
		if (!err)
			err = read_string(l, read, ctx, class_name, cls, sizeof(cls));
		if (transient(err))
			return err;
	}
	snprintf(out->name, sizeof(out->name), "%s%s%s", cls, cls[0] ? "::" : "", name);
	if (!out->internal) {
		err = read_string(l, read, ctx, get_u64(fn + l->op_filename), out->file,
				  sizeof(out->file));
		if (transient(err))
			return err;
		if (err)
			snprintf(out->file, sizeof(out->file), "<unknown>");
		out->line_start = (int)(get_u32(fn + l->op_line_start) & 0x7fffffff);
	}
	return 0;
}
