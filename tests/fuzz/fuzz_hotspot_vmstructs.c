// SPDX-License-Identifier: BSD-2-Clause
/*
 * A JVM's tables (gHotSpotVMStructs and company) as any process may fake
 * them: the input is the fake JVM's memory at BASE, its first words the
 * export variables themselves.
 */
#include "fuzz_util.h"
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
	hotspot_layout_derive(vm, fuzz_read_image, &img, &l, missing, sizeof(missing));
	hotspot_vmstructs_free(vm);
	return 0;
}
