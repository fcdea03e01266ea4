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

#endif
