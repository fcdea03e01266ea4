// SPDX-License-Identifier: BSD-2-Clause
/* See python_procs.h. */
#include "python_procs.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "python_linetable.h"
#include "proc_mem.h"
#include "python_reader.h"
#include "python_strings.h"
#include "../util/clock.h"
#include "../util/hashmap.h"
#include "../util/log.h"
#include "../util/vec.h"

/* Bounds on what a process can make us read and keep. */
#define MAX_NAME_CHARS	      512
#define MAX_PATH_CHARS	      4096
#define MAX_LINETABLE	      (256 * 1024)
#define MAX_CODE_OBJECTS      (1u << 20) /* cached, over all processes */
/*
 * Bytes the cache keeps (names, tables and their indexes): over all
 * processes, of one uid, of one process. Without them 8192 code objects
 * with 256 KiB tables took 2 GiB (issue 37). A process past a share has
 * its new code objects not read at all: their frames say so by name.
 */
#define PY_CACHE_BYTES	      (128u << 20)
#define PY_UID_SHARE	      (PY_CACHE_BYTES / 4)
#define PY_PROC_SHARE	      (PY_CACHE_BYTES / 8)
/*
 * How long the drain waits for one read. A uid one of whose reads stalled
 * is not read while the read is stuck (the reader would refuse it anyway:
 * it has one stuck read at most), nor for a cooldown after the read
 * returned: the deadline times 2^(the uid's stalls before, up to
 * PY_COOLDOWN_DOUBLINGS). A page swapped in late costs a while, not the
 * recording; a page held past the deadline again and again costs the drain
 * the deadline ever less often (at most once a minute or so).
 */
#define PY_READ_DEADLINE_MS   500
#define PY_COOLDOWN_DOUBLINGS 7
/*
 * How often a drain asks the reader whether a uid's stuck read returned:
 * its frames come by the thousand, the question takes the reader's mutex
 * and looks at every worker, and a return noticed a few ms late only
 * starts the cooldown that much later.
 */
#define PY_HOLDS_CHECK_NS     (5 * 1000000ull)
/* What a frame is named when its code object was not read. */
#define OVER_BUDGET_NAME      "[Python code past bpfprof's memory budget]"
#define STALLED_NAME	      "[Python frame unread: a read of its uid's memory stalled]"

struct proc_entry {
	uint32_t pid;
	bool active;
	bool stalled;	       /* a read of its memory did not return by the deadline, once */
	bool said_over_budget; /* logged */
	bool said_unread;      /* logged that its uid's stall keeps it unread */
	uint32_t share;	       /* its uid's entry in `shares` */
	size_t bytes;	       /* its code objects' cost */
	uint64_t code_type;    /* PyCode_Type's address in the process */
	uint32_t version_hex;  /* its interpreter's PY_VERSION_HEX */
	const struct python_code_layout *layout;
	char *cwd;
	VEC(uint32_t) codes; /* its entries in `codes` */
};

struct code_entry {
	struct hmap_key key; /* (pid, code address) */
	char *qualname, *filename;
	uint8_t *linetable;
	uint32_t linetable_len;
	struct py_line_index lines;
	uint32_t cost; /* bytes charged to its process, uid and the whole */
	int first_line;
};

/* What one uid's processes keep, and how their memory stalled reads. */
struct uid_share {
	uint32_t uid;
	unsigned stalls;      /* ever: each doubles the next cooldown */
	bool holds;	      /* a read of its memory is stuck, past its deadline at held_since */
	uint32_t held_pid;    /* the process it read */
	uint64_t held_since;  /* CLOCK_MONOTONIC ns */
	uint64_t checked_at;  /* when the reader was last asked whether it holds (ns) */
	uint64_t quiet_until; /* 0, or the end of the cooldown (CLOCK_MONOTONIC ns) */
	size_t bytes;
};

struct python_procs {
	VEC(struct proc_entry) procs;
	struct hmap proc_index; /* pid -> procs */
	VEC(struct code_entry) codes;
	VEC(uint32_t) free_codes; /* slots of codes to reuse */
	struct hmap code_index;	  /* (pid, code) -> codes */
	size_t live_codes;
	VEC(struct uid_share) shares;
	struct hmap share_index; /* uid -> shares */
	size_t bytes, max_bytes, max_uid_bytes, max_proc_bytes;
	struct python_procs_stats stats;
	bool read_gave_up; /* a read of the code object being loaded stalled or was refused */
	python_mem_read_fn read;
	void *read_ctx;
	unsigned deadline_ms;
	struct py_reader *reader; /* started at the first read */
};

struct python_procs *python_procs_new(void)
{
	struct python_procs *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->read = proc_mem_read;
	p->deadline_ms = PY_READ_DEADLINE_MS;
	p->max_bytes = PY_CACHE_BYTES;
	p->max_uid_bytes = PY_UID_SHARE;
	p->max_proc_bytes = PY_PROC_SHARE;
	return p;
}

void python_procs_set_reader(struct python_procs *p, python_mem_read_fn fn, void *ctx)
{
	py_reader_free(p->reader);
	p->reader = NULL;
	p->read = fn;
	p->read_ctx = ctx;
}

void python_procs_set_limits(struct python_procs *p, size_t max_bytes, size_t max_uid_bytes,
			     size_t max_proc_bytes, unsigned read_deadline_ms)
{
	py_reader_free(p->reader);
	p->reader = NULL;
	p->max_bytes = max_bytes;
	p->max_uid_bytes = max_uid_bytes;
	p->max_proc_bytes = max_proc_bytes;
	p->deadline_ms = read_deadline_ms;
}

void python_procs_get_stats(const struct python_procs *p, struct python_procs_stats *out)
{
	*out = p->stats;
	out->bytes = p->bytes;
}

static void free_code(struct code_entry *c)
{
	free(c->qualname);
	free(c->filename);
	free(c->linetable);
	py_line_index_free(&c->lines);
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
		p->bytes -= c->cost;
		p->shares.data[e->share].bytes -= c->cost;
		free_code(c);
		p->live_codes--;
		/* Out of memory the slot is only not reused. */
		(void)vec_push(&p->free_codes, slot);
	}
	e->codes.len = 0;
	e->bytes = 0;
	free(e->cwd);
	e->cwd = NULL;
	e->active = false;
	e->stalled = false;
	e->said_over_budget = false;
	e->said_unread = false;
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
	vec_free(&p->shares);
	hmap_free(&p->proc_index);
	hmap_free(&p->code_index);
	hmap_free(&p->share_index);
	py_reader_free(p->reader);
	free(p);
}

/* The index of uid's share, made on its first process: 0 or -ENOMEM. */
static int share_of(struct python_procs *p, uint32_t uid, uint32_t *idx)
{
	struct uid_share fresh = { .uid = uid };

	if (hmap_get(&p->share_index, (struct hmap_key){ uid, 0 }, idx))
		return 0;
	if (vec_push(&p->shares, fresh))
		return -ENOMEM;
	*idx = (uint32_t)(p->shares.len - 1);
	if (hmap_put(&p->share_index, (struct hmap_key){ uid, 0 }, *idx)) {
		p->shares.len--;
		return -ENOMEM;
	}
	return 0;
}

int python_procs_add(struct python_procs *p, uint32_t pid, uint32_t uid,
		     const struct python_info *info, int64_t load_bias, const char *cwd)
{
	struct proc_entry *e = find_proc(p, pid);
	uint64_t code_type = info->code_type + (uint64_t)load_bias;
	uint32_t share;

	/* Read again (it mapped a C extension): the same interpreter, its cache stays. */
	if (e && e->active && e->code_type == code_type && e->layout == info->code &&
	    e->version_hex == info->version_hex)
		return 0;
	if (share_of(p, uid, &share))
		return -ENOMEM;
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
	e->share = share;
	e->layout = info->code;
	e->version_hex = info->version_hex;
	e->cwd = cwd && cwd[0] == '/' ? strdup(cwd) : NULL;
	e->active = info->code != NULL;
	return 0;
}

/* The uid whose share a process takes and whose reads it may stall: one place for both. */
static uint32_t uid_of(const struct python_procs *p, const struct proc_entry *e)
{
	return p->shares.data[e->share].uid;
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
	info.version_hex = e->version_hex;
	cwd = e->cwd ? strdup(e->cwd) : NULL;
	/* code_type is already the process's address: no bias. */
	err = python_procs_add(p, child, uid_of(p, e), &info, 0, cwd);
	free(cwd);
	return err;
}

int python_procs_known(const struct python_procs *p, uint32_t pid)
{
	const struct proc_entry *e = find_proc(p, pid);

	return e && e->active;
}

uint32_t python_procs_version(const struct python_procs *p, uint32_t pid)
{
	const struct proc_entry *e = find_proc(p, pid);

	return e && e->active ? e->version_hex : 0;
}

/*
 * Whether `e`'s memory is not read now: a read of its uid's is stuck, or
 * returned less than the cooldown ago. The drain notices a return at the
 * uid's first frame PY_HOLDS_CHECK_NS after it last asked.
 */
static bool stalled(struct python_procs *p, struct proc_entry *e)
{
	struct uid_share *u = &p->shares.data[e->share];
	uint64_t now, cooldown_ms;
	unsigned doublings;

	if (!u->holds && !u->quiet_until)
		return false;
	now = clock_ns(CLOCK_MONOTONIC);
	if (u->holds && now - u->checked_at >= PY_HOLDS_CHECK_NS) {
		u->checked_at = now;
		u->holds = p->reader && py_reader_holds(p->reader, u->uid);
		if (!u->holds) {
			doublings = u->stalls - 1 < PY_COOLDOWN_DOUBLINGS ? u->stalls - 1
									  : PY_COOLDOWN_DOUBLINGS;
			cooldown_ms = (uint64_t)p->deadline_ms << doublings;
			u->quiet_until = now + cooldown_ms * 1000000;
			log_info("Python process %u (uid %u): its stalled read returned (seen "
				 "%" PRIu64 " ms past the deadline); its uid's processes are read "
				 "again in %" PRIu64 " ms",
				 u->held_pid, u->uid, (now - u->held_since) / 1000000, cooldown_ms);
		}
	}
	if (!u->holds && now >= u->quiet_until) {
		u->quiet_until = 0;
		log_info("Python processes of uid %u are read again", u->uid);
		return false;
	}
	if (!e->said_unread && e->pid != u->held_pid) {
		e->said_unread = true;
		log_debug("Python process %u (uid %u): not read for now: a read of process %u of "
			  "its uid stalled",
			  e->pid, u->uid, u->held_pid);
	}
	return true;
}

/*
 * Reads on a worker thread, waiting until the deadline only
 * (python_reader.h): a read that does not return by then stalls the
 * process's uid until it returns and its cooldown passes.
 */
static bool read_exact(struct python_procs *p, struct proc_entry *e, uint64_t addr, void *buf,
		       size_t len)
{
	struct uid_share *u = &p->shares.data[e->share];
	ssize_t res;

	if (stalled(p, e)) {
		p->read_gave_up = true;
		return false;
	}
	if (!p->reader && !(p->reader = py_reader_new(p->read, p->read_ctx, p->deadline_ms)))
		return false;
	res = py_reader_read(p->reader, uid_of(p, e), e->pid, addr, buf, len);
	if (res == -ETIMEDOUT) {
		u->stalls++;
		u->holds = true;
		u->held_pid = e->pid;
		u->held_since = clock_ns(CLOCK_MONOTONIC);
		u->checked_at = u->held_since;
		p->stats.stalled_procs += !e->stalled;
		e->stalled = true;
		log_warn("Python process %u (uid %u): a read of its memory did not return in %u ms "
			 "(a page on a file system its owner serves?); its uid's processes are not "
			 "read until it returns, and for a while after",
			 e->pid, u->uid, p->deadline_ms);
	}
	if (res == -ETIMEDOUT || res == -EBUSY)
		p->read_gave_up = true;
	return res == (ssize_t)len;
}

int python_procs_read(struct python_procs *p, uint32_t pid, uint64_t addr, void *buf, size_t len)
{
	struct proc_entry *e = find_proc(p, pid);

	if (!e || !e->active)
		return -ENOENT;
	return read_exact(p, e, addr, buf, len) ? 0 : -EFAULT;
}

static uint64_t u64_at(const uint8_t *b, uint16_t off)
{
	uint64_t v;

	memcpy(&v, b + off, 8);
	return v;
}

/*
 * A str object (compact, or 2.7's byte string: every name the compiler
 * makes) of at most `max_chars` characters as a malloc'd UTF-8 string, or
 * NULL.
 */
static char *read_str(struct python_procs *p, struct proc_entry *e, uint64_t addr, size_t max_chars)
{
	const struct python_code_layout *l = e->layout;
	size_t head_len = py_str_header_size(l), bytes;
	struct py_str_shape shape;
	uint8_t head[96], *raw;
	char *out;

	if (!addr || head_len > sizeof(head) || !read_exact(p, e, addr, head, head_len) ||
	    !py_str_shape_of(l, head, max_chars, &shape))
		return NULL;
	bytes = shape.chars * shape.unit;
	raw = malloc(bytes ? bytes : 1);
	if (!raw || (bytes && !read_exact(p, e, addr + shape.data, raw, bytes))) {
		free(raw);
		return NULL;
	}
	out = py_str_to_utf8(&shape, raw);
	free(raw);
	return out;
}

static int load_code(struct python_procs *p, struct proc_entry *e, uint64_t code,
		     struct code_entry *c)
{
	const struct python_code_layout *l = e->layout;
	uint8_t head[256], bytes_head[40];
	uint64_t table;
	int64_t table_len;
	int32_t first;

	p->read_gave_up = false;
	if (l->head_size > sizeof(head) || !read_exact(p, e, code, head, l->head_size))
		return -EIO;
	if (u64_at(head, l->ob_type) != e->code_type)
		return -ENOENT; /* not a code object (any more) */
	memcpy(&first, head + l->co_firstlineno, 4);
	c->first_line = first > 0 ? first : 0;
	/* Before 3.11 no qualified name: the function's own. */
	c->qualname = read_str(p, e, u64_at(head, l->co_qualname ? l->co_qualname : l->co_name),
			       MAX_NAME_CHARS);
	c->filename = proc_path_absolute(
		e->cwd, read_str(p, e, u64_at(head, l->co_filename), MAX_PATH_CHARS));
	table = u64_at(head, l->co_linetable);
	if (table && l->bytes_data <= sizeof(bytes_head) &&
	    read_exact(p, e, table, bytes_head, l->bytes_data)) {
		memcpy(&table_len, bytes_head + l->bytes_size, 8);
		if (table_len > 0 && table_len <= MAX_LINETABLE) {
			c->linetable = malloc((size_t)table_len);
			if (c->linetable && read_exact(p, e, table + l->bytes_data, c->linetable,
						       (size_t)table_len))
				c->linetable_len = (uint32_t)table_len;
		}
	}
	/* Names a stalled read left out are not kept: they are not the process's. */
	if (p->read_gave_up)
		return -EIO;
	/* Indexed once: a lookup then decodes PY_LINE_STRIDE entries, not the table. */
	if (c->linetable_len && py_line_index_build_format(&c->lines, l->line_format, c->linetable,
							   c->linetable_len, c->first_line))
		return -ENOMEM;
	if (!c->qualname)
		c->qualname = strdup("[unknown Python function]");
	if (!c->filename)
		c->filename = strdup("<unknown>");
	return c->qualname && c->filename ? 0 : -ENOMEM;
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
	fresh->cost = (uint32_t)(sizeof(*fresh) + 2 * sizeof(struct hmap_slot) + sizeof(idx) +
				 strlen(fresh->qualname) + strlen(fresh->filename) + 2 +
				 fresh->linetable_len + py_line_index_bytes(&fresh->lines));
	if (p->live_codes < MAX_CODE_OBJECTS && (reused || !vec_push(&p->codes, *fresh))) {
		if (!vec_push(&e->codes, idx)) {
			if (!hmap_put(&p->code_index, key, idx)) {
				if (reused) {
					p->free_codes.len--;
					p->codes.data[idx] = *fresh;
				}
				p->live_codes++;
				p->bytes += fresh->cost;
				if (p->bytes > p->stats.peak_bytes)
					p->stats.peak_bytes = p->bytes;
				p->shares.data[e->share].bytes += fresh->cost;
				e->bytes += fresh->cost;
				return &p->codes.data[idx];
			}
			e->codes.len--;
		}
		if (!reused)
			p->codes.len--;
	}
	free_code(&once);
	once = *fresh;
	once.cost = 0;
	return &once;
}

/* Whether `e` may keep one more code object: a code object costs MAX_LINETABLE at most. */
static bool within_budget(struct python_procs *p, struct proc_entry *e)
{
	const struct uid_share *u = &p->shares.data[e->share];

	if (e->bytes < p->max_proc_bytes && u->bytes < p->max_uid_bytes && p->bytes < p->max_bytes)
		return true;
	if (!e->said_over_budget) {
		e->said_over_budget = true;
		log_warn("Python process %u (uid %u): its code objects take %zu KiB (its uid's %zu "
			 "KiB, all %zu KiB) of bpfprof's memory; its others are not read, their "
			 "frames are named %s",
			 e->pid, u->uid, e->bytes >> 10, u->bytes >> 10, p->bytes >> 10,
			 OVER_BUDGET_NAME);
	}
	return false;
}

/*
 * Where a frame's instruction word `instr` is in its code's line table's
 * units (bytes before 3.11, code units after); false when the frame has
 * not started (f_lasti -1, or 0x7fffffff as the capture sends it then).
 */
static bool line_unit(const struct python_code_layout *l, uint64_t code, uint64_t instr,
		      int64_t *unit)
{
	int32_t lasti = (int32_t)(uint32_t)(instr >> 1);

	switch (l->instr_kind) {
	case PY_INSTR_LASTI_BYTES:
		*unit = lasti;
		break;
	case PY_INSTR_LASTI_UNITS:
		*unit = (int64_t)lasti * 2; /* 3.10's table counts bytes */
		break;
	default:
		/* Unsigned: a hostile instruction pointer wraps, it does not overflow. */
		*unit = (int64_t)(instr - (code + l->co_code_adaptive)) / 2;
		return true;
	}
	return lasti >= 0 && lasti != INT32_MAX;
}

static void unread_location(struct python_location *out, const char *name)
{
	out->qualname = name;
	out->filename = "<unknown>";
	out->first_line = 0;
	out->line = 0;
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
		if (stalled(p, e)) {
			p->stats.stalled_frames++;
			unread_location(out, STALLED_NAME);
			return 0;
		}
		if (!within_budget(p, e)) {
			p->stats.over_budget_frames++;
			unread_location(out, OVER_BUDGET_NAME);
			return 0;
		}
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
	if (!line_unit(e->layout, code, instr, &unit))
		out->line = c->first_line; /* not started: at its first line, as CPython says */
	else
		out->line = py_line_index_lookup(&c->lines, unit);
	/* An lnotab that says nothing (empty) says the first line. */
	if (!c->linetable_len && e->layout->line_format <= PY_LINES_LNOTAB_36)
		out->line = c->first_line;
	return 0;
}
