// SPDX-License-Identifier: BSD-2-Clause
/*
 * A JVM's tables (gHotSpotVMStructs and company) as any process may fake
 * them: the input is the fake JVM's memory at BASE, its first words the
 * export variables themselves.
 */
#include <errno.h>
#include <string.h>

#include "fuzz_util.h"
#include "lang/hotspot_vmstructs.h"

#define BASE 0x10000ull

struct image {
	const uint8_t *data;
	size_t size;
};

static int read_image(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct image *img = ctx;

	if (addr < BASE || addr - BASE > img->size || len > img->size - (addr - BASE))
		return -EFAULT;
	memcpy(buf, img->data + (addr - BASE), len);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct image img = { data, size };
	uint64_t exports[HS_EXPORT_COUNT];
	struct hotspot_vmstructs *vm;
	struct hotspot_layout l;
	char missing[64];

	for (int i = 0; i < HS_EXPORT_COUNT; i++)
		exports[i] = BASE + 8 * (uint64_t)i;
	if (hotspot_vmstructs_read(exports, read_image, &img, &vm))
		return 0;
	hotspot_layout_derive(vm, read_image, &img, &l, missing, sizeof(missing));
	hotspot_vmstructs_free(vm);
	return 0;
}
