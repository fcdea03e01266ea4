// SPDX-License-Identifier: BSD-2-Clause
/*
 * The emitter end to end: a hand-built model, fake symbols, a real output
 * file (plain and .gz), parsed back with jansson and checked against every
 * item of the format spec's checklist (section 13) plus exact values.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "emit/emitter.h"
#include "emit/output_file.h"
#include "emit_fixture.h"
#include "read_file.h"
#include "test.h"

/* ==== reading files back ================================================== */

static bool file_starts_with(const char *path, const unsigned char *magic, size_t n)
{
	unsigned char buf[8] = { 0 };
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool ok;

	if (fd < 0)
		return false;
	ok = read(fd, buf, n) == (ssize_t)n && !memcmp(buf, magic, n);
	close(fd);
	return ok;
}

static int count_dir_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static void remove_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[512];

	if (!d)
		return;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		unlink(path);
	}
	closedir(d);
	rmdir(dir);
}

/* ==== the checklist (spec section 13), reusable on any parsed profile ====== */

static int violations;

#define VIOLATION(...)                                      \
	do {                                                \
		fprintf(stderr, "  checklist violation: "); \
		fprintf(stderr, __VA_ARGS__);               \
		fputc('\n', stderr);                        \
		violations++;                               \
	} while (0)

enum { ALLOW_NULL = 1, ALLOW_MINUS1 = 2 };

/* Item 1: jansson rejects NaN/Infinity tokens, but make sure no real is non-finite. */
static void check_finite(json_t *v)
{
	const char *key;
	json_t *child;
	size_t i;

	if (json_is_real(v) && !isfinite(json_real_value(v)))
		VIOLATION("non-finite number");
	if (json_is_object(v))
		json_object_foreach(v, key, child) check_finite(child);
	if (json_is_array(v))
		json_array_foreach(v, i, child) check_finite(child);
}

/* Item 2: a table whose every array column has exactly `length` entries. -1 if broken. */
static json_int_t table_length(json_t *parent, const char *name, const char *const *columns)
{
	json_t *t = json_object_get(parent, name), *len, *col;
	const char *key;
	json_int_t n;

	if (!json_is_object(t)) {
		VIOLATION("table %s is missing", name);
		return -1;
	}
	len = json_object_get(t, "length");
	if (!json_is_integer(len) || json_integer_value(len) < 0) {
		VIOLATION("%s.length is not a count", name);
		return -1;
	}
	n = json_integer_value(len);
	for (const char *const *c = columns; *c; c++)
		if (!json_is_array(json_object_get(t, *c)))
			VIOLATION("%s.%s is not an array", name, *c);
	json_object_foreach(t, key,
			    col) if (json_is_array(col) && (json_int_t)json_array_size(col) != n)
		VIOLATION("%s.%s has %zu entries but length is %lld", name, key,
			  json_array_size(col), (long long)n);
	return n;
}

/* Item 3: every entry of `col` indexes something of size `limit` (or is an allowed sentinel). */
static void check_indexes(json_t *table, const char *tname, const char *col, json_int_t limit,
			  int allow)
{
	json_t *arr = json_object_get(table, col), *v;
	size_t i;

	json_array_foreach(arr, i, v)
	{
		json_int_t x;

		if (json_is_null(v) && (allow & ALLOW_NULL))
			continue;
		if (json_is_integer(v)) {
			x = json_integer_value(v);
			if ((x == -1 && (allow & ALLOW_MINUS1)) || (x >= 0 && x < limit))
				continue;
		}
		VIOLATION("%s.%s[%zu] is not an index below %lld", tname, col, i, (long long)limit);
	}
}

static bool is_allowed_color(const char *c)
{
	static const char *const colors[] = { "transparent", "purple",	  "green",    "orange",
					      "yellow",	     "lightblue", "blue",     "brown",
					      "magenta",     "red",	  "lightred", "darkgrey",
					      "grey" };

	for (size_t i = 0; c && i < sizeof(colors) / sizeof(colors[0]); i++)
		if (!strcmp(c, colors[i]))
			return true;
	return false;
}

/* Items 1 (µ), 7 (grey): meta; returns the categories array. */
static json_t *check_meta(json_t *meta)
{
	json_t *cats = json_object_get(meta, "categories"), *cat, *units;
	bool grey = false;
	size_t i;

	if (!json_is_object(meta)) {
		VIOLATION("meta is missing");
		return NULL;
	}
	if (json_integer_value(json_object_get(meta, "preprocessedProfileVersion")) != 66)
		VIOLATION("meta.preprocessedProfileVersion is not 66");
	if (!json_is_number(json_object_get(meta, "interval")) ||
	    json_number_value(json_object_get(meta, "interval")) <= 0)
		VIOLATION("meta.interval is not a positive number");
	if (!json_is_number(json_object_get(meta, "startTime")))
		VIOLATION("meta.startTime is not a number");
	if (!json_is_array(json_object_get(meta, "markerSchema")))
		VIOLATION("meta.markerSchema is not an array");
	if (!json_is_true(json_object_get(meta, "symbolicated")))
		VIOLATION("meta.symbolicated is not true");
	units = json_object_get(meta, "sampleUnits");
	if (!json_is_string(json_object_get(units, "threadCPUDelta")) ||
	    strcmp(json_string_value(json_object_get(units, "threadCPUDelta")), "\xc2\xb5s"))
		VIOLATION("meta.sampleUnits.threadCPUDelta is not U+00B5 's'");
	if (!json_is_string(json_object_get(units, "time")) ||
	    strcmp(json_string_value(json_object_get(units, "time")), "ms"))
		VIOLATION("meta.sampleUnits.time is not ms");
	if (!json_is_array(cats) || !json_array_size(cats)) {
		VIOLATION("meta.categories is empty");
		return NULL;
	}
	json_array_foreach(cats, i, cat)
	{
		json_t *subs = json_object_get(cat, "subcategories");
		const char *color = json_string_value(json_object_get(cat, "color"));

		if (!json_is_string(json_object_get(cat, "name")))
			VIOLATION("category %zu has no name", i);
		if (!is_allowed_color(color))
			VIOLATION("category %zu has color %s", i, color ? color : "(none)");
		if (color && !strcmp(color, "grey"))
			grey = true;
		if (!json_is_array(subs) || !json_array_size(subs))
			VIOLATION("category %zu has no subcategories", i);
	}
	if (!grey)
		VIOLATION("no grey category");
	return cats;
}

/* Items 3 and 7: frame categories and subcategories. */
static void check_frame_categories(json_t *frames, json_t *cats)
{
	json_t *cat_col = json_object_get(frames, "category");
	json_t *sub_col = json_object_get(frames, "subcategory");
	json_t *c;
	size_t i;

	json_array_foreach(cat_col, i, c)
	{
		json_t *s = json_array_get(sub_col, i), *subs;

		if (json_is_null(c))
			continue;
		if (!json_is_integer(c) || json_integer_value(c) < 0 ||
		    (size_t)json_integer_value(c) >= json_array_size(cats)) {
			VIOLATION("frameTable.category[%zu] out of range", i);
			continue;
		}
		subs = json_object_get(json_array_get(cats, (size_t)json_integer_value(c)),
				       "subcategories");
		if (!json_is_integer(s) || json_integer_value(s) < 0 ||
		    (size_t)json_integer_value(s) >= json_array_size(subs))
			VIOLATION("frameTable.subcategory[%zu] is null or out of range", i);
	}
}

/* Item 4: parents before children, prefixOffset 0 (root) or a positive step back. */
static void check_stack_table(json_t *stacks)
{
	json_t *off = json_object_get(stacks, "prefixOffset"), *v;
	size_t i;

	if (json_object_get(stacks, "prefix"))
		VIOLATION("stackTable has a v65 prefix column");
	json_array_foreach(off, i, v)
	{
		if (!json_is_integer(v) || json_integer_value(v) < 0 ||
		    (size_t)json_integer_value(v) > i)
			VIOLATION("stackTable.prefixOffset[%zu] does not point backwards", i);
	}
}

struct shared_sizes {
	json_int_t strings, libs, sources, resources, symbols, funcs, frames, stacks, categories;
};

static void check_shared(json_t *root, json_t *cats, struct shared_sizes *n)
{
	static const char *const sources_cols[] = { "id",	   "filename",	   "startLine",
						    "startColumn", "sourceMapURL", "content",
						    NULL };
	static const char *const srcloc_cols[] = { "source", "line", "column", NULL };
	static const char *const res_cols[] = { "lib", "name", "host", "type", NULL };
	static const char *const sym_cols[] = { "libIndex", "address", "name", "functionSize",
						NULL };
	static const char *const func_cols[] = {
		"name",	      "isJS",	      "relevantForJS",	  "resource", "source",
		"lineNumber", "columnNumber", "originalLocation", NULL
	};
	static const char *const frame_cols[] = { "address",	      "inlineDepth", "category",
						  "subcategory",      "func",	     "nativeSymbol",
						  "innerWindowID",    "line",	     "column",
						  "originalLocation", NULL };
	static const char *const stack_cols[] = { "frame", "prefixOffset", NULL };
	json_t *shared = json_object_get(root, "shared"), *strings, *v;
	size_t i;

	memset(n, 0, sizeof(*n));
	n->categories = (json_int_t)json_array_size(cats);
	n->libs = (json_int_t)json_array_size(json_object_get(root, "libs"));
	if (!json_is_object(shared)) {
		VIOLATION("shared is missing");
		return;
	}
	strings = json_object_get(shared, "stringArray");
	if (!json_is_array(strings))
		VIOLATION("shared.stringArray is missing");
	json_array_foreach(strings, i, v) if (!json_is_string(v))
		VIOLATION("stringArray[%zu] is not a string", i);
	n->strings = (json_int_t)json_array_size(strings);

	n->sources = table_length(shared, "sources", sources_cols);
	table_length(shared, "sourceLocationTable", srcloc_cols);
	n->resources = table_length(shared, "resourceTable", res_cols);
	n->symbols = table_length(shared, "nativeSymbols", sym_cols);
	n->funcs = table_length(shared, "funcTable", func_cols);
	n->frames = table_length(shared, "frameTable", frame_cols);
	n->stacks = table_length(shared, "stackTable", stack_cols);

	check_indexes(json_object_get(shared, "sources"), "sources", "filename", n->strings, 0);
	check_indexes(json_object_get(shared, "resourceTable"), "resourceTable", "lib", n->libs,
		      ALLOW_NULL);
	check_indexes(json_object_get(shared, "resourceTable"), "resourceTable", "name", n->strings,
		      0);
	check_indexes(json_object_get(shared, "resourceTable"), "resourceTable", "host", n->strings,
		      ALLOW_NULL);
	check_indexes(json_object_get(shared, "nativeSymbols"), "nativeSymbols", "libIndex",
		      n->libs, 0);
	check_indexes(json_object_get(shared, "nativeSymbols"), "nativeSymbols", "name", n->strings,
		      0);
	if (json_object_get(json_object_get(shared, "funcTable"), "fileName"))
		VIOLATION("funcTable has a pre-v58 fileName column");
	check_indexes(json_object_get(shared, "funcTable"), "funcTable", "name", n->strings, 0);
	check_indexes(json_object_get(shared, "funcTable"), "funcTable", "resource", n->resources,
		      ALLOW_MINUS1);
	check_indexes(json_object_get(shared, "funcTable"), "funcTable", "source", n->sources,
		      ALLOW_NULL);
	check_indexes(json_object_get(shared, "frameTable"), "frameTable", "func", n->funcs, 0);
	check_indexes(json_object_get(shared, "frameTable"), "frameTable", "nativeSymbol",
		      n->symbols, ALLOW_NULL);
	check_indexes(json_object_get(shared, "frameTable"), "frameTable", "inlineDepth", INT32_MAX,
		      0);
	check_frame_categories(json_object_get(shared, "frameTable"), cats);
	check_indexes(json_object_get(shared, "stackTable"), "stackTable", "frame", n->frames, 0);
	check_stack_table(json_object_get(shared, "stackTable"));
}

static json_t *find_schema(json_t *meta, const char *type)
{
	json_t *s;
	size_t i;

	json_array_foreach(json_object_get(meta, "markerSchema"), i, s)
	{
		const char *name = json_string_value(json_object_get(s, "name"));

		if (type && name && !strcmp(name, type))
			return s;
	}
	return NULL;
}

static bool format_is(const char *format, const char *const *list)
{
	for (; *list; list++)
		if (!strcmp(format, *list))
			return true;
	return false;
}

/* Item 9, value types (spec 3.4), and the cause backtrace of spec 7.2. */
static void check_marker_data(json_t *data, json_t *schema, const struct shared_sizes *n, size_t ti,
			      size_t mi)
{
	static const char *const inline_strings[] = { "url", "file-path", "sanitized-string",
						      "string", NULL };
	static const char *const string_indexes[] = { "unique-string", "flow-id",
						      "terminating-flow-id", NULL };
	static const char *const numbers[] = { "duration",     "time",	       "seconds",
					       "milliseconds", "microseconds", "nanoseconds",
					       "bytes",	       "percentage",   "integer",
					       "decimal",      "hexadecimal",  NULL };
	json_t *field, *cause = json_object_get(data, "cause"), *st;
	size_t i;

	if (cause) {
		st = json_object_get(cause, "stack");
		if (!json_is_integer(st) || json_integer_value(st) < 0 ||
		    json_integer_value(st) >= n->stacks)
			VIOLATION("thread %zu marker %zu has a cause without a valid stack", ti,
				  mi);
	}
	json_array_foreach(json_object_get(schema, "fields"), i, field)
	{
		const char *key = json_string_value(json_object_get(field, "key"));
		const char *format = json_string_value(json_object_get(field, "format"));
		json_t *v = key ? json_object_get(data, key) : NULL;

		if (!v || json_is_null(v) || !format)
			continue;
		if ((format_is(format, inline_strings) && !json_is_string(v)) ||
		    (format_is(format, numbers) && !json_is_number(v)) ||
		    (format_is(format, string_indexes) &&
		     (!json_is_integer(v) || json_integer_value(v) < 0 ||
		      json_integer_value(v) >= n->strings)))
			VIOLATION("thread %zu marker %zu: %s does not match format %s", ti, mi, key,
				  format);
	}
}

/* Items 8 and 9. */
static void check_markers(json_t *th, json_t *meta, const struct shared_sizes *n, size_t ti)
{
	static const char *const cols[] = { "name",	"startTime", "endTime", "phase",
					    "category", "data",	     NULL };
	json_t *mk = json_object_get(th, "markers"), *phase;
	size_t i;

	if (table_length(th, "markers", cols) < 0)
		return;
	check_indexes(mk, "markers", "name", n->strings, 0);
	check_indexes(mk, "markers", "category", n->categories, 0);
	json_array_foreach(json_object_get(mk, "phase"), i, phase)
	{
		json_int_t p = json_integer_value(phase);
		json_t *start = json_array_get(json_object_get(mk, "startTime"), i);
		json_t *end = json_array_get(json_object_get(mk, "endTime"), i);
		json_t *data = json_array_get(json_object_get(mk, "data"), i);
		json_t *schema =
			find_schema(meta, json_string_value(json_object_get(data, "type")));

		if (!json_is_integer(phase) || p < 0 || p > 3)
			VIOLATION("thread %zu marker %zu has phase %lld", ti, i, (long long)p);
		if ((p == 0 || p == 1 || p == 2) && !json_is_number(start))
			VIOLATION("thread %zu marker %zu needs a startTime", ti, i);
		if ((p == 1 || p == 3) && !json_is_number(end))
			VIOLATION("thread %zu marker %zu needs an endTime", ti, i);
		if (json_is_object(data) && !schema)
			VIOLATION("thread %zu marker %zu has a data.type without schema", ti, i);
		if (schema)
			check_marker_data(data, schema, n, ti, i);
	}
}

/* Items 5 and 11: sorted samples, ms times within the profile. */
static void check_samples(json_t *th, const struct shared_sizes *n, double end_ms, size_t ti)
{
	static const char *const cols[] = { "stack", NULL };
	json_t *s = json_object_get(th, "samples"), *v;
	json_t *deltas = json_object_get(s, "timeDeltas"), *times = json_object_get(s, "time");
	double t = 0;
	size_t i;

	if (table_length(th, "samples", cols) < 0)
		return;
	check_indexes(s, "samples", "stack", n->stacks, ALLOW_NULL);
	if (!!deltas == !!times)
		VIOLATION("thread %zu needs exactly one of samples.time and timeDeltas", ti);
	json_array_foreach(deltas ? deltas : times, i, v)
	{
		double x = json_number_value(v);

		if (!json_is_number(v) || (deltas && x < 0) || (times && x < t))
			VIOLATION("thread %zu sample %zu goes back in time", ti, i);
		t = deltas ? t + x : x;
		if (t < 0 || (end_ms > 0 && t > end_ms + 1e-6))
			VIOLATION("thread %zu sample %zu at %f ms is outside the profile", ti, i,
				  t);
	}
	json_array_foreach(json_object_get(s, "threadCPUDelta"), i,
			   v) if (!json_is_null(v) &&
				  !(json_is_integer(v) && json_integer_value(v) >= 0))
		VIOLATION("thread %zu threadCPUDelta[%zu] is not a count of \xc2\xb5s", ti, i);
	v = json_object_get(s, "weight");
	if (!json_is_null(v) && !json_is_array(v))
		VIOLATION("thread %zu samples.weight is neither null nor an array", ti);
}

static void check_time_field(json_t *th, const char *key, bool nullable, size_t ti)
{
	json_t *v = json_object_get(th, key);

	if (nullable && json_is_null(v))
		return;
	if (!json_is_number(v) || json_number_value(v) < 0)
		VIOLATION("thread %zu %s is not a time in ms", ti, key);
}

/* Items 6, 10 and 11 over all threads. */
static void check_threads(json_t *root, json_t *meta, const struct shared_sizes *n)
{
	json_t *threads = json_object_get(root, "threads"), *th, *mains = json_object();
	json_t *end = json_object_get(meta, "profilingEndTime"), *v;
	const char *pid;
	size_t i;

	if (!json_is_array(threads) || !json_array_size(threads))
		VIOLATION("threads is empty");
	json_array_foreach(threads, i, th)
	{
		json_t *p = json_object_get(th, "pid"), *count;

		if (!json_is_string(p)) {
			VIOLATION("thread %zu pid is not a string", i);
			continue;
		}
		if (!json_is_string(json_object_get(th, "name")))
			VIOLATION("thread %zu has no name", i);
		if (!json_is_boolean(json_object_get(th, "isMainThread")))
			VIOLATION("thread %zu isMainThread is not a boolean", i);
		if (!json_is_string(json_object_get(th, "processType")))
			VIOLATION("thread %zu has no processType", i);
		v = json_object_get(th, "tid");
		if (!json_is_integer(v) && !json_is_string(v))
			VIOLATION("thread %zu tid is neither number nor string", i);
		if (!json_is_array(json_object_get(th, "pausedRanges")))
			VIOLATION("thread %zu pausedRanges is not an array", i);
		check_time_field(th, "registerTime", false, i);
		check_time_field(th, "processStartupTime", false, i);
		check_time_field(th, "unregisterTime", true, i);
		check_time_field(th, "processShutdownTime", true, i);
		count = json_object_get(mains, json_string_value(p));
		json_object_set_new(
			mains, json_string_value(p),
			json_integer(json_integer_value(count) +
				     json_is_true(json_object_get(th, "isMainThread"))));
		check_samples(th, n, json_is_number(end) ? json_number_value(end) : -1, i);
		check_markers(th, meta, n, i);
	}
	json_object_foreach(mains, pid, v) if (json_integer_value(v) != 1)
		VIOLATION("pid %s has %lld main threads", pid, (long long)json_integer_value(v));
	json_decref(mains);
	json_array_foreach(json_object_get(meta, "initialVisibleThreads"), i,
			   v) if (!json_is_integer(v) || json_integer_value(v) < 0 ||
				  (size_t)json_integer_value(v) >= json_array_size(threads))
		VIOLATION("initialVisibleThreads[%zu] names no thread", i);
}

/* Number of checklist violations in a parsed profile (each printed). */
static int check_profile(json_t *root)
{
	struct shared_sizes n;
	json_t *meta, *cats;

	violations = 0;
	if (!json_is_object(root)) {
		VIOLATION("not an object");
		return violations;
	}
	meta = json_object_get(root, "meta");
	cats = check_meta(meta);
	if (!json_is_array(json_object_get(root, "libs")))
		VIOLATION("libs is not an array");
	check_shared(root, cats, &n);
	check_threads(root, meta, &n);
	check_finite(root);
	return violations;
}

/* ==== emitting into a temporary directory ================================== */

static const struct profile_meta test_meta = {
	.product_version = "0.1.0",
	.command_line = "bpfprof record -a -o \xff.json", /* not UTF-8 on purpose */
	.hostname = "testhost",
	.kernel_release = "6.18.0-test",
	.arch = "x86_64",
	.logical_cpus = 2,
	.sample_freq_hz = 4000,
	.sample_event = "cpu-clock",
	.target = "all",
	.start_wall_ms = 1767225600000.5,
	.lost_samples = 3,
	.lost_other = 4,
	.include_idle = true,
};

struct emitted {
	char dir[64];
	char path[128];
	json_t *root;
	int err;
};

/* Emit through output_file into a fresh directory; parse the result back. */
static void emit_with(struct emitted *e, const char *name, const struct model *m,
		      const struct profile_tables *t, const struct profile_meta *meta)
{
	struct output_file o;
	json_error_t jerr;
	size_t len;
	char *text;

	memset(e, 0, sizeof(*e));
	strcpy(e->dir, "/tmp/bpfprof-emit-XXXXXX");
	if (!mkdtemp(e->dir)) {
		e->err = -errno;
		return;
	}
	snprintf(e->path, sizeof(e->path), "%s/%s", e->dir, name);
	e->err = output_file_open(&o, e->path);
	if (e->err)
		return;
	e->err = emit_profile_fd(o.fd, o.gzip, m, t, meta);
	if (e->err) {
		output_file_free(&o);
		return;
	}
	e->err = output_file_commit(&o);
	output_file_free(&o);
	if (e->err)
		return;
	text = read_all_gz(e->path, &len);
	if (!text) {
		e->err = -EIO;
		return;
	}
	e->root = json_loadb(text, len, 0, &jerr);
	if (!e->root) {
		fprintf(stderr, "jansson: %s at line %d col %d\n", jerr.text, jerr.line,
			jerr.column);
		e->err = -EINVAL;
	}
	free(text);
}

static void emit_to(struct emitted *e, const char *name, const struct model *m,
		    const struct profile_tables *t)
{
	emit_with(e, name, m, t, &test_meta);
}

static void emitted_free(struct emitted *e)
{
	json_decref(e->root);
	remove_dir(e->dir);
}

struct fixture {
	struct model m;
	struct profile_tables t;
	struct fx_resolver r;
	bool tables;
};

/*
 * The fixture model, with its scheduling part when `sched` (its off-CPU
 * leaves are named by the profile tables, as in a recording).
 */
static int fixture_init_with(struct fixture *f, bool sched)
{
	memset(f, 0, sizeof(*f));
	if (fx_model_build(&f->m))
		return -1;
	if (sched) {
		if (fx_add_sched(&f->m))
			return -1;
	}
	f->r.m = &f->m;
	if (profile_tables_build(&f->t, &f->m, fx_resolve, &f->r))
		return -1;
	f->tables = true;
	return 0;
}

static int fixture_init(struct fixture *f)
{
	return fixture_init_with(f, false);
}

static void fixture_free(struct fixture *f)
{
	if (f->tables)
		profile_tables_free(&f->t);
	fx_model_free(&f->m);
}

/* ==== navigating a parsed profile ========================================= */

static json_t *shared_col(json_t *root, const char *table, const char *col)
{
	return json_object_get(json_object_get(json_object_get(root, "shared"), table), col);
}

static json_int_t col_int(json_t *root, const char *table, const char *col, json_int_t i)
{
	return json_integer_value(json_array_get(shared_col(root, table, col), (size_t)i));
}

static const char *string_at(json_t *root, json_int_t i)
{
	return json_string_value(json_array_get(
		json_object_get(json_object_get(root, "shared"), "stringArray"), (size_t)i));
}

static const char *frame_func_name(json_t *root, json_int_t frame)
{
	return string_at(root, col_int(root, "funcTable", "name",
				       col_int(root, "frameTable", "func", frame)));
}

static json_int_t stack_frame(json_t *root, json_int_t stack)
{
	return col_int(root, "stackTable", "frame", stack);
}

static json_int_t stack_parent(json_t *root, json_int_t stack)
{
	json_int_t off = col_int(root, "stackTable", "prefixOffset", stack);

	return off ? stack - off : -1;
}

/* "root>...>leaf" by func name, or "null". */
static void stack_path(json_t *root, json_t *stack, char *buf, size_t size)
{
	const char *names[64];
	size_t n = 0, off = 0;

	if (!json_is_integer(stack)) {
		snprintf(buf, size, "null");
		return;
	}
	buf[0] = '\0';
	for (json_int_t s = json_integer_value(stack); s >= 0 && n < 64; s = stack_parent(root, s))
		names[n++] = frame_func_name(root, stack_frame(root, s));
	while (n--)
		off += (size_t)snprintf(buf + off, size - off, "%s%s", names[n], n ? ">" : "");
}

static json_t *thread_at(json_t *root, size_t i)
{
	return json_array_get(json_object_get(root, "threads"), i);
}

static json_t *sample_col(json_t *th, const char *col)
{
	return json_object_get(json_object_get(th, "samples"), col);
}

static json_t *find_lib(json_t *root, const char *name)
{
	json_t *lib;
	size_t i;

	json_array_foreach(
		json_object_get(root, "libs"), i,
		lib) if (!strcmp(json_string_value(json_object_get(lib, "name")), name)) return lib;
	return NULL;
}

static json_t *extra_entry(json_t *root, const char *label)
{
	json_t *sec = json_array_get(json_object_get(json_object_get(root, "meta"), "extra"), 0);
	json_t *e;
	size_t i;

	json_array_foreach(json_object_get(sec, "entries"), i,
			   e) if (!strcmp(json_string_value(json_object_get(e, "label")),
					  label)) return json_object_get(e, "value");
	return NULL;
}

/* ==== tests =============================================================== */

static void test_breakpad_id(void)
{
	char id[34];

	emit_breakpad_id(FX_APP_BUILD_ID, id);
	CHECK_EQ_STR(id, FX_APP_BREAKPAD);
	emit_breakpad_id("510D0A5C19EADF8043F203B4525BE9BE3DCB9554", id);
	CHECK_EQ_STR(id, FX_APP_BREAKPAD);
	emit_breakpad_id(NULL, id);
	CHECK_EQ_STR(id, FX_ZERO_BREAKPAD);
	emit_breakpad_id("", id);
	CHECK_EQ_STR(id, FX_ZERO_BREAKPAD);
	emit_breakpad_id("not-hex!", id);
	CHECK_EQ_STR(id, FX_ZERO_BREAKPAD);
	/* An 8-byte build-id fills the first GUID fields and leaves the rest zero. */
	emit_breakpad_id("0102030405060708", id);
	CHECK_EQ_STR(id, "040302010605080700000000000000000");
}

/*
 * Everything the fixture should produce, on a parsed profile; with its
 * scheduling part, which must leave the threads of the base fixture alone,
 * two threads more.
 */
static void check_fixture_values(json_t *root, bool sched)
{
	static const char *const names[] = { "swapper/0", "swapper/1", "app", "worker", "tool" };
	static const char *const procs[] = { "swapper", "swapper", "app", "app", "tool" };
	static const char *const pids[] = { "0", "0", "100", "100", "200" };
	static const int tids[] = { 0, 0, 100, 101, 200 };
	static const bool mains[] = { true, false, true, false, true };
	static const double registered[] = { 0, 0, 0, 1, 5 };
	static const double started[] = { 0, 0, 0, 0, 5 };
	static const char *const types[] = { "idle", "idle", "user", "user", "user" };
	json_t *meta = json_object_get(root, "meta"), *th, *lib, *cats;
	json_int_t leaf, parent, res;
	char path[512];

	/* meta */
	CHECK(json_real_value(json_object_get(meta, "interval")) == 0.25);
	CHECK(json_number_value(json_object_get(meta, "startTime")) == 1767225600000.5);
	CHECK_EQ_INT(json_integer_value(json_object_get(
			     meta, "startTimeAsClockMonotonicNanosecondsSinceBoot")),
		     FX_START_TS);
	CHECK(json_number_value(json_object_get(meta, "profilingStartTime")) == 0);
	CHECK(json_number_value(json_object_get(meta, "profilingEndTime")) == 10);
	CHECK_EQ_STR(json_string_value(json_object_get(meta, "product")), "bpfprof");
	CHECK_EQ_INT(json_integer_value(json_object_get(meta, "version")), 24);
	CHECK_EQ_STR(json_string_value(json_object_get(meta, "oscpu")), "Linux 6.18.0-test x86_64");
	CHECK_EQ_STR(json_string_value(json_object_get(meta, "platform")), "X11");
	CHECK_EQ_INT(json_integer_value(json_object_get(meta, "logicalCPUs")), 2);
	CHECK(json_is_true(json_object_get(meta, "usesOnlyOneStackType")));
	CHECK(json_is_true(json_object_get(meta, "sourceCodeIsNotOnSearchfox")));
	CHECK(json_is_false(json_object_get(meta, "debug")));
	CHECK_EQ_INT(json_integer_value(json_object_get(meta, "stackwalk")), 1);
	CHECK_EQ_INT(json_integer_value(json_object_get(meta, "processType")), 0);
	/* The invalid byte of the command line arrives as U+FFFD. */
	CHECK_EQ_STR(json_string_value(json_object_get(meta, "arguments")),
		     "bpfprof record -a -o \xef\xbf\xbd.json");
	cats = json_object_get(meta, "categories");
	CHECK_EQ_INT(json_array_size(cats), CAT_COUNT);
	CHECK_EQ_STR(json_string_value(json_object_get(json_array_get(cats, CAT_JAVA), "name")),
		     "Java");
	CHECK_EQ_STR(json_string_value(json_object_get(json_array_get(cats, CAT_JS), "name")),
		     "JavaScript");
	CHECK_EQ_STR(json_string_value(json_object_get(json_array_get(cats, 0), "color")), "grey");
	CHECK_EQ_STR(json_string_value(json_object_get(json_array_get(cats, CAT_PYTHON), "name")),
		     "Python");
	CHECK_EQ_STR(json_string_value(json_object_get(json_array_get(cats, CAT_PYTHON), "color")),
		     "blue");
	CHECK_EQ_STR(json_string_value(json_object_get(json_array_get(cats, CAT_KERNEL), "name")),
		     "Kernel");
	CHECK_EQ_STR(json_string_value(json_object_get(json_array_get(cats, CAT_KERNEL), "color")),
		     "orange");
	CHECK_EQ_STR(json_string_value(json_object_get(json_array_get(cats, CAT_USER), "name")),
		     "User");
	CHECK_EQ_STR(json_string_value(json_object_get(json_array_get(cats, CAT_USER), "color")),
		     "yellow");
	CHECK_EQ_STR(json_string_value(json_object_get(json_array_get(cats, CAT_OFFCPU), "name")),
		     "Off-CPU");
	CHECK_EQ_STR(json_string_value(json_object_get(json_array_get(cats, CAT_OFFCPU), "color")),
		     "lightblue");
	CHECK_EQ_STR(
		json_string_value(json_array_get(
			json_object_get(json_array_get(cats, CAT_OFFCPU), "subcategories"), 0)),
		"Other");
	CHECK_EQ_INT(
		json_array_size(json_object_get(json_array_get(cats, CAT_OFFCPU), "subcategories")),
		1);
	CHECK_EQ_STR(json_string_value(
			     json_object_get(json_object_get(meta, "sampleUnits"), "eventDelay")),
		     "ms");
	CHECK_EQ_STR(json_string_value(json_object_get(
			     json_array_get(json_object_get(meta, "extra"), 0), "label")),
		     "bpfprof");
	CHECK_EQ_INT(json_integer_value(extra_entry(root, "Lost samples")), 3);
	CHECK_EQ_INT(json_integer_value(extra_entry(root, "Lost other events")), 4);
	CHECK_EQ_INT(json_integer_value(extra_entry(root, "Sampling frequency (Hz)")), 4000);
	CHECK_EQ_STR(json_string_value(extra_entry(root, "Host")), "testhost");
	CHECK_EQ_STR(json_string_value(extra_entry(root, "Kernel")), "6.18.0-test");
	CHECK_EQ_STR(json_string_value(extra_entry(root, "Target")), "all");
	CHECK_EQ_STR(json_string_value(extra_entry(root, "Sample event")), "cpu-clock");
	CHECK(json_is_string(extra_entry(root, "Command line")));

	/* top level */
	CHECK_EQ_INT(json_array_size(json_object_get(root, "pages")), 0);
	CHECK_EQ_INT(json_array_size(json_object_get(root, "counters")), 0);
	CHECK(json_is_array(json_object_get(root, "profilerOverhead")));

	/* libs */
	lib = find_lib(root, "app");
	CHECK(lib != NULL);
	CHECK_EQ_STR(json_string_value(json_object_get(lib, "breakpadId")), FX_APP_BREAKPAD);
	CHECK_EQ_STR(json_string_value(json_object_get(lib, "codeId")), FX_APP_BUILD_ID);
	CHECK_EQ_STR(json_string_value(json_object_get(lib, "path")), "/usr/bin/app");
	CHECK_EQ_STR(json_string_value(json_object_get(lib, "debugPath")), "/usr/bin/app");
	CHECK_EQ_STR(json_string_value(json_object_get(lib, "debugName")), "app");
	CHECK_EQ_STR(json_string_value(json_object_get(lib, "arch")), "x86_64");
	lib = find_lib(root, "libc.so.6");
	CHECK(lib != NULL);
	CHECK_EQ_STR(json_string_value(json_object_get(lib, "breakpadId")), FX_ZERO_BREAKPAD);
	CHECK(json_is_null(json_object_get(lib, "codeId")));
	CHECK_EQ_INT(json_array_size(json_object_get(root, "libs")), 2);

	/* threads: order, names, pids, main flags, times */
	CHECK_EQ_INT(json_array_size(json_object_get(root, "threads")), sched ? 7 : 5);
	for (size_t i = 0; i < 5; i++) {
		th = thread_at(root, i);
		CHECK_EQ_STR(json_string_value(json_object_get(th, "name")), names[i]);
		CHECK_EQ_STR(json_string_value(json_object_get(th, "processName")), procs[i]);
		CHECK_EQ_STR(json_string_value(json_object_get(th, "pid")), pids[i]);
		CHECK_EQ_INT(json_integer_value(json_object_get(th, "tid")), tids[i]);
		CHECK_EQ_INT(json_is_true(json_object_get(th, "isMainThread")), mains[i]);
		CHECK(json_number_value(json_object_get(th, "registerTime")) == registered[i]);
		CHECK(json_number_value(json_object_get(th, "processStartupTime")) == started[i]);
		CHECK_EQ_STR(json_string_value(json_object_get(th, "processType")), types[i]);
		CHECK(json_is_null(json_object_get(th, "processShutdownTime")));
		CHECK(json_is_null(json_object_get(th, "unregisterTime")));
		CHECK(json_is_true(json_object_get(th, "showMarkersInTimeline")));
		CHECK(json_is_null(sample_col(th, "weight")));
		CHECK_EQ_STR(json_string_value(sample_col(th, "weightType")), "samples");
		/* Every non-idle process's main thread carries one Process marker. */
		{
			json_t *mk = json_object_get(th, "markers");
			bool has_process = mains[i] && strcmp(pids[i], "0") != 0;
			json_t *data = json_array_get(json_object_get(mk, "data"), 0);
			json_t *names =
				json_object_get(json_object_get(root, "shared"), "stringArray");
			json_int_t name =
				json_integer_value(json_array_get(json_object_get(mk, "name"), 0));

			CHECK_EQ_INT(json_integer_value(json_object_get(mk, "length")),
				     has_process ? 1 : 0);
			if (has_process) {
				CHECK_EQ_STR(json_string_value(json_object_get(data, "type")),
					     "bpfprof.Process");
				CHECK_EQ_STR(json_string_value(json_object_get(data, "pid")),
					     pids[i]);
				CHECK_EQ_STR(json_string_value(json_array_get(names, (size_t)name)),
					     "Process");
				CHECK_EQ_INT(json_integer_value(json_array_get(
						     json_object_get(mk, "phase"), 0)),
					     0);
			}
		}
	}

	/* app's main thread: times, CPU deltas, stacks */
	th = thread_at(root, 2);
	{
		static const double deltas[] = { 1, 1, 0.5, 1.5 };
		static const json_int_t cpu[] = { 0, 1000, 500, 1 };
		static const char *const paths[] = {
			"main>compute>inline_helper",
			"main>compute>inline_helper>write>do_syscall_64>ksys_write",
			"main",
			"null",
		};

		CHECK_EQ_INT(json_array_size(sample_col(th, "stack")), 4);
		for (size_t i = 0; i < 4; i++) {
			CHECK(json_number_value(json_array_get(sample_col(th, "timeDeltas"), i)) ==
			      deltas[i]);
			CHECK_EQ_INT(json_integer_value(
					     json_array_get(sample_col(th, "threadCPUDelta"), i)),
				     cpu[i]);
			stack_path(root, json_array_get(sample_col(th, "stack"), i), path,
				   sizeof(path));
			CHECK_EQ_STR(path, paths[i]);
		}
	}
	/* The first sample's leaf is the inlined callee, one level under compute, same address. */
	leaf = json_integer_value(json_array_get(sample_col(th, "stack"), 0));
	parent = stack_parent(root, leaf);
	CHECK_EQ_STR(frame_func_name(root, stack_frame(root, leaf)), "inline_helper");
	CHECK_EQ_INT(col_int(root, "frameTable", "inlineDepth", stack_frame(root, leaf)), 1);
	CHECK_EQ_INT(col_int(root, "frameTable", "inlineDepth", stack_frame(root, parent)), 0);
	CHECK_EQ_INT(col_int(root, "frameTable", "address", stack_frame(root, leaf)), 0x1fff);
	CHECK_EQ_INT(col_int(root, "frameTable", "address", stack_frame(root, parent)), 0x1fff);
	CHECK_EQ_INT(col_int(root, "frameTable", "line", stack_frame(root, leaf)), 7);
	CHECK_EQ_INT(col_int(root, "frameTable", "category", stack_frame(root, leaf)), CAT_USER);
	CHECK_EQ_STR(string_at(root, col_int(root, "sources", "filename",
					     col_int(root, "funcTable", "source",
						     col_int(root, "frameTable", "func",
							     stack_frame(root, parent))))),
		     "compute.c");
	/* The second sample's leaf is a kernel function. */
	leaf = json_integer_value(json_array_get(sample_col(th, "stack"), 1));
	CHECK_EQ_INT(col_int(root, "frameTable", "category", stack_frame(root, leaf)), CAT_KERNEL);
	res = col_int(root, "funcTable", "resource",
		      col_int(root, "frameTable", "func", stack_frame(root, leaf)));
	CHECK_EQ_STR(string_at(root, col_int(root, "resourceTable", "name", res)), FX_KERNEL_RES);
	CHECK(json_is_null(json_array_get(shared_col(root, "resourceTable", "lib"), (size_t)res)));
	CHECK(json_is_null(json_array_get(shared_col(root, "frameTable", "line"),
					  (size_t)stack_frame(root, leaf))));

	/* worker: the truncation marker sits at the root and has no resource */
	th = thread_at(root, 3);
	stack_path(root, json_array_get(sample_col(th, "stack"), 0), path, sizeof(path));
	CHECK_EQ_STR(path, "[stack truncated]>worker_loop>0xdead");
	CHECK(json_number_value(json_array_get(sample_col(th, "timeDeltas"), 0)) == 1.5);
	CHECK_EQ_INT(json_integer_value(json_array_get(sample_col(th, "threadCPUDelta"), 0)), 700);
	{
		json_int_t st = json_integer_value(json_array_get(sample_col(th, "stack"), 0));

		while (stack_parent(root, st) >= 0)
			st = stack_parent(root, st);
		CHECK_EQ_INT(col_int(root, "funcTable", "resource",
				     col_int(root, "frameTable", "func", stack_frame(root, st))),
			     -1);
	}

	/* tool: its write comes from libc, whose resource cites the libc lib entry */
	th = thread_at(root, 4);
	stack_path(root, json_array_get(sample_col(th, "stack"), 0), path, sizeof(path));
	CHECK_EQ_STR(path, "main");
	stack_path(root, json_array_get(sample_col(th, "stack"), 1), path, sizeof(path));
	CHECK_EQ_STR(path, "main>compute>inline_helper>write");
	CHECK(json_number_value(json_array_get(sample_col(th, "timeDeltas"), 0)) == 6);
	leaf = json_integer_value(json_array_get(sample_col(th, "stack"), 1));
	res = col_int(root, "funcTable", "resource",
		      col_int(root, "frameTable", "func", stack_frame(root, leaf)));
	CHECK_EQ_STR(string_at(root, col_int(root, "resourceTable", "name", res)), "libc.so.6");
	CHECK_EQ_STR(json_string_value(json_object_get(
			     json_array_get(json_object_get(root, "libs"),
					    (size_t)col_int(root, "resourceTable", "lib", res)),
			     "name")),
		     "libc.so.6");
	CHECK_EQ_INT(col_int(root, "resourceTable", "type", res), 1);

	/* both swapper threads share one kernel stack */
	CHECK_EQ_INT(
		json_integer_value(json_array_get(sample_col(thread_at(root, 0), "stack"), 0)),
		json_integer_value(json_array_get(sample_col(thread_at(root, 1), "stack"), 0)));
}

static void test_emit_plain_and_gzip(void)
{
	static const unsigned char gz_magic[] = { 0x1f, 0x8b, 0x08 };
	struct emitted plain, gz;
	struct fixture f;

	CHECK_EQ_INT(fixture_init(&f), 0);
	emit_to(&plain, "profile.json", &f.m, &f.t);
	emit_to(&gz, "profile.json.gz", &f.m, &f.t);
	CHECK_EQ_INT(plain.err, 0);
	CHECK_EQ_INT(gz.err, 0);
	CHECK(file_starts_with(plain.path, (const unsigned char *)"{\"meta\"", 7));
	CHECK(file_starts_with(gz.path, gz_magic, 3));
	if (plain.root && gz.root) {
		CHECK_EQ_INT(check_profile(plain.root), 0);
		CHECK_EQ_INT(check_profile(gz.root), 0);
		CHECK(json_equal(plain.root, gz.root));
		check_fixture_values(gz.root, false);
	}
	emitted_free(&plain);
	emitted_free(&gz);
	fixture_free(&f);
}

/* The checker must catch each kind of breakage it is there to catch. */
static void test_checker_catches_violations(void)
{
	struct emitted e;
	struct fixture f;
	json_t *bad, *th;

	CHECK_EQ_INT(fixture_init(&f), 0);
	emit_to(&e, "profile.json", &f.m, &f.t);
	CHECK_EQ_INT(e.err, 0);
	if (!e.root)
		goto out;
	fprintf(stderr, "  (violations below are expected)\n");

#define EXPECT_VIOLATION(mutation)             \
	do {                                   \
		bad = json_deep_copy(e.root);  \
		mutation;                      \
		CHECK(check_profile(bad) > 0); \
		json_decref(bad);              \
	} while (0)

	EXPECT_VIOLATION(json_array_set_new(shared_col(bad, "stackTable", "prefixOffset"), 1,
					    json_integer(-1)));
	EXPECT_VIOLATION(json_array_set_new(shared_col(bad, "stackTable", "prefixOffset"), 1,
					    json_integer(5)));
	EXPECT_VIOLATION(
		json_array_set_new(shared_col(bad, "stackTable", "frame"), 0, json_integer(10000)));
	EXPECT_VIOLATION(
		json_array_append_new(shared_col(bad, "funcTable", "name"), json_integer(0)));
	EXPECT_VIOLATION(
		json_array_set_new(shared_col(bad, "funcTable", "resource"), 0, json_integer(-2)));
	EXPECT_VIOLATION(
		json_array_set_new(shared_col(bad, "frameTable", "subcategory"), 0, json_null()));
	EXPECT_VIOLATION(json_array_set_new(shared_col(bad, "frameTable", "category"), 0,
					    json_integer(CAT_COUNT)));
	EXPECT_VIOLATION(json_object_set_new(thread_at(bad, 0), "pid", json_integer(0)));
	EXPECT_VIOLATION(json_object_set_new(thread_at(bad, 3), "isMainThread", json_true()));
	EXPECT_VIOLATION(json_object_set_new(thread_at(bad, 2), "isMainThread", json_false()));
	EXPECT_VIOLATION(json_array_set_new(sample_col(thread_at(bad, 2), "timeDeltas"), 1,
					    json_real(-0.5)));
	EXPECT_VIOLATION(
		json_array_set_new(sample_col(thread_at(bad, 2), "stack"), 0, json_integer(10000)));
	EXPECT_VIOLATION(
		json_object_set_new(json_object_get(json_object_get(bad, "meta"), "sampleUnits"),
				    "threadCPUDelta", json_string("\xce\xbcs")));
	EXPECT_VIOLATION(json_object_set_new(
		json_array_get(json_object_get(json_object_get(bad, "meta"), "categories"), 0),
		"color", json_string("gray")));
	EXPECT_VIOLATION(json_object_set_new(json_object_get(bad, "meta"), "initialVisibleThreads",
					     json_pack("[i]", 5)));
	EXPECT_VIOLATION(json_object_set_new(bad, "threads", json_array()));
	EXPECT_VIOLATION(
		json_object_set_new(json_object_get(json_object_get(bad, "shared"), "stackTable"),
				    "prefix", json_array()));
	/* A marker with phase 1 but no end time, and one whose type has no schema. */
	th = NULL;
	EXPECT_VIOLATION({
		th = json_object_get(thread_at(bad, 0), "markers");
		json_object_set_new(th, "length", json_integer(1));
		json_array_append_new(json_object_get(th, "name"), json_integer(0));
		json_array_append_new(json_object_get(th, "startTime"), json_real(1));
		json_array_append_new(json_object_get(th, "endTime"), json_null());
		json_array_append_new(json_object_get(th, "phase"), json_integer(1));
		json_array_append_new(json_object_get(th, "category"), json_integer(0));
		json_array_append_new(json_object_get(th, "data"), json_null());
	});
	EXPECT_VIOLATION({
		th = json_object_get(thread_at(bad, 0), "markers");
		json_object_set_new(th, "length", json_integer(1));
		json_array_append_new(json_object_get(th, "name"), json_integer(0));
		json_array_append_new(json_object_get(th, "startTime"), json_real(1));
		json_array_append_new(json_object_get(th, "endTime"), json_null());
		json_array_append_new(json_object_get(th, "phase"), json_integer(0));
		json_array_append_new(json_object_get(th, "category"), json_integer(0));
		json_array_append_new(json_object_get(th, "data"), json_pack("{s:s}", "type", "X"));
	});
	/* A cause pointing past the stack table; a string field holding a number. */
	EXPECT_VIOLATION({
		th = json_object_get(thread_at(bad, 2), "markers");
		json_object_set_new(json_array_get(json_object_get(th, "data"), 0), "cause",
				    json_pack("{s:i}", "stack", 10000));
	});
	EXPECT_VIOLATION({
		th = json_object_get(thread_at(bad, 2), "markers");
		json_object_set_new(json_array_get(json_object_get(th, "data"), 0), "commandLine",
				    json_integer(1));
	});
#undef EXPECT_VIOLATION
out:
	emitted_free(&e);
	fixture_free(&f);
}

/* Without a (valid) main thread from the model, the earliest thread of the pid becomes it. */
static void test_main_thread_fallback(void)
{
	struct emitted e;
	struct fixture f;

	CHECK_EQ_INT(fixture_init(&f), 0);
	f.m.processes.data[1].main_thread = NO_INDEX; /* app */
	f.m.processes.data[0].main_thread = 1;	      /* tool: points at app's thread */
	emit_to(&e, "profile.json", &f.m, &f.t);
	CHECK_EQ_INT(e.err, 0);
	if (e.root) {
		CHECK_EQ_INT(check_profile(e.root), 0);
		CHECK_EQ_STR(json_string_value(json_object_get(thread_at(e.root, 2), "name")),
			     "app");
		CHECK(json_is_true(json_object_get(thread_at(e.root, 2), "isMainThread")));
		CHECK_EQ_INT(json_integer_value(json_object_get(thread_at(e.root, 2), "tid")), 100);
		CHECK(json_is_true(json_object_get(thread_at(e.root, 4), "isMainThread")));
		CHECK_EQ_STR(json_string_value(json_object_get(thread_at(e.root, 4), "name")),
			     "tool");
	}
	emitted_free(&e);
	fixture_free(&f);
}

/* The track tooltip's process type: kernel threads and bpfprof itself are told apart. */
static void test_process_types(void)
{
	struct profile_meta meta = test_meta;
	struct emitted e;
	struct fixture f;

	CHECK_EQ_INT(fixture_init(&f), 0);
	f.m.processes.data[0].kernel_thread = true; /* "tool" */
	meta.profiler_pid = 100;		    /* "app" */
	emit_with(&e, "profile.json", &f.m, &f.t, &meta);
	CHECK_EQ_INT(e.err, 0);
	if (e.root) {
		static const char *const types[] = { "idle", "idle", "profiler (bpfprof)",
						     "profiler (bpfprof)", "kernel thread" };

		CHECK_EQ_INT(check_profile(e.root), 0);
		for (size_t i = 0; i < 5; i++)
			CHECK_EQ_STR(json_string_value(
					     json_object_get(thread_at(e.root, i), "processType")),
				     types[i]);
	}
	emitted_free(&e);
	fixture_free(&f);
}

/* Out-of-order samples never produce negative deltas; a reused pid gets a unique string. */
static void test_unsorted_samples_and_reused_pid(void)
{
	struct thread_sample tmp;
	struct emitted e;
	struct fixture f;

	CHECK_EQ_INT(fixture_init(&f), 0);
	tmp = f.m.threads.data[1].samples.data[0];
	f.m.threads.data[1].samples.data[0] = f.m.threads.data[1].samples.data[2];
	f.m.threads.data[1].samples.data[2] = tmp;
	f.m.processes.data[0].pid = 100; /* "tool" now shares app's pid */
	f.m.threads.data[2].pid = 100;
	emit_to(&e, "profile.json", &f.m, &f.t);
	CHECK_EQ_INT(e.err, 0);
	if (e.root) {
		CHECK_EQ_INT(check_profile(e.root), 0);
		CHECK_EQ_STR(json_string_value(json_object_get(thread_at(e.root, 2), "pid")),
			     "100");
		CHECK_EQ_STR(json_string_value(json_object_get(thread_at(e.root, 4), "pid")),
			     "100.1");
		/* Samples 2.5, 2, 1 ms: the two late ones are held at 2.5 ms. */
		CHECK(json_number_value(json_array_get(
			      sample_col(thread_at(e.root, 2), "timeDeltas"), 0)) == 2.5);
		CHECK(json_number_value(json_array_get(
			      sample_col(thread_at(e.root, 2), "timeDeltas"), 1)) == 0);
	}
	emitted_free(&e);
	fixture_free(&f);
}

/* ==== scheduling: off-CPU samples and markers ============================= */

static json_t *marker_col(json_t *th, const char *col)
{
	return json_object_get(json_object_get(th, "markers"), col);
}

static json_t *marker_data(json_t *th, size_t i)
{
	return json_array_get(marker_col(th, "data"), i);
}

static const char *data_string(json_t *th, size_t i, const char *key)
{
	return json_string_value(json_object_get(marker_data(th, i), key));
}

static json_int_t data_int(json_t *th, size_t i, const char *key)
{
	json_t *v = json_object_get(marker_data(th, i), key);

	return json_is_integer(v) ? json_integer_value(v) : -12345;
}

static double data_number(json_t *th, size_t i, const char *key)
{
	json_t *v = json_object_get(marker_data(th, i), key);

	return json_is_number(v) ? json_number_value(v) : -12345;
}

static bool has_string(json_t *root, const char *str)
{
	json_t *v;
	size_t i;

	json_array_foreach(json_object_get(json_object_get(root, "shared"), "stringArray"), i,
			   v) if (!strcmp(json_string_value(v), str)) return true;
	return false;
}

/* A marker row as the contract has it; NULL strings and -1 numbers mean "absent". */
struct want_marker {
	const char *name;
	int phase;
	double start, end; /* end < 0: null */
	int category;
	const char *type;
	const char *reason;
	const char *other; /* waker, or wakee for Wakeup */
	json_int_t other_tid, other_pid;
	const char *preempted_by;
	const char *cause; /* stack path of data.cause.stack */
	size_t nkeys;	   /* keys in data, type and cause included */
};

static void check_marker_rows(json_t *root, json_t *th, const struct want_marker *want, size_t n)
{
	char path[512];

	CHECK_EQ_INT(json_integer_value(json_object_get(json_object_get(th, "markers"), "length")),
		     n);
	CHECK_EQ_INT(json_array_size(marker_col(th, "name")), n);
	for (size_t i = 0; i < n && i < json_array_size(marker_col(th, "name")); i++) {
		const struct want_marker *w = &want[i];
		json_t *end = json_array_get(marker_col(th, "endTime"), i);
		json_t *cause = json_object_get(marker_data(th, i), "cause");
		bool wakeup = !strcmp(w->type, "bpfprof.Wakeup");

		CHECK_EQ_STR(string_at(root, json_integer_value(
						     json_array_get(marker_col(th, "name"), i))),
			     w->name);
		CHECK_EQ_INT(json_integer_value(json_array_get(marker_col(th, "phase"), i)),
			     w->phase);
		CHECK_EQ_INT(json_integer_value(json_array_get(marker_col(th, "category"), i)),
			     w->category);
		CHECK(fabs(json_number_value(json_array_get(marker_col(th, "startTime"), i)) -
			   w->start) < 1e-9);
		if (w->end < 0)
			CHECK(json_is_null(end));
		else
			CHECK(json_is_number(end) && fabs(json_number_value(end) - w->end) < 1e-9);
		CHECK_EQ_STR(data_string(th, i, "type"), w->type);
		/* And its colour, in every marker's data (the schema's colorField). */
		CHECK_EQ_INT(json_object_size(marker_data(th, i)), w->nkeys + 1);
		CHECK(json_is_string(json_object_get(marker_data(th, i), "color")));
		if (w->reason)
			CHECK_EQ_STR(data_string(th, i, "reason"), w->reason);
		if (w->other && w->other_tid < 0) {
			/* No thread woke it (a timer, an interrupt): no tid, no pid. */
			CHECK_EQ_STR(data_string(th, i, "waker"), w->other);
			CHECK(!json_object_get(marker_data(th, i), "wakerTid"));
			CHECK(!json_object_get(marker_data(th, i), "wakerPid"));
		} else if (w->other) {
			CHECK_EQ_STR(data_string(th, i, wakeup ? "wakee" : "waker"), w->other);
			CHECK_EQ_INT(data_int(th, i, wakeup ? "wakeeTid" : "wakerTid"),
				     w->other_tid);
			/* A string, as the threads' pids: the "pid" format names the process. */
			CHECK_EQ_INT(atoll(data_string(th, i, wakeup ? "wakeePid" : "wakerPid")),
				     w->other_pid);
		} else {
			CHECK(!json_object_get(marker_data(th, i), "waker"));
			CHECK(!json_object_get(marker_data(th, i), "wakerTid"));
			CHECK(!json_object_get(marker_data(th, i), "wakerPid"));
		}
		if (w->preempted_by)
			CHECK_EQ_STR(data_string(th, i, "preemptedBy"), w->preempted_by);
		else
			CHECK(!json_object_get(marker_data(th, i), "preemptedBy"));
		if (w->cause) {
			CHECK(json_is_integer(json_object_get(cause, "stack")));
			stack_path(root, json_object_get(cause, "stack"), path, sizeof(path));
			CHECK_EQ_STR(path, w->cause);
		} else {
			CHECK(cause == NULL);
		}
	}
}

/*
 * Tooltips lead with the facts, once each (issue 28): no schema has a
 * description (the front-end shows it first, before every field), and no
 * field the tooltip lists repeats what its title says.
 */
static void check_tooltips_say_once(json_t *meta)
{
	json_t *schema, *field;
	size_t i, k;

	json_array_foreach(json_object_get(meta, "markerSchema"), i, schema)
	{
		const char *title = json_string_value(json_object_get(schema, "tooltipLabel"));

		CHECK(json_object_get(schema, "description") == NULL);
		json_array_foreach(json_object_get(schema, "fields"), k, field)
		{
			char ref[128];

			if (json_is_true(json_object_get(field, "hidden")) || !title)
				continue;
			snprintf(ref, sizeof(ref), "{marker.data.%s}",
				 json_string_value(json_object_get(field, "key")));
			if (strstr(title, ref))
				fprintf(stderr, "%s: field %s repeats the tooltip's title\n",
					json_string_value(json_object_get(schema, "name")), ref);
			CHECK(strstr(title, ref) == NULL);
		}
	}
}

static void check_display(json_t *schema, const char *const *want)
{
	json_t *display = json_object_get(schema, "display");
	size_t n = 0;

	for (; want[n]; n++)
		CHECK_EQ_STR(json_string_value(json_array_get(display, n)), want[n]);
	CHECK_EQ_INT(json_array_size(display), n);
}

static const char *field_format(json_t *schema, const char *key)
{
	json_t *f;
	size_t i;

	json_array_foreach(
		json_object_get(schema, "fields"), i,
		f) if (!strcmp(json_string_value(json_object_get(f, "key")),
			       key)) return json_string_value(json_object_get(f, "format"));
	return NULL;
}

/* Every {marker.data.KEY} of a label names a field, or the front-end renders nothing. */
static void check_label_keys(json_t *schema, const char *label_key)
{
	const char *label = json_string_value(json_object_get(schema, label_key));
	const char *p = label;
	char key[64];

	while (p && (p = strstr(p, "{marker.data.")) != NULL) {
		size_t n = 0;

		p += strlen("{marker.data.");
		while (p[n] && p[n] != '}' && p[n] != ' ' && n < sizeof(key) - 1) {
			key[n] = p[n];
			n++;
		}
		key[n] = '\0';
		if (!field_format(schema, key))
			fprintf(stderr, "  %s of %s names unknown key %s\n", label_key,
				json_string_value(json_object_get(schema, "name")), key);
		CHECK(field_format(schema, key) != NULL);
		p += n;
	}
}

static void check_sched_schemas(json_t *meta)
{
	static const char *const chart_table[] = { "marker-chart", "marker-table", NULL };
	static const char *const table[] = { "marker-table", NULL };
	static const struct {
		const char *schema, *key, *format;
	} fields[] = {
		{ "bpfprof.OffCPU", "reason", "string" },
		{ "bpfprof.OffCPU", "waker", "string" },
		{ "bpfprof.OffCPU", "wakerTid", "tid" },
		{ "bpfprof.OffCPU", "wakerPid", "pid" },
		{ "bpfprof.OffCPU", "preemptedBy", "string" },
		{ "bpfprof.Runnable", "reason", "string" },
		{ "bpfprof.Runnable", "waker", "string" },
		{ "bpfprof.Runnable", "wakerTid", "tid" },
		{ "bpfprof.Runnable", "wakerPid", "pid" },
		{ "bpfprof.Wakeup", "wakee", "string" },
		{ "bpfprof.Wakeup", "wakeeTid", "tid" },
		{ "bpfprof.Wakeup", "wakeePid", "pid" },
		{ "bpfprof.SchedSummary", "onCpu", "duration" },
		{ "bpfprof.SchedSummary", "voluntarySwitches", "integer" },
		{ "bpfprof.SchedSummary", "preemptions", "integer" },
		{ "bpfprof.SchedSummary", "offCpuCount", "integer" },
		{ "bpfprof.SchedSummary", "offCpuTime", "duration" },
		{ "bpfprof.SchedSummary", "hiddenOffCpuCount", "integer" },
		{ "bpfprof.SchedSummary", "hiddenOffCpuTime", "duration" },
		{ "bpfprof.SchedSummary", "runnableCount", "integer" },
		{ "bpfprof.SchedSummary", "runnableTime", "duration" },
		{ "bpfprof.SchedSummary", "hiddenRunnableCount", "integer" },
		{ "bpfprof.SchedSummary", "preemptedRunnableCount", "integer" },
		{ "bpfprof.SchedSummary", "hiddenRunnableTime", "duration" },
		{ "bpfprof.SchedSummary", "wakeupsSent", "integer" },
		{ "bpfprof.SchedSummary", "thresholdMs", "milliseconds" },
	};
	static const char *const names[] = { "bpfprof.OffCPU", "bpfprof.Runnable", "bpfprof.Wakeup",
					     "bpfprof.SchedSummary" };
	json_t *schema;
	size_t i;

	CHECK_EQ_INT(json_array_size(json_object_get(meta, "markerSchema")), 5);
	/* Not in the timeline overview: on every track they drew a dense stripe (issue 21). */
	check_display(find_schema(meta, "bpfprof.OffCPU"), chart_table);
	check_display(find_schema(meta, "bpfprof.Runnable"), chart_table);
	check_display(find_schema(meta, "bpfprof.Wakeup"), chart_table);
	check_display(find_schema(meta, "bpfprof.SchedSummary"), table);
	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		const char *f = field_format(find_schema(meta, fields[i].schema), fields[i].key);

		CHECK(f != NULL);
		if (f)
			CHECK_EQ_STR(f, fields[i].format);
	}
	check_tooltips_say_once(meta);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		schema = find_schema(meta, names[i]);
		CHECK(json_is_string(json_object_get(schema, "tableLabel")));
		CHECK(json_is_string(json_object_get(schema, "tooltipLabel")));
		/* A colour the front-end knows, carried by each marker (issue 21). */
		CHECK_EQ_STR(json_string_value(json_object_get(schema, "colorField")), "color");
		check_label_keys(schema, "chartLabel");
		check_label_keys(schema, "tooltipLabel");
		check_label_keys(schema, "tableLabel");
	}
	CHECK_EQ_STR(json_string_value(
			     json_object_get(find_schema(meta, "bpfprof.OffCPU"), "chartLabel")),
		     "{marker.data.reason}");
	/* The title says what woke it, or who got the CPU. */
	CHECK(strstr(json_string_value(
			     json_object_get(find_schema(meta, "bpfprof.OffCPU"), "tooltipLabel")),
		     "woken by '") != NULL);
	/* The table label names who woke the thread. */
	CHECK(strstr(json_string_value(
			     json_object_get(find_schema(meta, "bpfprof.OffCPU"), "tableLabel")),
		     "{marker.data.waker}") != NULL);
}

/* Every data key of every marker is a field of its schema (type and cause aside). */
static void check_data_keys_declared(json_t *root)
{
	json_t *meta = json_object_get(root, "meta"), *th, *data, *v;
	const char *key;
	size_t i, k;

	json_array_foreach(json_object_get(root, "threads"), i, th)
	{
		json_array_foreach(marker_col(th, "data"), k, data)
		{
			json_t *schema =
				find_schema(meta, json_string_value(json_object_get(data, "type")));

			json_object_foreach(data, key, v)
			{
				if (!strcmp(key, "type") || !strcmp(key, "cause"))
					continue;
				if (!field_format(schema, key))
					fprintf(stderr, "  undeclared marker key %s\n", key);
				CHECK(field_format(schema, key) != NULL);
			}
		}
	}
}

static void check_srv_samples(json_t *root, json_t *th)
{
	static const char *const paths[] = {
		"serve",
		"serve>schedule>off-CPU: sleeping",
		"serve>schedule>off-CPU: sleeping",
		"serve>schedule>off-CPU: sleeping",
		"off-CPU: preempted",
		"serve",
	};
	static const double deltas[] = { 6.1, 0.9, 0.25, 0.25, 0.6, 0.4 };
	static const json_int_t cpu[] = { 100, 300, 0, 0, 200, 100 };
	char path[512];

	CHECK_EQ_INT(json_array_size(sample_col(th, "stack")), 6);
	for (size_t i = 0; i < 6; i++) {
		json_int_t leaf = json_integer_value(json_array_get(sample_col(th, "stack"), i));
		json_int_t frame = stack_frame(root, leaf);
		bool off = strstr(paths[i], "off-CPU") != NULL;

		stack_path(root, json_array_get(sample_col(th, "stack"), i), path, sizeof(path));
		CHECK_EQ_STR(path, paths[i]);
		CHECK(fabs(json_number_value(json_array_get(sample_col(th, "timeDeltas"), i)) -
			   deltas[i]) < 1e-9);
		CHECK_EQ_INT(
			json_integer_value(json_array_get(sample_col(th, "threadCPUDelta"), i)),
			cpu[i]);
		/* An off-CPU sample's category is its leaf's: Off-CPU, with no resource. */
		CHECK_EQ_INT(col_int(root, "frameTable", "category", frame),
			     off ? CAT_OFFCPU : CAT_USER);
		if (off) {
			CHECK_EQ_INT(col_int(root, "funcTable", "resource",
					     col_int(root, "frameTable", "func", frame)),
				     -1);
			CHECK_EQ_INT(col_int(root, "frameTable", "address", frame), -1);
		}
	}
}

static void test_sched_profile(void)
{
	const struct want_marker srv[] = {
		{ "Process", 0, 6, -1, CAT_OTHER, "bpfprof.Process", .nkeys = 4 },
		{ "Scheduling", 1, 6, 10, CAT_OTHER, "bpfprof.SchedSummary", .nkeys = 15 },
		{ "Off-CPU", 1, 6.9, 7.8, CAT_OFFCPU, "bpfprof.OffCPU", "sleeping",
		  "srv-worker (301)", 301, 300, NULL, "serve>schedule", 6 },
		{ "Runnable", 1, 7.5, 7.8, CAT_OFFCPU, "bpfprof.Runnable", "woken",
		  "srv-worker (301)", 301, 300, NULL, NULL, 5 },
		/* Not a thread of the profile: no track says who it is, so the name does. */
		{ "Off-CPU", 1, 8, 8.4, CAT_OFFCPU, "bpfprof.OffCPU", "preempted", NULL, -1, -1,
		  "stress, thread 999 of pid 999, not in this profile", NULL, 3 },
		{ "Runnable", 1, 8, 8.4, CAT_OFFCPU, "bpfprof.Runnable", "preempted", NULL, -1, -1,
		  "stress, thread 999 of pid 999, not in this profile", NULL, 3 },
		/* A timer woke it: no thread named, none credited (issue 28). */
		{ "Off-CPU", 1, 8.6, 9.2, CAT_OFFCPU, "bpfprof.OffCPU", "sleeping", "timer", -1, -1,
		  NULL, "serve>futex_wait", 4 },
		{ "Runnable", 1, 9.1, 9.2, CAT_OFFCPU, "bpfprof.Runnable", "woken", "timer", -1, -1,
		  NULL, NULL, 3 },
		{ "Off-CPU", 1, 9.5, 9.9, CAT_OFFCPU, "bpfprof.OffCPU", "blocked (D)", NULL, -1, -1,
		  NULL, "serve>schedule", 3 },
	};
	const struct want_marker worker[] = {
		{ "Scheduling", 1, 6, 9, CAT_OTHER, "bpfprof.SchedSummary", .nkeys = 15 },
		{ "Runnable", 1, 6.2, 6.3, CAT_OFFCPU, "bpfprof.Runnable", "new thread",
		  "srv (300)", 300, 300, NULL, NULL, 5 },
		{ "Wakeup", 0, 7.5, -1, CAT_OFFCPU, "bpfprof.Wakeup", NULL, "srv (300)", 300, 300,
		  NULL, NULL, 4 },
	};
	struct profile_meta meta = test_meta;
	struct emitted e, base;
	struct fixture f, fb;
	json_t *root, *th, *meta_j;

	meta.sched_enabled = true;
	meta.offcpu_samples = true;
	meta.sched_min_ns = FX_SCHED_MIN_NS;
	meta.lost_switches = 5;
	meta.lost_wakeups = 6;
	CHECK_EQ_INT(fixture_init_with(&f, true), 0);
	CHECK_EQ_INT(fixture_init(&fb), 0);
	emit_with(&e, "profile.json.gz", &f.m, &f.t, &meta);
	emit_to(&base, "profile.json", &fb.m, &fb.t);
	CHECK_EQ_INT(e.err, 0);
	CHECK_EQ_INT(base.err, 0);
	if (!e.root || !base.root)
		goto out;
	root = e.root;
	meta_j = json_object_get(root, "meta");
	CHECK_EQ_INT(check_profile(root), 0);
	/* The base fixture's threads come out as before, around the new ones. */
	check_fixture_values(root, true);
	for (size_t i = 0; i < 5; i++) {
		CHECK(json_equal(json_object_get(thread_at(root, i), "samples"),
				 json_object_get(thread_at(base.root, i), "samples")));
		CHECK(json_equal(marker_col(thread_at(root, i), "data"),
				 marker_col(thread_at(base.root, i), "data")));
	}

	check_sched_schemas(meta_j);
	check_data_keys_declared(root);
	CHECK_EQ_STR(json_string_value(extra_entry(root, "Scheduler capture")), "on");
	CHECK_EQ_STR(json_string_value(extra_entry(root, "Off-CPU samples")), "on");
	CHECK(json_number_value(extra_entry(root, "Scheduling marker threshold")) == 0.1);
	CHECK_EQ_INT(json_integer_value(extra_entry(root, "Lost switch events")), 5);
	CHECK_EQ_INT(json_integer_value(extra_entry(root, "Lost wakeup events")), 6);
	CHECK_EQ_INT(json_integer_value(extra_entry(root, "Off-CPU samples written")), 4);
	CHECK(has_string(root, "Off-CPU") && has_string(root, "Runnable") &&
	      has_string(root, "Wakeup") && has_string(root, "Scheduling"));

	/* srv: on- and off-CPU samples, then every kind of marker */
	th = thread_at(root, 5);
	CHECK_EQ_STR(json_string_value(json_object_get(th, "name")), "srv");
	CHECK(json_is_true(json_object_get(th, "showMarkersInTimeline")));
	check_srv_samples(root, th);
	check_marker_rows(root, th, srv, sizeof(srv) / sizeof(srv[0]));
	/* The off-CPU samples hang off the very stack the Off-CPU marker cites. */
	CHECK_EQ_INT(
		stack_parent(root, json_integer_value(json_array_get(sample_col(th, "stack"), 1))),
		json_integer_value(
			json_object_get(json_object_get(marker_data(th, 2), "cause"), "stack")));
	CHECK(fabs(data_number(th, 1, "onCpu") - 0.7) < 1e-9);
	CHECK_EQ_INT(data_int(th, 1, "voluntarySwitches"), 3);
	CHECK_EQ_INT(data_int(th, 1, "preemptions"), 1);
	CHECK_EQ_INT(data_int(th, 1, "offCpuCount"), 5);
	CHECK(fabs(data_number(th, 1, "offCpuTime") - 3) < 1e-9);
	CHECK_EQ_INT(data_int(th, 1, "hiddenOffCpuCount"), 1);
	CHECK(fabs(data_number(th, 1, "hiddenOffCpuTime") - 0.1) < 1e-9);
	CHECK_EQ_INT(data_int(th, 1, "runnableCount"), 4);
	CHECK(fabs(data_number(th, 1, "runnableTime") - 0.85) < 1e-9);
	CHECK_EQ_INT(data_int(th, 1, "hiddenRunnableCount"), 1);
	CHECK(fabs(data_number(th, 1, "hiddenRunnableTime") - 0.05) < 1e-9);
	CHECK_EQ_INT(data_int(th, 1, "wakeupsSent"), 0);
	CHECK(fabs(data_number(th, 1, "thresholdMs") - 0.1) < 1e-9);

	/* srv-worker: not a main thread, so no Process marker; it sent the wakeup */
	th = thread_at(root, 6);
	CHECK_EQ_STR(json_string_value(json_object_get(th, "name")), "srv-worker");
	check_marker_rows(root, th, worker, sizeof(worker) / sizeof(worker[0]));
	CHECK_EQ_INT(data_int(th, 0, "wakeupsSent"), 1);
	CHECK(fabs(data_number(th, 0, "onCpu") - 0.35) < 1e-9);
	/* tool, after the base threads' own checks: still no markers but its Process one */
	CHECK_EQ_INT(json_array_size(marker_col(thread_at(root, 4), "data")), 1);
out:
	emitted_free(&e);
	emitted_free(&base);
	fixture_free(&f);
	fixture_free(&fb);
}

/* Without scheduling data nothing of it shows up, except what says it was off. */
/*
 * An off-CPU row that stands for a run of samples (issue 37) is written with
 * its weight: the weight column of its thread holds 1 for every other row
 * (the null sample that ends a wait too), and a thread without runs keeps
 * a null column.
 */
static void test_weighted_offcpu_rows(void)
{
	struct profile_meta meta = test_meta;
	size_t arrays = 0, i;
	struct emitted e;
	struct fixture f;
	json_t *th;

	meta.sched_enabled = true;
	meta.offcpu_samples = true;
	meta.sched_min_ns = FX_SCHED_MIN_NS;
	CHECK_EQ_INT(fixture_init_with(&f, true), 0);
	for (i = 0; i < f.m.threads.len; i++) {
		struct thread *t = &f.m.threads.data[i];
		size_t j = 0;

		while (j < t->samples.len && t->samples.data[j].kind != SAMPLE_OFF_CPU)
			j++;
		if (j < t->samples.len) {
			t->samples.data[j].repeats = 6;
			break;
		}
	}
	CHECK(i < f.m.threads.len);
	emit_with(&e, "profile.json", &f.m, &f.t, &meta);
	CHECK_EQ_INT(e.err, 0);
	if (!e.root)
		goto out;
	CHECK_EQ_INT(check_profile(e.root), 0);
	json_array_foreach(json_object_get(e.root, "threads"), i, th)
	{
		json_t *w = sample_col(th, "weight");
		size_t k, seven = 0, ones = 0;
		json_t *v;

		CHECK_EQ_STR(json_string_value(sample_col(th, "weightType")), "samples");
		if (json_is_null(w))
			continue;
		arrays++;
		CHECK_EQ_INT(json_array_size(w), json_array_size(sample_col(th, "stack")));
		json_array_foreach(w, k, v)
		{
			seven += json_integer_value(v) == 7;
			ones += json_integer_value(v) == 1;
		}
		CHECK_EQ_INT(seven, 1);
		CHECK_EQ_INT(ones + 1, json_array_size(w));
	}
	CHECK_EQ_INT(arrays, 1);
out:
	emitted_free(&e);
	fixture_free(&f);
}

static void test_no_sched_data(void)
{
	static const char *const sched_names[] = { "Off-CPU", "Runnable", "Wakeup", "Scheduling" };
	struct profile_meta meta = test_meta;
	struct emitted e, on;
	struct fixture f;
	json_t *th;
	size_t i;

	CHECK_EQ_INT(fixture_init(&f), 0);
	emit_to(&e, "profile.json", &f.m, &f.t);
	meta.sched_enabled = true;
	emit_with(&on, "profile.json", &f.m, &f.t, &meta);
	CHECK_EQ_INT(e.err, 0);
	CHECK_EQ_INT(on.err, 0);
	if (!e.root || !on.root)
		goto out;
	CHECK_EQ_INT(
		json_array_size(json_object_get(json_object_get(e.root, "meta"), "markerSchema")),
		1);
	for (i = 0; i < sizeof(sched_names) / sizeof(sched_names[0]); i++)
		CHECK(!has_string(e.root, sched_names[i]));
	json_array_foreach(json_object_get(e.root, "threads"), i, th)
		CHECK(json_array_size(marker_col(th, "data")) <= 1);
	CHECK_EQ_STR(json_string_value(extra_entry(e.root, "Scheduler capture")), "off");
	CHECK_EQ_STR(json_string_value(extra_entry(e.root, "Off-CPU samples")), "off");
	CHECK(extra_entry(e.root, "Lost switch events") == NULL);

	/* Capture on but nothing recorded: the schemas, and the same threads. */
	CHECK_EQ_INT(check_profile(on.root), 0);
	check_sched_schemas(json_object_get(on.root, "meta"));
	CHECK(json_equal(json_object_get(e.root, "threads"), json_object_get(on.root, "threads")));
	CHECK(json_equal(json_object_get(e.root, "shared"), json_object_get(on.root, "shared")));
	CHECK_EQ_STR(json_string_value(extra_entry(on.root, "Scheduler capture")), "on");
	CHECK_EQ_INT(json_integer_value(extra_entry(on.root, "Lost switch events")), 0);
out:
	emitted_free(&e);
	emitted_free(&on);
	fixture_free(&f);
}

static int emit_to_null(const struct fixture *f)
{
	int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	int err = emit_profile_fd(fd, false, &f->m, &f->t, &test_meta);

	close(fd);
	return err;
}

static void test_rejects_bad_sched_markers(void)
{
	struct sched_marker *mk;
	struct fixture f;

	fprintf(stderr, "  (errors below are expected)\n");
	CHECK_EQ_INT(fixture_init_with(&f, true), 0);
	mk = &f.m.threads.data[FX_T_SRV].sched_markers.data[0];
	mk->stack = 999;
	CHECK_EQ_INT(emit_to_null(&f), -EINVAL);
	mk->stack = FX_S_SCHEDULE;
	mk->kind = 7;
	CHECK_EQ_INT(emit_to_null(&f), -EINVAL);
	mk->kind = SCHED_MARKER_OFFCPU;
	CHECK_EQ_INT(emit_to_null(&f), 0);
	fixture_free(&f);

	/* Tables built before the model had scheduling data lack the marker names. */
	CHECK_EQ_INT(fixture_init(&f), 0);
	f.m.threads.data[0].sched.on_cpu_ns = 1;
	CHECK_EQ_INT(emit_to_null(&f), -EINVAL);
	fixture_free(&f);
}

static void test_rejects_unknown_stack(void)
{
	struct fixture f;
	int fd;

	CHECK_EQ_INT(fixture_init(&f), 0);
	f.m.threads.data[0].samples.data[0].stack = 999;
	fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	CHECK_EQ_INT(emit_profile_fd(fd, false, &f.m, &f.t, &test_meta), -EINVAL);
	close(fd);
	fixture_free(&f);
}

static void test_output_file_lifecycle(void)
{
	char dir[64] = "/tmp/bpfprof-out-XXXXXX", path[128], prefix[128];
	struct output_file o;
	struct stat st;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/p.json.gz", dir);
	snprintf(prefix, sizeof(prefix), "%s/.p.json.gz.", dir);

	/* commit: the temporary name is hidden beside the target, then renamed over it */
	CHECK_EQ_INT(output_file_open(&o, path), 0);
	CHECK(o.gzip);
	CHECK(o.fd >= 0);
	CHECK(o.tmp_path && !strncmp(o.tmp_path, prefix, strlen(prefix)));
	CHECK(stat(path, &st) != 0);
	CHECK_EQ_INT(write(o.fd, "{}", 2), 2);
	CHECK_EQ_INT(output_file_commit(&o), 0);
	output_file_free(&o);
	CHECK_EQ_INT(stat(path, &st), 0);
	/* Private by default: a profile shows every process's command line. */
	CHECK_EQ_INT(st.st_mode & 07777, 0600);
	CHECK_EQ_INT(st.st_size, 2);
	CHECK_EQ_INT(count_dir_entries(dir), 1);
	/* --mode 0644 shares it, whatever the umask. */
	output_file_set_mode(0644);
	CHECK_EQ_INT(output_file_open(&o, path), 0);
	CHECK_EQ_INT(write(o.fd, "{}", 2), 2);
	CHECK_EQ_INT(output_file_commit(&o), 0);
	output_file_free(&o);
	output_file_set_mode(0600);
	CHECK_EQ_INT(stat(path, &st), 0);
	CHECK_EQ_INT(st.st_mode & 07777, 0644);
	CHECK_EQ_INT(count_dir_entries(dir), 1);

	/* abort, and free without commit: nothing is left behind, the old file stays */
	CHECK_EQ_INT(output_file_open(&o, path), 0);
	CHECK_EQ_INT(write(o.fd, "xxxx", 4), 4);
	output_file_abort(&o);
	output_file_free(&o);
	CHECK_EQ_INT(output_file_open(&o, path), 0);
	output_file_free(&o);
	CHECK_EQ_INT(count_dir_entries(dir), 1);
	CHECK_EQ_INT(stat(path, &st), 0);
	CHECK_EQ_INT(st.st_size, 2);

	/* a plain name is not gzip */
	snprintf(path, sizeof(path), "%s/p.json", dir);
	CHECK_EQ_INT(output_file_open(&o, path), 0);
	CHECK(!o.gzip);
	output_file_free(&o);

	/* errors: missing directory, a directory as the target */
	snprintf(path, sizeof(path), "%s/missing/p.json", dir);
	fprintf(stderr, "  (errors below are expected)\n");
	CHECK_EQ_INT(output_file_open(&o, path), -ENOENT);
	CHECK(o.tmp_path == NULL && o.final_path == NULL && o.fd < 0);
	CHECK_EQ_INT(output_file_open(&o, dir), -EISDIR);
	snprintf(path, sizeof(path), "%s/", dir);
	CHECK_EQ_INT(output_file_open(&o, path), -EISDIR);
	CHECK_EQ_INT(output_file_open(&o, ""), -EINVAL);
	CHECK_EQ_INT(count_dir_entries(dir), 1);
	remove_dir(dir);
}

static void test_output_file_belongs_to_sudo_user(void)
{
	char dir[64] = "/tmp/bpfprof-sudo-XXXXXX", path[128];
	struct output_file o;
	struct stat st;

	if (geteuid() != 0) {
		fprintf(stderr, "  (not root: chown to SUDO_UID cannot be tested)\n");
		return;
	}
	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/p.json", dir);
	setenv("SUDO_UID", "65534", 1);
	setenv("SUDO_GID", "65533", 1);
	CHECK_EQ_INT(output_file_open(&o, path), 0);
	CHECK_EQ_INT(output_file_commit(&o), 0);
	output_file_free(&o);
	unsetenv("SUDO_UID");
	unsetenv("SUDO_GID");
	CHECK_EQ_INT(stat(path, &st), 0);
	CHECK_EQ_INT(st.st_uid, 65534);
	CHECK_EQ_INT(st.st_gid, 65533);
	remove_dir(dir);
}

int main(void)
{
	RUN(test_breakpad_id);
	RUN(test_emit_plain_and_gzip);
	RUN(test_checker_catches_violations);
	RUN(test_main_thread_fallback);
	RUN(test_unsorted_samples_and_reused_pid);
	RUN(test_process_types);
	RUN(test_sched_profile);
	RUN(test_no_sched_data);
	RUN(test_weighted_offcpu_rows);
	RUN(test_rejects_bad_sched_markers);
	RUN(test_rejects_unknown_stack);
	RUN(test_output_file_lifecycle);
	RUN(test_output_file_belongs_to_sudo_user);
	return test_summary();
}
