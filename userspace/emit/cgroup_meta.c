// SPDX-License-Identifier: BSD-2-Clause
/*
 * Cgroup labels and the per-cgroup "more info" entries. A container shows
 * in the process's track label in every mode, because a container id is
 * what a user looks for in a whole-machine profile; the plain cgroup path
 * only with --cgroup, where it tells the profiled cgroups' members apart.
 */
#include "cgroup_meta.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* U+2026 HORIZONTAL ELLIPSIS, as UTF-8. */
#define ELLIPSIS "\xe2\x80\xa6"

bool process_container(const struct process *p, char id[CONTAINER_ID_MAX], const char **runtime)
{
	*runtime = NULL;
	id[0] = '\0';
	return p->cgroup && cgroup_container_id(p->cgroup, id, CONTAINER_ID_MAX, runtime);
}

/* A container as labels show it: 12 digits of a hex id, a name in full. */
static const char *short_id(char id[CONTAINER_ID_MAX])
{
	if (container_id_is_hex(id))
		id[CONTAINER_ID_SHORT] = '\0';
	return id;
}

/* The process's comm, or "Process <pid>" when it has none (as the emitter names it). */
static void process_comm(const struct process *p, char *buf, size_t len)
{
	size_t n = strnlen(p->name, BPFPROF_COMM_LEN);

	if (n)
		snprintf(buf, len, "%.*s", (int)n, p->name);
	else
		snprintf(buf, len, "Process %u", p->pid);
}

/* The label of one process into *out (NULL for the plain name); 0 or -ENOMEM. */
static int process_label(const struct model *m, const struct process *p, char **out)
{
	char comm[BPFPROF_COMM_LEN + 32], id[CONTAINER_ID_MAX];
	const char *runtime;
	int n = 0;

	*out = NULL;
	if (p->is_idle || !p->cgroup)
		return 0;
	process_comm(p, comm, sizeof(comm));
	if (process_container(p, id, &runtime) && process_cgroup_user_owned(p))
		n = asprintf(out, "%s [container %s, named in uid %u's cgroup]", comm, short_id(id),
			     p->cgroup_owner);
	else if (process_container(p, id, &runtime))
		n = asprintf(out, "%s [container %s]", comm, short_id(id));
	else if (m->cgroup_names)
		n = asprintf(out, "%s [%s]", comm, p->cgroup);
	if (n < 0) {
		*out = NULL;
		return -ENOMEM;
	}
	return 0;
}

struct member {
	const char *cgroup;
	uint32_t index; /* model process */
};

static int cmp_member(const void *a, const void *b)
{
	const struct member *x = a, *y = b;
	int c = strcmp(x->cgroup, y->cgroup);

	if (c)
		return c;
	return x->index < y->index ? -1 : x->index > y->index;
}

/* "Cgroup <path>" and " (container <short id>)" when it is one. */
static char *entry_label(const struct process *p)
{
	char id[CONTAINER_ID_MAX], *label;
	const char *runtime;
	int n;

	if (process_container(p, id, &runtime) && process_cgroup_user_owned(p))
		n = asprintf(&label, "Cgroup %s (container %s, named in uid %u's cgroup)",
			     p->cgroup, short_id(id), p->cgroup_owner);
	else if (process_container(p, id, &runtime))
		n = asprintf(&label, "Cgroup %s (container %s)", p->cgroup, short_id(id));
	else
		n = asprintf(&label, "Cgroup %s", p->cgroup);
	return n < 0 ? NULL : label;
}

/* "<n> processes: name (pid), …": the members of one cgroup, cut after CGROUP_META_MAX_LISTED. */
static char *entry_value(const struct model *m, const struct member *mb, size_t n)
{
	char comm[BPFPROF_COMM_LEN + 32], *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	size_t shown = n < CGROUP_META_MAX_LISTED ? n : CGROUP_META_MAX_LISTED;

	if (!f)
		return NULL;
	fprintf(f, "%zu process%s: ", n, n == 1 ? "" : "es");
	for (size_t i = 0; i < shown; i++) {
		const struct process *p = &m->processes.data[mb[i].index];

		process_comm(p, comm, sizeof(comm));
		fprintf(f, "%s%s (%u)", i ? ", " : "", comm, p->pid);
	}
	if (n > shown)
		fprintf(f, ", " ELLIPSIS " and %zu more", n - shown);
	if (ferror(f)) {
		fclose(f);
		free(buf);
		return NULL;
	}
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* One entry per distinct cgroup, the first CGROUP_META_MAX_ENTRIES by path. */
static int build_entries(struct cgroup_meta *c, const struct model *m)
{
	struct member *mb = calloc(m->processes.len ? m->processes.len : 1, sizeof(*mb));
	size_t n = 0, groups = 0;
	int err = 0;

	if (!mb)
		return -ENOMEM;
	for (size_t i = 0; i < m->processes.len; i++)
		if (m->processes.data[i].cgroup && !m->processes.data[i].is_idle)
			mb[n++] = (struct member){ m->processes.data[i].cgroup, (uint32_t)i };
	qsort(mb, n, sizeof(*mb), cmp_member);
	c->entries = calloc(CGROUP_META_MAX_ENTRIES, sizeof(*c->entries));
	if (!c->entries) {
		free(mb);
		return -ENOMEM;
	}
	for (size_t i = 0, end; i < n; i = end) {
		struct cgroup_meta_entry *e;

		for (end = i + 1; end < n && !strcmp(mb[end].cgroup, mb[i].cgroup); end++)
			;
		if (groups++ >= CGROUP_META_MAX_ENTRIES) {
			c->other_cgroups++;
			continue;
		}
		e = &c->entries[c->nr_entries++];
		e->label = entry_label(&m->processes.data[mb[i].index]);
		e->value = entry_value(m, mb + i, end - i);
		if (!e->label || !e->value) {
			err = -ENOMEM;
			break;
		}
	}
	free(mb);
	return err;
}

int cgroup_meta_build(struct cgroup_meta *c, const struct model *m)
{
	bool any_container = false;
	int err = 0;

	memset(c, 0, sizeof(*c));
	c->proc_label = calloc(m->processes.len ? m->processes.len : 1, sizeof(*c->proc_label));
	if (!c->proc_label)
		return -ENOMEM;
	c->nr_procs = m->processes.len;
	for (size_t i = 0; i < m->processes.len && !err; i++) {
		char id[CONTAINER_ID_MAX];
		const char *runtime;

		err = process_label(m, &m->processes.data[i], &c->proc_label[i]);
		if (!any_container && !m->processes.data[i].is_idle)
			any_container = process_container(&m->processes.data[i], id, &runtime);
	}
	if (!err && (m->cgroup_names || any_container))
		err = build_entries(c, m);
	if (err)
		cgroup_meta_free(c);
	return err;
}

void cgroup_meta_free(struct cgroup_meta *c)
{
	for (size_t i = 0; c->proc_label && i < c->nr_procs; i++)
		free(c->proc_label[i]);
	for (size_t i = 0; i < c->nr_entries; i++) {
		free(c->entries[i].label);
		free(c->entries[i].value);
	}
	free(c->proc_label);
	free(c->entries);
	memset(c, 0, sizeof(*c));
}
