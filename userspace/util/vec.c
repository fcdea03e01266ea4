// SPDX-License-Identifier: BSD-2-Clause
#include "vec.h"

#include <errno.h>
#include <stdint.h>

int vec_grow_raw(void **data, size_t *cap, size_t need, size_t elem_size)
{
	size_t ncap = *cap ? *cap : 16;
	void *p;

	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return -ENOMEM;
		ncap *= 2;
	}
	if (ncap > SIZE_MAX / elem_size)
		return -ENOMEM;
	p = realloc(*data, ncap * elem_size);
	if (!p)
		return -ENOMEM;
	*data = p;
	*cap = ncap;
	return 0;
}
