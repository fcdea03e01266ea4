// SPDX-License-Identifier: BSD-2-Clause
/*
 * The pprof writer on the emitter's fixture model: the file protobuf-c
 * reads back has pprof's fixed parts (string 0 is "", the three sample
 * types), values that add up to the model's samples and CPU time, ids that
 * all resolve, and for every sample the same function names, leaf first,
 * as the profile tables' stack of the model's raw stack.
 */
#include "emit/pprof_writer.h"
#include "emit_fixture.h"
#include "pprof/profile.pb-c.h"
#include "test.h"
#include "util/utf8.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef Perftools__Profiles__Profile pb_profile;

static pb_profile *write_and_read_opts(const struct model *m, const struct profile_tables *t,
				       const struct pprof_options *opts)
{
	struct profile_meta meta = { .command_line = "bpfprof -a", .start_wall_ms = 1.7e12 };
	FILE *f = tmpfile();
	uint8_t *buf = NULL;
	pb_profile *p = NULL;
	long len;

	if (!f)
		return NULL;
	CHECK_EQ_INT(pprof_write_fd(fileno(f), false, m, t, &meta, opts), 0);
	len = ftell(f) > 0 ? ftell(f) : lseek(fileno(f), 0, SEEK_END);
	buf = malloc(len > 0 ? (size_t)len : 1);
	if (buf && len > 0 && pread(fileno(f), buf, (size_t)len, 0) == len)
		p = perftools__profiles__profile__unpack(NULL, (size_t)len, buf);
	free(buf);
	fclose(f);
	return p;
}

static pb_profile *write_and_read(const struct model *m, const struct profile_tables *t)
{
	return write_and_read_opts(m, t, NULL);
}

static const char *pb_str(const pb_profile *p, int64_t i)
{
	return i >= 0 && (size_t)i < p->n_string_table ? p->string_table[i] : "(bad index)";
}

/* The function name of location `id` (one Line each). */
static const char *location_name(const pb_profile *p, uint64_t id)
{
	const Perftools__Profiles__Location *l =
		id && id <= p->n_location ? p->location[id - 1] : NULL;
	uint64_t fid = l && l->n_line ? l->line[0]->function_id : 0;

	return fid && fid <= p->n_function ? pb_str(p, p->function[fid - 1]->name) : "(bad id)";
}

/* What the model's samples add up to: on-CPU samples, CPU time, off-CPU time. */
static void model_totals(const struct model *m, int64_t *samples, int64_t *cpu, int64_t *off)
{
	for (size_t i = 0; i < m->threads.len; i++)
		for (size_t j = 0; j < m->threads.data[i].samples.len; j++) {
			const struct thread_sample *ts = &m->threads.data[i].samples.data[j];

			*cpu += (int64_t)ts->cpu_delta_ns;
			if (ts->kind == SAMPLE_OFF_CPU)
				*off += (int64_t)(sample_weight(ts) * m->offcpu_interval_ns);
			else
				(*samples)++;
		}
}

/* Make the thread's first off-CPU row stand for 1 + `repeats` samples; whether it had one. */
static bool mark_run(struct thread *t, uint16_t repeats)
{
	for (size_t j = 0; j < t->samples.len; j++)
		if (t->samples.data[j].kind == SAMPLE_OFF_CPU) {
			t->samples.data[j].repeats = repeats;
			return true;
		}
	return false;
}

static void pprof_matches_model(void)
{
	struct fx_resolver r = { 0 };
	struct profile_tables t = { 0 };
	struct model m;
	pb_profile *p;
	int64_t samples = 0, cpu = 0, off = 0, want_samples = 0, want_cpu = 0, want_off = 0;
	size_t empty = 0, worker_labels = 0;

	/* With the scheduling part: off-CPU samples, named leaves, CPU deltas of their runs. */
	CHECK_EQ_INT(fx_model_build(&m), 0);
	CHECK_EQ_INT(fx_add_sched(&m), 0);
	m.offcpu_interval_ns = 250000; /* what each off-CPU sample stands for */
	/* A row that stands for a run of 4 off-CPU samples (issue 37): 4 intervals off the CPU. */
	for (size_t i = 0; i < m.threads.len && !mark_run(&m.threads.data[i], 3); i++)
		;
	r.m = &m;
	CHECK_EQ_INT(profile_tables_build(&t, &m, fx_resolve, &r), 0);
	p = write_and_read(&m, &t);
	CHECK(p != NULL);
	if (!p)
		goto out;
	CHECK(p->n_string_table > 0 && !strcmp(p->string_table[0], ""));
	CHECK_EQ_INT(p->n_sample_type, 3);
	if (p->n_sample_type == 3) {
		CHECK_EQ_STR(pb_str(p, p->sample_type[0]->type), "samples");
		CHECK_EQ_STR(pb_str(p, p->sample_type[1]->type), "cpu");
		CHECK_EQ_STR(pb_str(p, p->sample_type[1]->unit), "nanoseconds");
		CHECK_EQ_STR(pb_str(p, p->sample_type[2]->type), "off_cpu");
	}
	CHECK_EQ_STR(pb_str(p, p->default_sample_type), "cpu");
	CHECK_EQ_INT(p->n_function, t.funcs.len);
	CHECK_EQ_INT(p->n_location, t.frames.len);
	model_totals(&m, &want_samples, &want_cpu, &want_off);
	CHECK(want_off > 0);
	for (size_t i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];

		CHECK_EQ_INT(s->n_value, 3);
		samples += s->value[0];
		cpu += s->value[1];
		off += s->value[2];
		empty += s->n_location_id == 0;
		for (size_t j = 0; j < s->n_label; j++)
			worker_labels += !strcmp(pb_str(p, s->label[j]->key), "thread_name") &&
					 !strcmp(pb_str(p, s->label[j]->str), "worker");
	}
	CHECK_EQ_INT(samples, want_samples);
	CHECK_EQ_INT(cpu, want_cpu);
	CHECK_EQ_INT(off, want_off);
	CHECK_EQ_INT(empty, 1); /* app main's sample without a stack */
	CHECK(worker_labels > 0);
	/* Every model sample's stack, leaf first, is some pprof sample's. */
	for (size_t i = 0; i < m.threads.len; i++)
		for (size_t j2 = 0; j2 < m.threads.data[i].samples.len; j2++) {
			uint32_t ps =
				profile_stack_of(&t, m.threads.data[i].samples.data[j2].stack);
			const char *want[64];
			size_t n = 0;
			bool found = false;

			for (uint32_t s = ps; s != NO_INDEX && n < 64; s = t.stacks.data[s].prefix)
				want[n++] = strtab_get(
					&t.strings,
					t.funcs.data[t.frames.data[t.stacks.data[s].frame].func]
						.name);
			for (size_t k = 0; k < p->n_sample && !found; k++) {
				const Perftools__Profiles__Sample *s = p->sample[k];

				if (s->n_location_id != n)
					continue;
				found = true;
				for (size_t j = 0; j < n && found; j++)
					found = !strcmp(location_name(p, s->location_id[j]),
							want[j]);
			}
			if (!found)
				fprintf(stderr,
					"  thread %zu sample %zu: its stack is in no pprof "
					"sample\n",
					i, j2);
			CHECK(found);
		}
	perftools__profiles__profile__free_unpacked(p, NULL);
out:
	profile_tables_free(&t);
	fx_model_free(&m);
}

/* The path of the mapping listed first (go tool pprof's "File:"). */
static const char *first_mapping(const pb_profile *p)
{
	return p->n_mapping ? pb_str(p, p->mapping[0]->filename) : "(no mapping)";
}

/*
 * The first mapping is the busiest process's executable, whatever order the
 * tables met the libraries in; every mapping id still resolves once.
 */
static void pprof_main_binary_first(void)
{
	struct fx_resolver r = { 0 };
	struct profile_tables t = { 0 };
	bool seen[8] = { false };
	struct model m;
	pb_profile *p;

	CHECK_EQ_INT(fx_model_build(&m), 0);
	r.m = &m;
	CHECK_EQ_INT(profile_tables_build(&t, &m, fx_resolve, &r), 0);
	CHECK_EQ_INT(t.libs.len, 2);
	p = write_and_read(&m, &t);
	CHECK(p != NULL);
	if (!p)
		goto out;
	/* "app" (pid 100) has most samples; its executable is /usr/bin/app. */
	CHECK_EQ_STR(first_mapping(p), "/usr/bin/app");
	CHECK_EQ_INT(p->n_mapping, 2);
	for (size_t i = 0; i < p->n_mapping && i < 8; i++) {
		uint64_t id = p->mapping[i]->id;

		CHECK(id >= 1 && id <= p->n_mapping && !seen[id]);
		if (id >= 1 && id < 8)
			seen[id] = true;
	}
	for (size_t i = 0; i < p->n_location; i++) {
		uint64_t id = p->location[i]->mapping_id;
		const char *want = NULL;

		if (!id)
			continue;
		/* The location's mapping by id is the frame's library. */
		for (size_t k = 0; k < p->n_mapping; k++)
			if (p->mapping[k]->id == id)
				want = pb_str(p, p->mapping[k]->filename);
		CHECK(want != NULL);
	}
	perftools__profiles__profile__free_unpacked(p, NULL);

	/* Both orders: with libc met first, app still comes first. */
	if (t.libs.len == 2) {
		struct pt_lib tmp = t.libs.data[0];

		t.libs.data[0] = t.libs.data[1];
		t.libs.data[1] = tmp;
		p = write_and_read(&m, &t);
		CHECK(p != NULL);
		if (p) {
			CHECK_EQ_STR(first_mapping(p), "/usr/bin/app");
			perftools__profiles__profile__free_unpacked(p, NULL);
		}
		/*
		 * tool (T2) asleep: its many off-CPU samples do not make it
		 * the busiest process of a CPU profile (or of the whole one).
		 */
		for (int k = 0; k < 100; k++) {
			struct thread_sample off = { FX_START_TS + (uint64_t)k, 0, NO_INDEX,
						     SAMPLE_OFF_CPU };

			CHECK_EQ_INT(vec_push(&m.threads.data[2].samples, off), 0);
		}
		p = write_and_read(&m, &t);
		CHECK(p != NULL);
		if (p) {
			CHECK_EQ_STR(first_mapping(p), "/usr/bin/app");
			perftools__profiles__profile__free_unpacked(p, NULL);
		}
		m.threads.data[2].samples.len -= 100;
	}
	/* A process whose executable is not among the libraries: the tables' order. */
	for (size_t i = 0; i < m.processes.len; i++)
		if (m.processes.data[i].pid == 100)
			snprintf(m.processes.data[i].name, sizeof(m.processes.data[i].name),
				 "other");
	p = write_and_read(&m, &t);
	CHECK(p != NULL);
	if (p) {
		CHECK_EQ_STR(first_mapping(p), t.libs.data[0].obj->path);
		perftools__profiles__profile__free_unpacked(p, NULL);
	}
out:
	profile_tables_free(&t);
	fx_model_free(&m);
}

#define CONTAINER_ID	 "3f1e9c0a5b7d2e4f6a8c0b1d3e5f7a9c1b3d5e7f9a0c2e4f6b8d0a2c4e6f8b0d"
#define CONTAINER_CGROUP "/system.slice/docker-" CONTAINER_ID ".scope"

/* Whether sample `s` has the label key=value. */
static bool has_label(const pb_profile *p, const Perftools__Profiles__Sample *s, const char *key,
		      const char *value)
{
	for (size_t j = 0; j < s->n_label; j++)
		if (!strcmp(pb_str(p, s->label[j]->key), key) &&
		    !strcmp(pb_str(p, s->label[j]->str), value))
			return true;
	return false;
}

/*
 * What a scrape asks for: the CPU profile has Go's two sample types and
 * every on-CPU sample and nanosecond; the off-CPU one only off-CPU time,
 * each stack ending in its off-CPU leaf; both carry the caller's labels
 * on every sample.
 */
static void pprof_kinds_and_labels(void)
{
	static const struct pprof_label labels[] = { { "host", "node-7" },
						     { "service_name", "checkout" } };
	struct pprof_options cpu = { .kind = PPROF_CPU, .labels = labels, .nr_labels = 2 };
	struct pprof_options off = { .kind = PPROF_OFF_CPU, .labels = labels, .nr_labels = 2 };
	struct fx_resolver r = { 0 };
	struct profile_tables t = { 0 };
	int64_t samples = 0, ns = 0, want_samples = 0, want_cpu = 0, want_off = 0;
	size_t containers = 0;
	struct model m;
	pb_profile *p;

	CHECK_EQ_INT(fx_model_build(&m), 0);
	CHECK_EQ_INT(fx_add_sched(&m), 0);
	m.offcpu_interval_ns = 250000;
	/* srv runs in a Docker container: its samples name it, the others name none. */
	m.processes.data[FX_SRV_PROCESS].cgroup = strdup(CONTAINER_CGROUP);
	CHECK(m.processes.data[FX_SRV_PROCESS].cgroup != NULL);
	r.m = &m;
	CHECK_EQ_INT(profile_tables_build(&t, &m, fx_resolve, &r), 0);
	model_totals(&m, &want_samples, &want_cpu, &want_off);

	p = write_and_read_opts(&m, &t, &cpu);
	CHECK(p != NULL);
	if (p) {
		CHECK_EQ_INT(p->n_sample_type, 2);
		CHECK_EQ_STR(pb_str(p, p->sample_type[0]->type), "samples");
		CHECK_EQ_STR(pb_str(p, p->sample_type[1]->type), "cpu");
		CHECK_EQ_STR(pb_str(p, p->period_type->type), "cpu");
		for (size_t i = 0; i < p->n_sample; i++) {
			const Perftools__Profiles__Sample *s = p->sample[i];

			CHECK_EQ_INT(s->n_value, 2);
			CHECK(s->value[0] || s->value[1]);
			/* The run before a wait goes below its off-CPU leaf. */
			CHECK(!s->n_location_id ||
			      strncmp(location_name(p, s->location_id[0]), "off-CPU: ", 9));
			samples += s->value[0];
			ns += s->value[1];
			CHECK(has_label(p, s, "host", "node-7"));
			CHECK(has_label(p, s, "service_name", "checkout"));
			/* The container's id where the process is in one, else no such label. */
			if (has_label(p, s, "process_name", "srv")) {
				CHECK(has_label(p, s, "container_id", CONTAINER_ID));
				CHECK(has_label(p, s, "cgroup", CONTAINER_CGROUP));
				containers++;
			} else {
				for (size_t k = 0; k < s->n_label; k++)
					CHECK(strcmp(pb_str(p, s->label[k]->key), "container_id"));
			}
		}
		CHECK(containers > 0);
		CHECK_EQ_INT(samples, want_samples);
		CHECK_EQ_INT(ns, want_cpu);
		perftools__profiles__profile__free_unpacked(p, NULL);
	}

	ns = 0;
	p = write_and_read_opts(&m, &t, &off);
	CHECK(p != NULL);
	if (p) {
		CHECK_EQ_INT(p->n_sample_type, 1);
		CHECK_EQ_STR(pb_str(p, p->sample_type[0]->type), "off_cpu");
		CHECK_EQ_STR(pb_str(p, p->default_sample_type), "off_cpu");
		CHECK_EQ_INT(p->period, 250000);
		CHECK(p->n_sample > 0);
		for (size_t i = 0; i < p->n_sample; i++) {
			const Perftools__Profiles__Sample *s = p->sample[i];

			CHECK_EQ_INT(s->n_value, 1);
			CHECK(s->value[0] > 0);
			ns += s->value[0];
			CHECK(s->n_location_id > 0 &&
			      !strncmp(location_name(p, s->location_id[0]), "off-CPU: ", 9));
			CHECK(has_label(p, s, "service_name", "checkout"));
			CHECK(has_label(p, s, "thread_name", "srv-worker") ||
			      has_label(p, s, "thread_name", "srv"));
		}
		CHECK_EQ_INT(ns, want_off);
		perftools__profiles__profile__free_unpacked(p, NULL);
	}
	profile_tables_free(&t);
	free(m.processes.data[FX_SRV_PROCESS].cgroup);
	m.processes.data[FX_SRV_PROCESS].cgroup = NULL;
	fx_model_free(&m);
}

/*
 * Another user's thread named with bytes that are no UTF-8: the profile's
 * strings stay UTF-8 (protobuf readers that check refuse the whole
 * profile otherwise), the stray bytes shown as U+FFFD.
 */
static void pprof_strings_are_utf8(void)
{
	struct fx_resolver r = { 0 };
	struct profile_tables t = { 0 };
	struct model m;
	pb_profile *p;
	size_t named = 0;

	CHECK_EQ_INT(fx_model_build(&m), 0);
	/* T0 "worker": a lone continuation byte, a lead byte cut short, an overlong '/'. */
	memcpy(m.threads.data[0].name, "w\x80r\xe2k\xc0\xaf", sizeof("w\x80r\xe2k\xc0\xaf"));
	r.m = &m;
	CHECK_EQ_INT(profile_tables_build(&t, &m, fx_resolve, &r), 0);
	p = write_and_read(&m, &t);
	CHECK(p != NULL);
	if (p) {
		for (size_t i = 0; i < p->n_string_table; i++) {
			const unsigned char *s = (const unsigned char *)p->string_table[i];
			size_t n = strlen(p->string_table[i]);

			for (size_t k = 0; k < n;) {
				size_t seq = s[k] < 0x80 ? 1 : utf8_seq_len(s + k, n - k);

				CHECK(seq > 0);
				k += seq ? seq : 1;
			}
		}
		for (size_t i = 0; i < p->n_sample; i++)
			named += has_label(p, p->sample[i], "thread_name",
					   "w\xef\xbf\xbdr\xef\xbf\xbdk\xef\xbf\xbd\xef\xbf\xbd");
		CHECK(named > 0);
		perftools__profiles__profile__free_unpacked(p, NULL);
	}
	profile_tables_free(&t);
	fx_model_free(&m);
}

int main(void)
{
	RUN(pprof_matches_model);
	RUN(pprof_kinds_and_labels);
	RUN(pprof_strings_are_utf8);
	RUN(pprof_main_binary_first);
	return test_summary();
}
