// SPDX-License-Identifier: BSD-2-Clause
#include "profile_tables.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../syscalls/syscall_names.h"
#include "source_namers.h"

/* What one raw frame became: `count` consecutive entries of expansion[], outer to inner. */
struct frame_memo {
	uint32_t first; /* NO_INDEX until resolved */
	uint32_t count;
};

struct build_state {
	struct profile_tables *t;
	frame_resolve_fn resolve;
	void *ctx;
	struct fair_lock *lock; /* held from a frame's resolution until its names are copied */
	bool locked;
	struct frame_memo *memo; /* one per model raw frame */
	VEC(uint32_t) expansion; /* profile frame indexes */
};

/* Every table is indexed by uint32_t with NO_INDEX reserved, so stop just below it. */
static int check_room(size_t len)
{
	return len >= NO_INDEX - 1 ? -E2BIG : 0;
}

static int64_t intern_string(struct profile_tables *t, const char *s)
{
	return strtab_intern(&t->strings, s);
}

/* A copy of `obj` that owns its strings, in one allocation; NULL when out of memory. */
static struct object_info *copy_object_info(const struct object_info *obj)
{
	size_t name = obj->name ? strlen(obj->name) + 1 : 0,
	       path = obj->path ? strlen(obj->path) + 1 : 0,
	       id = obj->build_id ? strlen(obj->build_id) + 1 : 0;
	struct object_info *c = malloc(sizeof(*c) + name + path + id);
	char *p;

	if (!c)
		return NULL;
	*c = *obj;
	p = (char *)(c + 1);
	if (name)
		c->name = memcpy(p, obj->name, name), p += name;
	if (path)
		c->path = memcpy(p, obj->path, path), p += path;
	if (id)
		c->build_id = memcpy(p, obj->build_id, id);
	return c;
}

static int64_t intern_lib(struct profile_tables *t, const struct object_info *obj)
{
	struct hmap_key key = { (uint64_t)(uintptr_t)obj, 0 };
	struct pt_lib lib = { NULL };
	uint32_t idx;
	int err;

	if (hmap_get(&t->lib_index, key, &idx))
		return idx;
	err = check_room(t->libs.len);
	if (err)
		return err;
	lib.obj = copy_object_info(obj);
	if (!lib.obj)
		return -ENOMEM;
	idx = (uint32_t)t->libs.len;
	if (vec_push(&t->libs, lib)) {
		free((void *)lib.obj);
		return -ENOMEM;
	}
	err = hmap_put(&t->lib_index, key, idx);
	if (err) {
		free((void *)lib.obj);
		t->libs.len--;
		return err;
	}
	return idx;
}

/* The nativeSymbols row of a library's symbol at `address`, named `name` (interned). */
static int64_t intern_native_symbol(struct profile_tables *t, uint32_t lib, uint64_t address,
				    const char *name, uint64_t size)
{
	struct hmap_key key = { address, lib };
	struct pt_native_symbol sym = { lib, address, 0, size };
	int64_t str;
	uint32_t idx;
	int err;

	if (hmap_get(&t->native_symbol_index, key, &idx))
		return idx;
	err = check_room(t->native_symbols.len);
	if (err)
		return err;
	str = intern_string(t, name);
	if (str < 0)
		return str;
	sym.name = (uint32_t)str;
	idx = (uint32_t)t->native_symbols.len;
	if (vec_push(&t->native_symbols, sym))
		return -ENOMEM;
	err = hmap_put(&t->native_symbol_index, key, idx);
	if (err) {
		t->native_symbols.len--;
		return err;
	}
	return idx;
}

/* A resolved user frame's symbol, for the assembly view: its nativeSymbols row, or -1. */
static int64_t native_symbol_of(struct profile_tables *t, const struct resolved_frame *rf)
{
	int64_t lib;

	if (!rf->lib || rf->kernel || rf->offcpu || rf->symbol_address < 0 || !rf->symbol_name ||
	    !rf->symbol_name[0])
		return -1;
	lib = intern_lib(t, rf->lib);
	if (lib < 0)
		return lib;
	return intern_native_symbol(t, (uint32_t)lib, (uint64_t)rf->symbol_address, rf->symbol_name,
				    rf->symbol_size);
}

static int64_t intern_resource(struct profile_tables *t, uint32_t name, int32_t lib)
{
	struct hmap_key key = { name, (uint32_t)lib };
	struct pt_resource res = { name, lib };
	uint32_t idx;
	int err;

	if (hmap_get(&t->resource_index, key, &idx))
		return idx;
	err = check_room(t->resources.len);
	if (err)
		return err;
	idx = (uint32_t)t->resources.len;
	if (vec_push(&t->resources, res))
		return -ENOMEM;
	err = hmap_put(&t->resource_index, key, idx);
	if (err) {
		t->resources.len--;
		return err;
	}
	return idx;
}

static int64_t intern_source(struct profile_tables *t, uint32_t filename)
{
	struct hmap_key key = { filename, 0 };
	uint32_t idx;
	int err;

	if (hmap_get(&t->source_index, key, &idx))
		return idx;
	err = check_room(t->sources.len);
	if (err)
		return err;
	idx = (uint32_t)t->sources.len;
	if (vec_push(&t->sources, filename))
		return -ENOMEM;
	err = hmap_put(&t->source_index, key, idx);
	if (err) {
		t->sources.len--;
		return err;
	}
	return idx;
}

static int64_t intern_func(struct profile_tables *t, const struct pt_func *f)
{
	/* The whole tuple fits the 128-bit key, so equal keys mean equal funcs. */
	struct hmap_key key = {
		(uint64_t)f->name << 32 | (uint32_t)f->resource,
		/* Lines are below 2^31: the top bit is free for isJS. */
		(uint64_t)(uint32_t)f->source << 32 | (uint32_t)f->line | (uint32_t)f->is_js << 31,
	};
	uint32_t idx;
	int err;

	if (hmap_get(&t->func_index, key, &idx))
		return idx;
	err = check_room(t->funcs.len);
	if (err)
		return err;
	idx = (uint32_t)t->funcs.len;
	if (vec_push(&t->funcs, *f))
		return -ENOMEM;
	err = hmap_put(&t->func_index, key, idx);
	if (err) {
		t->funcs.len--;
		return err;
	}
	return idx;
}

static bool frame_eq(const struct pt_frame *a, const struct pt_frame *b)
{
	return a->func == b->func && a->category == b->category && a->address == b->address &&
	       a->inline_depth == b->inline_depth && a->line == b->line &&
	       a->native_symbol == b->native_symbol;
}

static int64_t intern_frame(struct profile_tables *t, const struct pt_frame *f)
{
	/*
	 * A frame tuple (func, category, 64-bit address, depth, line) is wider
	 * than the map's key, so the key is (hash, probe): colliding frames take
	 * probes 1, 2, ... and are told apart by comparing the stored frames.
	 */
	uint64_t h =
		hash_u64(((uint64_t)f->func << 32 | f->category) ^
			 hash_u64((uint64_t)f->address ^
				  hash_u64((uint64_t)f->inline_depth << 32 | (uint32_t)f->line)));
	struct hmap_key key = { h, 0 };
	uint32_t idx;
	int err;

	while (hmap_get(&t->frame_index, key, &idx)) {
		if (frame_eq(&t->frames.data[idx], f))
			return idx;
		key.b++;
	}
	err = check_room(t->frames.len);
	if (err)
		return err;
	idx = (uint32_t)t->frames.len;
	if (vec_push(&t->frames, *f))
		return -ENOMEM;
	err = hmap_put(&t->frame_index, key, idx);
	if (err) {
		t->frames.len--;
		return err;
	}
	return idx;
}

static int64_t intern_stack(struct profile_tables *t, uint32_t prefix, uint32_t frame)
{
	struct hmap_key key = { (uint64_t)prefix << 32 | frame, 0 };
	struct pt_stack st = { frame, prefix };
	uint32_t idx;
	int err;

	if (hmap_get(&t->stack_index, key, &idx))
		return idx;
	err = check_room(t->stacks.len);
	if (err)
		return err;
	idx = (uint32_t)t->stacks.len;
	if (vec_push(&t->stacks, st))
		return -ENOMEM;
	err = hmap_put(&t->stack_index, key, idx);
	if (err) {
		t->stacks.len--;
		return err;
	}
	return idx;
}

/* The resource of a resolved frame (-1 when it names none), interning its lib on the way. */
static int64_t resource_of(struct profile_tables *t, const struct resolved_frame *rf)
{
	int64_t name, lib = -1;

	if (!rf->resource || !rf->resource[0])
		return -1;
	name = intern_string(t, rf->resource);
	if (name < 0)
		return name;
	if (rf->lib) {
		lib = intern_lib(t, rf->lib);
		if (lib < 0)
			return lib;
	}
	return intern_resource(t, (uint32_t)name, (int32_t)lib);
}

/*
 * Profile frame for item `depth` of a resolved frame; every inline depth
 * shares the address and the native symbol of the code it is in.
 */
static int64_t frame_of_item(struct profile_tables *t, const struct resolved_frame *rf,
			     unsigned depth, int32_t resource, int32_t native_symbol)
{
	const char *name = rf->items[depth].func;
	const char *file = rf->items[depth].file;
	struct pt_func func = { 0, resource, -1, 0, rf->is_js };
	struct pt_frame frame;
	char note[256];
	int64_t r;

	/* The resolver promises a name; a missing one must still not crash or vanish. */
	r = intern_string(t, name && name[0] ? name : "[unknown]");
	if (r < 0)
		return r;
	func.name = (uint32_t)r;
	/* A kernel function names no file: the note says there is no source. */
	if ((!file || !file[0]) && rf->kernel && !rf->offcpu) {
		snprintf(note, sizeof(note), "%s" KERNEL_SOURCE_SUFFIX,
			 rf->resource && rf->resource[0] ? rf->resource : "[kernel]");
		file = note;
	}
	if (file && file[0]) {
		r = intern_string(t, file);
		if (r < 0)
			return r;
		r = intern_source(t, (uint32_t)r);
		if (r < 0)
			return r;
		func.source = (int32_t)r;
	}
	/*
	 * The item's line is where its sample point is, so it belongs to the
	 * frame: in the func it would split one function into one call-tree
	 * node per line. The func gets the line the function starts at.
	 */
	func.line = rf->items[depth].start_line > 0 ? rf->items[depth].start_line : 0;
	r = intern_func(t, &func);
	if (r < 0)
		return r;
	frame.func = (uint32_t)r;
	frame.category = rf->offcpu	  ? CAT_OFFCPU
			 : rf->kernel	  ? CAT_KERNEL
			 : rf->python	  ? CAT_PYTHON
			 : rf->php	  ? CAT_PHP
			 : rf->java	  ? CAT_JAVA
			 : rf->javascript ? CAT_JS
			 : rf->ruby	  ? CAT_RUBY
					  : CAT_USER;
	frame.address = rf->address < 0 ? -1 : rf->address;
	frame.inline_depth = depth;
	frame.line = rf->items[depth].line > 0 ? rf->items[depth].line : 0;
	frame.native_symbol = native_symbol;
	return intern_frame(t, &frame);
}

/*
 * Frames that are no code, named here rather than by a frame source: the
 * mark of a cut stack, and the leaf of an off-CPU sample ("off-CPU:
 * sleeping", ...; a reason this build does not know, from a newer kernel's
 * state, is shown as "other" rather than dropped, so the time still adds
 * up). `buf` holds the name until it is interned.
 */
static bool name_synthetic(const struct raw_frame *f, struct resolved_frame *out, char *buf,
			   size_t size)
{
	uint64_t reason = f->offset;

	if (f->object != OBJ_TRUNCATED && f->object != OBJ_OFFCPU)
		return false;
	out->count = 1;
	if (f->object == OBJ_TRUNCATED) {
		out->items[0].func = "[stack truncated]";
		return true;
	}
	if (reason >= OFFCPU_REASON_MAX)
		reason = OFFCPU_OTHER;
	snprintf(buf, size, "off-CPU: %s", offcpu_reason_name((enum offcpu_reason)reason));
	out->items[0].func = buf;
	out->offcpu = true;
	return true;
}

/* Resolve raw frame `raw` and remember its profile frames (under s->lock, if any). */
static int expand_unmemoized_frame(struct build_state *s, const struct model *m, uint32_t raw)
{
	struct frame_memo *memo = &s->memo[raw];
	struct resolved_frame rf;
	char synthetic[64];
	int64_t resource, native_symbol;
	unsigned count;
	int err;

	memset(&rf, 0, sizeof(rf));
	rf.address = -1;
	rf.symbol_address = -1;
	if (!name_synthetic(&m->frames.data[raw], &rf, synthetic, sizeof(synthetic)))
		s->resolve(s->ctx, &m->frames.data[raw], &rf);
	count = rf.count;
	if (count < 1)
		count = 1;
	if (count > RESOLVED_MAX_DEPTH)
		count = RESOLVED_MAX_DEPTH;
	/* An off-CPU leaf is no code: it belongs to no library, whatever the resolver says. */
	resource = rf.offcpu ? -1 : resource_of(s->t, &rf);
	if (resource < -1)
		return (int)resource;
	native_symbol = native_symbol_of(s->t, &rf);
	if (native_symbol < -1)
		return (int)native_symbol;
	err = vec_reserve(&s->expansion, count);
	if (err)
		return err;
	memo->first = (uint32_t)s->expansion.len;
	for (unsigned d = 0; d < count; d++) {
		int64_t frame =
			frame_of_item(s->t, &rf, d, (int32_t)resource, (int32_t)native_symbol);

		if (frame < 0) {
			s->expansion.len = memo->first;
			memo->first = NO_INDEX;
			return (int)frame;
		}
		s->expansion.data[s->expansion.len++] = (uint32_t)frame;
	}
	memo->count = count;
	return 0;
}

/*
 * Resolve raw frame `raw` once. The resolver's names stay valid only while
 * its lock is held (another thread may register or sweep objects and
 * intern names meanwhile): the lock is taken for a frame, resolved and
 * copied, and kept for the next while no other thread waits for it, so
 * that the thread recording never waits longer than one frame.
 */
static int expand_raw_frame(struct build_state *s, const struct model *m, uint32_t raw)
{
	int err;

	if (s->memo[raw].first != NO_INDEX) {
		/* Frames resolved before need no lock: a waiter must not wait through them. */
		if (s->locked && fair_lock_contended(s->lock)) {
			fair_unlock(s->lock);
			s->locked = false;
		}
		return 0;
	}
	if (s->lock && !s->locked) {
		fair_lock(s->lock);
		s->locked = true;
	}
	err = expand_unmemoized_frame(s, m, raw);
	if (s->lock && fair_lock_contended(s->lock)) {
		fair_unlock(s->lock);
		s->locked = false;
	}
	return err;
}

/*
 * Every raw stack is mapped, not only those samples use: an Off-CPU marker's
 * cause is its switch-out stack, which may appear in no sample at all (no
 * off-CPU samples, or an interval shorter than the sampling interval).
 */
static int map_raw_stacks(struct build_state *s, const struct model *m)
{
	struct profile_tables *t = s->t;

	for (size_t i = 0; i < m->stacks.len; i++) {
		const struct raw_stack *rs = &m->stacks.data[i];
		uint32_t stack = NO_INDEX;
		int err;

		/* Parents first is what lets one pass map every stack; say so if it breaks. */
		if (rs->frame >= m->frames.len || (rs->prefix != NO_INDEX && rs->prefix >= i))
			return -EINVAL;
		if (rs->prefix != NO_INDEX)
			stack = t->raw_stack_map.data[rs->prefix];
		err = expand_raw_frame(s, m, rs->frame);
		if (err)
			return err;
		for (uint32_t k = 0; k < s->memo[rs->frame].count; k++) {
			int64_t r = intern_stack(t, stack,
						 s->expansion.data[s->memo[rs->frame].first + k]);

			if (r < 0)
				return (int)r;
			stack = (uint32_t)r;
		}
		t->raw_stack_map.data[t->raw_stack_map.len++] = stack;
	}
	return 0;
}

bool profile_thread_has_sched(const struct thread *th)
{
	static const struct sched_summary zero;

	return th->sched_markers.len || memcmp(&th->sched, &zero, sizeof(zero));
}

bool profile_model_has_sched(const struct model *m)
{
	for (size_t i = 0; i < m->threads.len; i++)
		if (profile_thread_has_sched(&m->threads.data[i]))
			return true;
	return false;
}

/* The marker names every profile has, and the scheduling ones when there is sched data. */
static int intern_marker_names(struct profile_tables *t, const struct model *m)
{
	static const char *const sched_names[] = {
		[SCHED_MARKER_OFFCPU] = "Off-CPU",
		[SCHED_MARKER_RUNNABLE] = "Runnable",
		[SCHED_MARKER_WAKEUP] = "Wakeup",
	};
	int64_t r;

	_Static_assert(sizeof(sched_names) / sizeof(sched_names[0]) ==
			       sizeof(t->sched_marker_names) / sizeof(t->sched_marker_names[0]),
		       "one name per sched marker kind");
	for (size_t i = 0; i < sizeof(sched_names) / sizeof(sched_names[0]); i++)
		t->sched_marker_names[i] = NO_INDEX;
	t->sched_summary_marker_name = NO_INDEX;

	r = intern_string(t, "Process");
	if (r < 0)
		return (int)r;
	t->process_marker_name = (uint32_t)r;
	t->lost_marker_name = NO_INDEX;
	if (m->lost.len) {
		r = intern_string(t, "Lost events");
		if (r < 0)
			return (int)r;
		t->lost_marker_name = (uint32_t)r;
	}
	if (!profile_model_has_sched(m))
		return 0;
	for (size_t i = 0; i < sizeof(sched_names) / sizeof(sched_names[0]); i++) {
		r = intern_string(t, sched_names[i]);
		if (r < 0)
			return (int)r;
		t->sched_marker_names[i] = (uint32_t)r;
	}
	r = intern_string(t, "Scheduling");
	if (r < 0)
		return (int)r;
	t->sched_summary_marker_name = (uint32_t)r;
	return 0;
}

static int intern_syscall_name(struct profile_tables *t, uint32_t nr)
{
	uint32_t slot = nr < SYSCALL_NR_MAX ? nr : SYSCALL_NR_MAX;
	char buf[32];
	int64_t r;

	if (t->syscall_marker_names[slot] != NO_INDEX)
		return 0;
	r = intern_string(t, slot == SYSCALL_NR_MAX ? "syscall"
						    : syscall_name_or_number(syscall_arch_native(),
									     nr, buf, sizeof(buf)));
	if (r < 0)
		return (int)r;
	t->syscall_marker_names[slot] = (uint32_t)r;
	return 0;
}

/* The names of the syscalls the threads' markers and totals name, and the totals' name. */
static int intern_syscall_names(struct profile_tables *t, const struct model *m)
{
	int64_t r;
	int err;

	for (size_t i = 0; i <= SYSCALL_NR_MAX; i++)
		t->syscall_marker_names[i] = NO_INDEX;
	t->syscall_totals_marker_name = NO_INDEX;
	for (size_t i = 0; i < m->threads.len; i++) {
		const struct thread *th = &m->threads.data[i];

		for (size_t k = 0; k < th->syscall_markers.len; k++)
			if ((err = intern_syscall_name(t, th->syscall_markers.data[k].nr)))
				return err;
		for (size_t k = 0; k < th->syscall_counts.len; k++)
			if ((err = intern_syscall_name(t, th->syscall_counts.data[k].nr)))
				return err;
		if (th->syscall_counts.len && t->syscall_totals_marker_name == NO_INDEX) {
			r = intern_string(t, "Syscall totals");
			if (r < 0)
				return (int)r;
			t->syscall_totals_marker_name = (uint32_t)r;
		}
	}
	return 0;
}

int profile_tables_build(struct profile_tables *t, const struct model *m, frame_resolve_fn resolve,
			 void *ctx)
{
	return profile_tables_build_locked(t, m, resolve, ctx, NULL);
}

int profile_tables_build_locked(struct profile_tables *t, const struct model *m,
				frame_resolve_fn resolve, void *ctx, struct fair_lock *lock)
{
	struct build_state s = { t, resolve, ctx, lock, false, NULL, { 0 } };
	int err;

	memset(t, 0, sizeof(*t));
	if (check_room(m->stacks.len) || check_room(m->frames.len))
		return -E2BIG;
	s.memo = malloc((m->frames.len ? m->frames.len : 1) * sizeof(*s.memo));
	if (!s.memo)
		return -ENOMEM;
	for (size_t i = 0; i < m->frames.len; i++)
		s.memo[i] = (struct frame_memo){ NO_INDEX, 0 };
	err = vec_reserve(&t->raw_stack_map, m->stacks.len);
	if (!err)
		err = map_raw_stacks(&s, m);
	if (s.locked)
		fair_unlock(lock);
	if (!err)
		err = source_namers_build(t, m);
	if (!err)
		err = intern_marker_names(t, m);
	if (!err)
		err = intern_syscall_names(t, m);
	free(s.memo);
	vec_free(&s.expansion);
	if (err)
		profile_tables_free(t);
	return err;
}

void profile_tables_free(struct profile_tables *t)
{
	strtab_free(&t->strings);
	vec_free(&t->funcs);
	vec_free(&t->frames);
	vec_free(&t->stacks);
	vec_free(&t->resources);
	for (size_t i = 0; i < t->libs.len; i++)
		free((void *)t->libs.data[i].obj);
	vec_free(&t->libs);
	vec_free(&t->native_symbols);
	vec_free(&t->sources);
	vec_free(&t->source_namers);
	vec_free(&t->raw_stack_map);
	hmap_free(&t->func_index);
	hmap_free(&t->frame_index);
	hmap_free(&t->stack_index);
	hmap_free(&t->resource_index);
	hmap_free(&t->lib_index);
	hmap_free(&t->source_index);
	hmap_free(&t->native_symbol_index);
}
