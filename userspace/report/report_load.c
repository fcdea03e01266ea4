// SPDX-License-Identifier: BSD-2-Clause
/*
 * Reading a profile back: zlib's gzread takes gzip and plain files alike,
 * jansson parses the text, and the three tables every sample walks (stacks,
 * frames, functions) become flat arrays, so that aggregating a large
 * profile is a few array lookups per frame rather than JSON lookups.
 */
#include "report_load.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "../emit/frame_quality.h"
#include "../util/log.h"

/* Profiles are read whole: bound what a hostile or broken file can make us hold. */
#define REPORT_MAX_JSON_BYTES (4ULL << 30)

static int read_whole(const char *file, char **out, size_t *len)
{
	gzFile gz = gzopen(file, "rb");
	size_t cap = 1 << 20, n = 0;
	char *buf = NULL, *nb;
	int got;

	if (!gz) {
		log_error("cannot open %s (%s); give a profile bpfprof wrote", file,
			  strerror(errno ? errno : ENOENT));
		return -(errno ? errno : ENOENT);
	}
	gzbuffer(gz, 1 << 17);
	for (;;) {
		if (n + (1 << 20) > cap || !buf) {
			if (cap > REPORT_MAX_JSON_BYTES / 2) {
				log_error("%s holds more than %llu GiB of JSON; report reads "
					  "profiles whole",
					  file, REPORT_MAX_JSON_BYTES >> 30);
				free(buf);
				gzclose(gz);
				return -EFBIG;
			}
			cap = buf ? cap * 2 : cap;
			nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				gzclose(gz);
				return -ENOMEM;
			}
			buf = nb;
		}
		got = gzread(gz, buf + n, (unsigned)(cap - n));
		if (got < 0) {
			int e;

			log_error("cannot read %s (%s); is it a whole profile?", file,
				  gzerror(gz, &e));
			free(buf);
			gzclose(gz);
			return -EIO;
		}
		if (got == 0)
			break;
		n += (size_t)got;
	}
	gzclose(gz);
	*out = buf;
	*len = n;
	return 0;
}

/* A whole-number column of a shared table as a flat array (-1 and null become `null_as`). */
static int copy_column(json_t *table, const char *name, size_t len, uint32_t **out,
		       uint32_t null_as)
{
	json_t *col = json_object_get(table, name);
	uint32_t *a;

	if (!json_is_array(col) || json_array_size(col) < len)
		return -EINVAL;
	a = calloc(len ? len : 1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	for (size_t i = 0; i < len; i++) {
		json_t *v = json_array_get(col, i);
		json_int_t x = json_is_integer(v) ? json_integer_value(v) : -1;

		a[i] = x < 0 || x > (json_int_t)UINT32_MAX ? null_as : (uint32_t)x;
	}
	*out = a;
	return 0;
}

static size_t table_length(json_t *table)
{
	json_t *len = json_object_get(table, "length");

	return json_is_integer(len) && json_integer_value(len) > 0 ? (size_t)json_integer_value(len)
								   : 0;
}

/*
 * Each frame's language bits: its category (meta.categories[i].name,
 * "Java") and its func's name and isJS, as the recording counted them.
 */
static int load_frame_langs(struct report_profile *p, json_t *frames, json_t *funcs)
{
	json_t *cats = json_object_get(p->meta, "categories");
	json_t *is_js = json_object_get(funcs, "isJS");
	uint32_t *cat = NULL;

	p->frame_lang = calloc(p->nr_frames ? p->nr_frames : 1, sizeof(*p->frame_lang));
	if (!p->frame_lang)
		return -ENOMEM;
	/* An older profile without categories names no language: nothing to count. */
	if (!json_is_array(cats) || copy_column(frames, "category", p->nr_frames, &cat, UINT32_MAX))
		return 0;
	for (size_t i = 0; i < p->nr_frames; i++) {
		json_t *c = cat[i] == UINT32_MAX ? NULL : json_array_get(cats, cat[i]);
		int lang = frame_lang_of_category(json_string_value(json_object_get(c, "name")));
		uint32_t fn = p->frame_func[i];

		if (lang >= 0)
			p->frame_lang[i] = frame_lang_bits(lang, report_string(p, p->func_name[fn]),
							   json_is_true(json_array_get(is_js, fn)));
	}
	free(cat);
	return 0;
}

static int load_tables(struct report_profile *p, json_t *shared)
{
	json_t *stacks = json_object_get(shared, "stackTable");
	json_t *frames = json_object_get(shared, "frameTable");
	json_t *funcs = json_object_get(shared, "funcTable");
	uint32_t *offset = NULL;
	int err;

	p->nr_stacks = table_length(stacks);
	p->nr_frames = table_length(frames);
	p->nr_funcs = table_length(funcs);
	if ((err = copy_column(stacks, "frame", p->nr_stacks, &p->stack_frame, UINT32_MAX)) ||
	    (err = copy_column(stacks, "prefixOffset", p->nr_stacks, &offset, 0)) ||
	    (err = copy_column(frames, "func", p->nr_frames, &p->frame_func, UINT32_MAX)) ||
	    (err = copy_column(funcs, "name", p->nr_funcs, &p->func_name, UINT32_MAX))) {
		free(offset);
		return err;
	}
	p->stack_parent = offset; /* converted in place: offset -> parent index */
	for (size_t i = 0; i < p->nr_stacks; i++) {
		uint32_t off = offset[i];

		p->stack_parent[i] = off == 0 || off > i ? REPORT_NO_PARENT : (uint32_t)(i - off);
		if (p->stack_frame[i] >= p->nr_frames)
			return -EINVAL;
	}
	for (size_t i = 0; i < p->nr_frames; i++)
		if (p->frame_func[i] >= p->nr_funcs)
			return -EINVAL;
	return load_frame_langs(p, frames, funcs);
}

int report_profile_load(struct report_profile *p, const char *file)
{
	json_t *shared, *units, *interval;
	json_error_t jerr;
	const char *unit;
	size_t len;
	char *buf;
	int err;

	memset(p, 0, sizeof(*p));
	if ((err = read_whole(file, &buf, &len)))
		return err;
	p->root = json_loadb(buf, len, JSON_ALLOW_NUL, &jerr);
	free(buf);
	if (!p->root) {
		log_error("%s is not a JSON profile (%s at line %d); give a profile bpfprof wrote",
			  file, jerr.text, jerr.line);
		return -EINVAL;
	}
	p->meta = json_object_get(p->root, "meta");
	p->threads = json_object_get(p->root, "threads");
	shared = json_object_get(p->root, "shared");
	p->strings = json_object_get(shared, "stringArray");
	interval = json_object_get(p->meta, "interval");
	if (!json_is_object(p->meta) || !json_is_array(p->threads) || !json_is_array(p->strings) ||
	    !json_is_number(interval) || json_number_value(interval) <= 0) {
		log_error(
			"%s is not a processed profile (no meta, threads or shared strings); give "
			"a profile bpfprof wrote",
			file);
		report_profile_free(p);
		return -EINVAL;
	}
	p->nr_strings = json_array_size(p->strings);
	p->interval_ms = json_number_value(interval);
	if ((err = load_tables(p, shared))) {
		log_error("%s has broken stack, frame or function tables; give a profile bpfprof "
			  "wrote",
			  file);
		report_profile_free(p);
		return err == -ENOMEM ? err : -EINVAL;
	}
	units = json_object_get(p->meta, "sampleUnits");
	unit = json_string_value(json_object_get(units, "threadCPUDelta"));
	if (unit && !strcmp(unit, "ns"))
		p->cpu_unit_ms = 1e-6;
	else if (unit && !strcmp(unit, "\xc2\xb5s"))
		p->cpu_unit_ms = 1e-3;
	return 0;
}

void report_profile_free(struct report_profile *p)
{
	json_decref(p->root);
	free(p->stack_frame);
	free(p->stack_parent);
	free(p->frame_func);
	free(p->func_name);
	free(p->frame_lang);
	memset(p, 0, sizeof(*p));
}

const char *report_string(const struct report_profile *p, int64_t i)
{
	const char *s = i >= 0 && (size_t)i < p->nr_strings
				? json_string_value(json_array_get(p->strings, (size_t)i))
				: NULL;

	return s ? s : "?";
}

const char *report_func_name(const struct report_profile *p, uint32_t func)
{
	return func < p->nr_funcs ? report_string(p, p->func_name[func]) : "?";
}

double report_column_number(json_t *table, const char *name, size_t i, double dflt)
{
	json_t *v = json_array_get(json_object_get(table, name), i);

	return json_is_number(v) ? json_number_value(v) : dflt;
}
