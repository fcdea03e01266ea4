// SPDX-License-Identifier: BSD-2-Clause
/*
 * `bpfprof report FILE`: what a profile says, in the terminal. Recording
 * facts, CPU by process and thread, the functions with the most on-CPU
 * self and total time, off-CPU time by reason (and, with --off-cpu, the
 * functions threads waited in), syscalls and the slowest markers; --json
 * gives the same as one JSON object.
 */
#include "report.h"

#include <argp.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../util/log.h"
#include "../util/term_escape.h"
#include "../report/file_command.h"
#include "../util/option_values.h"
#include "report_load.h"
#include "report_stats.h"

#define DEFAULT_ROWS 15

struct report_options {
	struct file_command fc;
	struct report_filter filter;
	unsigned rows;
	bool offcpu, json;
};

enum { OPT_PID = 'p', OPT_TID = 't', OPT_ROWS = 'n', OPT_OFFCPU = 1000, OPT_JSON };

static const struct argp_option report_option_defs[] = {
	{ "pid", OPT_PID, "PID", 0, "Only this process (its threads, every exec'd image)", 0 },
	{ "tid", OPT_TID, "TID", 0, "Only this thread", 0 },
	{ "rows", OPT_ROWS, "N", 0, "Rows per table (default 15)", 0 },
	{ "off-cpu", OPT_OFFCPU, NULL, 0,
	  "Also rank the functions threads waited in, by off-CPU time", 0 },
	{ "json", OPT_JSON, NULL, 0, "Print one JSON object instead of tables", 0 },
	{ "help", FILE_COMMAND_OPT_HELP, NULL, 0, "Give this help list", -1 },
	{ 0 },
};

static error_t parse_report_opt(int key, char *arg, struct argp_state *state);

static const struct argp report_argp = {
	report_option_defs, parse_report_opt, "FILE",
	"Summarize a profile bpfprof wrote (a recording or a continuous snapshot): recording "
	"facts, CPU by process and thread, top functions, off-CPU reasons, syscalls and the "
	"slowest markers."
};

static error_t parse_report_opt(int key, char *arg, struct argp_state *state)
{
	struct report_options *o = state->input;
	unsigned long long v;

	switch (key) {
	case OPT_PID:
	case OPT_TID:
		if (parse_uint(arg, INT32_MAX, &v)) {
			log_error("--%s %s: give a process or thread id",
				  key == OPT_PID ? "pid" : "tid", arg);
			o->fc.reported = true;
			return EINVAL;
		}
		if (key == OPT_PID)
			o->filter.pid = (int64_t)v;
		else
			o->filter.tid = (int64_t)v;
		break;
	case OPT_ROWS:
		if (parse_uint(arg, 100000, &v) || !v) {
			log_error("--rows %s: give a number of rows from 1 to 100000", arg);
			o->fc.reported = true;
			return EINVAL;
		}
		o->rows = (unsigned)v;
		break;
	case OPT_OFFCPU:
		o->offcpu = true;
		break;
	case OPT_JSON:
		o->json = true;
		break;
	default:
		return file_command_key(&o->fc, key, arg);
	}
	return 0;
}

/* ---- the facts of the recording ------------------------------------------ */

static double meta_number(const struct report_profile *p, const char *key, double dflt)
{
	json_t *v = json_object_get(p->meta, key);

	return json_is_number(v) ? json_number_value(v) : dflt;
}

/* The entries of meta.extra whose label starts with "Lost", summed. */
static double lost_events(const struct report_profile *p)
{
	json_t *section, *entry;
	double lost = 0;
	size_t i, j;

	json_array_foreach(json_object_get(p->meta, "extra"), i, section)
	{
		json_array_foreach(json_object_get(section, "entries"), j, entry)
		{
			const char *label = json_string_value(json_object_get(entry, "label"));
			json_t *v = json_object_get(entry, "value");

			if (label && !strncmp(label, "Lost", 4) && json_is_number(v))
				lost += json_number_value(v);
		}
	}
	return lost;
}

static const char *extra_string(const struct report_profile *p, const char *label)
{
	json_t *section, *entry;
	size_t i, j;

	json_array_foreach(json_object_get(p->meta, "extra"), i, section)
	{
		json_array_foreach(json_object_get(section, "entries"), j, entry)
		{
			const char *l = json_string_value(json_object_get(entry, "label"));

			if (l && !strcmp(l, label))
				return json_string_value(json_object_get(entry, "value"));
		}
	}
	return NULL;
}

static double duration_ms(const struct report_profile *p)
{
	return meta_number(p, "profilingEndTime", 0) - meta_number(p, "profilingStartTime", 0);
}

/* ---- function rankings ----------------------------------------------------- */

enum rank_by { RANK_SELF_ON, RANK_TOTAL_ON, RANK_TOTAL_OFF };

static double rank_value(const struct report_func *f, enum rank_by by)
{
	return by == RANK_SELF_ON    ? f->self_on_ms
	       : by == RANK_TOTAL_ON ? f->total_on_ms
				     : f->total_off_ms;
}

static const struct report_func *rank_funcs;
static enum rank_by rank_key;

static int by_rank_desc(const void *a, const void *b)
{
	double x = rank_value(&rank_funcs[*(const uint32_t *)a], rank_key);
	double y = rank_value(&rank_funcs[*(const uint32_t *)b], rank_key);

	return (x < y) - (x > y);
}

/* The `rows` functions with the most time by `by` (*n of them), into a new array. */
static uint32_t *top_funcs(const struct report_stats *s, const struct report_profile *p,
			   enum rank_by by, unsigned rows, size_t *n)
{
	uint32_t *idx = malloc((p->nr_funcs ? p->nr_funcs : 1) * sizeof(*idx));
	size_t k = 0;

	if (!idx)
		return NULL;
	for (uint32_t i = 0; i < p->nr_funcs; i++)
		if (rank_value(&s->funcs[i], by) > 0)
			idx[k++] = i;
	rank_funcs = s->funcs;
	rank_key = by;
	qsort(idx, k, sizeof(*idx), by_rank_desc);
	*n = k < rows ? k : rows;
	return idx;
}

static double pct(double part, double whole)
{
	return whole > 0 ? 100.0 * part / whole : 0;
}

/* ---- text ------------------------------------------------------------------ */

/*
 * Names in the profile are whatever its processes chose (comm, thread names,
 * symbols, file names): as the terminal shows them, control characters
 * escaped (term_escape.h). Each escaped copy lives until SHOWN_RING more
 * names have been shown, enough for the names of one printf.
 */
#define SHOWN_RING 8
static char *shown_ring[SHOWN_RING];
static unsigned shown_next;

static const char *shown(const char *s)
{
	char **slot;

	if (!s)
		return "?";
	if (!term_escape_needed(s, strlen(s)))
		return s;
	slot = &shown_ring[shown_next++ % SHOWN_RING];
	free(*slot);
	*slot = term_escape_dup(s);
	return *slot ? *slot : "?";
}

static void shown_free(void)
{
	for (unsigned i = 0; i < SHOWN_RING; i++) {
		free(shown_ring[i]);
		shown_ring[i] = NULL;
	}
}

static void print_funcs(const struct report_stats *s, const struct report_profile *p,
			enum rank_by by, unsigned rows, const char *title)
{
	double whole = by == RANK_TOTAL_OFF ? s->off_ms : s->on_ms;
	size_t n;
	uint32_t *idx = top_funcs(s, p, by, rows, &n);

	if (!idx)
		return;
	printf("\n%s\n", title);
	if (by == RANK_TOTAL_OFF)
		printf("  %12s %7s  %s\n", "waited ms", "%", "function");
	else
		printf("  %10s %7s %10s %7s  %s\n", "self ms", "self%", "total ms", "total%",
		       "function");
	for (size_t i = 0; i < n; i++) {
		const struct report_func *f = &s->funcs[idx[i]];

		if (by == RANK_TOTAL_OFF)
			printf("  %12.1f %6.1f%%  %s\n", f->total_off_ms,
			       pct(f->total_off_ms, whole), shown(report_func_name(p, idx[i])));
		else
			printf("  %10.1f %6.1f%% %10.1f %6.1f%%  %s\n", f->self_on_ms,
			       pct(f->self_on_ms, whole), f->total_on_ms,
			       pct(f->total_on_ms, whole), shown(report_func_name(p, idx[i])));
	}
	if (!n)
		printf("  (none)\n");
	free(idx);
}

/*
 * Calls fn for each Python version the recording counted frame quality of
 * ("Samples in Python 3.9 code", "... naming a Python function": its meta,
 * emit/profile_meta.c), with the version's name and both counts.
 */
static void each_python_version(const struct report_profile *p,
				void (*fn)(void *ctx, const char *name, double samples,
					   double named),
				void *ctx)
{
	json_t *section, *entry, *other;
	size_t i, j, k;

	json_array_foreach(json_object_get(p->meta, "extra"), i, section)
	{
		json_array_foreach(json_object_get(section, "entries"), j, entry)
		{
			const char *l = json_string_value(json_object_get(entry, "label"));
			unsigned major, minor;
			int end = 0;
			char name[24], named_label[96];
			double named = 0;

			if (!l ||
			    sscanf(l, "Samples in Python %u.%u code%n", &major, &minor, &end) !=
				    2 ||
			    l[end] || major > 99 || minor > 99)
				continue;
			snprintf(name, sizeof(name), "%u.%u", major, minor);
			snprintf(named_label, sizeof(named_label),
				 "Samples in Python %s code naming a Python function", name);
			json_array_foreach(json_object_get(section, "entries"), k, other)
			{
				const char *o = json_string_value(json_object_get(other, "label"));

				if (o && !strcmp(o, named_label))
					named = json_number_value(json_object_get(other, "value"));
			}
			fn(ctx, name, json_number_value(json_object_get(entry, "value")), named);
		}
	}
}

static void python_version_text(void *ctx, const char *name, double samples, double named)
{
	(void)ctx;
	if (samples > 0)
		printf("Python %s frames: %.1f%% of %.0f on-CPU samples in its interpreter name a "
		       "Python function (whole recording)\n",
		       name, pct(named, samples), samples);
}

static void python_version_json(void *ctx, const char *name, double samples, double named)
{
	json_array_append_new(ctx, json_pack("{s:s, s:I, s:I}", "version", name, "onCpuSamples",
					     (json_int_t)samples, "named", (json_int_t)named));
}

/* The versions of language l the recording met ("3.1"), as meta.extra says; "" when it does not. */
static const char *lang_versions(const struct report_profile *p, int l)
{
	char label[64];
	const char *v;

	snprintf(label, sizeof(label), "%s versions", frame_lang_name((enum frame_lang)l));
	v = extra_string(p, label);
	return v ? v : "";
}

/* [{"language": "Java", "onCpuSamples": N, "named": K}, ...] for the languages present. */
static json_t *lang_json(const struct frame_lang_quality *q)
{
	json_t *a = json_array();

	for (int l = 0; a && l < FRAME_LANG_COUNT; l++)
		if (q->samples[l])
			json_array_append_new(a, json_pack("{s:s, s:I, s:I}", "language",
							   frame_lang_name(l), "onCpuSamples",
							   (json_int_t)q->samples[l], "named",
							   (json_int_t)q->named[l]));
	return a;
}

static void print_text(const struct report_stats *s, const struct report_profile *p,
		       const struct report_options *o)
{
	double dur = duration_ms(p), lost = lost_events(p);
	const char *cmd = extra_string(p, "Command line");
	unsigned rows = o->rows;
	size_t i;

	printf("bpfprof report: %s\n", shown(o->fc.file));
	printf("recording: %.3f s at %.0f Hz (%.3f ms), %.0f CPUs; %" PRIu64 " on-CPU and %" PRIu64
	       " off-CPU samples; %zu threads in %zu processes; lost events: %.0f\n",
	       dur / 1e3, 1e3 / p->interval_ms, p->interval_ms, meta_number(p, "logicalCPUs", 0),
	       s->samples_on, s->samples_off, s->threads.len, s->processes.len, lost);
	if (cmd)
		printf("command line: %s\n", shown(cmd));
	for (int l = 0; l < FRAME_LANG_COUNT; l++)
		if (s->lang.samples[l])
			printf("%s%s%s frames: %.1f%% of %" PRIu64
			       " on-CPU samples in %s code name one of its functions\n",
			       frame_lang_name(l), lang_versions(p, l)[0] ? " " : "",
			       shown(lang_versions(p, l)),
			       pct((double)s->lang.named[l], (double)s->lang.samples[l]),
			       s->lang.samples[l], frame_lang_name(l));
	each_python_version(p, python_version_text, NULL);

	printf("\nCPU by process (ms, %% of the CPU time recorded, %% of one CPU)\n");
	for (i = 0; i < s->processes.len && i < rows; i++) {
		const struct report_sum *ps = &s->processes.data[i];

		printf("  %10.1f %6.1f%% %7.1f%%  %s (%s), %" PRIu64 " threads\n", ps->ms,
		       pct(ps->ms, s->cpu_ms), pct(ps->ms, dur), shown(ps->name), shown(ps->key),
		       ps->count);
	}
	printf("\nCPU by thread\n");
	for (i = 0; i < s->threads.len && i < rows; i++) {
		const struct report_thread *t = &s->threads.data[i];

		printf("  %10.1f %6.1f%% %7.1f%%  %s (%" PRId64 ") of %s (%s); off-CPU %.1f ms\n",
		       t->cpu_ms, pct(t->cpu_ms, s->cpu_ms), pct(t->cpu_ms, dur), shown(t->name),
		       t->tid, shown(t->process), shown(t->pid), t->off_ms);
	}
	print_funcs(s, p, RANK_SELF_ON, rows, "Top functions by on-CPU self time");
	print_funcs(s, p, RANK_TOTAL_ON, rows, "Top functions by on-CPU total time");
	printf("\nOff-CPU time by reason\n");
	for (i = 0; i < s->reasons.len && i < rows; i++)
		printf("  %12.1f %6.1f%%  %s\n", s->reasons.data[i].ms,
		       pct(s->reasons.data[i].ms, s->off_ms), shown(s->reasons.data[i].name));
	if (!s->reasons.len)
		printf("  (no off-CPU samples)\n");
	if (o->offcpu)
		print_funcs(s, p, RANK_TOTAL_OFF, rows, "Top functions by off-CPU time (waits)");
	printf("\nSyscalls (%s)\n", s->syscall_totals
					    ? "every call, --syscalls=all"
					    : "markers: waits and calls over --syscall-min");
	printf("  %10s %12s %10s  %s\n", "calls", "total ms", "max ms", "syscall");
	for (i = 0; i < s->syscalls.len && i < rows; i++) {
		const struct report_sum *c = &s->syscalls.data[i];

		printf("  %10" PRIu64 " %12.3f %10.3f  %s\n", c->count, c->ms, c->max_ms,
		       shown(c->name));
	}
	if (!s->syscalls.len)
		printf("  (none)\n");
	printf("\nSlowest markers\n");
	for (i = 0; i < s->slowest.len; i++) {
		const struct report_marker *m = &s->slowest.data[i];

		printf("  %10.3f ms  at %10.3f ms  %-10s %s (%" PRId64 ", pid %s)  %s\n", m->ms,
		       m->start_ms, shown(m->name), shown(m->thread), m->tid, shown(m->pid),
		       shown(m->type));
	}
	if (!s->slowest.len)
		printf("  (none)\n");
}

/* ---- JSON ------------------------------------------------------------------ */

static json_t *funcs_json(const struct report_stats *s, const struct report_profile *p,
			  enum rank_by by, unsigned rows)
{
	json_t *a = json_array();
	size_t n;
	uint32_t *idx = top_funcs(s, p, by, rows, &n);

	for (size_t i = 0; idx && i < n; i++) {
		const struct report_func *f = &s->funcs[idx[i]];

		json_array_append_new(a, json_pack("{s:s, s:f, s:f, s:f}", "name",
						   report_func_name(p, idx[i]), "selfMs",
						   f->self_on_ms, "totalMs", f->total_on_ms,
						   "offCpuMs", f->total_off_ms));
	}
	free(idx);
	return a;
}

static json_t *sums_json(const report_sum_vec *v, unsigned rows, const char *name_key)
{
	json_t *a = json_array();

	for (size_t i = 0; i < v->len && i < rows; i++)
		json_array_append_new(a, json_pack("{s:s, s:s, s:I, s:f, s:f}", name_key,
						   v->data[i].name, "key", v->data[i].key, "count",
						   (json_int_t)v->data[i].count, "ms",
						   v->data[i].ms, "maxMs", v->data[i].max_ms));
	return a;
}

static int print_json(const struct report_stats *s, const struct report_profile *p,
		      const struct report_options *o)
{
	json_t *root = json_object(), *threads = json_array(), *markers = json_array();
	int err;

	for (size_t i = 0; i < s->threads.len && i < o->rows; i++) {
		const struct report_thread *t = &s->threads.data[i];

		json_array_append_new(threads,
				      json_pack("{s:s, s:I, s:s, s:s, s:f, s:f, s:f}", "name",
						t->name, "tid", (json_int_t)t->tid, "pid", t->pid,
						"process", t->process, "cpuMs", t->cpu_ms,
						"onCpuSampleMs", t->on_ms, "offCpuMs", t->off_ms));
	}
	for (size_t i = 0; i < s->slowest.len; i++) {
		const struct report_marker *m = &s->slowest.data[i];

		json_array_append_new(markers,
				      json_pack("{s:s, s:s, s:s, s:I, s:s, s:f, s:f}", "type",
						m->type, "name", m->name, "thread", m->thread,
						"tid", (json_int_t)m->tid, "pid", m->pid, "startMs",
						m->start_ms, "durationMs", m->ms));
	}
	json_object_set_new(
		root, "recording",
		json_pack("{s:s, s:f, s:f, s:f, s:I, s:I, s:I, s:I, s:f, s:f, s:f, s:f}", "file",
			  o->fc.file, "durationMs", duration_ms(p), "intervalMs", p->interval_ms,
			  "cpus", meta_number(p, "logicalCPUs", 0), "onCpuSamples",
			  (json_int_t)s->samples_on, "offCpuSamples", (json_int_t)s->samples_off,
			  "threads", (json_int_t)s->threads.len, "processes",
			  (json_int_t)s->processes.len, "lostEvents", lost_events(p), "cpuMs",
			  s->cpu_ms, "onCpuSampleMs", s->on_ms, "offCpuMs", s->off_ms));
	json_object_set_new(root, "runtimeFrames", lang_json(&s->lang));
	{
		json_t *versions = json_array();

		each_python_version(p, python_version_json, versions);
		json_object_set_new(root, "pythonVersions", versions);
	}
	json_object_set_new(root, "processes", sums_json(&s->processes, o->rows, "name"));
	json_object_set_new(root, "threads", threads);
	json_object_set_new(root, "topSelf", funcs_json(s, p, RANK_SELF_ON, o->rows));
	json_object_set_new(root, "topTotal", funcs_json(s, p, RANK_TOTAL_ON, o->rows));
	json_object_set_new(root, "topOffCpu", funcs_json(s, p, RANK_TOTAL_OFF, o->rows));
	json_object_set_new(root, "offCpuReasons", sums_json(&s->reasons, o->rows, "reason"));
	json_object_set_new(root, "syscalls", sums_json(&s->syscalls, o->rows, "syscall"));
	json_object_set_new(root, "syscallsFromTotals", json_boolean(s->syscall_totals));
	json_object_set_new(root, "slowestMarkers", markers);
	/*
	 * jansson escapes C0 controls but writes DEL and C1 (U+009B is CSI)
	 * as they are: on a terminal, everything past ASCII goes as \uXXXX,
	 * which a JSON reader decodes to the same names.
	 */
	err = json_dumpf(root, stdout,
			 JSON_INDENT(1) | JSON_REAL_PRECISION(10) |
				 (isatty(STDOUT_FILENO) ? JSON_ENSURE_ASCII : 0));
	printf("\n");
	json_decref(root);
	return err ? -EIO : 0;
}

int report_main(int argc, char **argv)
{
	struct report_options o = { .fc = { .name = "report", .argp = &report_argp },
				    .filter = { -1, -1 },
				    .rows = DEFAULT_ROWS };
	int err = file_command_parse(&o.fc, argc, argv, &o, "profile.json.gz");
	struct report_profile p;
	struct report_stats s;

	if (err)
		return err < 0 ? 0 : err;
	if (report_profile_load(&p, o.fc.file))
		return 1;
	err = report_stats_compute(&s, &p, &o.filter, o.rows);
	if (err) {
		log_error("out of memory summarizing %s", o.fc.file);
	} else if (!s.threads.len && (o.filter.pid >= 0 || o.filter.tid >= 0)) {
		log_error("no thread of %s matches --pid/--tid; see bpfprof report %s for its "
			  "threads",
			  o.fc.file, o.fc.file);
		err = -ENOENT;
	} else if (o.json) {
		err = print_json(&s, &p, &o);
	} else {
		print_text(&s, &p, &o);
		shown_free();
	}
	if (fflush(stdout) && !err) {
		log_error("cannot write the report (%s)", strerror(errno));
		err = -EIO;
	}
	report_stats_free(&s);
	report_profile_free(&p);
	return err ? 1 : 0;
}
