// SPDX-License-Identifier: BSD-2-Clause
/*
 * A JVM's compressed streams (line tables, PcDescs, inlining scopes) and
 * class names, as any process may fake them.
 */
#include <string.h>

#include "fuzz_util.h"
#include "lang/hotspot_decode.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hotspot_scope scopes[HOTSPOT_MAX_SCOPES];
	struct hotspot_pcdesc d;
	unsigned x;
	char name[96];
	uint32_t at;

	if (size < 5)
		return 0;
	x = data[0] & 1;
	memcpy(&at, data + 1, 4);
	data += 5;
	size -= 5;
	hotspot_line_of_bci(data, size, x, at);
	hotspot_pcdesc_find(data, size / HOTSPOT_PCDESC_SIZE, (int32_t)at, &d);
	hotspot_pcdesc_near(data, size / HOTSPOT_PCDESC_SIZE, (int32_t)at, &d);
	hotspot_scopes(data, size, x, at % (size + 1), scopes, HOTSPOT_MAX_SCOPES);
	for (uint32_t off = 1; off < size && off < 64; off++)
		hotspot_scopes(data, size, x, off, scopes, HOTSPOT_MAX_SCOPES);
	hotspot_method_name((const char *)data, size, (const char *)data, size / 2, name,
			    sizeof(name));
	return 0;
}
