// SPDX-License-Identifier: BSD-2-Clause
#include "lost_markers.h"

#define LOST_SCHEMA "bpfprof.LostEvents"

/* The data keys, by enum lost_kind. */
static const char *const lost_keys[LOST_KINDS] = {
	[LOST_SAMPLES] = "samples",   [LOST_SWITCHES] = "switches",   [LOST_WAKEUPS] = "wakeups",
	[LOST_SYSCALLS] = "syscalls", [LOST_LIFECYCLE] = "lifecycle",
};

const struct marker_schema lost_schema = {
	.name = LOST_SCHEMA,
	/* Worth seeing at a glance: the stretch in which what every track shows is incomplete. */
	.display = display_chart_table_timeline,
	.color = "red",
	.chart_label = "lost {marker.data.samples} samples, {marker.data.switches} switches",
	.tooltip_label = "Lost events: {marker.data.samples} samples, {marker.data.switches} "
			 "switches, {marker.data.wakeups} wakeups",
	.table_label = "lost {marker.data.samples} samples, {marker.data.switches} switches, "
		       "{marker.data.wakeups} wakeups, {marker.data.syscalls} syscall records, "
		       "{marker.data.lifecycle} fork/exec/mmap records",
	.fields =
		(const struct schema_field[]){
			/* In the title. */
			{ "samples", "Lost samples", "integer", true },
			{ "switches", "Lost context switches", "integer", true },
			{ "wakeups", "Lost wakeups", "integer", true },
			{ "syscalls", "Lost syscall records", "integer" },
			{ "lifecycle", "Lost fork/exec/mmap records", "integer" },
			{ NULL },
		},
};

void lost_marker_data_write(struct json_writer *w, const struct lost_interval *li)
{
	marker_data_begin(w, &lost_schema);
	for (int k = 0; k < LOST_KINDS; k++)
		jw_kv_uint(w, lost_keys[k], li->count[k]);
	jw_end_object(w);
}
