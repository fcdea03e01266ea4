// SPDX-License-Identifier: BSD-2-Clause
#include "shared_tables.h"

#include "source_namers.h"

void const_column(struct json_writer *w, const char *key, enum const_value v, size_t n)
{
	jw_key_array(w, key);
	for (size_t i = 0; i < n; i++) {
		switch (v) {
		case CONST_NULL:
			jw_null(w);
			break;
		case CONST_FALSE:
			jw_bool(w, false);
			break;
		case CONST_ZERO:
			jw_int(w, 0);
			break;
		case CONST_ONE:
			jw_int(w, 1);
			break;
		}
	}
	jw_end_array(w);
}

static void empty_column(struct json_writer *w, const char *key)
{
	const_column(w, key, CONST_NULL, 0);
}

/* "key": [vec[0].field, vec[1].field, ...]: a whole-number column, one value per row. */
#define UINT_COLUMN(w, key, vec, field)                   \
	do {                                              \
		jw_key_array(w, key);                     \
		for (size_t i_ = 0; i_ < (vec).len; i_++) \
			jw_uint(w, (vec).data[i_].field); \
		jw_end_array(w);                          \
	} while (0)

/* An int column where 0 or a negative number (per `none_below`) means null. */
static void jw_int_or_null(struct json_writer *w, int64_t v, int64_t none_below)
{
	if (v < none_below)
		jw_null(w);
	else
		jw_int(w, v);
}

static void write_strings(struct json_writer *w, const struct profile_tables *t)
{
	jw_key_array(w, "stringArray");
	for (size_t i = 0; i < strtab_len(&t->strings); i++)
		jw_string(w, strtab_get(&t->strings, (uint32_t)i));
	jw_end_array(w);
}

static void write_sources(struct json_writer *w, const struct profile_tables *t)
{
	size_t n = t->sources.len;

	jw_begin_table(w, "sources", n);
	const_column(w, "id", CONST_NULL, n);
	jw_key_array(w, "filename");
	for (size_t i = 0; i < n; i++)
		jw_uint(w, t->sources.data[i]);
	jw_end_array(w);
	const_column(w, "startLine", CONST_ONE, n);
	const_column(w, "startColumn", CONST_ONE, n);
	const_column(w, "sourceMapURL", CONST_NULL, n);
	const_column(w, "content", CONST_NULL, n);
	/* Not the front-end's: for `bpfprof view` (source_namers.h). */
	jw_key_array(w, "namedByUid");
	for (size_t i = 0; i < n; i++) {
		uint32_t uid = t->source_namers.data[i];

		if (uid == SOURCE_NAMER_NONE)
			jw_null(w);
		else
			jw_uint(w, uid);
	}
	jw_end_array(w);
	jw_end_object(w);

	jw_begin_table(w, "sourceLocationTable", 0);
	empty_column(w, "source");
	empty_column(w, "line");
	empty_column(w, "column");
	jw_end_object(w);
}

static void write_native_symbols(struct json_writer *w, const struct profile_tables *t);

static void write_resources(struct json_writer *w, const struct profile_tables *t)
{
	size_t n = t->resources.len;

	jw_begin_table(w, "resourceTable", n);
	jw_key_array(w, "lib");
	for (size_t i = 0; i < n; i++)
		jw_int_or_null(w, t->resources.data[i].lib, 0);
	jw_end_array(w);
	UINT_COLUMN(w, "name", t->resources, name);
	const_column(w, "host", CONST_NULL, n);
	/* Type 1 = library: every resource bpfprof makes is a binary or the kernel. */
	const_column(w, "type", CONST_ONE, n);
	jw_end_object(w);

	write_native_symbols(w, t);
}

/* The ELF symbols of user frames, for the assembly view (`bpfprof view`'s /asm/v1). */
static void write_native_symbols(struct json_writer *w, const struct profile_tables *t)
{
	size_t n = t->native_symbols.len;

	jw_begin_table(w, "nativeSymbols", n);
	UINT_COLUMN(w, "libIndex", t->native_symbols, lib);
	UINT_COLUMN(w, "address", t->native_symbols, address);
	UINT_COLUMN(w, "name", t->native_symbols, name);
	/* A symbol whose size the ELF did not give (0) is "unknown": the app disassembles on. */
	jw_key_array(w, "functionSize");
	for (size_t i = 0; i < n; i++) {
		if (t->native_symbols.data[i].size)
			jw_uint(w, t->native_symbols.data[i].size);
		else
			jw_null(w);
	}
	jw_end_array(w);
	jw_end_object(w);
}

static void write_funcs(struct json_writer *w, const struct profile_tables *t)
{
	size_t n = t->funcs.len;

	jw_begin_table(w, "funcTable", n);
	UINT_COLUMN(w, "name", t->funcs, name);
	jw_key_array(w, "isJS");
	for (size_t i = 0; i < n; i++)
		jw_bool(w, t->funcs.data[i].is_js);
	jw_end_array(w);
	const_column(w, "relevantForJS", CONST_FALSE, n);
	jw_key_array(w, "resource");
	for (size_t i = 0; i < n; i++)
		jw_int(w, t->funcs.data[i].resource < 0 ? -1 : t->funcs.data[i].resource);
	jw_end_array(w);
	jw_key_array(w, "source");
	for (size_t i = 0; i < n; i++)
		jw_int_or_null(w, t->funcs.data[i].source, 0);
	jw_end_array(w);
	jw_key_array(w, "lineNumber");
	for (size_t i = 0; i < n; i++)
		jw_int_or_null(w, t->funcs.data[i].line, 1);
	jw_end_array(w);
	const_column(w, "columnNumber", CONST_NULL, n);
	const_column(w, "originalLocation", CONST_NULL, n);
	jw_end_object(w);
}

static void write_frames(struct json_writer *w, const struct profile_tables *t)
{
	size_t n = t->frames.len;

	jw_begin_table(w, "frameTable", n);
	jw_key_array(w, "address");
	for (size_t i = 0; i < n; i++)
		jw_int(w, t->frames.data[i].address < 0 ? -1 : t->frames.data[i].address);
	jw_end_array(w);
	UINT_COLUMN(w, "inlineDepth", t->frames, inline_depth);
	UINT_COLUMN(w, "category", t->frames, category);
	/* Every category has subcategory 0 ("Other"); null here would break the category. */
	const_column(w, "subcategory", CONST_ZERO, n);
	UINT_COLUMN(w, "func", t->frames, func);
	jw_key_array(w, "nativeSymbol");
	for (size_t i = 0; i < n; i++)
		jw_int_or_null(w, t->frames.data[i].native_symbol, 0);
	jw_end_array(w);
	const_column(w, "innerWindowID", CONST_ZERO, n);
	jw_key_array(w, "line");
	for (size_t i = 0; i < n; i++)
		jw_int_or_null(w, t->frames.data[i].line, 1);
	jw_end_array(w);
	const_column(w, "column", CONST_NULL, n);
	const_column(w, "originalLocation", CONST_NULL, n);
	jw_end_object(w);
}

static void write_stacks(struct json_writer *w, const struct profile_tables *t)
{
	size_t n = t->stacks.len;

	jw_begin_table(w, "stackTable", n);
	UINT_COLUMN(w, "frame", t->stacks, frame);
	/* v66: distance back to the parent, 0 for a root; parents always precede children. */
	jw_key_array(w, "prefixOffset");
	for (size_t i = 0; i < n; i++) {
		uint32_t prefix = t->stacks.data[i].prefix;

		jw_uint(w, prefix == NO_INDEX ? 0 : i - prefix);
	}
	jw_end_array(w);
	jw_end_object(w);
}

void shared_tables_write(struct json_writer *w, const struct profile_tables *t)
{
	jw_key(w, "shared");
	jw_begin_object(w);
	write_strings(w, t);
	write_sources(w, t);
	write_resources(w, t);
	write_funcs(w, t);
	write_frames(w, t);
	write_stacks(w, t);
	jw_end_object(w);
}
