// SPDX-License-Identifier: BSD-2-Clause
/* See v8_procs.h. */
#include "v8_procs.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "../util/clock.h"
#include "../util/hashmap.h"
#include "../util/log.h"
#include "../util/vec.h"

/* How long to wait for one read of a process's memory (its page may be its owner's FUSE file). */
#define READ_DEADLINE_MS 500
/*
 * What one process's reads may take. A real one's frame is a dozen reads
 * of a few hundred bytes (a position table is read whole, at most
 * V8_MAX_TABLE); a fake one that makes every frame new and its tables huge
 * would keep the thread that drains the rings reading. Past the budget its
 * frames keep the names already read (without lines) or get the caller's
 * fallback, until the budget refills.
 */
#define READ_BYTES_PER_S (8ull << 20)
#define READ_BYTES_BURST (32ull << 20)
#define READS_PER_S	 50000ull
#define READS_BURST	 200000ull
/* An exited process's state stays this long: its last samples may come after its exit. */
#define EXITED_KEEP_NS	 (2000ull * 1000 * 1000)
/* Blob mappings kept (node maps its builtins once more, remapped). */
#define MAX_BLOBS	 2
/* node files whose metadata is kept: a host runs many processes of a few nodes. */
#define META_FILES	 8

enum v8_state { V8_NOTED, V8_READY, V8_FAILED };

struct v8_proc {
	uint32_t pid, uid;
	enum v8_state state;
	uint64_t exited_ns;
	uint64_t file_start, file_end; /* node's (or libnode's) mapping, to open its file */
	dev_t dev;
	uint64_t inode;
	struct v8_meta meta;
	struct v8_name_cache *cache;
	uint64_t blob_lo[MAX_BLOBS], blob_hi[MAX_BLOBS];
	int nblobs;
	bool blobs_known; /* its maps were read for them once */
	uint64_t byte_tokens, read_tokens, refill_ns;
	bool warned;
};

/* What one node file's metadata read gave, known by the file's identity and times. */
struct meta_file {
	bool used;
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime, ctime;
	int err;
	char why[192];
	struct v8_meta meta;
};

struct v8_procs {
	char *proc_root;
	struct meta_file files[META_FILES];
	unsigned next_file; /* the one replaced next */
	VEC(struct v8_proc *) procs;
	struct hmap by_pid; /* pid -> procs index */
	struct py_reader *reader;
	python_mem_read_fn read;
	void *read_ctx;
	unsigned caches; /* processes holding a name cache */
	bool warned_caches;
};

struct read_ctx {
	struct v8_procs *vp;
	struct v8_proc *p;
};

static ssize_t vm_read(void *ctx, uint32_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };

	(void)ctx;
	return process_vm_readv((pid_t)pid, &local, 1, &remote, 1, 0);
}

struct v8_procs *v8_procs_new(const char *proc_root)
{
	struct v8_procs *vp = calloc(1, sizeof(*vp));

	if (!vp)
		return NULL;
	vp->proc_root = strdup(proc_root ? proc_root : "/proc");
	vp->read = vm_read;
	if (!vp->proc_root) {
		free(vp);
		return NULL;
	}
	return vp;
}

static void proc_free(struct v8_procs *vp, struct v8_proc *p)
{
	if (!p)
		return;
	if (p->cache)
		vp->caches--;
	free(p->cache);
	free(p);
}

void v8_procs_free(struct v8_procs *vp)
{
	if (!vp)
		return;
	for (size_t i = 0; i < vp->procs.len; i++)
		proc_free(vp, vp->procs.data[i]);
	vec_free(&vp->procs);
	hmap_free(&vp->by_pid);
	py_reader_free(vp->reader);
	free(vp->proc_root);
	free(vp);
}

void v8_procs_set_reader(struct v8_procs *vp, python_mem_read_fn fn, void *ctx)
{
	vp->read = fn;
	vp->read_ctx = ctx;
}

static struct v8_proc *proc_of(const struct v8_procs *vp, uint32_t pid)
{
	uint32_t idx;

	if (!hmap_get(&vp->by_pid, (struct hmap_key){ pid, 0 }, &idx))
		return NULL;
	return vp->procs.data[idx];
}

bool v8_procs_is_node(const struct v8_procs *vp, uint32_t pid)
{
	return proc_of(vp, pid) != NULL;
}

/* node, nodejs, node20 (a version suffix, as OTel accepts), or libnode.so[.N...]. */
static bool is_node_file(const char *path)
{
	const char *base = strrchr(path, '/');

	if (!base)
		return false;
	base++;
	if (!strncmp(base, "libnode.so", 10))
		return base[10] == '\0' || base[10] == '.';
	if (!strcmp(base, "nodejs"))
		return true;
	if (strncmp(base, "node", 4))
		return false;
	for (const char *c = base + 4; *c; c++)
		if (!isdigit((unsigned char)*c))
			return false;
	return true;
}

int v8_procs_note_mapping(struct v8_procs *vp, uint32_t pid, const struct map_entry *e)
{
	struct v8_proc *p;

	if (!e->executable || !e->path || !is_node_file(e->path) || proc_of(vp, pid))
		return 0;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	*p = (struct v8_proc){ .pid = pid,
			       .state = V8_NOTED,
			       .file_start = e->start,
			       .file_end = e->end,
			       .dev = e->dev,
			       .inode = e->inode };
	if (vec_push(&vp->procs, p) ||
	    hmap_put(&vp->by_pid, (struct hmap_key){ pid, 0 }, (uint32_t)(vp->procs.len - 1))) {
		free(p);
		return -ENOMEM;
	}
	return 0;
}

static void forget(struct v8_procs *vp, uint32_t pid)
{
	uint32_t idx;

	if (!hmap_get(&vp->by_pid, (struct hmap_key){ pid, 0 }, &idx))
		return;
	hmap_del(&vp->by_pid, (struct hmap_key){ pid, 0 });
	proc_free(vp, vp->procs.data[idx]);
	/* The last one moves into the hole. */
	vp->procs.data[idx] = vp->procs.data[--vp->procs.len];
	if (idx < vp->procs.len)
		hmap_put(&vp->by_pid, (struct hmap_key){ vp->procs.data[idx]->pid, 0 }, idx);
}

void v8_procs_exited(struct v8_procs *vp, uint32_t pid)
{
	struct v8_proc *p = proc_of(vp, pid);
	uint64_t now = clock_ns(CLOCK_MONOTONIC);

	if (p)
		p->exited_ns = now ? now : 1;
	for (size_t i = 0; i < vp->procs.len;) {
		struct v8_proc *q = vp->procs.data[i];

		if (q->exited_ns && now - q->exited_ns >= EXITED_KEEP_NS)
			forget(vp, q->pid); /* moves the last one here */
		else
			i++;
	}
}

void v8_procs_forget(struct v8_procs *vp, uint32_t pid)
{
	forget(vp, pid);
}

/* Whether `p` may read `len` more bytes, one read more, now (token buckets). */
static bool take_budget(struct v8_proc *p, size_t len)
{
	uint64_t now = clock_ns(CLOCK_MONOTONIC), us;

	if (!p->refill_ns) {
		p->refill_ns = now;
		p->byte_tokens = READ_BYTES_BURST;
		p->read_tokens = READS_BURST;
	}
	us = (now - p->refill_ns) / 1000;
	if (us) {
		uint64_t b = p->byte_tokens + us * (READ_BYTES_PER_S / 1000000);
		uint64_t r = p->read_tokens + us * READS_PER_S / 1000000;

		p->byte_tokens = b > READ_BYTES_BURST ? READ_BYTES_BURST : b;
		p->read_tokens = r > READS_BURST ? READS_BURST : r;
		p->refill_ns = now;
	}
	if (p->byte_tokens < len || !p->read_tokens)
		return false;
	p->byte_tokens -= len;
	p->read_tokens--;
	return true;
}

/* v8_read_fn for one process: through the reader, with its deadline, within its budget. */
static int proc_read(void *vctx, uint64_t addr, void *buf, size_t len)
{
	struct read_ctx *c = vctx;
	ssize_t n;

	if (!take_budget(c->p, len)) {
		if (!c->p->warned) {
			c->p->warned = true;
			log_info("node process %u: its frames ask for more reads than node's (%llu "
				 "MB, "
				 "%llu reads a second); past that its JS frames keep the names "
				 "already read, without lines, or are not named",
				 c->p->pid, (unsigned long long)(READ_BYTES_PER_S >> 20),
				 (unsigned long long)READS_PER_S);
		}
		return -EBUSY;
	}
	if (!c->vp->reader) {
		c->vp->reader = py_reader_new(c->vp->read, c->vp->read_ctx, READ_DEADLINE_MS);
		if (!c->vp->reader)
			return -ENOMEM;
	}
	n = py_reader_read(c->vp->reader, c->p->uid, c->p->pid, addr, buf, len);
	if (n < 0)
		return n == -1 ? -EFAULT : (int)n;
	return (size_t)n == len ? 0 : -EFAULT;
}

/* The kept read of the file `st` describes, or NULL. */
static struct meta_file *known_file(struct v8_procs *vp, const struct stat *st)
{
	for (int i = 0; i < META_FILES; i++) {
		struct meta_file *f = &vp->files[i];

		if (f->used && f->dev == st->st_dev && f->ino == st->st_ino &&
		    f->size == st->st_size && f->mtime.tv_sec == st->st_mtim.tv_sec &&
		    f->mtime.tv_nsec == st->st_mtim.tv_nsec &&
		    f->ctime.tv_sec == st->st_ctim.tv_sec &&
		    f->ctime.tv_nsec == st->st_ctim.tv_nsec)
			return f;
	}
	return NULL;
}

/*
 * Read node's metadata from its file, once per file (processes of the same
 * node share the read, and the reason it was refused is said once).
 */
static void load(struct v8_procs *vp, struct v8_proc *p)
{
	char link[PATH_MAX], why[192] = "";
	struct meta_file *f = NULL;
	struct stat st;
	bool said = false;
	int fd, err;

	snprintf(link, sizeof(link), "%s/%u/map_files/%" PRIx64 "-%" PRIx64, vp->proc_root, p->pid,
		 p->file_start, p->file_end);
	fd = open(link, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
	} else if (fstat(fd, &st)) {
		err = -errno;
		close(fd);
	} else if ((f = known_file(vp, &st))) {
		err = f->err;
		p->meta = f->meta;
		said = true;
		close(fd);
	} else {
		err = v8_meta_read_fd(fd, &p->meta, why, sizeof(why));
		close(fd);
		f = &vp->files[vp->next_file++ % META_FILES];
		*f = (struct meta_file){ .used = true,
					 .dev = st.st_dev,
					 .ino = st.st_ino,
					 .size = st.st_size,
					 .mtime = st.st_mtim,
					 .ctime = st.st_ctim,
					 .err = err,
					 .meta = p->meta };
		snprintf(f->why, sizeof(f->why), "%s", why);
	}
	if (err) {
		p->state = V8_FAILED;
		if (!said)
			log_info("node process %u: its JS frames are not named (%s%s%s)", p->pid,
				 strerror(-err), why[0] ? ": " : "", why);
		else
			log_debug("node process %u: its JS frames are not named (%s%s%s)", p->pid,
				  strerror(-err), f->why[0] ? ": " : "", f->why);
		return;
	}
	p->state = V8_READY;
	log_debug("node process %u: V8 %u.%u.%u.%u, builtins blob %#" PRIx64 "-%#" PRIx64, p->pid,
		  p->meta.major, p->meta.minor, p->meta.build, p->meta.patch, p->meta.blob_lo,
		  p->meta.blob_hi);
}

static struct v8_proc *ready(struct v8_procs *vp, uint32_t pid)
{
	struct v8_proc *p = proc_of(vp, pid);

	if (p && p->state == V8_NOTED)
		load(vp, p);
	return p && p->state == V8_READY ? p : NULL;
}

struct range {
	uint64_t lo, hi;
};

static int by_gap_desc(const void *a, const void *b)
{
	const struct range *x = a, *y = b; /* lo: the gap's size, hi: its index */

	return x->lo < y->lo ? 1 : x->lo > y->lo ? -1 : 0;
}

/*
 * Anonymous executable mappings, `n` of them sorted, into at most `room`
 * ranges: the largest gaps stay gaps, the smaller ones are bridged (a pc
 * in a bridged gap is another mapping's code; its words name no JS frame).
 */
static int merge_ranges(const struct range *r, size_t n, int room, struct v8_capture *out)
{
	struct range *gaps;
	bool *split;

	if (!n || room <= 0)
		return 0;
	gaps = calloc(n, sizeof(*gaps));
	split = calloc(n, sizeof(*split));
	if (!gaps || !split) {
		free(gaps);
		free(split);
		return -ENOMEM;
	}
	for (size_t i = 1; i < n; i++)
		gaps[i - 1] = (struct range){ r[i].lo - r[i - 1].hi, i };
	qsort(gaps, n - 1, sizeof(*gaps), by_gap_desc);
	for (size_t i = 0; i + 1 < n && i + 1 < (size_t)room; i++)
		split[gaps[i].hi] = true;
	for (size_t i = 0; i < n; i++) {
		if (i == 0 || split[i]) {
			out->lo[out->nranges] = r[i].lo;
			out->nranges++;
		}
		out->hi[out->nranges - 1] = r[i].hi;
	}
	free(gaps);
	free(split);
	return 0;
}

/* The capture from pid's maps now; the blob's mappings kept in `p`. */
static int scan_maps(struct v8_procs *vp, struct v8_proc *p, struct v8_capture *out)
{
	const struct v8_meta *m = &p->meta;
	uint64_t size = m->blob_hi - m->blob_lo;
	map_entries_t maps = { 0 };
	VEC(struct range) anon = { 0 };
	int err = proc_maps_read(vp->proc_root, (pid_t)p->pid, &maps);

	if (err)
		return err;
	memset(out, 0, sizeof(*out));
	p->nblobs = 0;
	p->blobs_known = true;
	for (size_t i = 0; i < maps.len && !err; i++) {
		const struct map_entry *e = &maps.data[i];

		if (!e->executable)
			continue;
		if (!e->path[0]) {
			err = vec_push(&anon, ((struct range){ e->start, e->end }));
			continue;
		}
		/* node's own file, mapped where its pages hold the blob: at load, or remapped. */
		if (e->dev != p->dev || e->inode != p->inode || !size || !m->blob_file_off ||
		    m->blob_file_off < e->pgoff ||
		    m->blob_file_off - e->pgoff >= e->end - e->start || p->nblobs == MAX_BLOBS)
			continue;
		p->blob_lo[p->nblobs] = e->start + (m->blob_file_off - e->pgoff);
		p->blob_hi[p->nblobs] = p->blob_lo[p->nblobs] + size > e->end
						? e->end
						: p->blob_lo[p->nblobs] + size;
		out->lo[out->nranges] = p->blob_lo[p->nblobs];
		out->hi[out->nranges] = p->blob_hi[p->nblobs];
		out->nranges++;
		p->nblobs++;
	}
	if (!err)
		err = merge_ranges(anon.data, anon.len, V8_MAX_RANGES - out->nranges, out);
	vec_free(&anon);
	map_entries_free(&maps);
	out->offsets[V8_W_CONTEXT] = m->fp_context;
	out->offsets[V8_W_FUNCTION] = m->fp_function;
	out->offsets[V8_W_BYTECODE_OFFSET] = m->fp_bytecode_offset;
	out->offsets[V8_W_BYTECODE_ARRAY] = m->fp_bytecode_array;
	return err;
}

int v8_procs_capture(struct v8_procs *vp, uint32_t pid, struct v8_capture *out)
{
	struct v8_proc *p = ready(vp, pid);

	if (!p)
		return proc_of(vp, pid) ? -ENOTSUP : -ENOENT;
	return scan_maps(vp, p, out);
}

static bool in_blob(const struct v8_proc *p, uint64_t pc)
{
	for (int i = 0; i < p->nblobs; i++)
		if (pc >= p->blob_lo[i] && pc < p->blob_hi[i])
			return true;
	return false;
}

int v8_procs_frames(struct v8_procs *vp, uint32_t pid, uint32_t uid, uint64_t pc, bool is_return,
		    const uint64_t words[V8_WORDS], struct hotspot_frame *out, int max)
{
	struct v8_proc *p = ready(vp, pid);
	struct read_ctx rc;
	struct v8_heap h;
	const char *type;

	if (!p || max < 1)
		return -ENOENT;
	if (!p->blobs_known) {
		struct v8_capture cap;

		scan_maps(vp, p, &cap); /* the blob's whereabouts, for typed frames */
	}
	if (v8_frame_type(&p->meta, words[V8_W_CONTEXT], &type)) {
		if (in_blob(p, pc))
			return -ENOENT;
		memset(out, 0, sizeof(*out));
		snprintf(out->name, sizeof(out->name), "V8::%s", type);
		return 1;
	}
	if (!p->cache) {
		if (vp->caches >= V8_MAX_NAMED_PROCS) {
			if (!vp->warned_caches)
				log_info("more than %d node processes: the JS frames of those past "
					 "them are not named",
					 V8_MAX_NAMED_PROCS);
			vp->warned_caches = true;
			return -ENOENT;
		}
		p->cache = calloc(1, sizeof(*p->cache));
		if (!p->cache)
			return -ENOMEM;
		p->cache->check_period_ns = V8_CHECK_PERIOD_NS;
		vp->caches++;
	}
	p->uid = uid;
	rc = (struct read_ctx){ vp, p };
	h = (struct v8_heap){ &p->meta, proc_read, &rc };
	if (max > V8_MAX_FRAMES)
		max = V8_MAX_FRAMES;
	return v8_name_js_frame(&h, p->cache, pc, is_return, words, out, max);
}

int v8_procs_note_maps(struct v8_procs *vp, uint32_t pid, const map_entries_t *maps)
{
	struct v8_proc *p = proc_of(vp, pid);

	for (size_t i = 0; i < maps->len; i++) {
		const struct map_entry *e = &maps->data[i];

		if (!e->executable || !e->path || !is_node_file(e->path))
			continue;
		/* Noted for another node (pid exec'd one since): what it kept is not this one's. */
		if (p && (p->dev != e->dev || p->inode != e->inode))
			forget(vp, pid);
		return v8_procs_note_mapping(vp, pid, e) ? -ENOMEM : 1;
	}
	/* An image pid exec'd away from: its state would name the new image's frames. */
	if (p)
		forget(vp, pid);
	return 0;
}

_Static_assert(V8_WORDS == RT_WORDS, "a V8 frame's words are a runtime record's");
_Static_assert(V8_MAX_RANGES <= RT_MAX_RANGES, "a V8 capture's ranges fit rt_proc's");

static int rt_note_maps(void *ctx, uint32_t pid, const map_entries_t *maps)
{
	return v8_procs_note_maps(ctx, pid, maps);
}

static int rt_capture(void *ctx, uint32_t pid, uint32_t uid, struct rt_proc *out)
{
	struct v8_capture cap;
	int err = v8_procs_capture(ctx, pid, &cap);

	(void)uid;
	if (err == -ENOMEM)
		return err;
	/* Not node, or a V8 not read (said by v8_procs), or no code found: asked again at the next
	 * executable mapping. */
	if (err || !cap.nranges)
		return -ENOENT;
	memset(out, 0, sizeof(*out));
	out->kind = RT_KIND_V8;
	for (int i = 0; i < cap.nranges && i < RT_MAX_RANGES; i++) {
		out->ranges[i] = (struct rt_range){ cap.lo[i], cap.hi[i] };
		out->nranges++;
	}
	out->nwords = V8_WORDS;
	for (int i = 0; i < V8_WORDS; i++)
		out->off[i] = cap.offsets[i];
	/* No top_reg: the frame's slots name the function (the interpreter's bytecode offset
	 * register, r9, is not read; an interrupted frame's line is its last call's). */
	return 0;
}

struct rt_module v8_procs_rt_module(struct v8_procs *vp)
{
	return (struct rt_module){ vp, rt_note_maps, rt_capture };
}
