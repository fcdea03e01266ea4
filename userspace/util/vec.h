/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Growable arrays: a typed pointer plus length and capacity. The profile's
 * columns are all vectors, so growth is amortised doubling and one realloc
 * failure is reported, never ignored.
 */
#ifndef BPFPROF_VEC_H
#define BPFPROF_VEC_H

#include <stddef.h>
#include <stdlib.h>

#define VEC(type)                                                                                  \
	struct {                                                                                   \
		type *data;                                                                        \
		size_t len;                                                                        \
		size_t cap;                                                                        \
	}

int vec_grow_raw(void **data, size_t *cap, size_t need, size_t elem_size);

/* Make room for `n` more elements; 0 or -ENOMEM. */
#define vec_reserve(v, n)                                                                          \
	(((v)->len + (n) <= (v)->cap) ? 0                                                          \
				      : vec_grow_raw((void **)&(v)->data, &(v)->cap, (v)->len + (n), \
						     sizeof(*(v)->data)))

/* Append one element; 0 or -ENOMEM. */
#define vec_push(v, x) (vec_reserve((v), 1) ? -12 : ((v)->data[(v)->len++] = (x), 0))

#define vec_free(v)                                                                                \
	do {                                                                                       \
		free((v)->data);                                                                   \
		(v)->data = NULL;                                                                  \
		(v)->len = (v)->cap = 0;                                                           \
	} while (0)

#define vec_last(v) ((v)->data[(v)->len - 1])

/* qsort the elements; an empty vector (data may be NULL: qsort's undefined case) is left alone. */
#define vec_sort(v, cmp)                                                       \
	do {                                                                   \
		if ((v)->len)                                                  \
			qsort((v)->data, (v)->len, sizeof(*(v)->data), (cmp)); \
	} while (0)

#endif
