// SPDX-License-Identifier: BSD-2-Clause
/*
 * Cgroups in the profile: process track labels with the container or the
 * cgroup, the Process marker's cgroup fields, and the "Cgroup filter" and
 * per-cgroup entries of meta.extra (sorted, capped, summarised). Without
 * cgroup information the profile is what it always was.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "emit/emitter.h"
#include "emit_fixture.h"
#include "read_file.h"
#include "test.h"

#define HEX_A "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static const struct profile_meta base_meta = {
	.product_version = "0.1.0",
	.command_line = "bpfprof record",
	.hostname = "testhost",
	.sample_freq_hz = 1000,
	.sample_event = "cpu-clock",
	.target = "all",
};

/* Emit the model (with tables built by the fixture's fake resolver) and parse it back. */
static json_t *emit(struct model *m, const struct profile_meta *meta)
{
	char path[] = "/tmp/bpfprof-cgemit-XXXXXX";
	struct profile_tables t;
	struct fx_resolver r = { 0 };
	json_error_t jerr;
	json_t *root = NULL;
	size_t len;
	char *text;
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	if (fd < 0)
		return NULL;
	r.m = m;
	CHECK_EQ_INT(profile_tables_build(&t, m, fx_resolve, &r), 0);
	CHECK_EQ_INT(emit_profile_fd(fd, false, m, &t, meta), 0);
	profile_tables_free(&t);
	close(fd);
	text = read_all_gz(path, &len);
	unlink(path);
	CHECK(text != NULL);
	if (!text)
		return NULL;
	root = json_loadb(text, len, 0, &jerr);
	if (!root)
		fprintf(stderr, "jansson: %s at line %d\n", jerr.text, jerr.line);
	CHECK(root != NULL);
	free(text);
	return root;
}

static json_t *thread_by_tid(json_t *root, json_int_t tid)
{
	json_t *th;
	size_t i;

	json_array_foreach(json_object_get(root, "threads"), i, th)
	{
		if (json_integer_value(json_object_get(th, "tid")) == tid)
			return th;
	}
	return NULL;
}

static const char *thread_str(json_t *root, json_int_t tid, const char *key)
{
	return json_string_value(json_object_get(thread_by_tid(root, tid), key));
}

/* The Process marker's data on a main thread (its only marker here). */
static json_t *process_marker(json_t *root, json_int_t tid)
{
	json_t *mk = json_object_get(thread_by_tid(root, tid), "markers");

	return json_array_get(json_object_get(mk, "data"), 0);
}

static json_t *extra_entries(json_t *root)
{
	json_t *sec = json_array_get(json_object_get(json_object_get(root, "meta"), "extra"), 0);

	return json_object_get(sec, "entries");
}

static json_t *extra_value(json_t *root, const char *label)
{
	json_t *e;
	size_t i;

	json_array_foreach(extra_entries(root), i, e)
	{
		if (!strcmp(json_string_value(json_object_get(e, "label")), label))
			return json_object_get(e, "value");
	}
	return NULL;
}

/* Labels of the entries that start with `prefix`, in order, joined by '|'. */
static void labels_with(json_t *root, const char *prefix, char *buf, size_t len)
{
	size_t off = 0, i;
	json_t *e;

	buf[0] = '\0';
	json_array_foreach(extra_entries(root), i, e)
	{
		const char *l = json_string_value(json_object_get(e, "label"));

		if (!strncmp(l, prefix, strlen(prefix)))
			off += (size_t)snprintf(buf + off, len - off, "%s%s", off ? "|" : "", l);
	}
}

static json_t *process_schema(json_t *root)
{
	json_t *s;
	size_t i;

	json_array_foreach(json_object_get(json_object_get(root, "meta"), "markerSchema"), i, s)
	{
		if (!strcmp(json_string_value(json_object_get(s, "name")), "bpfprof.Process"))
			return s;
	}
	return NULL;
}

static bool schema_has_field(json_t *schema, const char *key)
{
	json_t *f;
	size_t i;

	json_array_foreach(json_object_get(schema, "fields"), i, f)
	{
		if (!strcmp(json_string_value(json_object_get(f, "key")), key))
			return true;
	}
	return false;
}

static void free_cgroups(struct model *m)
{
	for (size_t i = 0; i < m->processes.len; i++) {
		free(m->processes.data[i].cgroup);
		m->processes.data[i].cgroup = NULL;
	}
}

/* Fixture processes (model order): 0 tool 200, 1 app 100 (threads 100, 101), 2 idle. */
#define P_TOOL 0
#define P_APP  1

static void set_cgroup(struct model *m, size_t proc, const char *path)
{
	m->processes.data[proc].cgroup = strdup(path);
	CHECK(m->processes.data[proc].cgroup != NULL);
}

static void test_without_cgroups(void)
{
	struct model m;
	char labels[512];
	json_t *root, *data;

	CHECK_EQ_INT(fx_model_build(&m), 0);
	for (int names = 0; names < 2; names++) {
		/* --cgroup mode with no cgroup known changes nothing either. */
		m.cgroup_names = names;
		root = emit(&m, &base_meta);
		if (!root)
			break;
		CHECK_EQ_STR(thread_str(root, 100, "name"), "app");
		CHECK_EQ_STR(thread_str(root, 100, "processName"), "app");
		CHECK_EQ_STR(thread_str(root, 101, "name"), "worker");
		CHECK_EQ_STR(thread_str(root, 101, "processName"), "app");
		CHECK_EQ_STR(thread_str(root, 200, "name"), "tool");
		data = process_marker(root, 100);
		/* type, color, name, pid, commandLine */
		CHECK_EQ_INT(json_object_size(data), 5);
		CHECK(json_object_get(data, "cgroup") == NULL);
		labels_with(root, "Cgroup", labels, sizeof(labels));
		CHECK_EQ_STR(labels, "");
		CHECK(extra_value(root, "Other cgroups") == NULL);
		/* The schema declares the optional fields all the same. */
		CHECK(schema_has_field(process_schema(root), "cgroup"));
		CHECK(schema_has_field(process_schema(root), "containerId"));
		CHECK(schema_has_field(process_schema(root), "containerRuntime"));
		json_decref(root);
	}
	fx_model_free(&m);
}

static void test_container_labels(void)
{
	struct model m;
	char labels[1024];
	json_t *root, *data;

	CHECK_EQ_INT(fx_model_build(&m), 0);
	set_cgroup(&m, P_APP, "/system.slice/docker-" HEX_A ".scope");
	set_cgroup(&m, P_TOOL, "/user.slice/session-1.scope");
	/* Not --cgroup mode: the container shows, a plain cgroup does not. */
	root = emit(&m, &base_meta);
	if (!root)
		goto out;
	CHECK_EQ_STR(thread_str(root, 100, "name"), "app [container 0123456789ab]");
	CHECK_EQ_STR(thread_str(root, 100, "processName"), "app [container 0123456789ab]");
	CHECK_EQ_STR(thread_str(root, 101, "name"), "worker");
	CHECK_EQ_STR(thread_str(root, 101, "processName"), "app [container 0123456789ab]");
	CHECK_EQ_STR(thread_str(root, 200, "name"), "tool");
	CHECK_EQ_STR(thread_str(root, 200, "processName"), "tool");

	data = process_marker(root, 100);
	CHECK_EQ_STR(json_string_value(json_object_get(data, "name")), "app");
	CHECK_EQ_STR(json_string_value(json_object_get(data, "cgroup")),
		     "/system.slice/docker-" HEX_A ".scope");
	CHECK_EQ_STR(json_string_value(json_object_get(data, "containerId")), HEX_A);
	CHECK_EQ_STR(json_string_value(json_object_get(data, "containerRuntime")), "docker");
	data = process_marker(root, 200);
	CHECK_EQ_STR(json_string_value(json_object_get(data, "cgroup")),
		     "/user.slice/session-1.scope");
	CHECK(json_object_get(data, "containerId") == NULL);
	CHECK(json_object_get(data, "containerRuntime") == NULL);

	/* A container was recognised: every cgroup gets its entry, by path, at the end. */
	labels_with(root, "Cgroup", labels, sizeof(labels));
	CHECK_EQ_STR(labels, "Cgroup /system.slice/docker-" HEX_A ".scope (container "
			     "0123456789ab)|Cgroup /user.slice/session-1.scope");
	CHECK_EQ_STR(json_string_value(extra_value(root, "Cgroup /system.slice/docker-" HEX_A
							 ".scope (container 0123456789ab)")),
		     "1 process: app (100)");
	CHECK_EQ_STR(json_string_value(extra_value(root, "Cgroup /user.slice/session-1.scope")),
		     "1 process: tool (200)");
	CHECK_EQ_STR(json_string_value(json_object_get(
			     json_array_get(extra_entries(root),
					    json_array_size(extra_entries(root)) - 1),
			     "label")),
		     "Cgroup /user.slice/session-1.scope");
	json_decref(root);

	/* A named container (nspawn) shows its name in full. */
	free_cgroups(&m);
	set_cgroup(&m, P_TOOL, "/machine.slice/machine-my\\x2dbox.scope/payload");
	root = emit(&m, &base_meta);
	if (!root)
		goto out;
	CHECK_EQ_STR(thread_str(root, 200, "name"), "tool [container my-box]");
	CHECK_EQ_STR(thread_str(root, 100, "name"), "app");
	data = process_marker(root, 200);
	CHECK_EQ_STR(json_string_value(json_object_get(data, "containerId")), "my-box");
	CHECK_EQ_STR(json_string_value(json_object_get(data, "containerRuntime")), "nspawn");
	labels_with(root, "Cgroup", labels, sizeof(labels));
	CHECK_EQ_STR(labels,
		     "Cgroup /machine.slice/machine-my\\x2dbox.scope/payload (container my-box)");
	json_decref(root);

	/*
	 * A user's delegated subtree, where they named a cgroup like a docker
	 * container: the label says whose claim it is, the marker who owns it.
	 */
	free_cgroups(&m);
	set_cgroup(&m, P_APP, "/user.slice/user-4242.slice/docker-" HEX_A ".scope");
	m.processes.data[P_APP].cgroup_owner = 4242;
	root = emit(&m, &base_meta);
	if (!root)
		goto out;
	CHECK_EQ_STR(thread_str(root, 100, "name"),
		     "app [container 0123456789ab, named in uid 4242's cgroup]");
	data = process_marker(root, 100);
	CHECK_EQ_STR(json_string_value(json_object_get(data, "cgroupOwner")), "uid 4242");
	CHECK_EQ_STR(json_string_value(json_object_get(data, "containerId")), HEX_A);
	labels_with(root, "Cgroup", labels, sizeof(labels));
	CHECK_EQ_STR(labels, "Cgroup /user.slice/user-4242.slice/docker-" HEX_A
			     ".scope (container 0123456789ab, named in uid 4242's cgroup)");
	CHECK(schema_has_field(process_schema(root), "cgroupOwner"));
	json_decref(root);
	m.processes.data[P_APP].cgroup_owner = 0;
out:
	free_cgroups(&m);
	fx_model_free(&m);
}

static void test_cgroup_names_and_filters(void)
{
	static const char *const filters[] = { "/test/child (id 1234)", "/other (id 99)" };
	struct profile_meta meta = base_meta;
	struct model m;
	char labels[512];
	json_t *root, *e;
	size_t i, target = 0, first_filter = 0;

	/* With the scheduling part: a process "srv" (300) with a second thread. */
	CHECK_EQ_INT(fx_model_build(&m), 0);
	CHECK_EQ_INT(fx_add_sched(&m), 0);
	set_cgroup(&m, P_APP, "/test/child");
	set_cgroup(&m, P_TOOL, "/test/child");
	set_cgroup(&m, FX_SRV_PROCESS, "/test/child/leaf");
	m.cgroup_names = true;
	meta.cgroup_filters = filters;
	meta.nr_cgroup_filters = 2;
	root = emit(&m, &meta);
	if (!root)
		goto out;
	CHECK_EQ_STR(thread_str(root, 100, "name"), "app [/test/child]");
	CHECK_EQ_STR(thread_str(root, 101, "processName"), "app [/test/child]");
	CHECK_EQ_STR(thread_str(root, 200, "name"), "tool [/test/child]");
	CHECK_EQ_STR(thread_str(root, 300, "name"), "srv [/test/child/leaf]");
	CHECK_EQ_STR(thread_str(root, 301, "name"), "srv-worker");
	CHECK_EQ_STR(thread_str(root, 301, "processName"), "srv [/test/child/leaf]");
	/* The idle threads have no cgroup. */
	CHECK_EQ_STR(thread_str(root, 0, "processName"), "swapper");

	/* The filters, in order, right after the target. */
	labels_with(root, "Cgroup filter", labels, sizeof(labels));
	CHECK_EQ_STR(labels, "Cgroup filter|Cgroup filter");
	json_array_foreach(extra_entries(root), i, e)
	{
		const char *l = json_string_value(json_object_get(e, "label"));

		if (!strcmp(l, "Target"))
			target = i;
		if (!strcmp(l, "Cgroup filter") && !first_filter) {
			first_filter = i;
			CHECK_EQ_STR(json_string_value(json_object_get(e, "value")), filters[0]);
			CHECK_EQ_STR(json_string_value(json_object_get(
					     json_array_get(extra_entries(root), i + 1), "value")),
				     filters[1]);
		}
	}
	CHECK_EQ_INT(first_filter, target + 1);
	/* Both processes in one entry, in model order. */
	CHECK_EQ_STR(json_string_value(extra_value(root, "Cgroup /test/child")),
		     "2 processes: tool (200), app (100)");
	CHECK_EQ_STR(json_string_value(extra_value(root, "Cgroup /test/child/leaf")),
		     "1 process: srv (300)");
	labels_with(root, "Cgroup /", labels, sizeof(labels));
	CHECK_EQ_STR(labels, "Cgroup /test/child|Cgroup /test/child/leaf");
	json_decref(root);
out:
	free_cgroups(&m);
	fx_model_free(&m);
}

/* 25 processes in "/big" and 70 cgroups of one process each ("/g00".."/g69"). */
static void test_many_cgroups(void)
{
	char want[2048], path[32], name[16];
	size_t off;
	struct model m;
	json_t *root, *e;
	size_t i, n_cgroup_entries = 0;
	const char *prev = "";

	memset(&m, 0, sizeof(m));
	m.start_ts = FX_START_TS;
	m.end_ts = FX_START_TS + 10 * FX_MS;
	m.cgroup_names = true;
	for (uint32_t k = 0; k < 95; k++) {
		uint32_t pid = 1000 + k;

		snprintf(name, sizeof(name), "p%u", pid);
		if (k < 25)
			snprintf(path, sizeof(path), "/big");
		else
			snprintf(path, sizeof(path), "/g%02u", k - 25);
		CHECK_EQ_INT(fx_add_process(&m, pid, name, 1, false), 0);
		CHECK_EQ_INT(fx_add_thread(&m, k, pid, name, -1, 1, true), 0);
		set_cgroup(&m, k, path);
	}
	root = emit(&m, &base_meta);
	if (!root)
		goto out;
	json_array_foreach(extra_entries(root), i, e)
	{
		const char *l = json_string_value(json_object_get(e, "label"));

		if (strncmp(l, "Cgroup /", 8))
			continue;
		n_cgroup_entries++;
		/* Sorted by path. */
		CHECK(strcmp(prev, l) < 0);
		prev = l;
	}
	CHECK_EQ_INT(n_cgroup_entries, 64);
	/* "/big" and "/g00".."/g62" are shown; 7 are left out. */
	CHECK(extra_value(root, "Cgroup /g62") != NULL);
	CHECK(extra_value(root, "Cgroup /g63") == NULL);
	CHECK_EQ_INT(json_integer_value(extra_value(root, "Other cgroups")), 7);
	off = (size_t)snprintf(want, sizeof(want), "25 processes: ");
	for (uint32_t k = 0; k < 20; k++)
		off += (size_t)snprintf(want + off, sizeof(want) - off, "%sp%u (%u)", k ? ", " : "",
					1000 + k, 1000 + k);
	snprintf(want + off, sizeof(want) - off, ", \xe2\x80\xa6 and 5 more");
	CHECK_EQ_STR(json_string_value(extra_value(root, "Cgroup /big")), want);
	CHECK_EQ_STR(json_string_value(extra_value(root, "Cgroup /g05")),
		     "1 process: p1030 (1030)");
	CHECK_EQ_STR(thread_str(root, 1030, "name"), "p1030 [/g05]");
	json_decref(root);
out:
	free_cgroups(&m);
	fx_model_free(&m);
}

int main(void)
{
	RUN(test_without_cgroups);
	RUN(test_container_labels);
	RUN(test_cgroup_names_and_filters);
	RUN(test_many_cgroups);
	return test_summary();
}
