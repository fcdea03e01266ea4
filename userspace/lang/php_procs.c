// SPDX-License-Identifier: BSD-2-Clause
/* See php_procs.h. */
#include "php_procs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "../util/clock.h"
#include "../util/hashmap.h"
#include "../util/strtab.h"
#include "../util/vec.h"
#include "read_budget.h"

/* How long a read may wait (a page that never arrives: python_reader.h). */
#define READ_DEADLINE_MS  500
/*
 * Reads a user's PHP processes may cost a second: a function is read once
 * (PHP_NAME_READS reads or fewer), so a real program spends little; a fake
 * one whose every frame names a new function is held to this.
 */
#define READ_BYTES_PER_S  (4ull << 20)
#define READ_BYTES_BURST  (16ull << 20)
#define READ_GLOBAL_PER_S (16ull << 20)
#define READ_GLOBAL_BURST (64ull << 20)
#define READ_MIN_COST	  512
/* Distinct versions the frame-quality line names. */
#define PHP_VERSIONS_KEPT 4
/* What an entry costs beside its strings. */
#define ENTRY_BYTES	  64

struct fn_entry {
	uint32_t name, file; /* in the process's strings */
	int line_start;
	bool internal;
};

struct proc {
	uint32_t pid, uid, version;
	const struct php_name_layout *names;
	struct strtab strings;
	VEC(struct fn_entry) fns;
	struct hmap by_func; /* zend_function * -> fns */
	size_t bytes;
	int64_t over_budget, unread; /* strings of the stand-in names; -1 until needed */
};

struct php_procs {
	VEC(struct proc *) procs;
	struct hmap by_pid; /* pid -> procs */
	struct py_reader *reader;
	python_mem_read_fn read;
	void *read_ctx;
	struct read_budget *budget;
	size_t bytes;
	struct php_procs_stats stats;
	uint32_t versions[PHP_VERSIONS_KEPT]; /* major << 8 | minor met, 0: none */
};

static ssize_t vm_read(void *ctx, uint32_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };

	(void)ctx;
	return process_vm_readv((pid_t)pid, &local, 1, &remote, 1, 0);
}

int php_procs_set_read_limits(struct php_procs *p, const struct read_budget_limits *limits)
{
	struct read_budget *b = read_budget_new(limits);

	if (!b)
		return -ENOMEM;
	read_budget_free(p->budget);
	p->budget = b;
	return 0;
}

struct php_procs *php_procs_new(void)
{
	struct php_procs *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->read = vm_read;
	p->budget = read_budget_new(&(struct read_budget_limits){
		.user_per_s = READ_BYTES_PER_S,
		.user_burst = READ_BYTES_BURST,
		.global_per_s = READ_GLOBAL_PER_S,
		.global_burst = READ_GLOBAL_BURST,
		.min_cost = READ_MIN_COST,
	});
	if (!p->budget) {
		free(p);
		return NULL;
	}
	return p;
}

static void proc_free(struct proc *pr)
{
	strtab_free(&pr->strings);
	vec_free(&pr->fns);
	hmap_free(&pr->by_func);
	free(pr);
}

void php_procs_free(struct php_procs *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->procs.len; i++)
		proc_free(p->procs.data[i]);
	vec_free(&p->procs);
	hmap_free(&p->by_pid);
	if (p->reader)
		py_reader_free(p->reader);
	read_budget_free(p->budget);
	free(p);
}

void php_procs_set_reader(struct php_procs *p, python_mem_read_fn fn, void *ctx)
{
	p->read = fn;
	p->read_ctx = ctx;
}

static struct proc *find(const struct php_procs *p, uint32_t pid)
{
	uint32_t idx;

	return hmap_get(&p->by_pid, (struct hmap_key){ pid, 0 }, &idx) ? p->procs.data[idx] : NULL;
}

void php_procs_forget(struct php_procs *p, uint32_t pid)
{
	struct hmap_key key = { pid, 0 };
	uint32_t idx;

	if (!hmap_get(&p->by_pid, key, &idx))
		return;
	p->bytes -= p->procs.data[idx]->bytes;
	proc_free(p->procs.data[idx]);
	hmap_del(&p->by_pid, key);
	/* The last one takes its place. */
	if (idx + 1 < p->procs.len) {
		p->procs.data[idx] = vec_last(&p->procs);
		hmap_put(&p->by_pid, (struct hmap_key){ p->procs.data[idx]->pid, 0 }, idx);
	}
	p->procs.len--;
}

static void note_version(struct php_procs *p, uint32_t minor)
{
	for (int i = 0; i < PHP_VERSIONS_KEPT; i++) {
		if (p->versions[i] == minor)
			return;
		if (!p->versions[i]) {
			p->versions[i] = minor;
			return;
		}
	}
}

const char *php_procs_versions(const struct php_procs *p, char *buf, size_t size)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; i < PHP_VERSIONS_KEPT && p->versions[i] && used < size; i++) {
		int n = snprintf(buf + used, size - used, "%s%u.%u", used ? ", " : "",
				 p->versions[i] >> 8, p->versions[i] & 0xff);

		if (n < 0)
			break;
		used += (size_t)n;
	}
	return buf;
}

int php_procs_add(struct php_procs *p, uint32_t pid, uint32_t uid, const struct php_info *info)
{
	struct proc *pr;

	php_procs_forget(p, pid);
	pr = calloc(1, sizeof(*pr));
	if (!pr)
		return -ENOMEM;
	note_version(p, info->version >> 8);
	pr->pid = pid;
	pr->uid = uid;
	pr->version = info->version;
	pr->names = info->names;
	pr->over_budget = pr->unread = -1;
	if (vec_push(&p->procs, pr)) {
		proc_free(pr);
		return -ENOMEM;
	}
	if (hmap_put(&p->by_pid, (struct hmap_key){ pid, 0 }, (uint32_t)(p->procs.len - 1))) {
		p->procs.len--;
		proc_free(pr);
		return -ENOMEM;
	}
	return 0;
}

bool php_procs_known(const struct php_procs *p, uint32_t pid)
{
	return find(p, pid) != NULL;
}

uint32_t php_procs_version(const struct php_procs *p, uint32_t pid)
{
	const struct proc *pr = find(p, pid);

	return pr ? pr->version : 0;
}

bool php_procs_uid(const struct php_procs *p, uint32_t pid, uint32_t *uid)
{
	const struct proc *pr = find(p, pid);

	if (pr)
		*uid = pr->uid;
	return pr != NULL;
}

struct read_ctx {
	struct php_procs *p;
	struct proc *pr;
};

/* php_read_fn: through the reader, with its deadline, within the user's budget. */
static int proc_read(void *vctx, uint64_t addr, void *buf, size_t len)
{
	struct read_ctx *c = vctx;
	ssize_t n;

	if (!read_budget_take(c->p->budget, c->pr->uid, len, clock_ns(CLOCK_MONOTONIC))) {
		c->p->stats.reads_refused++;
		return -EBUSY;
	}
	if (!c->p->reader &&
	    !(c->p->reader = py_reader_new(c->p->read, c->p->read_ctx, READ_DEADLINE_MS)))
		return -ENOMEM;
	n = py_reader_read(c->p->reader, c->pr->uid, c->pr->pid, addr, buf, len);
	if (n < 0)
		return n == -1 ? -EFAULT : (int)n;
	return (size_t)n == len ? 0 : -EFAULT;
}

/* The entry of a stand-in name (*slot caches its string). */
static int stand_in(struct proc *pr, int64_t *slot, const char *name, struct php_location *out)
{
	if (*slot < 0 && (*slot = strtab_intern(&pr->strings, name)) < 0)
		return -ENOMEM;
	out->name = strtab_get(&pr->strings, (uint32_t)*slot);
	out->file = "";
	out->internal = false;
	return 0;
}

static void located(const struct proc *pr, const struct fn_entry *e, struct php_location *out)
{
	out->name = strtab_get(&pr->strings, e->name);
	out->file = strtab_get(&pr->strings, e->file);
	out->internal = e->internal;
	if (e->internal)
		out->line = 0;
}

int php_procs_resolve(struct php_procs *p, uint32_t pid, uint64_t func, uint64_t instr,
		      struct php_location *out)
{
	struct proc *pr = find(p, pid);
	struct read_ctx c = { p, pr };
	struct php_function fn;
	struct fn_entry e;
	int64_t name, file;
	uint32_t idx;
	size_t cost;
	int err;

	if (!pr)
		return -ENOENT;
	out->line = (int)((instr >> 1) & 0x7fffffff);
	if (hmap_get(&pr->by_func, (struct hmap_key){ func, 0 }, &idx)) {
		located(pr, &pr->fns.data[idx], out);
		return 0;
	}
	if (pr->fns.len >= PHP_PROC_MAX_FUNCS || p->bytes >= PHP_PROCS_MAX_BYTES) {
		p->stats.over_budget++;
		return stand_in(pr, &pr->over_budget, PHP_OVER_BUDGET, out);
	}
	err = php_name_function(pr->names, proc_read, &c, func, &fn);
	if (err == -ENOMEM)
		return err;
	/* Refused or past its deadline: asked again at a later frame, not kept unnamed. */
	if (err == -EBUSY || err == -ETIMEDOUT)
		return stand_in(pr, &pr->unread, PHP_UNREAD, out);
	p->stats.functions_read++;
	name = strtab_intern(&pr->strings, fn.name);
	file = strtab_intern(&pr->strings, fn.file);
	if (name < 0 || file < 0)
		return -ENOMEM;
	e = (struct fn_entry){ (uint32_t)name, (uint32_t)file, fn.line_start, fn.internal };
	if (vec_push(&pr->fns, e) ||
	    hmap_put(&pr->by_func, (struct hmap_key){ func, 0 }, (uint32_t)(pr->fns.len - 1)))
		return -ENOMEM;
	cost = ENTRY_BYTES + strlen(fn.name) + strlen(fn.file);
	pr->bytes += cost;
	p->bytes += cost;
	located(pr, &vec_last(&pr->fns), out);
	return 0;
}

void php_procs_get_stats(const struct php_procs *p, struct php_procs_stats *out)
{
	*out = p->stats;
	out->bytes = p->bytes;
}

int php_procs_fork(struct php_procs *p, uint32_t parent, uint32_t child)
{
	const struct proc *pr = find(p, parent);
	struct php_info info = { 0 };

	if (!pr)
		return 0;
	info.version = pr->version;
	info.names = pr->names;
	return php_procs_add(p, child, pr->uid, &info);
}
