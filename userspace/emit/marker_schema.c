// SPDX-License-Identifier: BSD-2-Clause
#include "marker_schema.h"

const char *const display_chart_table[] = { "marker-chart", "marker-table", NULL };
const char *const display_chart_table_timeline[] = { "marker-chart", "marker-table",
						     "timeline-overview", NULL };
const char *const display_table[] = { "marker-table", NULL };

void marker_schema_write(struct json_writer *w, const struct marker_schema *s)
{
	jw_begin_object(w);
	jw_kv_string(w, "name", s->name);
	jw_key_array(w, "display");
	for (const char *const *d = s->display; *d; d++)
		jw_string(w, *d);
	jw_end_array(w);
	if (s->chart_label)
		jw_kv_string(w, "chartLabel", s->chart_label);
	if (s->tooltip_label)
		jw_kv_string(w, "tooltipLabel", s->tooltip_label);
	if (s->table_label)
		jw_kv_string(w, "tableLabel", s->table_label);
	if (s->description)
		jw_kv_string(w, "description", s->description);
	if (s->color)
		jw_kv_string(w, "colorField", "color");
	jw_key_array(w, "fields");
	for (const struct schema_field *f = s->fields; f->key; f++) {
		jw_begin_object(w);
		jw_kv_string(w, "key", f->key);
		jw_kv_string(w, "label", f->label);
		jw_kv_string(w, "format", f->format);
		if (f->hidden) {
			jw_key(w, "hidden");
			jw_bool(w, true);
		}
		jw_end_object(w);
	}
	if (s->color) {
		jw_begin_object(w);
		jw_kv_string(w, "key", "color");
		jw_kv_string(w, "label", "Color");
		jw_kv_string(w, "format", "string");
		jw_key(w, "hidden");
		jw_bool(w, true);
		jw_end_object(w);
	}
	jw_end_array(w);
	jw_end_object(w);
}

void marker_data_begin(struct json_writer *w, const struct marker_schema *s)
{
	jw_begin_object(w);
	jw_kv_string(w, "type", s->name);
	if (s->color)
		jw_kv_string(w, "color", s->color);
}
