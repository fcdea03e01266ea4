// SPDX-License-Identifier: BSD-2-Clause
/* The streaming JSON writer: escaping, numbers, structure errors, plain and gzip sinks. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "emit/json_writer.h"
#include "read_file.h"
#include "test.h"

/* A temporary file to write into; removed by scratch_done. */
struct scratch {
	char path[64];
	int fd;
};

static int scratch_open(struct scratch *s)
{
	strcpy(s->path, "/tmp/bpfprof-jw-XXXXXX");
	s->fd = mkstemp(s->path);
	return s->fd;
}

/* The whole file, NUL-terminated; the caller frees it. */
static char *read_plain(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
		buf = malloc((size_t)n + 1);
		if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		}
		if (buf) {
			buf[n] = '\0';
			*len = (size_t)n;
		}
	}
	fclose(f);
	return buf;
}

static void scratch_done(struct scratch *s)
{
	if (s->fd >= 0)
		close(s->fd);
	unlink(s->path);
}

/* Write one value with `fn` and return the exact text; NULL on failure. */
static char *render(void (*fn)(struct json_writer *w), int *err_out)
{
	struct json_writer w;
	struct scratch s;
	size_t len;
	char *text;
	int err;

	if (scratch_open(&s) < 0)
		return NULL;
	err = jw_open(&w, s.fd, false);
	if (!err) {
		fn(&w);
		err = jw_close(&w);
	}
	if (err_out)
		*err_out = err;
	text = err ? NULL : read_plain(s.path, &len);
	scratch_done(&s);
	return text;
}

static void write_escapes(struct json_writer *w)
{
	jw_begin_array(w);
	jw_string(w, "q\"b\\s/");
	jw_string(w, "\n\t\r\b\f");
	jw_string(w, "\x01\x1f\x7f");
	jw_string_len(w, "a\0b", 3);
	jw_string(w, "\xc2\xb5s \xe2\x82\xac \xf0\x9f\x98\x80"); /* µs € and an emoji */
	jw_end_array(w);
}

static void test_escapes_quotes_backslash_and_controls(void)
{
	char *text = render(write_escapes, NULL);
	json_error_t jerr;
	json_t *v;

	CHECK(text != NULL);
	if (!text)
		return;
	CHECK_EQ_STR(text, "[\"q\\\"b\\\\s/\",\"\\n\\t\\r\\b\\f\",\"\\u0001\\u001f\x7f\","
			   "\"a\\u0000b\",\"\xc2\xb5s \xe2\x82\xac \xf0\x9f\x98\x80\"]");
	v = json_loads(text, JSON_ALLOW_NUL, &jerr);
	CHECK(v != NULL);
	if (v) {
		CHECK_EQ_STR(json_string_value(json_array_get(v, 0)), "q\"b\\s/");
		CHECK_EQ_STR(json_string_value(json_array_get(v, 1)), "\n\t\r\b\f");
		CHECK_EQ_INT(json_string_length(json_array_get(v, 3)), 3);
		CHECK(!memcmp(json_string_value(json_array_get(v, 3)), "a\0b", 3));
		json_decref(v);
	}
	free(text);
}

static void write_invalid_utf8(struct json_writer *w)
{
	jw_begin_array(w);
	jw_string(w, "a\xff"
		     "b");		  /* a byte that never starts a sequence */
	jw_string(w, "x\xc3");		  /* a truncated 2-byte sequence */
	jw_string(w, "\xc0\xaf");	  /* an overlong '/' */
	jw_string(w, "\xed\xa0\x80");	  /* a UTF-16 surrogate */
	jw_string(w, "\xf4\x90\x80\x80"); /* above U+10FFFF */
	jw_string(w, "\xe2\x82z");	  /* a 3-byte sequence cut by an ASCII byte */
	jw_end_array(w);
}

#define FFFD "\xef\xbf\xbd"

static void test_invalid_utf8_becomes_replacement_chars(void)
{
	static const char *const want[] = {
		"a" FFFD "b",	     "x" FFFD,	    FFFD FFFD, FFFD FFFD FFFD,
		FFFD FFFD FFFD FFFD, FFFD FFFD "z",
	};
	char *text = render(write_invalid_utf8, NULL);
	json_error_t jerr;
	json_t *v;

	CHECK(text != NULL);
	if (!text)
		return;
	/* jansson refuses invalid UTF-8, so loading at all proves the output is valid. */
	v = json_loads(text, 0, &jerr);
	CHECK(v != NULL);
	if (!v)
		fprintf(stderr, "jansson: %s in %s\n", jerr.text, text);
	for (size_t i = 0; v && i < sizeof(want) / sizeof(want[0]); i++)
		CHECK_EQ_STR(json_string_value(json_array_get(v, i)), want[i]);
	json_decref(v);
	free(text);
}

static void write_numbers(struct json_writer *w)
{
	jw_begin_array(w);
	jw_int(w, INT64_MIN);
	jw_int(w, -1);
	jw_uint(w, UINT64_MAX);
	jw_uint(w, 0);
	jw_double(w, 0.1);
	jw_double(w, -2.5);
	jw_double(w, 1e300);
	jw_double(w, 1.0 / 3.0);
	jw_double(w, NAN);
	jw_double(w, INFINITY);
	jw_double(w, -INFINITY);
	jw_decimal(w, 1234567, 6);
	jw_decimal(w, 1000000, 6);
	jw_decimal(w, 1500000, 6);
	jw_decimal(w, 5, 6);
	jw_decimal(w, -2500, 3);
	jw_decimal(w, 0, 6);
	jw_decimal(w, 42, 0);
	jw_bool(w, true);
	jw_bool(w, false);
	jw_null(w);
	jw_end_array(w);
}

static void test_numbers(void)
{
	char *text = render(write_numbers, NULL);
	json_error_t jerr;
	json_t *v;

	CHECK(text != NULL);
	if (!text)
		return;
	CHECK_EQ_STR(text, "[-9223372036854775808,-1,18446744073709551615,0,0.1,-2.5,1e+300,"
			   "0.33333333333333331,null,null,null,1.234567,1,1.5,0.000005,-2.5,0,42,"
			   "true,false,null]");
	/* Every double reads back as exactly the value written. */
	v = json_loads(text, JSON_DECODE_INT_AS_REAL, &jerr);
	CHECK(v != NULL);
	if (v) {
		CHECK(json_real_value(json_array_get(v, 7)) == 1.0 / 3.0);
		CHECK(json_real_value(json_array_get(v, 4)) == 0.1);
		json_decref(v);
	}
	free(text);
}

static void write_object(struct json_writer *w)
{
	jw_begin_object(w);
	jw_kv_string(w, "k\"ey", "v");
	jw_kv_int(w, "n", 3);
	jw_key(w, "a");
	jw_begin_array(w);
	jw_begin_object(w);
	jw_end_object(w);
	jw_begin_array(w);
	jw_end_array(w);
	jw_end_array(w);
	jw_kv_null(w, "z");
	jw_end_object(w);
}

static void test_objects_and_commas(void)
{
	char *text = render(write_object, NULL);

	CHECK(text != NULL);
	if (text)
		CHECK_EQ_STR(text, "{\"k\\\"ey\":\"v\",\"n\":3,\"a\":[{},[]],\"z\":null}");
	free(text);
}

static void value_without_key(struct json_writer *w)
{
	jw_begin_object(w);
	jw_int(w, 1);
	jw_end_object(w);
}

static void key_in_array(struct json_writer *w)
{
	jw_begin_array(w);
	jw_key(w, "k");
	jw_end_array(w);
}

static void unbalanced(struct json_writer *w)
{
	jw_begin_array(w);
	jw_end_object(w);
}

static void unfinished(struct json_writer *w)
{
	jw_begin_object(w);
	jw_key(w, "k");
}

static void test_structure_errors_are_reported(void)
{
	int err = 0;

	free(render(value_without_key, &err));
	CHECK_EQ_INT(err, -EINVAL);
	free(render(key_in_array, &err));
	CHECK_EQ_INT(err, -EINVAL);
	free(render(unbalanced, &err));
	CHECK_EQ_INT(err, -EINVAL);
	free(render(unfinished, &err));
	CHECK_EQ_INT(err, -EINVAL);
}

/* Enough output to pass through every buffer many times, plus one string longer than a buffer. */
#define BIG_COUNT 300000
#define LONG_LEN  (200 * 1024)

static void write_big(struct json_writer *w, const char *long_str)
{
	jw_begin_object(w);
	jw_key(w, "numbers");
	jw_begin_array(w);
	for (int64_t i = 0; i < BIG_COUNT; i++)
		jw_int(w, i * 7 - 1000);
	jw_end_array(w);
	jw_kv_string(w, "long", long_str);
	jw_end_object(w);
}

static void check_big(const char *text, size_t len, const char *long_str)
{
	json_error_t jerr;
	json_t *v = json_loadb(text, len, 0, &jerr), *nums;

	CHECK(v != NULL);
	if (!v)
		return;
	nums = json_object_get(v, "numbers");
	CHECK_EQ_INT(json_array_size(nums), BIG_COUNT);
	for (size_t i = 0; i < json_array_size(nums); i++) {
		if (json_integer_value(json_array_get(nums, i)) != (json_int_t)i * 7 - 1000) {
			CHECK(!"number mismatch");
			break;
		}
	}
	CHECK_EQ_STR(json_string_value(json_object_get(v, "long")), long_str);
	json_decref(v);
}

static void big_round_trip(bool gzip)
{
	char *long_str = malloc(LONG_LEN + 1), *text;
	struct json_writer w;
	unsigned char magic[3] = { 0 };
	struct scratch s;
	size_t len = 0;

	CHECK(long_str != NULL);
	if (!long_str || scratch_open(&s) < 0) {
		free(long_str);
		return;
	}
	for (size_t i = 0; i < LONG_LEN; i++)
		long_str[i] = (char)('a' + i % 26);
	long_str[LONG_LEN] = '\0';
	CHECK_EQ_INT(jw_open(&w, s.fd, gzip), 0);
	write_big(&w, long_str);
	CHECK_EQ_INT(jw_close(&w), 0);

	CHECK_EQ_INT(pread(s.fd, magic, 3, 0), 3);
	if (gzip) {
		CHECK(magic[0] == 0x1f && magic[1] == 0x8b && magic[2] == 0x08);
		text = read_all_gz(s.path, &len);
	} else {
		CHECK(magic[0] == '{');
		text = read_plain(s.path, &len);
	}
	CHECK(text != NULL);
	if (text)
		check_big(text, len, long_str);
	free(text);
	free(long_str);
	scratch_done(&s);
}

static void test_gzip_round_trip(void)
{
	big_round_trip(true);
}

static void test_plain_round_trip(void)
{
	big_round_trip(false);
}

static void test_io_error_is_returned(void)
{
	struct json_writer w;
	int fd = open("/dev/full", O_WRONLY | O_CLOEXEC);

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	for (int gzip = 0; gzip < 2; gzip++) {
		CHECK_EQ_INT(jw_open(&w, fd, gzip), 0);
		write_big(&w, "x");
		CHECK_EQ_INT(jw_close(&w), -ENOSPC);
	}
	close(fd);
}

int main(void)
{
	RUN(test_escapes_quotes_backslash_and_controls);
	RUN(test_invalid_utf8_becomes_replacement_chars);
	RUN(test_numbers);
	RUN(test_objects_and_commas);
	RUN(test_structure_errors_are_reported);
	RUN(test_gzip_round_trip);
	RUN(test_plain_round_trip);
	RUN(test_io_error_is_returned);
	return test_summary();
}
