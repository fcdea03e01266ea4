// SPDX-License-Identifier: BSD-2-Clause
/* See ruby_procs.h. */
#include "ruby_procs.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proc_mem.h"
#include "ruby_lines.h"
#include "../util/hashmap.h"
#include "../util/log.h"
#include "../util/vec.h"

/* Bounds on what a process can make us read and keep. */
#define MAX_LABEL_BYTES	 512
#define MAX_PATH_BYTES	 4096
#define MAX_INSNS_INFO	 (1u << 16)  /* entries of an iseq's line table */
#define MAX_ISEQ_SIZE	 (1u << 22)  /* words of an iseq: its succ table is ~10 bytes a 64 */
#define MAX_ISEQS	 (1u << 20)  /* cached, over all processes */
#define RB_CACHE_BYTES	 (64u << 20) /* kept over all processes */
#define RB_PROC_SHARE	 (RB_CACHE_BYTES / 8)
#define RB_READ_DEADLINE 500 /* ms */
#define OVER_BUDGET_NAME "[Ruby code past bpfprof's memory budget]"
#define STALLED_NAME	 "[Ruby frame unread: a read of its process's memory stalled]"
#define UNKNOWN_NAME	 "[unknown Ruby method]"

struct proc_entry {
	uint32_t pid, uid;
	bool active;
	bool stalled; /* a read did not return by the deadline: not read again */
	bool said_over_budget;
	size_t bytes;
	const struct ruby_code_layout *layout;
	char *cwd;
	VEC(uint32_t) iseqs; /* its entries in `iseqs` */
};

struct iseq_entry {
	struct hmap_key key; /* (pid, iseq address) */
	char *label, *path;
	uint8_t *entries, *table; /* the line table and its succinct index, copied */
	struct ruby_lines lines;
	uint64_t encoded; /* iseq_encoded: pcs count from here */
	uint32_t size;	  /* iseq_size */
	uint32_t cost;
	int first_line;
};

struct ruby_procs {
	VEC(struct proc_entry) procs;
	struct hmap proc_index; /* pid -> procs */
	VEC(struct iseq_entry) iseqs;
	VEC(uint32_t) free_iseqs;
	struct hmap iseq_index; /* (pid, iseq) -> iseqs */
	size_t live, bytes, max_bytes, max_proc_bytes;
	python_mem_read_fn read;
	void *read_ctx;
	unsigned deadline_ms;
	struct py_reader *reader; /* started at the first read */
	uint16_t versions[8];	  /* major << 8 | minor of the Rubies met */
	unsigned nversions;
};

struct ruby_procs *ruby_procs_new(void)
{
	struct ruby_procs *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->read = proc_mem_read;
	p->deadline_ms = RB_READ_DEADLINE;
	p->max_bytes = RB_CACHE_BYTES;
	p->max_proc_bytes = RB_PROC_SHARE;
	return p;
}

void ruby_procs_set_reader(struct ruby_procs *p, python_mem_read_fn fn, void *ctx)
{
	py_reader_free(p->reader);
	p->reader = NULL;
	p->read = fn;
	p->read_ctx = ctx;
}

void ruby_procs_set_limits(struct ruby_procs *p, size_t max_bytes, size_t max_proc_bytes,
			   unsigned read_deadline_ms)
{
	py_reader_free(p->reader);
	p->reader = NULL;
	p->max_bytes = max_bytes;
	p->max_proc_bytes = max_proc_bytes;
	p->deadline_ms = read_deadline_ms;
}

static void free_iseq(struct iseq_entry *c)
{
	free(c->label);
	free(c->path);
	free(c->entries);
	free(c->table);
	memset(c, 0, sizeof(*c));
}

static struct proc_entry *find_proc(const struct ruby_procs *p, uint32_t pid)
{
	uint32_t idx;

	if (!hmap_get(&p->proc_index, (struct hmap_key){ pid, 0 }, &idx))
		return NULL;
	return &p->procs.data[idx];
}

void ruby_procs_forget(struct ruby_procs *p, uint32_t pid)
{
	struct proc_entry *e = find_proc(p, pid);

	if (!e || !e->active)
		return;
	for (size_t i = 0; i < e->iseqs.len; i++) {
		uint32_t slot = e->iseqs.data[i];
		struct iseq_entry *c = &p->iseqs.data[slot];

		hmap_del(&p->iseq_index, c->key);
		p->bytes -= c->cost;
		free_iseq(c);
		p->live--;
		/* Out of memory the slot is only not reused. */
		(void)vec_push(&p->free_iseqs, slot);
	}
	e->iseqs.len = 0;
	e->bytes = 0;
	free(e->cwd);
	e->cwd = NULL;
	e->active = false;
	e->stalled = false;
	e->said_over_budget = false;
}

void ruby_procs_free(struct ruby_procs *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->procs.len; i++) {
		ruby_procs_forget(p, p->procs.data[i].pid);
		vec_free(&p->procs.data[i].iseqs);
	}
	for (size_t i = 0; i < p->iseqs.len; i++)
		free_iseq(&p->iseqs.data[i]);
	vec_free(&p->procs);
	vec_free(&p->iseqs);
	vec_free(&p->free_iseqs);
	hmap_free(&p->proc_index);
	hmap_free(&p->iseq_index);
	py_reader_free(p->reader);
	free(p);
}

int ruby_procs_add(struct ruby_procs *p, uint32_t pid, uint32_t uid,
		   const struct ruby_code_layout *code, const char *cwd)
{
	struct proc_entry *e = find_proc(p, pid);

	/* Read again (it mapped a C extension): the same interpreter, its cache stays. */
	if (e && e->active && e->layout == code && e->uid == uid)
		return 0;
	if (e)
		ruby_procs_forget(p, pid);
	else {
		struct proc_entry fresh = { .pid = pid };

		if (vec_push(&p->procs, fresh) ||
		    hmap_put(&p->proc_index, (struct hmap_key){ pid, 0 },
			     (uint32_t)(p->procs.len - 1)))
			return -ENOMEM;
		e = &vec_last(&p->procs);
	}
	e->uid = uid;
	e->layout = code;
	e->cwd = cwd && cwd[0] == '/' ? strdup(cwd) : NULL;
	e->active = code != NULL;
	return 0;
}

int ruby_procs_fork(struct ruby_procs *p, uint32_t parent, uint32_t child)
{
	struct proc_entry *e = find_proc(p, parent);
	char *cwd;
	int err;

	if (!e || !e->active)
		return 0;
	cwd = e->cwd ? strdup(e->cwd) : NULL;
	err = ruby_procs_add(p, child, e->uid, e->layout, cwd);
	free(cwd);
	return err;
}

void ruby_procs_note_version(struct ruby_procs *p, uint32_t version)
{
	uint16_t minor = (uint16_t)(version >> 8);

	for (unsigned i = 0; i < p->nversions; i++)
		if (p->versions[i] == minor)
			return;
	if (p->nversions < sizeof(p->versions) / sizeof(p->versions[0]))
		p->versions[p->nversions++] = minor;
}

const char *ruby_procs_versions(const struct ruby_procs *p, char *buf, size_t len)
{
	size_t o = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < p->nversions && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%u.%u", i ? ", " : "",
				      p->versions[i] >> 8, p->versions[i] & 0xff);
	return buf;
}

int ruby_procs_known(const struct ruby_procs *p, uint32_t pid)
{
	const struct proc_entry *e = find_proc(p, pid);

	return e && e->active;
}

/* A read that waits for the deadline only; a stall marks the process unread from then on. */
static bool read_exact(struct ruby_procs *p, struct proc_entry *e, uint64_t addr, void *buf,
		       size_t len)
{
	ssize_t res;

	if (e->stalled)
		return false;
	if (!p->reader && !(p->reader = py_reader_new(p->read, p->read_ctx, p->deadline_ms)))
		return false;
	res = py_reader_read(p->reader, e->uid, e->pid, addr, buf, len);
	if (res == -ETIMEDOUT) {
		e->stalled = true;
		log_warn("Ruby process %u (uid %u): a read of its memory did not return in %u ms "
			 "(a page on a file system its owner serves?); it is not read again",
			 e->pid, e->uid, p->deadline_ms);
	}
	return res == (ssize_t)len;
}

static uint64_t u64_at(const uint8_t *b, uint16_t off)
{
	uint64_t v;

	memcpy(&v, b + off, 8);
	return v;
}

/* Object `addr`'s flags when it is a heap object of `type`; 0 when not. */
static uint64_t object_flags(struct ruby_procs *p, struct proc_entry *e, uint64_t addr,
			     uint32_t type)
{
	uint64_t flags;

	/* Immediates (Fixnums, symbols, nil) have low bits set or are 0. */
	if (!addr || (addr & 7) || !read_exact(p, e, addr, &flags, 8) ||
	    (flags & RUBY_TYPE_MASK) != type)
		return 0;
	return flags;
}

/* A String as a malloc'd C string, control bytes replaced; NULL when it is none. */
static char *read_string(struct ruby_procs *p, struct proc_entry *e, uint64_t addr, size_t max)
{
	const struct ruby_code_layout *l = e->layout;
	uint64_t flags = object_flags(p, e, addr, RUBY_TYPE_STRING), ptr;
	int64_t len;
	uint8_t head[16];
	char *out;

	if (!flags)
		return NULL;
	if (flags & l->rstring_noembed) {
		if (!read_exact(p, e, addr + l->rstring_heap_len, head, 16))
			return NULL;
		memcpy(&len, head, 8);
		memcpy(&ptr, head + (l->rstring_heap_ptr - l->rstring_heap_len), 8);
	} else {
		len = (int64_t)((flags & l->rstring_embed_mask) >> l->rstring_embed_shift);
		ptr = addr + l->rstring_embed;
	}
	if (len < 0 || (size_t)len > max || !(out = malloc((size_t)len + 1)))
		return NULL;
	if (len && !read_exact(p, e, ptr, out, (size_t)len)) {
		free(out);
		return NULL;
	}
	for (int64_t i = 0; i < len; i++)
		if ((unsigned char)out[i] < 0x20 || out[i] == 0x7f)
			out[i] = '?';
	out[len] = '\0';
	return out;
}

/* A pathobj's file: the String itself, or of [path, realpath] the realpath if any. */
static char *read_path(struct ruby_procs *p, struct proc_entry *e, uint64_t pathobj)
{
	const struct ruby_code_layout *l = e->layout;
	uint64_t flags = object_flags(p, e, pathobj, RUBY_TYPE_ARRAY), elems[2] = { 0, 0 }, ptr;
	int64_t len;
	char *s;

	if (!flags)
		return read_string(p, e, pathobj, MAX_PATH_BYTES);
	if (flags & l->rarray_embed_flag) {
		len = (int64_t)((flags & l->rarray_embed_mask) >> l->rarray_embed_shift);
		ptr = pathobj + l->rarray_embed;
	} else if (!read_exact(p, e, pathobj + l->rarray_heap_len, &len, 8) ||
		   !read_exact(p, e, pathobj + l->rarray_heap_ptr, &ptr, 8)) {
		return NULL;
	}
	if (len < 1 || !read_exact(p, e, ptr, elems, len >= 2 ? 16 : 8))
		return NULL;
	if (len >= 2 && (s = read_string(p, e, elems[1], MAX_PATH_BYTES)))
		return s;
	return read_string(p, e, elems[0], MAX_PATH_BYTES);
}

/* A copy of `len` bytes at `addr` (0 < len), or NULL. */
static uint8_t *read_copy(struct ruby_procs *p, struct proc_entry *e, uint64_t addr, size_t len)
{
	uint8_t *b = malloc(len);

	if (b && !read_exact(p, e, addr, b, len)) {
		free(b);
		return NULL;
	}
	return b;
}

/* The iseq's line table: its entries and, for more than one, their succinct index. */
static void load_lines(struct ruby_procs *p, struct proc_entry *e, const uint8_t *body,
		       struct iseq_entry *c)
{
	const struct ruby_code_layout *l = e->layout;
	uint32_t n;
	size_t tlen;

	memcpy(&n, body + l->body_insns_size, 4);
	if (!n || n > MAX_INSNS_INFO || c->size > MAX_ISEQ_SIZE ||
	    !u64_at(body, l->body_insns_body))
		return;
	c->entries =
		read_copy(p, e, u64_at(body, l->body_insns_body), (size_t)n * l->insn_entry_size);
	if (!c->entries)
		return;
	if (n > 1) {
		tlen = ruby_succ_table_bytes(c->size);
		if (!u64_at(body, l->body_succ_table) ||
		    !(c->table = read_copy(p, e, u64_at(body, l->body_succ_table), tlen)))
			return;
		c->lines.table = c->table;
		c->lines.table_len = tlen;
	}
	c->lines.entries = c->entries;
	c->lines.n = n;
	c->lines.entry_size = l->insn_entry_size;
	c->lines.line_off = l->insn_entry_line;
}

static int load_iseq(struct ruby_procs *p, struct proc_entry *e, uint64_t iseq,
		     struct iseq_entry *c)
{
	const struct ruby_code_layout *l = e->layout;
	uint8_t head[32], body[256];
	uint64_t flags, first;

	if (l->body_bytes > sizeof(body) || (size_t)l->iseq_body + 8 > sizeof(head) ||
	    !read_exact(p, e, iseq, head, sizeof(head)))
		return -EIO;
	flags = u64_at(head, 0);
	if ((flags & RUBY_TYPE_MASK) != RUBY_TYPE_IMEMO || ((flags >> 12) & 0xf) != l->imemo_iseq ||
	    !read_exact(p, e, u64_at(head, l->iseq_body), body, l->body_bytes))
		return -ENOENT; /* not an iseq (any more) */
	c->encoded = u64_at(body, l->body_iseq_encoded);
	memcpy(&c->size, body + l->body_iseq_size, 4);
	first = u64_at(body, l->body_first_lineno);
	c->first_line = (first & 1) && (int64_t)first > 0 && first >> 1 < (1u << 30)
				? (int)(first >> 1)
				: 0;
	c->label = read_string(p, e, u64_at(body, l->body_label), MAX_LABEL_BYTES);
	c->path = proc_path_absolute(e->cwd, read_path(p, e, u64_at(body, l->body_pathobj)));
	load_lines(p, e, body, c);
	if (e->stalled)
		return -EIO; /* names a stalled read left out are not kept */
	if (!c->label)
		c->label = strdup(UNKNOWN_NAME);
	if (!c->path)
		c->path = strdup("<unknown>");
	return c->label && c->path ? 0 : -ENOMEM;
}

/* `fresh` kept in the cache, or, past the bound or out of memory, in a one-answer slot. */
static struct iseq_entry *keep_iseq(struct ruby_procs *p, struct proc_entry *e, struct hmap_key key,
				    struct iseq_entry *fresh)
{
	static struct iseq_entry once;
	bool reused = p->free_iseqs.len > 0;
	uint32_t idx = reused ? vec_last(&p->free_iseqs) : (uint32_t)p->iseqs.len;

	fresh->key = key;
	fresh->cost = (uint32_t)(sizeof(*fresh) + 2 * sizeof(struct hmap_slot) + sizeof(idx) +
				 strlen(fresh->label) + strlen(fresh->path) + 2 +
				 (size_t)fresh->lines.n * fresh->lines.entry_size +
				 fresh->lines.table_len);
	if (p->live < MAX_ISEQS && (reused || !vec_push(&p->iseqs, *fresh))) {
		if (!vec_push(&e->iseqs, idx)) {
			if (!hmap_put(&p->iseq_index, key, idx)) {
				if (reused) {
					p->free_iseqs.len--;
					p->iseqs.data[idx] = *fresh;
				}
				p->live++;
				p->bytes += fresh->cost;
				e->bytes += fresh->cost;
				return &p->iseqs.data[idx];
			}
			e->iseqs.len--;
		}
		if (!reused)
			p->iseqs.len--;
	}
	free_iseq(&once);
	once = *fresh;
	once.cost = 0;
	return &once;
}

static bool within_budget(struct ruby_procs *p, struct proc_entry *e)
{
	if (e->bytes < p->max_proc_bytes && p->bytes < p->max_bytes)
		return true;
	if (!e->said_over_budget) {
		e->said_over_budget = true;
		log_warn("Ruby process %u (uid %u): its iseqs take %zu KiB (all %zu KiB) of "
			 "bpfprof's memory; its others are not read, their frames are named %s",
			 e->pid, e->uid, e->bytes >> 10, p->bytes >> 10, OVER_BUDGET_NAME);
	}
	return false;
}

int ruby_procs_resolve(struct ruby_procs *p, uint32_t pid, uint64_t iseq, uint64_t pc,
		       struct ruby_location *out)
{
	struct proc_entry *e = find_proc(p, pid);
	struct hmap_key key = { pid, iseq };
	struct iseq_entry *c, fresh = { 0 };
	uint64_t pos;
	uint32_t idx;
	int err;

	if (!e || !e->active || !iseq)
		return -ENOENT;
	if (hmap_get(&p->iseq_index, key, &idx)) {
		c = &p->iseqs.data[idx];
	} else {
		if (e->stalled || !within_budget(p, e)) {
			out->label = e->stalled ? STALLED_NAME : OVER_BUDGET_NAME;
			out->path = "<unknown>";
			out->first_line = out->line = 0;
			return 0;
		}
		err = load_iseq(p, e, iseq, &fresh);
		if (err) {
			free_iseq(&fresh);
			return err;
		}
		c = keep_iseq(p, e, key, &fresh);
	}
	out->label = c->label;
	out->path = c->path;
	out->first_line = c->first_line;
	/* The pc is the next instruction's (vm_backtrace.c's calc_pos): the one before it runs. */
	pos = (pc - c->encoded) / 8;
	if (pos)
		pos--;
	out->line = pc >= c->encoded && pos < c->size ? ruby_line_at(&c->lines, (uint32_t)pos) : 0;
	if (!out->line)
		out->line = c->first_line;
	return 0;
}
