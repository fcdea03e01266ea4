/* SPDX-License-Identifier: BSD-2-Clause */
/* A meta.markerSchema entry (spec 3.4) and how it is written. */
#ifndef BPFPROF_MARKER_SCHEMA_H
#define BPFPROF_MARKER_SCHEMA_H

#include <stdbool.h>

#include "json_writer.h"

struct schema_field {
	const char *key, *label, *format;
	/*
	 * For labels (and search, and tools) only: not listed in the tooltip or
	 * sidebar, e.g. because the tooltip's title says it already.
	 */
	bool hidden;
};

/* NULL labels are left out. */
struct marker_schema {
	const char *name;
	const char *const *display; /* NULL-terminated */
	const char *chart_label, *tooltip_label, *table_label;
	/*
	 * NULL, normally: the front-end shows it first in every tooltip, before
	 * the facts (its Marker.tsx), so the labels and fields must speak for
	 * themselves.
	 */
	const char *description;
	const struct schema_field *fields; /* ends with a NULL key */
	/*
	 * The front-end's GraphColor its markers are drawn in (blue, green,
	 * grey, ink, magenta, orange, purple, red, teal, yellow): each marker's
	 * data carries it as "color", which the schema names as its colorField.
	 * Without one, markers draw black.
	 */
	const char *color;
};

/* Where markers show (spec 3.4 `display`). */
extern const char *const display_chart_table[];
extern const char *const display_chart_table_timeline[];
extern const char *const display_table[];

void marker_schema_write(struct json_writer *w, const struct marker_schema *s);

/* A marker's data object begins: its "type" (the schema's name) and its "color". */
void marker_data_begin(struct json_writer *w, const struct marker_schema *s);

#endif
