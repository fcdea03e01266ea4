// SPDX-License-Identifier: BSD-2-Clause
#include "hashmap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

uint64_t hash_u64(uint64_t x)
{
	/* splitmix64 finaliser: cheap and mixes every input bit. */
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

uint64_t hash_bytes(const void *p, size_t n)
{
	/* FNV-1a, then mixed: strings are short and this is not a hot path. */
	const unsigned char *s = p;
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < n; i++) {
		h ^= s[i];
		h *= 0x100000001b3ULL;
	}
	return hash_u64(h);
}

static size_t key_hash(struct hmap_key k)
{
	return (size_t)hash_u64(k.a ^ hash_u64(k.b + 0x9e3779b97f4a7c15ULL));
}

static bool key_eq(struct hmap_key x, struct hmap_key y)
{
	return x.a == y.a && x.b == y.b;
}

bool hmap_get(const struct hmap *m, struct hmap_key key, uint32_t *value)
{
	size_t mask, i;

	if (!m->cap)
		return false;
	mask = m->cap - 1;
	for (i = key_hash(key) & mask;; i = (i + 1) & mask) {
		const struct hmap_slot *s = &m->slots[i];

		if (!s->used)
			return false;
		if (key_eq(s->key, key)) {
			if (value)
				*value = s->value;
			return true;
		}
	}
}

static int hmap_resize(struct hmap *m, size_t ncap)
{
	struct hmap_slot *old = m->slots;
	size_t ocap = m->cap;

	m->slots = calloc(ncap, sizeof(*m->slots));
	if (!m->slots) {
		m->slots = old;
		return -ENOMEM;
	}
	m->cap = ncap;
	m->len = 0;
	for (size_t i = 0; i < ocap; i++)
		if (old[i].used)
			hmap_put(m, old[i].key, old[i].value);
	free(old);
	return 0;
}

int hmap_put(struct hmap *m, struct hmap_key key, uint32_t value)
{
	size_t mask, i;

	/*
	 * A key already there takes its new value in place: a put that adds
	 * no key never allocates, so callers may count on it not failing.
	 */
	if (m->cap) {
		mask = m->cap - 1;
		for (i = key_hash(key) & mask; m->slots[i].used; i = (i + 1) & mask)
			if (key_eq(m->slots[i].key, key)) {
				m->slots[i].value = value;
				return 0;
			}
	}
	/* Keep the load factor under 0.7 so probe chains stay short. */
	if ((m->len + 1) * 10 > m->cap * 7) {
		int err = hmap_resize(m, m->cap ? m->cap * 2 : 64);

		if (err)
			return err;
	}
	mask = m->cap - 1;
	for (i = key_hash(key) & mask;; i = (i + 1) & mask) {
		struct hmap_slot *s = &m->slots[i];

		if (!s->used) {
			s->used = 1;
			s->key = key;
			s->value = value;
			m->len++;
			return 0;
		}
		if (key_eq(s->key, key)) {
			s->value = value;
			return 0;
		}
	}
}

bool hmap_del(struct hmap *m, struct hmap_key key)
{
	size_t mask, i, j;

	if (!m->cap)
		return false;
	mask = m->cap - 1;
	for (i = key_hash(key) & mask;; i = (i + 1) & mask) {
		if (!m->slots[i].used)
			return false;
		if (key_eq(m->slots[i].key, key))
			break;
	}
	/* Backward-shift deletion keeps linear probing correct without tombstones. */
	m->slots[i].used = 0;
	m->len--;
	for (j = (i + 1) & mask; m->slots[j].used; j = (j + 1) & mask) {
		size_t home = key_hash(m->slots[j].key) & mask;

		if (((j - home) & mask) >= ((j - i) & mask)) {
			m->slots[i] = m->slots[j];
			m->slots[j].used = 0;
			i = j;
		}
	}
	return true;
}

void hmap_free(struct hmap *m)
{
	free(m->slots);
	memset(m, 0, sizeof(*m));
}
