// SPDX-License-Identifier: BSD-2-Clause
#include "frame_resolver.h"

#include "java_frames.h"
#include "jit_maps.h"
#include "python_frames.h"

static bool is_jit(uint32_t object)
{
	return object >= OBJ_FIRST_JIT;
}

void frame_resolve(const struct frame_resolver *fr, uint32_t object, uint64_t offset,
		   bool is_return, struct resolved_frame *out)
{
	if (is_jit(object) && fr->jit && jit_maps_resolve(fr->jit, object, offset, out))
		return;
	if (object == OBJ_PYTHON && python_frames_resolve(fr->py, offset, out))
		return;
	if ((object == OBJ_JAVA || object == OBJ_PHP) && java_frames_resolve(fr->java, offset, out))
		return;
	if (object == OBJ_RUBY && python_frames_resolve(fr->rb, offset, out)) {
		out->python = false;
		out->ruby = true;
		return;
	}
	symbolizer_resolve(fr->sym, object, offset, is_return, out);
}

void frame_resolver_retain_begin(const struct frame_resolver *fr)
{
	symbolizer_retain_begin(fr->sym);
	if (fr->jit)
		jit_maps_retain_begin(fr->jit);
}

void frame_resolver_retain(const struct frame_resolver *fr, uint32_t object)
{
	/* Python and Java frames hold their own names and stay: one entry per distinct place met.
	 */
	if (object == OBJ_PYTHON || object == OBJ_JAVA || object == OBJ_PHP || object == OBJ_RUBY)
		return;
	if (!is_jit(object))
		symbolizer_retain(fr->sym, object);
	else if (fr->jit)
		jit_maps_retain(fr->jit, object);
}

size_t frame_resolver_sweep(const struct frame_resolver *fr, size_t *jits)
{
	*jits = fr->jit ? jit_maps_sweep(fr->jit) : 0;
	return symbolizer_sweep(fr->sym);
}
