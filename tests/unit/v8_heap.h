/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A fake V8 heap for the V8 tests: objects laid out as V8 11.3 (node 20)
 * lays them out, in a buffer read through a v8_read_fn.
 */
#ifndef BPFPROF_TEST_V8_HEAP_H
#define BPFPROF_TEST_V8_HEAP_H

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "lang/v8_decode.h"

#define FAKE_BASE 0x100000ull
#define FAKE_SIZE (1u << 20)

struct fake_heap {
	uint8_t mem[FAKE_SIZE];
	uint64_t used;
	unsigned reads;
};

static inline int fake_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct fake_heap *f = ctx;

	f->reads++;
	if (addr < FAKE_BASE || addr - FAKE_BASE > FAKE_SIZE ||
	    len > FAKE_SIZE - (addr - FAKE_BASE))
		return -EFAULT;
	memcpy(buf, f->mem + (addr - FAKE_BASE), len);
	return 0;
}

/* A new object of `size` bytes: its tagged address. */
static inline uint64_t fake_alloc(struct fake_heap *f, size_t size)
{
	uint64_t at = FAKE_BASE + f->used;

	f->used += (size + 7) & ~7ull;
	return at + 1;
}

static inline void fake_put(struct fake_heap *f, uint64_t tagged, int32_t off, const void *v,
			    size_t len)
{
	memcpy(f->mem + (tagged - 1 - FAKE_BASE + (uint64_t)(int64_t)off), v, len);
}

static inline void fake_word(struct fake_heap *f, uint64_t tagged, int32_t off, uint64_t w)
{
	fake_put(f, tagged, off, &w, 8);
}

static inline uint64_t smi(int32_t v)
{
	return (uint64_t)(uint32_t)v << 32;
}

/* An object whose map says `type`. */
static inline uint64_t fake_object(struct fake_heap *f, uint16_t type, size_t size)
{
	uint64_t map = fake_alloc(f, 16), obj = fake_alloc(f, size);

	fake_put(f, map, 12, &type, 2);
	fake_word(f, obj, 0, map);
	return obj;
}

/* Node 20's string types: SeqOneByte 8, SeqTwoByte 0, Cons 1, Sliced 3, Thin 5. */
static inline uint64_t fake_string(struct fake_heap *f, const char *s)
{
	int32_t n = (int32_t)strlen(s);
	uint64_t o = fake_object(f, 8, 16 + (size_t)n);

	fake_put(f, o, 12, &n, 4);
	fake_put(f, o, 16, s, (size_t)n);
	return o;
}

static inline uint64_t fake_string16(struct fake_heap *f, const uint16_t *u, int32_t n)
{
	uint64_t o = fake_object(f, 0, 16 + 2 * (size_t)n);

	fake_put(f, o, 12, &n, 4);
	fake_put(f, o, 16, u, 2 * (size_t)n);
	return o;
}

static inline uint64_t fake_cons(struct fake_heap *f, uint64_t a, uint64_t b, int32_t n)
{
	uint64_t o = fake_object(f, 1 | 8, 32);

	fake_put(f, o, 12, &n, 4);
	fake_word(f, o, 16, a);
	fake_word(f, o, 24, b);
	return o;
}

static inline uint64_t fake_fixed_array(struct fake_heap *f, const uint64_t *w, int32_t n)
{
	uint64_t o = fake_object(f, 175, 16 + 8 * (size_t)n);

	fake_word(f, o, 8, smi(n));
	fake_put(f, o, 16, w, 8 * (size_t)n);
	return o;
}

/* A script and functions of it, as the naming tests use them. */
#define CODE_START 0x5000000ull

/* "function outer() {\n  inner();\n}\nfunction inner() {\n  x();\n}\n" */
static const char src[] __attribute__((unused)) =
	"function outer() {\n  inner();\n}\nfunction inner() {\n  x();\n}\n";
#define OUTER_CALL 21 /* "inner();" on line 2 */
#define INNER_CALL 53 /* "x();" on line 5 */

static inline uint64_t raw_pos(int32_t offset, uint32_t inlining)
{
	return ((uint64_t)inlining << 31) | ((uint64_t)(offset + 1) << 1);
}

/* V8's encoding: zigzag, then 7 bits a byte, low first. */
static inline size_t put_vlq(uint8_t *p, int64_t v)
{
	uint64_t z = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
	size_t n = 0;

	do {
		p[n] = (uint8_t)(z & 0x7f) | (z > 0x7f ? 0x80 : 0);
		z >>= 7;
		n++;
	} while (p[n - 1] & 0x80);
	return n;
}

/* A ByteArray holding a position table of (code offset, position) entries. */
static inline uint64_t table(struct fake_heap *f, const int64_t (*e)[2], int n)
{
	uint8_t t[64];
	size_t len = 0;
	int64_t code = -1, pos = 0;
	uint64_t arr;

	for (int i = 0; i < n; i++) {
		len += put_vlq(t + len, e[i][0] - code);
		len += put_vlq(t + len, e[i][1] - pos);
		code = e[i][0];
		pos = e[i][1];
	}
	arr = fake_object(f, 190, 16 + len);
	fake_word(f, arr, 8, smi((int32_t)len));
	fake_put(f, arr, 16, t, len);
	return arr;
}

static inline uint64_t function(struct fake_heap *f, uint64_t sfi, uint64_t code)
{
	uint64_t fn = fake_object(f, 2066, 64);

	fake_word(f, fn, 24, sfi);
	fake_word(f, fn, 48, code);
	return fn;
}

static inline uint64_t sfi_named(struct fake_heap *f, uint64_t script, const char *name)
{
	uint64_t sfi = fake_object(f, 262, 48);

	fake_word(f, sfi, 16, name ? fake_string(f, name) : smi(0));
	fake_word(f, sfi, 32, script);
	return sfi;
}

static inline uint64_t script_of(struct fake_heap *f)
{
	uint64_t s = fake_object(f, 167, 104);

	fake_word(f, s, 8, fake_string(f, src));
	fake_word(f, s, 16, fake_string(f, "/srv/app/hot.js"));
	fake_word(f, s, 56, smi(0)); /* line ends not computed yet */
	return s;
}

#endif
