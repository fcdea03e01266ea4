// SPDX-License-Identifier: BSD-2-Clause
/*
 * A JVM's tables (gHotSpotVMStructs and company) as any process may fake
 * them: the input is the fake JVM's memory at BASE, its first words the
 * export variables themselves. Where a layout is derived from them, the
 * three words after the exports name an nmethod, a Method and a pc offset
 * (bit 32: a return address), and those are named with that layout from
 * the same memory, as bpfprof would (tests/unit/hotspot_image.h builds
 * such a JVM: the seed jdk17_nmethod is one).
 */
#include "fuzz_util.h"
#include "lang/hotspot_names.h"
#include "lang/hotspot_vmstructs.h"

#define BASE 0x10000ull

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_image img = { data, size, BASE };
	uint64_t exports[HS_EXPORT_COUNT];
	struct hotspot_vmstructs *vm;
	struct hotspot_layout l;
	char missing[64];

	for (int i = 0; i < HS_EXPORT_COUNT; i++)
		exports[i] = BASE + 8 * (uint64_t)i;
	if (hotspot_vmstructs_read(exports, fuzz_read_image, &img, &vm))
		return 0;
	if (!hotspot_layout_derive(vm, fuzz_read_image, &img, &l, missing, sizeof(missing)) &&
	    size >= 8 * (HS_EXPORT_COUNT + 3)) {
		struct hotspot_frame frames[8];
		struct hotspot_jvm j;
		uint64_t p[3];
		struct hotspot_named named;

		memcpy(p, data + 8 * HS_EXPORT_COUNT, sizeof(p));
		hotspot_jvm_init(&j, &l, fuzz_read_image, &img);
		hotspot_name_nmethod(&j, p[0], (uint32_t)p[2], p[2] >> 32 & 1, -1, frames, 8,
				     &named);
		hotspot_name_method(&j, p[1], (int32_t)(p[2] & 0xffff), frames);
	}
	hotspot_vmstructs_free(vm);
	return 0;
}
