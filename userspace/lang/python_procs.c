// SPDX-License-Identifier: BSD-2-Clause
/* See python_procs.h. */
#include "python_procs.h"

#include <errno.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "../util/hashmap.h"
#include "../util/vec.h"

/* Bounds on what a process can make us read and keep. */
#define MAX_NAME_CHARS	 512
#define MAX_PATH_CHARS	 4096
#define MAX_LINETABLE	 (256 * 1024)
#define MAX_CODE_OBJECTS (1u << 20) /* cached, over all processes */

struct proc_entry {
	uint32_t pid;
	bool active;
	uint64_t code_type; /* PyCode_Type's address in the process */
	const struct python_code_layout *layout;
	char *cwd;
	VEC(uint32_t) codes; /* its entries in `codes` */
};

struct code_entry {
	struct hmap_key key; /* (pid, code address) */
	char *qualname, *filename;
	uint8_t *linetable;
	uint32_t linetable_len;
	int first_line;
};

struct python_procs {
	VEC(struct proc_entry) procs;
	struct hmap proc_index; /* pid -> procs */
	VEC(struct code_entry) codes;
	VEC(uint32_t) free_codes; /* slots of codes to reuse */
	struct hmap code_index;	  /* (pid, code) -> codes */
	size_t live_codes;
	python_mem_read_fn read;
	void *read_ctx;
};

static ssize_t read_process(void *ctx, uint32_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };

	(void)ctx;
	return process_vm_readv((pid_t)pid, &local, 1, &remote, 1, 0);
}

struct python_procs *python_procs_new(void)
{
	struct python_procs *p = calloc(1, sizeof(*p));

	if (p)
		p->read = read_process;
	return p;
}

void python_procs_set_reader(struct python_procs *p, python_mem_read_fn fn, void *ctx)
{
	p->read = fn;
	p->read_ctx = ctx;
}

static void free_code(struct code_entry *c)
{
	free(c->qualname);
	free(c->filename);
	free(c->linetable);
	memset(c, 0, sizeof(*c));
}

static struct proc_entry *find_proc(const struct python_procs *p, uint32_t pid)
{
	uint32_t idx;

	if (!hmap_get(&p->proc_index, (struct hmap_key){ pid, 0 }, &idx))
		return NULL;
	return &p->procs.data[idx];
}

void python_procs_forget(struct python_procs *p, uint32_t pid)
{
	struct proc_entry *e = find_proc(p, pid);

	if (!e || !e->active)
		return;
	for (size_t i = 0; i < e->codes.len; i++) {
		uint32_t slot = e->codes.data[i];
		struct code_entry *c = &p->codes.data[slot];

		hmap_del(&p->code_index, c->key);
		free_code(c);
		p->live_codes--;
		/* Out of memory the slot is only not reused. */
		(void)vec_push(&p->free_codes, slot);
	}
	e->codes.len = 0;
	free(e->cwd);
	e->cwd = NULL;
	e->active = false;
}

void python_procs_free(struct python_procs *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->procs.len; i++) {
		python_procs_forget(p, p->procs.data[i].pid);
		vec_free(&p->procs.data[i].codes);
	}
	for (size_t i = 0; i < p->codes.len; i++)
		free_code(&p->codes.data[i]);
	vec_free(&p->procs);
	vec_free(&p->codes);
	vec_free(&p->free_codes);
	hmap_free(&p->proc_index);
	hmap_free(&p->code_index);
	free(p);
}

int python_procs_add(struct python_procs *p, uint32_t pid, const struct python_info *info,
		     int64_t load_bias, const char *cwd)
{
	struct proc_entry *e = find_proc(p, pid);
	uint64_t code_type = info->code_type + (uint64_t)load_bias;

	/* Read again (it mapped a C extension): the same interpreter, its cache stays. */
	if (e && e->active && e->code_type == code_type && e->layout == info->code)
		return 0;
	if (e)
		python_procs_forget(p, pid);
	else {
		struct proc_entry fresh = { .pid = pid };

		if (vec_push(&p->procs, fresh) ||
		    hmap_put(&p->proc_index, (struct hmap_key){ pid, 0 },
			     (uint32_t)(p->procs.len - 1)))
			return -ENOMEM;
		e = &vec_last(&p->procs);
	}
	e->code_type = code_type;
	e->layout = info->code;
	e->cwd = cwd && cwd[0] == '/' ? strdup(cwd) : NULL;
	e->active = info->code != NULL;
	return 0;
}

int python_procs_fork(struct python_procs *p, uint32_t parent, uint32_t child)
{
	struct proc_entry *e = find_proc(p, parent);
	struct python_info info = { 0 };
	char *cwd;
	int err;

	if (!e || !e->active)
		return 0;
	info.code_type = e->code_type;
	info.code = e->layout;
	cwd = e->cwd ? strdup(e->cwd) : NULL;
	/* code_type is already the process's address: no bias. */
	err = python_procs_add(p, child, &info, 0, cwd);
	free(cwd);
	return err;
}

int python_procs_known(const struct python_procs *p, uint32_t pid)
{
	const struct proc_entry *e = find_proc(p, pid);

	return e && e->active;
}

static bool read_exact(struct python_procs *p, uint32_t pid, uint64_t addr, void *buf, size_t len)
{
	return p->read(p->read_ctx, pid, addr, buf, len) == (ssize_t)len;
}

static uint64_t u64_at(const uint8_t *b, uint16_t off)
{
	uint64_t v;

	memcpy(&v, b + off, 8);
	return v;
}

/* Appends code point `c` as UTF-8. */
static size_t put_utf8(char *out, uint32_t c)
{
	if (c < 0x80) {
		out[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		out[0] = (char)(0xc0 | (c >> 6));
		out[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c < 0x10000) {
		if (c >= 0xd800 && c < 0xe000)
			c = 0xfffd;
		out[0] = (char)(0xe0 | (c >> 12));
		out[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		out[2] = (char)(0x80 | (c & 0x3f));
		return 3;
	}
	if (c > 0x10ffff)
		return put_utf8(out, 0xfffd);
	out[0] = (char)(0xf0 | (c >> 18));
	out[1] = (char)(0x80 | ((c >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((c >> 6) & 0x3f));
	out[3] = (char)(0x80 | (c & 0x3f));
	return 4;
}

/* A str object (compact: every str the compiler makes) as a malloc'd UTF-8 string, or NULL. */
static char *read_str(struct python_procs *p, uint32_t pid, const struct python_code_layout *l,
		      uint64_t addr, size_t max_chars)
{
	uint8_t head[96];
	int64_t len;
	uint32_t state, kind;
	uint8_t *raw;
	char *out;
	size_t o = 0, unit, bytes;
	uint16_t data;

	if (!addr || l->str_compact_data > sizeof(head) ||
	    !read_exact(p, pid, addr, head, l->str_compact_data))
		return NULL;
	memcpy(&len, head + l->str_length, 8);
	memcpy(&state, head + l->str_state, 4);
	kind = (state >> 2) & 7;
	if (len < 0 || (size_t)len > max_chars || !(state & (1u << 5)) /* compact */)
		return NULL;
	if (state & (1u << 6)) { /* ascii */
		data = l->str_ascii_data;
		unit = 1;
	} else if (kind == 1 || kind == 2 || kind == 4) {
		data = l->str_compact_data;
		unit = kind;
	} else {
		return NULL;
	}
	bytes = (size_t)len * unit;
	raw = malloc(bytes ? bytes : 1);
	out = malloc((size_t)len * 4 + 1);
	if (!raw || !out || (bytes && !read_exact(p, pid, addr + data, raw, bytes))) {
		free(raw);
		free(out);
		return NULL;
	}
	for (size_t i = 0; i < (size_t)len; i++) {
		uint32_t c = unit == 1	 ? raw[i]
			     : unit == 2 ? (uint32_t)raw[2 * i] | (uint32_t)raw[2 * i + 1] << 8
					 : (uint32_t)raw[4 * i] | (uint32_t)raw[4 * i + 1] << 8 |
						   (uint32_t)raw[4 * i + 2] << 16 |
						   (uint32_t)raw[4 * i + 3] << 24;

		o += put_utf8(out + o, c ? c : 0xfffd);
	}
	out[o] = '\0';
	free(raw);
	return out;
}

/* A relative script path made absolute against the process's working directory. */
static char *absolute(const struct proc_entry *e, char *name)
{
	char *abs;

	if (!name || name[0] == '/' || name[0] == '<' || !e->cwd)
		return name;
	if (asprintf(&abs, "%s/%s", e->cwd, name[0] == '.' && name[1] == '/' ? name + 2 : name) < 0)
		return name;
	free(name);
	return abs;
}

static int load_code(struct python_procs *p, struct proc_entry *e, uint64_t code,
		     struct code_entry *c)
{
	const struct python_code_layout *l = e->layout;
	uint8_t head[256], bytes_head[40];
	uint64_t table;
	int64_t table_len;
	int32_t first;

	if (l->co_code_adaptive > sizeof(head) ||
	    !read_exact(p, e->pid, code, head, l->co_code_adaptive))
		return -EIO;
	if (u64_at(head, l->ob_type) != e->code_type)
		return -ENOENT; /* not a code object (any more) */
	memcpy(&first, head + l->co_firstlineno, 4);
	c->first_line = first > 0 ? first : 0;
	c->qualname = read_str(p, e->pid, l, u64_at(head, l->co_qualname), MAX_NAME_CHARS);
	c->filename =
		absolute(e, read_str(p, e->pid, l, u64_at(head, l->co_filename), MAX_PATH_CHARS));
	table = u64_at(head, l->co_linetable);
	if (table && l->bytes_data <= sizeof(bytes_head) &&
	    read_exact(p, e->pid, table, bytes_head, l->bytes_data)) {
		memcpy(&table_len, bytes_head + l->bytes_size, 8);
		if (table_len > 0 && table_len <= MAX_LINETABLE) {
			c->linetable = malloc((size_t)table_len);
			if (c->linetable && read_exact(p, e->pid, table + l->bytes_data,
						       c->linetable, (size_t)table_len))
				c->linetable_len = (uint32_t)table_len;
		}
	}
	if (!c->qualname)
		c->qualname = strdup("[unknown Python function]");
	if (!c->filename)
		c->filename = strdup("<unknown>");
	return c->qualname && c->filename ? 0 : -ENOMEM;
}

/* PEP 657's varints: 6 bits a byte, bit 6 says more follow. */
static bool varint(const uint8_t *t, size_t len, size_t *i, uint32_t *v)
{
	unsigned shift = 0;
	uint8_t b;

	*v = 0;
	do {
		if (*i >= len || shift > 30)
			return false;
		b = t[(*i)++];
		*v |= (uint32_t)(b & 63) << shift;
		shift += 6;
	} while (b & 64);
	return true;
}

int python_line_of(const uint8_t *t, size_t len, int first_line, int64_t unit)
{
	int64_t addr = 0, line = first_line;
	size_t i = 0;

	if (unit < 0)
		unit = 0;
	while (i < len) {
		uint8_t b = t[i++];
		int code = (b >> 3) & 15, length = (b & 7) + 1, delta = 0;
		uint32_t v;

		if (!(b & 0x80))
			return 0; /* not at an entry's first byte: a table we misread */
		switch (code) {
		case 15: /* no location */
			break;
		case 14: /* long form: line delta, end line, column, end column */
		case 13: /* no column */
			if (!varint(t, len, &i, &v))
				return 0;
			delta = (v & 1) ? -(int)(v >> 1) : (int)(v >> 1);
			if (code == 14)
				for (int k = 0; k < 3; k++)
					if (!varint(t, len, &i, &v))
						return 0;
			break;
		case 10:
		case 11:
		case 12: /* one line: the delta is in the code, two column bytes */
			delta = code - 10;
			i += 2;
			break;
		default: /* short form, same line: one column byte */
			i += 1;
			break;
		}
		line += delta; /* int64_t: a hostile table cannot overflow it in 2^31 entries */
		if (unit < addr + length)
			return code == 15 || line <= 0 || line > INT32_MAX ? 0 : (int)line;
		addr += length;
	}
	return 0;
}

/*
 * `fresh` kept in the cache, or, past the bound or out of memory, in a slot
 * that holds only the latest answer: good for this one frame.
 */
static struct code_entry *keep_code(struct python_procs *p, struct proc_entry *e,
				    struct hmap_key key, struct code_entry *fresh)
{
	static struct code_entry once;
	bool reused = p->free_codes.len > 0;
	uint32_t idx = reused ? vec_last(&p->free_codes) : (uint32_t)p->codes.len;

	fresh->key = key;
	if (p->live_codes < MAX_CODE_OBJECTS && (reused || !vec_push(&p->codes, *fresh))) {
		if (!vec_push(&e->codes, idx)) {
			if (!hmap_put(&p->code_index, key, idx)) {
				if (reused) {
					p->free_codes.len--;
					p->codes.data[idx] = *fresh;
				}
				p->live_codes++;
				return &p->codes.data[idx];
			}
			e->codes.len--;
		}
		if (!reused)
			p->codes.len--;
	}
	free_code(&once);
	once = *fresh;
	return &once;
}

int python_procs_resolve(struct python_procs *p, uint32_t pid, uint64_t code, uint64_t instr,
			 struct python_location *out)
{
	struct proc_entry *e = find_proc(p, pid);
	struct hmap_key key = { pid, code };
	struct code_entry *c, fresh = { 0 };
	int64_t unit;
	uint32_t idx;
	int err;

	if (!e || !e->active || !code)
		return -ENOENT;
	if (!hmap_get(&p->code_index, key, &idx) || !p->codes.data[idx].qualname) {
		err = load_code(p, e, code, &fresh);
		if (err) {
			free_code(&fresh);
			return err;
		}
		c = keep_code(p, e, key, &fresh);
	} else {
		c = &p->codes.data[idx];
	}
	out->qualname = c->qualname;
	out->filename = c->filename;
	out->first_line = c->first_line;
	/* Unsigned: a hostile instruction pointer wraps, it does not overflow. */
	unit = (int64_t)(instr - (code + e->layout->co_code_adaptive)) / 2;
	out->line = python_line_of(c->linetable, c->linetable_len, c->first_line, unit);
	return 0;
}
