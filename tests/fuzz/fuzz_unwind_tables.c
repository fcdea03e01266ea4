// SPDX-License-Identifier: BSD-2-Clause
/*
 * Unwind tables from a binary's CFI (issue 27): .eh_frame and
 * .eh_frame_hdr as a hostile binary has them, in a small ELF made here
 * around them, through unwind_file_build (the index, the FDE and CIE
 * records, the CFI programs, the row shapes, Go's table) within a small
 * budget. The input:
 *   u32 .eh_frame_hdr's address, u32 .eh_frame's, u16 the index's length,
 *   the index, then .eh_frame.
 * Seed: the .eh_frame and .eh_frame_hdr of tests/unit's cfi_fix, at their
 * own addresses.
 */
#include <elf.h>
#include <libelf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/eh_image.h"
#include "unwind/file_table.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct cfi_budget small = {
		.fde_rows = 4096,
		.file_rows = 65536,
		.file_ops = 1u << 20,
		.file_cpu_ns = 0,
	};
	uint32_t hdr_addr, eh_addr;
	uint16_t hdr_len;
	struct unwind_built b;
	size_t eh_len, total;
	uint8_t *img;

	if (size < 10)
		return 0;
	memcpy(&hdr_addr, data, 4);
	memcpy(&eh_addr, data + 4, 4);
	memcpy(&hdr_len, data + 8, 2);
	data += 10;
	size -= 10;
	if (hdr_len > size)
		hdr_len = (uint16_t)size;
	eh_len = size - hdr_len;
	total = eh_image_size(size);
	img = calloc(1, total);
	if (!img)
		return 0;
	memcpy(img + EH_IMAGE_OFF, data, size);
	total = eh_image_finish(img, hdr_addr, hdr_len, eh_addr, eh_len);
	elf_version(EV_CURRENT);
	if (!unwind_file_build(elf_memory((char *)img, total), &small, &b))
		unwind_built_free(&b);
	free(img);
	return 0;
}
