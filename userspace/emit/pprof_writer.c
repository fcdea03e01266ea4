// SPDX-License-Identifier: BSD-2-Clause
/*
 * pprof from the profile tables: a pprof Function per funcTable row, a
 * Location per frameTable row (one Line each: inlined functions are frames
 * of their own in both outputs), a Mapping per library; then one Sample per
 * (thread, stack), its values summed over that thread's samples of the stack.
 * protobuf-c packs it; zlib compresses it as pprof readers expect.
 */
/* memrchr() is a GNU extension. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "pprof_writer.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "../cgroup/container_id.h"
#include "../util/hashmap.h"
#include "../util/strtab.h"
#include "../util/utf8.h"
#include "pprof/profile.pb-c.h" /* generated into build/gen/pprof */

typedef Perftools__Profiles__Profile pb_profile;
typedef Perftools__Profiles__Sample pb_sample;
typedef Perftools__Profiles__Label pb_label;
typedef Perftools__Profiles__Location pb_location;
typedef Perftools__Profiles__Line pb_line;
typedef Perftools__Profiles__Function pb_function;
typedef Perftools__Profiles__Mapping pb_mapping;
typedef Perftools__Profiles__ValueType pb_value_type;

enum { V_SAMPLES, V_CPU, V_OFF_CPU, NR_VALUES };

/* pid, tid, thread_name, process_name, container_id, cgroup; then the profile's own. */
#define THREAD_LABELS 6

/* Everything the packed message points into, freed in one place. */
struct pprof_build {
	struct strtab strings;
	uint32_t *string_map; /* profile_tables string -> pprof string */
	pb_function *funcs;
	pb_function **func_ptrs;
	pb_location *locs;
	pb_location **loc_ptrs;
	pb_line *lines;
	pb_line **line_ptrs;
	pb_mapping *maps;
	pb_mapping **map_ptrs;
	const struct pprof_options *opts;
	size_t labels_per_thread; /* THREAD_LABELS, and the profile's own */
	pb_label *labels;	  /* labels_per_thread per thread */
	pb_label **label_ptrs;	  /* labels_per_thread per thread */
	size_t *nr_labels;	  /* per thread */
	pb_sample *samples;
	pb_sample **sample_ptrs;
	int64_t *values;	/* NR_VALUES per sample */
	uint64_t *location_ids; /* all samples' stacks, leaf first */
	size_t nr_samples, cap_samples, nr_ids, cap_ids;
	size_t first_value, nr_values; /* the values of the profile's kind */
	size_t nr_kept;		       /* samples with any of them */
	pb_value_type types[NR_VALUES], period_type;
	pb_value_type *type_ptrs[NR_VALUES];
	int64_t comment;
	struct hmap sample_index; /* (thread, stack) -> sample */
};

/*
 * A string of the profile: protobuf strings must be UTF-8, and a reader that
 * checks (Go's protobuf) refuses the whole profile over one thread name of
 * another user's with stray bytes. Those become U+FFFD.
 */
static int64_t str(struct pprof_build *b, const char *s)
{
	char *valid;
	int64_t at;
	int err;

	if (!s)
		return strtab_intern(&b->strings, "");
	valid = utf8_sanitized(s, &err);
	if (err)
		return err;
	at = strtab_intern(&b->strings, valid ? valid : s);
	free(valid);
	return at;
}

static void build_free(struct pprof_build *b)
{
	strtab_free(&b->strings);
	free(b->string_map);
	free(b->funcs);
	free(b->func_ptrs);
	free(b->locs);
	free(b->loc_ptrs);
	free(b->lines);
	free(b->line_ptrs);
	free(b->maps);
	free(b->map_ptrs);
	free(b->labels);
	free(b->label_ptrs);
	free(b->nr_labels);
	free(b->samples);
	free(b->sample_ptrs);
	free(b->values);
	free(b->location_ids);
	hmap_free(&b->sample_index);
}

static void *calloc_n(size_t n, size_t size)
{
	return calloc(n ? n : 1, size);
}

static int add_strings(struct pprof_build *b, const struct profile_tables *t)
{
	size_t n = strtab_len(&t->strings);

	if (str(b, "") != 0) /* pprof: string_table[0] is "" */
		return -ENOMEM;
	b->string_map = calloc_n(n, sizeof(*b->string_map));
	if (!b->string_map)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		int64_t s = str(b, strtab_get(&t->strings, (uint32_t)i));

		if (s < 0)
			return -ENOMEM;
		b->string_map[i] = (uint32_t)s;
	}
	return 0;
}

static int add_functions(struct pprof_build *b, const struct profile_tables *t)
{
	size_t n = t->funcs.len;
	bool *kernel = calloc_n(n, sizeof(*kernel));

	b->funcs = calloc_n(n, sizeof(*b->funcs));
	b->func_ptrs = calloc_n(n, sizeof(*b->func_ptrs));
	if (!kernel || !b->funcs || !b->func_ptrs) {
		free(kernel);
		return -ENOMEM;
	}
	for (size_t i = 0; i < t->frames.len; i++)
		if (t->frames.data[i].category == CAT_KERNEL && t->frames.data[i].func < n)
			kernel[t->frames.data[i].func] = true;
	for (size_t i = 0; i < n; i++) {
		const struct pt_func *f = &t->funcs.data[i];
		pb_function *pf = &b->funcs[i];

		perftools__profiles__function__init(pf);
		pf->id = i + 1;
		pf->name = pf->system_name = b->string_map[f->name];
		/* A kernel function's file is the Firefox view's note, no file. */
		if (f->source >= 0 && (size_t)f->source < t->sources.len && !kernel[i])
			pf->filename = b->string_map[t->sources.data[f->source]];
		pf->start_line = f->line > 0 ? f->line : 0;
		b->func_ptrs[i] = pf;
	}
	free(kernel);
	return 0;
}

/* A frame's library (its func's resource's lib) as a mapping id, 0 for none. */
static uint64_t mapping_of(const struct profile_tables *t, const struct pt_frame *fr)
{
	int32_t res = t->funcs.data[fr->func].resource;
	int32_t lib;

	if (res < 0 || (size_t)res >= t->resources.len)
		return 0;
	lib = t->resources.data[res].lib;
	return lib < 0 || (size_t)lib >= t->libs.len ? 0 : (uint64_t)lib + 1;
}

/* Whether the library `obj` is the executable named by `argv0` or the truncated `comm`. */
static bool is_program(const struct object_info *obj, const char *argv0, size_t argv0_len,
		       const char *comm)
{
	size_t comm_len = strnlen(comm, BPFPROF_COMM_LEN);

	if (!obj || obj->kind != OBJECT_ELF || !obj->name)
		return false;
	if (argv0_len && strlen(obj->name) == argv0_len && !memcmp(obj->name, argv0, argv0_len))
		return true;
	/* The kernel cuts a comm at BPFPROF_COMM_LEN - 1 characters. */
	return comm_len && (comm_len == BPFPROF_COMM_LEN - 1 ? !strncmp(obj->name, comm, comm_len)
							     : !strcmp(obj->name, comm));
}

/*
 * pprof readers take the first mapping for the main binary (go tool pprof's
 * "File:"): the executable of the process with the most samples, found among
 * the libraries by its argv[0] or comm. -1 when none matches.
 */
static int64_t main_binary_lib(const struct model *m, const struct profile_tables *t,
			       enum pprof_kind kind)
{
	/* Busiest by the profile's own samples: sleepers must not win a CPU profile. */
	uint8_t counted = kind == PPROF_OFF_CPU ? SAMPLE_OFF_CPU : SAMPLE_ON_CPU;
	const struct process *best = NULL;
	size_t best_samples = 0;
	const char *argv0 = "";
	size_t argv0_len = 0;

	for (size_t i = 0; i < m->processes.len; i++) {
		const struct process *p = &m->processes.data[i];
		size_t n = 0;

		if (p->is_idle)
			continue;
		for (size_t k = 0; k < p->threads.len; k++) {
			const struct thread *th = &m->threads.data[p->threads.data[k]];

			/* By weight: an off-CPU row stands for a run of samples. */
			for (size_t j = 0; j < th->samples.len; j++)
				if (th->samples.data[j].kind == counted)
					n += sample_weight(&th->samples.data[j]);
		}
		if (n > best_samples) {
			best = p;
			best_samples = n;
		}
	}
	if (!best)
		return -1;
	if (best->cmdline) {
		const char *end = best->cmdline + strcspn(best->cmdline, " ");
		const char *slash = memrchr(best->cmdline, '/', (size_t)(end - best->cmdline));

		argv0 = slash ? slash + 1 : best->cmdline;
		argv0_len = (size_t)(end - argv0);
	}
	for (size_t i = 0; i < t->libs.len; i++)
		if (is_program(t->libs.data[i].obj, argv0, argv0_len, best->name))
			return (int64_t)i;
	return -1;
}

static int add_mappings_and_locations(struct pprof_build *b, const struct model *m,
				      const struct profile_tables *t)
{
	int64_t main_lib;

	size_t nl = t->libs.len, nf = t->frames.len;

	b->maps = calloc_n(nl, sizeof(*b->maps));
	b->map_ptrs = calloc_n(nl, sizeof(*b->map_ptrs));
	b->locs = calloc_n(nf, sizeof(*b->locs));
	b->loc_ptrs = calloc_n(nf, sizeof(*b->loc_ptrs));
	b->lines = calloc_n(nf, sizeof(*b->lines));
	b->line_ptrs = calloc_n(nf, sizeof(*b->line_ptrs));
	if (!b->maps || !b->map_ptrs || !b->locs || !b->loc_ptrs || !b->lines || !b->line_ptrs)
		return -ENOMEM;
	for (size_t i = 0; i < nl; i++) {
		const struct object_info *obj = t->libs.data[i].obj;
		pb_mapping *pm = &b->maps[i];

		perftools__profiles__mapping__init(pm);
		pm->id = i + 1;
		pm->filename = str(b, obj && obj->path ? obj->path : obj ? obj->name : "");
		pm->build_id = str(b, obj ? obj->build_id : "");
		/* Symbolized here: readers must not try to symbolize again. */
		pm->has_functions = pm->has_filenames = pm->has_line_numbers = true;
		pm->has_inline_frames = true;
		b->map_ptrs[i] = pm;
	}
	for (size_t i = 0; i < nf; i++) {
		const struct pt_frame *fr = &t->frames.data[i];
		pb_location *pl = &b->locs[i];
		pb_line *ln = &b->lines[i];

		perftools__profiles__line__init(ln);
		ln->function_id = (uint64_t)fr->func + 1;
		ln->line = fr->line > 0 ? fr->line : 0;
		b->line_ptrs[i] = ln;
		perftools__profiles__location__init(pl);
		pl->id = i + 1;
		pl->mapping_id = mapping_of(t, fr);
		/* Library-relative, like the frame table's: the mapping starts at 0. */
		pl->address = fr->address > 0 ? (uint64_t)fr->address : 0;
		pl->n_line = 1;
		pl->line = &b->line_ptrs[i];
		b->loc_ptrs[i] = pl;
		if (pl->mapping_id && pl->address >= b->maps[pl->mapping_id - 1].memory_limit)
			b->maps[pl->mapping_id - 1].memory_limit = pl->address + 1;
	}
	/* Ids stay as they are: only the order of the list says which is main. */
	main_lib = main_binary_lib(m, t, b->opts->kind);
	if (main_lib > 0) {
		b->map_ptrs[0] = &b->maps[main_lib];
		b->map_ptrs[main_lib] = &b->maps[0];
	}
	return 0;
}

/* pprof's values are int64: a sum that would not fit stays at the largest one. */
static void add_saturated(int64_t *v, uint64_t x)
{
	if (x > (uint64_t)(INT64_MAX - *v))
		*v = INT64_MAX;
	else
		*v += (int64_t)x;
}

static void set_label(pb_label *l, int64_t key, int64_t s, int64_t num)
{
	perftools__profiles__label__init(l);
	l->key = key;
	l->str = s;
	l->num = num;
}

static int add_thread_labels(struct pprof_build *b, const struct model *m)
{
	size_t n = m->threads.len, per = THREAD_LABELS + b->opts->nr_labels;
	int64_t k_pid = str(b, "pid"), k_tid = str(b, "tid"), k_proc = str(b, "process_name"),
		k_thread = str(b, "thread_name"), k_container = str(b, "container_id"),
		k_cgroup = str(b, "cgroup");
	int64_t extra_key[PPROF_MAX_LABELS], extra_value[PPROF_MAX_LABELS];

	b->labels_per_thread = per;
	b->labels = calloc_n(n * per, sizeof(*b->labels));
	b->label_ptrs = calloc_n(n * per, sizeof(*b->label_ptrs));
	b->nr_labels = calloc_n(n, sizeof(*b->nr_labels));
	if (!b->labels || !b->label_ptrs || !b->nr_labels || k_cgroup < 0)
		return -ENOMEM;
	for (size_t j = 0; j < b->opts->nr_labels; j++) {
		extra_key[j] = str(b, b->opts->labels[j].key);
		extra_value[j] = str(b, b->opts->labels[j].value);
		if (extra_key[j] < 0 || extra_value[j] < 0)
			return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		const struct thread *th = &m->threads.data[i];
		const struct process *p = &m->processes.data[th->process];
		pb_label *l = &b->labels[i * per];
		char id[CONTAINER_ID_MAX];
		const char *runtime;
		size_t k = 0;

		set_label(&l[k++], k_pid, 0, th->pid);
		set_label(&l[k++], k_tid, 0, th->tid);
		set_label(&l[k++], k_thread, str(b, th->name), 0);
		set_label(&l[k++], k_proc, str(b, p->name), 0);
		if (p->cgroup && cgroup_container_id(p->cgroup, id, sizeof(id), &runtime))
			set_label(&l[k++], k_container, str(b, id), 0);
		if (p->cgroup)
			set_label(&l[k++], k_cgroup, str(b, p->cgroup), 0);
		for (size_t j = 0; j < b->opts->nr_labels; j++)
			set_label(&l[k++], extra_key[j], extra_value[j], 0);
		for (size_t j = 0; j < k; j++)
			b->label_ptrs[i * per + j] = &l[j];
		b->nr_labels[i] = k;
	}
	return 0;
}

/* The sample of (thread, stack), added with its stack's locations when new; -1: no memory. */
static int64_t sample_of(struct pprof_build *b, const struct profile_tables *t, uint32_t thread,
			 uint32_t stack)
{
	struct hmap_key key = { thread, stack };
	uint32_t at;
	size_t depth = 0;

	if (hmap_get(&b->sample_index, key, &at))
		return at;
	for (uint32_t s = stack; s != NO_INDEX; s = t->stacks.data[s].prefix)
		depth++;
	if (b->nr_samples == b->cap_samples) {
		size_t cap = b->cap_samples ? b->cap_samples * 2 : 1024;
		int64_t *v = realloc(b->values, cap * NR_VALUES * sizeof(*v));

		if (!v)
			return -1;
		b->values = v;
		b->cap_samples = cap;
	}
	if (b->nr_ids + depth > b->cap_ids) {
		size_t cap = (b->cap_ids + depth) * 2;
		uint64_t *ids = realloc(b->location_ids, cap * sizeof(*ids));

		if (!ids)
			return -1;
		b->location_ids = ids;
		b->cap_ids = cap;
	}
	at = (uint32_t)b->nr_samples++;
	memset(&b->values[(size_t)at * NR_VALUES], 0, NR_VALUES * sizeof(*b->values));
	for (uint32_t s = stack; s != NO_INDEX; s = t->stacks.data[s].prefix)
		b->location_ids[b->nr_ids++] = (uint64_t)t->stacks.data[s].frame + 1;
	if (hmap_put(&b->sample_index, key, at))
		return -1;
	return at;
}

static int add_samples(struct pprof_build *b, const struct model *m, const struct profile_tables *t)
{
	/* Where each sample's ids start in location_ids: samples are built in that order. */
	size_t *first_id, ids = 0;

	for (size_t i = 0; i < m->threads.len; i++) {
		const struct thread *th = &m->threads.data[i];
		int64_t last_on = -1; /* this thread's last on-CPU sample */

		for (size_t j = 0; j < th->samples.len; j++) {
			const struct thread_sample *s = &th->samples.data[j];
			uint32_t stack = profile_stack_of(t, s->stack);
			int64_t at;
			int64_t *v;

			/*
			 * A CPU profile has no off-CPU stacks: the run before a wait
			 * that no on-CPU sample took is the switch-out stack's, below
			 * its off-CPU leaf.
			 */
			if (s->kind == SAMPLE_OFF_CPU && b->opts->kind == PPROF_CPU &&
			    last_on < 0 && stack != NO_INDEX)
				stack = t->stacks.data[stack].prefix;
			at = sample_of(b, t, (uint32_t)i, stack);
			if (at < 0)
				return -ENOMEM;
			v = &b->values[(size_t)at * NR_VALUES];
			if (s->kind == SAMPLE_OFF_CPU) {
				add_saturated(&v[V_OFF_CPU],
					      sample_weight(s) * m->offcpu_interval_ns);
				/*
				 * Its CPU delta is the run from the thread's last
				 * sample to the switch-out: that sample's code, not
				 * the wait's stack (totals stay exact either way).
				 */
				if (last_on >= 0)
					v = &b->values[(size_t)last_on * NR_VALUES];
				add_saturated(&v[V_CPU], s->cpu_delta_ns);
			} else {
				v[V_SAMPLES]++;
				add_saturated(&v[V_CPU], s->cpu_delta_ns);
				last_on = at;
			}
		}
	}
	b->samples = calloc_n(b->nr_samples, sizeof(*b->samples));
	b->sample_ptrs = calloc_n(b->nr_samples, sizeof(*b->sample_ptrs));
	first_id = calloc_n(b->nr_samples + 1, sizeof(*first_id));
	if (!b->samples || !b->sample_ptrs || !first_id) {
		free(first_id);
		return -ENOMEM;
	}
	/* Each sample's ids are where sample_of appended them; find the bounds again. */
	for (size_t i = 0; i < b->sample_index.cap; i++) {
		const struct hmap_slot *sl = &b->sample_index.slots[i];
		uint32_t depth = 0;

		if (!sl->used)
			continue;
		for (uint32_t s = (uint32_t)sl->key.b; s != NO_INDEX; s = t->stacks.data[s].prefix)
			depth++;
		first_id[sl->value + 1] = depth;
	}
	for (size_t i = 0; i < b->nr_samples; i++) {
		first_id[i + 1] += first_id[i];
		ids = first_id[i + 1];
	}
	for (size_t i = 0; i < b->sample_index.cap; i++) {
		const struct hmap_slot *sl = &b->sample_index.slots[i];
		pb_sample *ps;
		uint32_t th;

		if (!sl->used)
			continue;
		th = (uint32_t)sl->key.a;
		ps = &b->samples[sl->value];
		perftools__profiles__sample__init(ps);
		ps->n_location_id = first_id[sl->value + 1] - first_id[sl->value];
		ps->location_id = ps->n_location_id ? &b->location_ids[first_id[sl->value]] : NULL;
		ps->n_value = b->nr_values;
		ps->value = &b->values[(size_t)sl->value * NR_VALUES + b->first_value];
		ps->n_label = b->nr_labels[th];
		ps->label = &b->label_ptrs[(size_t)th * b->labels_per_thread];
		b->sample_ptrs[sl->value] = ps;
	}
	free(first_id);
	if (ids != b->nr_ids)
		return -EINVAL;
	/* A profile of one kind leaves out the stacks with nothing of that kind. */
	for (size_t i = 0; i < b->nr_samples; i++) {
		pb_sample *ps = b->sample_ptrs[i];
		bool any = false;

		for (size_t k = 0; k < ps->n_value; k++)
			any |= ps->value[k] != 0;
		if (any)
			b->sample_ptrs[b->nr_kept++] = ps;
	}
	return 0;
}

static int write_all(int fd, bool gzip, const uint8_t *buf, size_t len)
{
	if (gzip) {
		int dfd = dup(fd);
		gzFile gz = dfd >= 0 ? gzdopen(dfd, "wb6") : NULL;
		size_t done = 0;

		if (!gz) {
			if (dfd >= 0)
				close(dfd);
			return -ENOMEM;
		}
		while (done < len) {
			unsigned chunk =
				len - done > (1u << 30) ? 1u << 30 : (unsigned)(len - done);
			int n = gzwrite(gz, buf + done, chunk);

			if (n <= 0) {
				gzclose(gz);
				return -EIO;
			}
			done += (size_t)n;
		}
		return gzclose(gz) == Z_OK ? 0 : -EIO;
	}
	for (size_t done = 0; done < len;) {
		ssize_t n = write(fd, buf + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		done += (size_t)n;
	}
	return 0;
}

int pprof_write_fd(int fd, bool gzip, const struct model *m, const struct profile_tables *t,
		   const struct profile_meta *meta, const struct pprof_options *opts)
{
	static const char *const type_names[NR_VALUES][2] = {
		[V_SAMPLES] = { "samples", "count" },
		[V_CPU] = { "cpu", "nanoseconds" },
		[V_OFF_CPU] = { "off_cpu", "nanoseconds" },
	};
	static const struct pprof_options all = { .kind = PPROF_ALL };
	struct pprof_build b = { .opts = opts ? opts : &all };
	pb_profile p = PERFTOOLS__PROFILES__PROFILE__INIT;
	uint8_t *buf = NULL;
	size_t len;
	int err;

	switch (b.opts->kind) {
	case PPROF_CPU: /* as Go's /debug/pprof/profile */
		b.first_value = V_SAMPLES;
		b.nr_values = 2;
		break;
	case PPROF_OFF_CPU:
		b.first_value = V_OFF_CPU;
		b.nr_values = 1;
		break;
	case PPROF_ALL:
	default:
		b.first_value = 0;
		b.nr_values = NR_VALUES;
		break;
	}
	if (b.opts->nr_labels > PPROF_MAX_LABELS)
		return -EINVAL;
	if ((err = add_strings(&b, t)) || (err = add_functions(&b, t)) ||
	    (err = add_mappings_and_locations(&b, m, t)) || (err = add_thread_labels(&b, m)) ||
	    (err = add_samples(&b, m, t)))
		goto out;
	for (int i = 0; i < NR_VALUES; i++) {
		perftools__profiles__value_type__init(&b.types[i]);
		b.types[i].type = str(&b, type_names[i][0]);
		b.types[i].unit = str(&b, type_names[i][1]);
		b.type_ptrs[i] = &b.types[i];
	}
	perftools__profiles__value_type__init(&b.period_type);
	b.comment = str(&b, meta->command_line);
	p.n_sample_type = b.nr_values;
	p.sample_type = &b.type_ptrs[b.first_value];
	p.n_sample = b.nr_kept;
	p.sample = b.sample_ptrs;
	p.n_mapping = t->libs.len;
	p.mapping = b.map_ptrs;
	p.n_location = t->frames.len;
	p.location = b.loc_ptrs;
	p.n_function = t->funcs.len;
	p.function = b.func_ptrs;
	p.n_string_table = strtab_len(&b.strings);
	p.string_table = calloc_n(p.n_string_table, sizeof(*p.string_table));
	if (!p.string_table) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < p.n_string_table; i++)
		p.string_table[i] = (char *)strtab_get(&b.strings, (uint32_t)i);
	p.time_nanos = (int64_t)(meta->start_wall_ms * 1e6);
	p.duration_nanos = m->stop_ts > m->start_ts ? (int64_t)(m->stop_ts - m->start_ts) : 0;
	if (b.opts->kind == PPROF_OFF_CPU) {
		/* One off-CPU sample stands for this much time off the CPU. */
		b.period_type.type = b.types[V_OFF_CPU].type;
		p.period = (int64_t)m->offcpu_interval_ns;
	} else {
		b.period_type.type = b.types[V_CPU].type;
		p.period = (int64_t)m->nominal_period_ns;
	}
	b.period_type.unit = b.types[V_CPU].unit;
	p.period_type = &b.period_type;
	p.n_comment = 1;
	p.comment = &b.comment;
	p.default_sample_type =
		b.opts->kind == PPROF_OFF_CPU ? b.types[V_OFF_CPU].type : b.types[V_CPU].type;
	len = perftools__profiles__profile__get_packed_size(&p);
	buf = malloc(len ? len : 1);
	if (!buf) {
		err = -ENOMEM;
		goto out;
	}
	perftools__profiles__profile__pack(&p, buf);
	err = write_all(fd, gzip, buf, len);
out:
	free(buf);
	free(p.string_table);
	build_free(&b);
	return err;
}
