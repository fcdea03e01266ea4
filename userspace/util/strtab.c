// SPDX-License-Identifier: BSD-2-Clause
#include "strtab.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int64_t strtab_intern_len(struct strtab *t, const char *s, size_t len)
{
	struct hmap_key key = { hash_bytes(s, len), len };
	uint32_t head, i;
	char *copy;

	if (hmap_get(&t->index, key, &head)) {
		for (i = head; i != UINT32_MAX; i = t->next.data[i])
			if (!memcmp(t->strs.data[i], s, len) && t->strs.data[i][len] == '\0')
				return i;
	} else {
		head = UINT32_MAX;
	}
	if (t->strs.len >= UINT32_MAX - 1)
		return -ENOMEM;
	copy = malloc(len + 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, s, len);
	copy[len] = '\0';
	i = (uint32_t)t->strs.len;
	if (vec_push(&t->strs, copy)) {
		free(copy);
		return -ENOMEM;
	}
	if (vec_push(&t->next, head)) {
		t->strs.len--;
		free(copy);
		return -ENOMEM;
	}
	if (hmap_put(&t->index, key, i)) {
		t->next.len--;
		t->strs.len--;
		free(copy);
		return -ENOMEM;
	}
	return i;
}

int64_t strtab_intern(struct strtab *t, const char *s)
{
	return strtab_intern_len(t, s, strlen(s));
}

void strtab_free(struct strtab *t)
{
	for (size_t i = 0; i < t->strs.len; i++)
		free(t->strs.data[i]);
	vec_free(&t->strs);
	vec_free(&t->next);
	hmap_free(&t->index);
}
