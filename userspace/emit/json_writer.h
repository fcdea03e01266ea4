/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A streaming JSON writer: values go straight into a buffered sink that is
 * either a plain file descriptor or a gzip stream, so writing a profile with
 * millions of samples never builds a tree of them in memory.
 *
 * Errors are sticky, like ferror() on a stdio stream: the emitter writes
 * long runs of numbers without checking each call, and the first error
 * (an I/O failure, or misuse such as a value in an object without a key) is
 * kept and returned by jw_error() and jw_close().
 *
 * Output is compact, always valid UTF-8, with control characters escaped and
 * invalid UTF-8 bytes replaced by U+FFFD; non-finite doubles become null.
 */
#ifndef BPFPROF_JSON_WRITER_H
#define BPFPROF_JSON_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <zlib.h>

/* Containers nest at most this deep; the profile needs about 6. */
#define JW_MAX_DEPTH 32

struct json_writer {
	int fd;
	bool gzip;
	int err;	/* first error: 0 or -errno */
	bool after_key; /* a key was written; its value comes next */
	unsigned depth;
	struct {
		char kind; /* '{' or '[' */
		bool has_items;
	} stack[JW_MAX_DEPTH];
	unsigned char *buf; /* uncompressed bytes not yet handed to the sink */
	size_t len;
	unsigned char *zout; /* deflate output, gzip only */
	z_stream z;
	bool z_ready;
};

/* Start writing to `fd` (not closed by the writer). 0 or -errno. */
int jw_open(struct json_writer *w, int fd, bool gzip);
/*
 * Flush everything (and finish the gzip stream) and release the writer's
 * memory. Returns the first error of the whole write, 0 on success. An
 * unfinished document (open containers) is reported as -EINVAL.
 */
int jw_close(struct json_writer *w);

static inline int jw_error(const struct json_writer *w)
{
	return w->err;
}

void jw_begin_object(struct json_writer *w);
void jw_end_object(struct json_writer *w);
void jw_begin_array(struct json_writer *w);
void jw_end_array(struct json_writer *w);
/* An object key; the next call must write its value. */
void jw_key(struct json_writer *w, const char *key);

void jw_null(struct json_writer *w);
void jw_bool(struct json_writer *w, bool v);
void jw_int(struct json_writer *w, int64_t v);
void jw_uint(struct json_writer *w, uint64_t v);
/* Shortest text that reads back as the same double; NaN and infinities become null. */
void jw_double(struct json_writer *w, double v);
/*
 * The exact decimal value `scaled / 10^decimals` (decimals <= 18), without
 * trailing zeros: nanoseconds written as milliseconds with
 * jw_decimal(w, ns, 6) lose nothing and need no floating point.
 */
void jw_decimal(struct json_writer *w, int64_t scaled, unsigned decimals);
/* A string value; NULL writes null. */
void jw_string(struct json_writer *w, const char *s);
/* `n` bytes that may contain NUL (written as \u0000). */
void jw_string_len(struct json_writer *w, const char *s, size_t n);

/* Key + value shorthands for object-shaped parts: jw_kv_T(w, key, v) is jw_key, then jw_T. */
#define JW_KV(suffix, type)                                                               \
	static inline void jw_kv_##suffix(struct json_writer *w, const char *key, type v) \
	{                                                                                 \
		jw_key(w, key);                                                           \
		jw_##suffix(w, v);                                                        \
	}
JW_KV(string, const char *)
JW_KV(int, int64_t)
JW_KV(uint, uint64_t)
JW_KV(double, double)
JW_KV(bool, bool)
#undef JW_KV

/* "key": [ — a column of a table, or any array under a key. */
static inline void jw_key_array(struct json_writer *w, const char *key)
{
	jw_key(w, key);
	jw_begin_array(w);
}

/* "key": { "length": n, — a table of the profile format, whose columns follow. */
static inline void jw_begin_table(struct json_writer *w, const char *key, uint64_t length)
{
	jw_key(w, key);
	jw_begin_object(w);
	jw_kv_uint(w, "length", length);
}

static inline void jw_kv_null(struct json_writer *w, const char *key)
{
	jw_key(w, key);
	jw_null(w);
}

#endif
