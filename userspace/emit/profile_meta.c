// SPDX-License-Identifier: BSD-2-Clause
#include "profile_meta.h"

#include <stdio.h>
#include <string.h>

#include "../util/hex.h"
#include "emit_internal.h"
#include "frame_quality.h"
#include "lost_markers.h"
#include "marker_schema.h"
#include "sched_markers.h"
#include "syscall_markers.h"

#define PROCESSED_PROFILE_VERSION 66
/* Gecko format version; ignored for processed profiles, samply writes 24. */
#define GECKO_PROFILE_VERSION	  24

/* ---- meta ----------------------------------------------------------------- */

static void write_categories(struct json_writer *w)
{
	/* Index = enum profile_category; "Other" is the grey default the front-end requires. */
	static const struct {
		const char *name, *color;
	} cats[CAT_COUNT] = {
		[CAT_OTHER] = { "Other", "grey" },	[CAT_KERNEL] = { "Kernel", "orange" },
		[CAT_USER] = { "User", "yellow" },	[CAT_OFFCPU] = { "Off-CPU", "lightblue" },
		[CAT_PYTHON] = { "Python", "blue" },	[CAT_JAVA] = { "Java", "green" },
		[CAT_JS] = { "JavaScript", "magenta" }, [CAT_PHP] = { "PHP", "purple" },
		[CAT_RUBY] = { "Ruby", "red" },
	};

	jw_key_array(w, "categories");
	for (int i = 0; i < CAT_COUNT; i++) {
		jw_begin_object(w);
		jw_kv_string(w, "name", cats[i].name);
		jw_kv_string(w, "color", cats[i].color);
		jw_key_array(w, "subcategories");
		jw_string(w, "Other");
		jw_end_array(w);
		jw_end_object(w);
	}
	jw_end_array(w);
}

/* One entry of the "more info" panel: { label, format, value }; the caller writes the value. */
static void extra_entry(struct json_writer *w, const char *label, const char *format)
{
	jw_begin_object(w);
	jw_kv_string(w, "label", label);
	jw_kv_string(w, "format", format);
	jw_key(w, "value");
}

static void extra_entry_string(struct json_writer *w, const char *label, const char *value)
{
	if (value) {
		extra_entry(w, label, "string");
		jw_string(w, value);
		jw_end_object(w);
	}
}

static void extra_entry_int(struct json_writer *w, const char *label, uint64_t value)
{
	extra_entry(w, label, "integer");
	jw_uint(w, value);
	jw_end_object(w);
}

static void extra_entry_duration(struct json_writer *w, const char *label, uint64_t ns)
{
	extra_entry(w, label, "duration");
	jw_ms(w, ns);
	jw_end_object(w);
}

/* How scheduling was captured; counts only when it was. */
static void write_extra_sched(struct json_writer *w, const struct model *m,
			      const struct profile_meta *meta)
{
	extra_entry_string(w, "Scheduler capture", meta->sched_enabled ? "on" : "off");
	extra_entry_string(w, "Off-CPU samples",
			   meta->sched_enabled && meta->offcpu_samples ? "on" : "off");
	extra_entry_duration(w, "Scheduling marker threshold", meta->sched_min_ns);
	if (!meta->sched_enabled)
		return;
	extra_entry_int(w, "Lost switch events", meta->lost_switches);
	extra_entry_int(w, "Lost wakeup events", meta->lost_wakeups);
	extra_entry_int(w, "Context switches", m->stats.switches);
	/* Short waits the kernel only counted: no record each (fold_waits). */
	extra_entry_int(w, "Context switches kept in the kernel", m->stats.switches_folded);
	extra_entry_int(w, "Wakeups", m->stats.wakeups);
	/* How much of the wakeup traffic the kernel absorbed: those cost no record. */
	extra_entry_int(w, "Wakeups kept in the kernel", m->stats.wakeups_folded);
	extra_entry_int(w, "Off-CPU samples written", m->stats.offcpu_samples);
	/* They are weighted rows, a few per wait: memory follows the waits, not the time. */
	extra_entry_int(w, "Off-CPU sample rows (weighted)", m->stats.offcpu_rows);
	extra_entry_int(w, "Scheduler events that arrived too late", m->stats.sched_late_events);
}

/*
 * How whole the user stacks are: a call tree built from cut stacks looks
 * right and is not, so the panel says how much of it to trust.
 */
static void write_extra_frame_quality(struct json_writer *w, const struct frame_quality *q,
				      const struct profile_meta *meta)
{
	char label[128];

	if (meta->unwinder)
		extra_entry_string(w, "User stack unwinding", meta->unwinder);
	extra_entry_int(w, "User stacks (on-CPU samples)", q->user_stacks);
	extra_entry_int(w, "User stacks reaching a thread root", q->reached_root);
	/* Per runtime, each unwound its own way: "User stacks, Go" and "..., Go, reaching a root".
	 */
	for (int rt = 0; rt < CODE_RUNTIME_COUNT; rt++) {
		if (!q->runtime_stacks[rt])
			continue;
		snprintf(label, sizeof(label), "User stacks, %s", code_runtime_name(rt));
		extra_entry_int(w, label, q->runtime_stacks[rt]);
		snprintf(label, sizeof(label), "User stacks, %s, reaching a thread root",
			 code_runtime_name(rt));
		extra_entry_int(w, label, q->runtime_reached_root[rt]);
	}
	for (int r = 0; r < FRAME_QUALITY_REASONS; r++) {
		if (!q->stopped[r])
			continue;
		snprintf(label, sizeof(label), "User stacks stopped early: %s",
			 frame_quality_reason((enum ustack_end)r));
		extra_entry_int(w, label, q->stopped[r]);
	}
	/* "Samples in Java code" and "..., naming a Java function": how readable a runtime is. */
	for (int l = 0; l < FRAME_LANG_COUNT; l++) {
		if (!q->lang.samples[l])
			continue;
		snprintf(label, sizeof(label), "Samples in %s code", frame_lang_name(l));
		extra_entry_int(w, label, q->lang.samples[l]);
		snprintf(label, sizeof(label), "Samples in %s code naming a %s function",
			 frame_lang_name(l), frame_lang_name(l));
		extra_entry_int(w, label, q->lang.named[l]);
		if (meta->lang_versions[l] && meta->lang_versions[l][0]) {
			snprintf(label, sizeof(label), "%s versions", frame_lang_name(l));
			extra_entry_string(w, label, meta->lang_versions[l]);
		}
	}
	/* "Samples in Python 3.9 code" and "..., naming a Python function": per interpreter
	 * version. */
	for (unsigned i = 0; i < q->n_py; i++) {
		char name[24];

		frame_py_version_name(q->py[i].version, name);
		snprintf(label, sizeof(label), "Samples in %s code", name);
		extra_entry_int(w, label, q->py[i].samples);
		snprintf(label, sizeof(label), "Samples in %s code naming a Python function", name);
		extra_entry_int(w, label, q->py[i].named);
	}
}

/* When records were lost: how many intervals, and the lifecycle records among them. */
static void write_extra_lost(struct json_writer *w, const struct model *m)
{
	uint64_t lifecycle = 0;

	for (size_t i = 0; i < m->lost.len; i++)
		lifecycle += m->lost.data[i].count[LOST_LIFECYCLE];
	extra_entry_int(w, "Intervals with lost events (Lost events markers)", m->lost.len);
	extra_entry_int(w, "Lost fork/exec/mmap events", lifecycle);
}

/* How many tracks show at load; the hidden ones are still in the track menu. */
static void write_extra_view(struct json_writer *w, const struct model *m,
			     const struct emit_plan *p)
{
	char shown[64];

	snprintf(shown, sizeof(shown), "%zu of %zu", p->nr_visible, m->threads.len);
	extra_entry_string(w, "Tracks shown at first", shown);
	if (p->hidden_short_procs)
		extra_entry_int(w, "Short-lived processes hidden at first (in the track menu)",
				p->hidden_short_procs);
}

/* The "more info" panel: how this recording was made and what it lost. */
static void write_extra(struct json_writer *w, const struct model *m,
			const struct profile_tables *t, const struct profile_meta *meta,
			const struct emit_plan *p)
{
	jw_key_array(w, "extra");
	jw_begin_object(w);
	jw_kv_string(w, "label", "bpfprof");
	jw_key_array(w, "entries");
	extra_entry_string(w, "Command line", meta->command_line);
	extra_entry_string(w, "Target", meta->target);
	for (size_t i = 0; i < meta->nr_cgroup_filters; i++)
		extra_entry_string(w, "Cgroup filter", meta->cgroup_filters[i]);
	extra_entry_string(w, "Sample event", meta->sample_event);
	extra_entry_int(w, "Sampling frequency (Hz)", meta->sample_freq_hz);
	extra_entry_string(w, "Idle threads", meta->include_idle ? "included" : "excluded");
	write_extra_view(w, m, p);
	extra_entry_int(w, "Samples", m->stats.samples);
	extra_entry_int(w, "Lost samples", meta->lost_samples);
	extra_entry_int(w, "Lost other events", meta->lost_other);
	write_extra_lost(w, m);
	write_extra_sched(w, m, meta);
	extra_entry_string(w, "Syscall capture",
			   meta->syscalls_enabled	? "every syscall (sys_enter/sys_exit)"
			   : meta->syscalls_from_switch ? "blocking waits, from the scheduler"
							: "off");
	extra_entry_int(w, "Truncated stacks", m->stats.truncated_stacks);
	write_extra_frame_quality(w, &meta->frame_quality, meta);
	extra_entry_int(w, "User frames outside file mappings (JIT, anonymous)",
			m->stats.unknown_user_addrs);
	extra_entry_int(w, "Malformed events", m->stats.events_malformed);
	extra_entry_string(w, "Host", meta->hostname);
	extra_entry_string(w, "Kernel", meta->kernel_release);
	extra_entry_string(w, "Architecture", meta->arch);
	extra_entry_string(w, "bpfprof version", meta->product_version);
	/* Last: with --cgroup there may be many of them. */
	for (size_t i = 0; i < p->cgroups.nr_entries; i++)
		extra_entry_string(w, p->cgroups.entries[i].label, p->cgroups.entries[i].value);
	if (p->cgroups.other_cgroups)
		extra_entry_int(w, "Other cgroups", p->cgroups.other_cgroups);
	jw_end_array(w);
	jw_end_object(w);
	jw_end_array(w);
}

/*
 * Every marker type the threads may hold needs its schema, or the front-end
 * shows its markers without labels or fields; the optional ones are left out
 * when their capture was off (scheduling: unless the model has such data).
 */
static void write_marker_schemas(struct json_writer *w, const struct emit_plan *p)
{
	jw_key_array(w, "markerSchema");
	marker_schema_write(w, &process_schema);
	if (p->sched_schemas) {
		marker_schema_write(w, &offcpu_schema);
		marker_schema_write(w, &runnable_schema);
		marker_schema_write(w, &wakeup_schema);
		marker_schema_write(w, &sched_summary_schema);
	}
	if (p->syscall_schemas) {
		marker_schema_write(w, &syscall_schema);
		marker_schema_write(w, &syscall_wait_schema);
	}
	if (p->syscall_totals)
		marker_schema_write(w, &syscall_totals_schema);
	if (p->lost_schema)
		marker_schema_write(w, &lost_schema);
	jw_end_array(w);
}

static bool has_js_funcs(const struct profile_tables *t)
{
	for (size_t i = 0; i < t->funcs.len; i++)
		if (t->funcs.data[i].is_js)
			return true;
	return false;
}

void profile_meta_write(struct json_writer *w, const struct model *m,
			const struct profile_tables *t, const struct profile_meta *meta,
			const struct emit_plan *p)
{
	char oscpu[256];
	/* 1000 / Hz ms; a zero rate would divide by zero, and 1 ms is a harmless default. */
	double interval = meta->sample_freq_hz ? 1000.0 / meta->sample_freq_hz : 1.0;

	snprintf(oscpu, sizeof(oscpu), "Linux%s%s%s%s", meta->kernel_release ? " " : "",
		 meta->kernel_release ? meta->kernel_release : "", meta->arch ? " " : "",
		 meta->arch ? meta->arch : "");

	jw_key(w, "meta");
	jw_begin_object(w);
	jw_kv_double(w, "interval", interval);
	jw_kv_double(w, "startTime", meta->start_wall_ms);
	jw_kv_uint(w, "startTimeAsClockMonotonicNanosecondsSinceBoot", m->start_ts);
	jw_kv_ms(w, "profilingStartTime", 0);
	/*
	 * No meta.endTime: Profile Info shows it as "Main process ended", and
	 * -a has no main process (-- COMMAND's may outlive the recording).
	 * profilingEndTime gives "Recording length".
	 */
	jw_kv_ms(w, "profilingEndTime", p->end_ns);
	jw_kv_int(w, "processType", 0);
	jw_kv_string(w, "product", "bpfprof");
	jw_kv_int(w, "stackwalk", 1);
	jw_kv_bool(w, "debug", false);
	jw_kv_int(w, "version", GECKO_PROFILE_VERSION);
	jw_kv_int(w, "preprocessedProfileVersion", PROCESSED_PROFILE_VERSION);
	/* Which tracks show and which is selected at load (emit_plan.c: choose_initial_threads). */
	if (p->nr_visible) {
		jw_key_array(w, "initialVisibleThreads");
		for (size_t i = 0; i < p->nr_visible; i++)
			jw_uint(w, p->visible[i]);
		jw_end_array(w);
	}
	if (p->selected != UINT32_MAX) {
		jw_key_array(w, "initialSelectedThreads");
		jw_uint(w, p->selected);
		jw_end_array(w);
	}
	/*
	 * Symbolicated while recording, from binaries that may be gone since:
	 * no symbol server could do better, and bpfprof view serves none
	 * (/symbolicate/v5), so Profile Info must not offer "Re-symbolicate".
	 */
	jw_kv_bool(w, "symbolicated", true);
	jw_kv_bool(w, "symbolicationNotSupported", true);
	/* A process's threads as bpfprof orders them (main, then by start), not by name. */
	jw_kv_bool(w, "keepProfileThreadOrder", true);
	/* JavaScript frames (from node's perf map or jitdump): the call tree's JS/native switch. */
	jw_kv_bool(w, "usesOnlyOneStackType", !has_js_funcs(t));
	jw_kv_bool(w, "sourceCodeIsNotOnSearchfox", true);
	jw_kv_string(w, "platform", "X11");
	jw_kv_string(w, "oscpu", oscpu);
	if (meta->logical_cpus)
		jw_kv_uint(w, "logicalCPUs", meta->logical_cpus);
	if (meta->command_line)
		jw_kv_string(w, "arguments", meta->command_line);
	write_categories(w);
	jw_key(w, "sampleUnits");
	jw_begin_object(w);
	jw_kv_string(w, "time", "ms");
	jw_kv_string(w, "eventDelay", "ms");
	/* U+00B5 MICRO SIGN as UTF-8; Greek mu (U+03BC) makes the front-end reject the file. */
	jw_kv_string(w, "threadCPUDelta", "\xc2\xb5s");
	jw_end_object(w);
	write_marker_schemas(w, p);
	write_extra(w, m, t, meta, p);
	jw_end_object(w);
}

/* ---- libs ------------------------------------------------------------------ */

/* A GNU build-id must be non-empty, even-length hex to be worth citing. */
static bool build_id_valid(const char *id)
{
	size_t n = 0;

	if (!id)
		return false;
	for (; id[n]; n++)
		if (hex_digit(id[n]) < 0)
			return false;
	return n && n % 2 == 0;
}

/*
 * breakpadId as samply derives it for ELF: the first 16 build-id bytes
 * (zero-padded) read as a little-endian GUID, so the 4-, 2- and 2-byte
 * fields are byte-reversed, then uppercase hex and the age "0". Without a
 * build-id: 33 zeros.
 */
void emit_breakpad_id(const char *build_id, char out[34])
{
	/* GUID byte i comes from build-id byte guid_order[i]. */
	static const unsigned char guid_order[16] = {
		3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15,
	};
	static const char hex[] = "0123456789ABCDEF";
	unsigned char bytes[16] = { 0 };

	if (build_id_valid(build_id)) {
		size_t n = strlen(build_id) / 2;

		for (size_t i = 0; i < n && i < 16; i++)
			bytes[i] = (unsigned char)(hex_digit(build_id[2 * i]) << 4 |
						   hex_digit(build_id[2 * i + 1]));
	}
	for (int i = 0; i < 16; i++) {
		unsigned char b = bytes[guid_order[i]];

		out[2 * i] = hex[b >> 4];
		out[2 * i + 1] = hex[b & 0xf];
	}
	out[32] = '0';
	out[33] = '\0';
}

/* codeId: the build-id as lowercase hex, or null when there is none. */
static void write_code_id(struct json_writer *w, const char *build_id)
{
	char lower[256];
	size_t n;

	if (!build_id_valid(build_id) || (n = strlen(build_id)) >= sizeof(lower)) {
		jw_null(w);
		return;
	}
	for (size_t i = 0; i < n; i++)
		lower[i] = (char)(build_id[i] >= 'A' && build_id[i] <= 'F' ? build_id[i] - 'A' + 'a'
									   : build_id[i]);
	jw_string_len(w, lower, n);
}

void profile_libs_write(struct json_writer *w, const struct profile_tables *t,
			const struct profile_meta *meta)
{
	jw_key_array(w, "libs");
	for (size_t i = 0; i < t->libs.len; i++) {
		const struct object_info *obj = t->libs.data[i].obj;
		const char *name = obj->name ? obj->name : "";
		const char *path = obj->path ? obj->path : name;
		char breakpad[34];

		emit_breakpad_id(obj->build_id, breakpad);
		jw_begin_object(w);
		jw_kv_string(w, "name", name);
		jw_kv_string(w, "path", path);
		jw_kv_string(w, "debugName", name);
		jw_kv_string(w, "debugPath", path);
		jw_kv_string(w, "breakpadId", breakpad);
		jw_key(w, "codeId");
		write_code_id(w, obj->build_id);
		jw_kv_string(w, "arch", meta->arch);
		jw_end_object(w);
	}
	jw_end_array(w);
}
