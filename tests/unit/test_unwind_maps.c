// SPDX-License-Identifier: BSD-2-Clause
/*
 * The unwinder's BPF maps as the object declares them (bpf/unwind.bpf.h),
 * read from the built object with libbpf, nothing loaded: no root.
 */
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <stdio.h>

#include "test.h"

/*
 * S2 review, finding 11: unwind_files was a preallocated hash, whose
 * deleted elements the very next update reuses: a walk that found an
 * evicted file's value just before it was deleted could read the next
 * file's base and slots, published at once in its place. Not preallocated,
 * a deleted element is freed only after an RCU grace period.
 */
static void the_file_map_is_not_preallocated(void)
{
	struct bpf_object *obj = bpf_object__open_file(BPF_OBJECT, NULL);
	struct bpf_map *map;

	CHECK(obj != NULL);
	if (!obj)
		return;
	map = bpf_object__find_map_by_name(obj, "unwind_files");
	CHECK(map != NULL);
	if (map) {
		CHECK_EQ_INT(bpf_map__type(map), BPF_MAP_TYPE_HASH);
		CHECK(bpf_map__map_flags(map) & BPF_F_NO_PREALLOC);
	}
	bpf_object__close(obj);
}

int main(void)
{
	RUN(the_file_map_is_not_preallocated);
	return test_summary();
}
