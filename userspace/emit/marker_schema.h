/* SPDX-License-Identifier: BSD-2-Clause */
/* A meta.markerSchema entry (spec 3.4) and how it is written. */
#ifndef BPFPROF_MARKER_SCHEMA_H
#define BPFPROF_MARKER_SCHEMA_H

#include "json_writer.h"

struct schema_field {
	const char *key, *label, *format;
};

/* NULL labels are left out. */
struct marker_schema {
	const char *name;
	const char *const *display; /* NULL-terminated */
	const char *chart_label, *tooltip_label, *table_label;
	const char *description;
	const struct schema_field *fields; /* ends with a NULL key */
};

/* Where markers show (spec 3.4 `display`). */
extern const char *const display_chart_table[];
extern const char *const display_chart_table_timeline[];
extern const char *const display_table[];

void marker_schema_write(struct json_writer *w, const struct marker_schema *s);

#endif
