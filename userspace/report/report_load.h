/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A profile bpfprof wrote (processed format v66), read back for `bpfprof
 * report`: the JSON tree (jansson) plus the shared tables it walks per
 * sample, copied into flat arrays.
 */
#ifndef BPFPROF_REPORT_REPORT_LOAD_H
#define BPFPROF_REPORT_REPORT_LOAD_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#define REPORT_NO_PARENT UINT32_MAX

struct report_profile {
	json_t *root;
	json_t *meta;
	json_t *threads;
	json_t *strings; /* shared.stringArray */
	size_t nr_strings;
	/* shared.stackTable: each node's frame and parent (REPORT_NO_PARENT at a root) */
	uint32_t *stack_frame, *stack_parent;
	size_t nr_stacks;
	uint32_t *frame_func; /* shared.frameTable.func */
	size_t nr_frames;
	uint32_t *func_name; /* shared.funcTable.name: index into strings */
	/*
	 * Per frame, its language bits (emit/frame_quality.h frame_lang_bits):
	 * from its category's name and its func's name and isJS.
	 */
	uint16_t *frame_lang;
	size_t nr_funcs;
	double interval_ms;
	double cpu_unit_ms; /* one unit of threadCPUDelta in ms (0: no such column) */
};

/*
 * Read FILE (gzip or plain JSON) and check the shape report relies on.
 * 0, or a negative errno after a one-line error.
 */
int report_profile_load(struct report_profile *p, const char *file);
void report_profile_free(struct report_profile *p);

/* String `i` of shared.stringArray, or "?" past its end. */
const char *report_string(const struct report_profile *p, int64_t i);
const char *report_func_name(const struct report_profile *p, uint32_t func);

/* Column `name` of a samples or markers object: its i-th number, `dflt` when null or absent. */
double report_column_number(json_t *table, const char *name, size_t i, double dflt);

#endif
