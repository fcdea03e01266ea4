// SPDX-License-Identifier: BSD-2-Clause
/*
 * A V8 heap as any process may fake it (or V8's GC may leave it while we
 * read): the input is the memory, read as node 20's layout; strings,
 * lines, ScopeInfo names, position tables and inlining positions decoded
 * from it (lang/v8_decode.h), and a JS frame named from words pointing into
 * it (lang/v8_names.h), the caches emptied for each input.
 */
#include <stdlib.h>
#include <string.h>

#include "../unit/v8_node20.h"
#include "fuzz_util.h"
#include "lang/v8_decode.h"
#include "lang/v8_names.h"

#define BASE 0x100000ull

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct v8_meta meta;
	static struct v8_name_cache *cache;
	static int loaded;
	struct hotspot_frame out[4];
	uint64_t frame[V8_WORDS];
	struct fuzz_image img = { data, size, BASE };
	struct v8_heap h = { &meta, fuzz_read_image, &img };
	uint64_t words[16] = { 0 }, pos, caller;
	char name[128];
	int32_t start, fid;

	if (!loaded) {
		if (v8_meta_from_syms(node20, NODE20_N, &meta, NULL, 0))
			abort();
		/* Bytecode sizes of every shape, zero (no bytecode) included. */
		meta.nbytecodes = 198;
		for (int s = 0; s < 3; s++)
			for (int b = 0; b < 256; b++)
				meta.bytecode_sizes[s][b] = (uint8_t)((b * (s + 1)) % 11);
		cache = malloc(sizeof(*cache));
		if (!cache)
			abort();
		loaded = 1;
	}
	if (size < 8)
		return 0;
	for (size_t off = 0; off + 8 <= size && off < 256; off += 8) {
		uint64_t tagged = BASE + off + 1;

		v8_string(&h, tagged, name, sizeof(name));
		v8_script_line(&h, tagged, (int32_t)(data[off] | data[off + 1] << 8));
	}
	memcpy(words, data, size < sizeof(words) ? size : sizeof(words));
	v8_scope_info_name(&h, words, name, sizeof(name), &start);
	v8_spt_position(data, size, (int64_t)(data[0] | data[1] << 8), &pos);
	v8_inlining_entry(data, size, data[2], &caller, &fid);
	v8_baseline_offset(&meta, data, size / 2, data + size / 2, size - size / 2,
			   (uint64_t)data[3] << data[4] % 16, &start);

	/* The frame's slots: tagged pointers into the image (the offset slot as is), and a pc. */
	for (int i = 0; i < V8_WORDS; i++)
		frame[i] =
			i == V8_W_BYTECODE_OFFSET ? words[8 + i] : (BASE + words[8 + i] % size) | 1;
	memset(cache, 0, sizeof(*cache));
	v8_name_js_frame(&h, cache, words[12] % (BASE + size), data[5] & 1, frame, out, 4);
	v8_name_js_frame(&h, cache, words[12] % (BASE + size), data[5] & 1, frame, out, 4);
	return 0;
}
