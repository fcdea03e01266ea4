// SPDX-License-Identifier: BSD-2-Clause
#include "json_writer.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../util/utf8.h"

/* Big enough that write(2) and deflate() see large chunks, small enough to not matter. */
#define JW_BUF_SIZE    (64 * 1024)
/* Level 2 like samply: most of gzip's size win for a fraction of level 6's CPU time. */
#define JW_GZIP_LEVEL  2
/* windowBits 15 plus 16 asks zlib for a gzip header and trailer instead of zlib's own. */
#define JW_GZIP_WINDOW (15 + 16)

static void set_err(struct json_writer *w, int err)
{
	if (!w->err)
		w->err = err;
}

static int write_all(int fd, const unsigned char *p, size_t n)
{
	while (n) {
		ssize_t r = write(fd, p, n);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			return -EIO;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

/* Run deflate over `p` (flush = Z_NO_FLUSH or Z_FINISH) and write what comes out. */
static int deflate_out(struct json_writer *w, const unsigned char *p, size_t n, int flush)
{
	int ret;

	w->z.next_in = (Bytef *)p;
	w->z.avail_in = (uInt)n;
	do {
		size_t have;
		int err;

		w->z.next_out = w->zout;
		w->z.avail_out = JW_BUF_SIZE;
		ret = deflate(&w->z, flush);
		if (ret == Z_STREAM_ERROR)
			return -EIO;
		have = JW_BUF_SIZE - w->z.avail_out;
		/*
		 * Z_BUF_ERROR only means "no progress"; it ends a Z_NO_FLUSH round
		 * (avail_out is then non-zero) but would spin forever while finishing.
		 */
		if (ret == Z_BUF_ERROR && !have && flush == Z_FINISH)
			return -EIO;
		err = write_all(w->fd, w->zout, have);
		if (err)
			return err;
		/* With Z_FINISH, deflate is done only when it says so, not when output fits. */
	} while (w->z.avail_out == 0 || (flush == Z_FINISH && ret != Z_STREAM_END));
	return 0;
}

static int sink_write(struct json_writer *w, const unsigned char *p, size_t n)
{
	if (!n)
		return 0;
	if (w->gzip)
		return deflate_out(w, p, n, Z_NO_FLUSH);
	return write_all(w->fd, p, n);
}

static void flush_buf(struct json_writer *w)
{
	int err;

	if (!w->len)
		return;
	err = sink_write(w, w->buf, w->len);
	if (err)
		set_err(w, err);
	w->len = 0;
}

static void put(struct json_writer *w, const void *p, size_t n)
{
	if (w->err)
		return;
	if (n > JW_BUF_SIZE - w->len) {
		flush_buf(w);
		if (n >= JW_BUF_SIZE) {
			int err = sink_write(w, p, n);

			if (err)
				set_err(w, err);
			return;
		}
	}
	memcpy(w->buf + w->len, p, n);
	w->len += n;
}

static void put_ch(struct json_writer *w, char c)
{
	if (w->len == JW_BUF_SIZE)
		flush_buf(w);
	if (w->err)
		return;
	w->buf[w->len++] = (unsigned char)c;
}

int jw_open(struct json_writer *w, int fd, bool gzip)
{
	memset(w, 0, sizeof(*w));
	w->fd = fd;
	w->gzip = gzip;
	w->buf = malloc(JW_BUF_SIZE);
	if (!w->buf)
		return -ENOMEM;
	if (gzip) {
		w->zout = malloc(JW_BUF_SIZE);
		if (!w->zout)
			goto nomem;
		if (deflateInit2(&w->z, JW_GZIP_LEVEL, Z_DEFLATED, JW_GZIP_WINDOW, 8,
				 Z_DEFAULT_STRATEGY) != Z_OK)
			goto nomem;
		w->z_ready = true;
	}
	return 0;
nomem:
	free(w->zout);
	free(w->buf);
	w->zout = NULL;
	w->buf = NULL;
	return -ENOMEM;
}

int jw_close(struct json_writer *w)
{
	if (!w->err && (w->depth || w->after_key))
		set_err(w, -EINVAL);
	flush_buf(w);
	if (w->z_ready) {
		if (!w->err) {
			int err = deflate_out(w, NULL, 0, Z_FINISH);

			if (err)
				set_err(w, err);
		}
		deflateEnd(&w->z);
		w->z_ready = false;
	}
	free(w->zout);
	free(w->buf);
	w->zout = NULL;
	w->buf = NULL;
	return w->err;
}

/* Commas and the key/value discipline, before every value. */
static void before_value(struct json_writer *w)
{
	if (!w->depth)
		return;
	if (w->stack[w->depth - 1].kind == '{') {
		if (!w->after_key)
			set_err(w, -EINVAL);
		w->after_key = false;
		return;
	}
	if (w->stack[w->depth - 1].has_items)
		put_ch(w, ',');
	w->stack[w->depth - 1].has_items = true;
}

static void begin(struct json_writer *w, char kind)
{
	before_value(w);
	if (w->depth == JW_MAX_DEPTH) {
		set_err(w, -EINVAL);
		return;
	}
	w->stack[w->depth].kind = kind;
	w->stack[w->depth].has_items = false;
	w->depth++;
	put_ch(w, kind);
}

static void end(struct json_writer *w, char kind)
{
	if (!w->depth || w->stack[w->depth - 1].kind != kind || w->after_key) {
		set_err(w, -EINVAL);
		return;
	}
	w->depth--;
	put_ch(w, kind == '{' ? '}' : ']');
}

void jw_begin_object(struct json_writer *w)
{
	begin(w, '{');
}

void jw_end_object(struct json_writer *w)
{
	end(w, '{');
}

void jw_begin_array(struct json_writer *w)
{
	begin(w, '[');
}

void jw_end_array(struct json_writer *w)
{
	end(w, '[');
}

static void put_escaped(struct json_writer *w, const char *str, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)str;
	size_t run = 0, i = 0;

	put_ch(w, '"');
	/* Copy runs of bytes that need no change in one put(); stop at anything else. */
	while (i < n) {
		unsigned char c = s[i];
		size_t seq;
		char esc[6];

		if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
			i++;
			continue;
		}
		if (c >= 0x80 && (seq = utf8_seq_len(s + i, n - i))) {
			i += seq;
			continue;
		}
		put(w, s + run, i - run);
		switch (c) {
		case '"':
			put(w, "\\\"", 2);
			break;
		case '\\':
			put(w, "\\\\", 2);
			break;
		case '\n':
			put(w, "\\n", 2);
			break;
		case '\t':
			put(w, "\\t", 2);
			break;
		case '\r':
			put(w, "\\r", 2);
			break;
		case '\b':
			put(w, "\\b", 2);
			break;
		case '\f':
			put(w, "\\f", 2);
			break;
		default:
			if (c < 0x20) {
				memcpy(esc, "\\u00", 4);
				esc[4] = hex[c >> 4];
				esc[5] = hex[c & 0xf];
				put(w, esc, 6);
			} else {
				/* A byte that starts no well-formed sequence: U+FFFD. */
				put(w, "\xef\xbf\xbd", 3);
			}
		}
		i++;
		run = i;
	}
	put(w, s + run, n - run);
	put_ch(w, '"');
}

void jw_key(struct json_writer *w, const char *key)
{
	if (!w->depth || w->stack[w->depth - 1].kind != '{' || w->after_key) {
		set_err(w, -EINVAL);
		return;
	}
	if (w->stack[w->depth - 1].has_items)
		put_ch(w, ',');
	w->stack[w->depth - 1].has_items = true;
	put_escaped(w, key, strlen(key));
	put_ch(w, ':');
	w->after_key = true;
}

void jw_null(struct json_writer *w)
{
	before_value(w);
	put(w, "null", 4);
}

void jw_bool(struct json_writer *w, bool v)
{
	before_value(w);
	if (v)
		put(w, "true", 4);
	else
		put(w, "false", 5);
}

/* Digits of `v` into the end of `buf`; returns the first digit. */
static char *u64_digits(uint64_t v, char *end)
{
	char *p = end;

	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return p;
}

void jw_uint(struct json_writer *w, uint64_t v)
{
	char buf[24], *p;

	before_value(w);
	p = u64_digits(v, buf + sizeof(buf));
	put(w, p, (size_t)(buf + sizeof(buf) - p));
}

void jw_int(struct json_writer *w, int64_t v)
{
	char buf[24], *p;
	/* Negate in unsigned arithmetic so INT64_MIN does not overflow. */
	uint64_t mag = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;

	before_value(w);
	p = u64_digits(mag, buf + sizeof(buf));
	if (v < 0)
		*--p = '-';
	put(w, p, (size_t)(buf + sizeof(buf) - p));
}

void jw_double(struct json_writer *w, double v)
{
	char buf[40];
	int n;

	if (!isfinite(v)) {
		jw_null(w);
		return;
	}
	before_value(w);
	/* 15 significant digits read back exactly for most values; 17 always do. */
	n = snprintf(buf, sizeof(buf), "%.15g", v);
	if (strtod(buf, NULL) != v)
		n = snprintf(buf, sizeof(buf), "%.17g", v);
	/* A locale with a decimal comma would make invalid JSON. */
	for (int i = 0; i < n; i++)
		if (buf[i] == ',')
			buf[i] = '.';
	put(w, buf, (size_t)n);
}

void jw_decimal(struct json_writer *w, int64_t scaled, unsigned decimals)
{
	char buf[48], *p;
	uint64_t mag = scaled < 0 ? 0 - (uint64_t)scaled : (uint64_t)scaled;
	uint64_t pow10 = 1, ipart, fpart;

	if (decimals > 18) {
		set_err(w, -EINVAL);
		return;
	}
	for (unsigned i = 0; i < decimals; i++)
		pow10 *= 10;
	ipart = mag / pow10;
	fpart = mag % pow10;
	before_value(w);
	/* Build right to left: fraction (zero-padded, trailing zeros dropped), then integer. */
	p = buf + sizeof(buf);
	if (fpart) {
		unsigned digits = decimals;

		while (fpart % 10 == 0) {
			fpart /= 10;
			digits--;
		}
		for (unsigned i = 0; i < digits; i++) {
			*--p = (char)('0' + fpart % 10);
			fpart /= 10;
		}
		*--p = '.';
	}
	p = u64_digits(ipart, p);
	if (scaled < 0)
		*--p = '-';
	put(w, p, (size_t)(buf + sizeof(buf) - p));
}

void jw_string_len(struct json_writer *w, const char *s, size_t n)
{
	before_value(w);
	put_escaped(w, s, n);
}

void jw_string(struct json_writer *w, const char *s)
{
	if (!s) {
		jw_null(w);
		return;
	}
	jw_string_len(w, s, strlen(s));
}
