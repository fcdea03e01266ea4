// SPDX-License-Identifier: BSD-2-Clause
/*
 * The object registry and address resolution.
 *
 * Objects are registered while processes are alive (when their mappings are
 * read), but their symbol tables are loaded lazily, at the first address
 * resolved in them: most mapped libraries never appear in a profile. By then
 * the process may be gone, so each object remembers several ways to open its
 * file, from the most to the least faithful:
 *
 *   PROC/PID/map_files/START-END  the mapped file itself, even if deleted or
 *                                 in another mount namespace (while PID lives)
 *   PROC/PID/root/PATH            the path in the process's root (ditto)
 *   PATH                          our own view of the path (may be another file)
 *
 * and checks that what it opened has the mapping's inode.
 */
#include "symbolizer.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../model/model.h"
#include "../util/hashmap.h"
#include "../util/log.h"
#include "../util/strtab.h"
#include "demangle.h"
#include "elf_symtab.h"
#include "kallsyms.h"
#include "vdso.h"

/* Where Debian's -dbgsym packages put separate debug files, by build-id. */
#define DEBUG_DIR "/usr/lib/debug"

/* Processes remembered per object as ways to reach its file. */
#define MAX_CANDIDATES 4

#define NO_OBJECT UINT32_MAX

/* Per-symbol display name cache: 0 = not computed yet, else a strtab index + 1 or: */
#define DISPLAY_RAW UINT32_MAX /* the symbol's own name is the display name */

/* Returned when even an "[unknown]"-style name cannot be allocated. */
static const char out_of_memory_name[] = "[unsymbolized]";

enum load_state {
	LOAD_PENDING,
	LOAD_OK,
	LOAD_FAILED,
};

/* A process mapping of the object, through which its file can be reopened. */
struct candidate {
	pid_t pid;
	uint64_t start, end;
};

struct object {
	struct object_info info;
	char *path; /* owned; info.path and info.name point into it */
	dev_t dev;
	uint64_t inode;
	bool keyed_by_path;
	struct candidate candidates[MAX_CANDIDATES];
	unsigned ncandidates;
	enum load_state state;
	struct elf_symtab symtab;
	uint32_t *display; /* per symbol of symtab, see DISPLAY_RAW; NULL until needed */
};

struct symbolizer {
	char *proc_root;
	char *kallsyms_path;
	VEC(struct object *) objects; /* pointers, so object_info stays put as this grows */
	struct hmap by_inode;	      /* (dev, inode) -> object id */
	struct hmap by_path; /* (hash of path and dev, inode) -> object id, deleted files */
	uint32_t vdso;

	struct kallsyms ksyms;
	int ksyms_state; /* 0 not loaded yet, 1 loaded, else the negative errno */
	uint32_t *ksym_display;

	/* Names made here: demangled, "lib+0x..", "0x..", "[module]". Stable until free. */
	struct strtab strs;
	uint64_t lookups;
};

static struct object *object_new(enum object_kind kind, const char *path)
{
	struct object *o = calloc(1, sizeof(*o));
	const char *slash;

	if (!o)
		return NULL;
	o->path = strdup(path);
	if (!o->path) {
		free(o);
		return NULL;
	}
	slash = strrchr(o->path, '/');
	o->info.kind = kind;
	o->info.path = o->path;
	o->info.name = slash && slash[1] ? slash + 1 : o->path;
	/* Only files and the vDSO have symbol tables to load. */
	o->state = (kind == OBJECT_ELF || kind == OBJECT_VDSO) ? LOAD_PENDING : LOAD_OK;
	return o;
}

static void object_free(struct object *o)
{
	if (!o)
		return;
	elf_symtab_free(&o->symtab);
	free(o->display);
	free(o->path);
	free(o);
}

/* Register `o` (taking ownership); its id, or -ENOMEM (and `o` is freed). */
static int64_t add_object(struct symbolizer *s, struct object *o)
{
	if (!o)
		return -ENOMEM;
	if (s->objects.len >= NO_OBJECT || vec_push(&s->objects, o)) {
		object_free(o);
		return -ENOMEM;
	}
	return (int64_t)(s->objects.len - 1);
}

struct symbolizer *symbolizer_new(const char *proc_root, const char *kallsyms_path)
{
	static const struct {
		uint32_t id;
		enum object_kind kind;
		const char *name;
	} reserved[] = {
		{ OBJ_KERNEL, OBJECT_KERNEL, "[kernel.kallsyms]" },
		{ OBJ_UNKNOWN, OBJECT_UNKNOWN, "[unknown]" },
		{ OBJ_TRUNCATED, OBJECT_TRUNCATED, "[truncated]" },
		{ OBJ_OFFCPU, OBJECT_OFFCPU, "[off-CPU]" },
	};
	struct symbolizer *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->vdso = NO_OBJECT;
	s->proc_root = strdup(proc_root ? proc_root : "/proc");
	s->kallsyms_path = strdup(kallsyms_path ? kallsyms_path : "/proc/kallsyms");
	if (!s->proc_root || !s->kallsyms_path)
		goto fail;
	for (size_t i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++) {
		int64_t id = add_object(s, object_new(reserved[i].kind, reserved[i].name));

		if (id != reserved[i].id)
			goto fail;
	}
	return s;
fail:
	symbolizer_free(s);
	return NULL;
}

void symbolizer_free(struct symbolizer *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->objects.len; i++)
		object_free(s->objects.data[i]);
	vec_free(&s->objects);
	hmap_free(&s->by_inode);
	hmap_free(&s->by_path);
	kallsyms_free(&s->ksyms);
	free(s->ksym_display);
	strtab_free(&s->strs);
	free(s->proc_root);
	free(s->kallsyms_path);
	free(s);
}

/* ---- Registry ------------------------------------------------------------ */

static void add_candidate(struct object *o, pid_t pid, const struct map_entry *m)
{
	if (o->state != LOAD_PENDING || o->ncandidates >= MAX_CANDIDATES)
		return;
	for (unsigned i = 0; i < o->ncandidates; i++)
		if (o->candidates[i].pid == pid)
			return;
	o->candidates[o->ncandidates++] = (struct candidate){ pid, m->start, m->end };
}

static int64_t vdso_object(struct symbolizer *s)
{
	int64_t id;

	if (s->vdso != NO_OBJECT)
		return s->vdso;
	id = add_object(s, object_new(OBJECT_VDSO, "[vdso]"));
	if (id >= 0)
		s->vdso = (uint32_t)id;
	return id;
}

/*
 * A deleted file's inode can be reused by a new file, and (0, 0) names no
 * file at all, so those are told apart by path as well.
 */
static struct hmap_key path_key(const struct map_entry *m)
{
	return (struct hmap_key){ hash_bytes(m->path, strlen(m->path)) ^ hash_u64(m->dev),
				  m->inode };
}

static bool same_file(const struct object *o, const struct map_entry *m, bool by_path)
{
	if (o->dev != m->dev || o->inode != m->inode || o->keyed_by_path != by_path)
		return false;
	return !by_path || !strcmp(o->path, m->path);
}

int64_t symbolizer_object_for_mapping(struct symbolizer *s, pid_t pid, const struct map_entry *m)
{
	bool by_path = m->deleted || (m->dev == 0 && m->inode == 0);
	struct hmap *index = by_path ? &s->by_path : &s->by_inode;
	struct hmap_key key;
	struct object *o;
	uint32_t id;
	int64_t nid;

	if (!m->executable)
		return -ENOENT;
	if (!strcmp(m->path, "[vdso]"))
		return vdso_object(s);
	/* Anonymous memory, [stack], [vsyscall], anon_inode:...: nothing to read symbols from. */
	if (m->path[0] != '/')
		return -ENOENT;

	key = by_path ? path_key(m) : (struct hmap_key){ (uint64_t)m->dev, m->inode };
	if (hmap_get(index, key, &id) && same_file(s->objects.data[id], m, by_path)) {
		add_candidate(s->objects.data[id], pid, m);
		return id;
	}

	o = object_new(OBJECT_ELF, m->path);
	if (!o)
		return -ENOMEM;
	o->dev = m->dev;
	o->inode = m->inode;
	o->keyed_by_path = by_path;
	add_candidate(o, pid, m);
	nid = add_object(s, o);
	if (nid < 0)
		return nid;
	/* On a (vanishingly rare) hash collision the older object keeps the slot. */
	if (!hmap_get(index, key, NULL) && hmap_put(index, key, (uint32_t)nid)) {
		s->objects.len--;
		object_free(o);
		return -ENOMEM;
	}
	return nid;
}

/* ---- Loading symbol tables ----------------------------------------------- */

/* Open `path` if it is the mapped file (same inode); an fd or a negative errno. */
static int open_checked(const struct object *o, const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	/*
	 * Only the inode is compared: on btrfs the device in maps differs from
	 * st_dev. A mismatch means a reused pid or a replaced file.
	 */
	if (fstat(fd, &st) || (o->inode && (uint64_t)st.st_ino != o->inode)) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

static int try_load_path(struct object *o, const char *path)
{
	int fd = open_checked(o, path);
	int err;

	if (fd < 0)
		return fd;
	err = elf_symtab_load_fd(&o->symtab, fd, DEBUG_DIR);
	close(fd);
	return err;
}

static int load_elf_object(struct symbolizer *s, struct object *o)
{
	char path[PATH_MAX];

	for (unsigned i = 0; i < o->ncandidates; i++) {
		const struct candidate *c = &o->candidates[i];

		if (snprintf(path, sizeof(path), "%s/%d/map_files/%" PRIx64 "-%" PRIx64,
			     s->proc_root, (int)c->pid, c->start, c->end) < (int)sizeof(path)) {
			if (!try_load_path(o, path))
				return 0;
		}
		if (snprintf(path, sizeof(path), "%s/%d/root%s", s->proc_root, (int)c->pid,
			     o->path) < (int)sizeof(path)) {
			if (!try_load_path(o, path))
				return 0;
		}
	}
	/* Our own view of the path: open_checked() rejects it if it is another file now. */
	return try_load_path(o, o->path);
}

/* Load the symbol table of `o` once; later calls return the cached outcome. */
static bool ensure_loaded(struct symbolizer *s, struct object *o)
{
	int err;

	if (o->state != LOAD_PENDING)
		return o->state == LOAD_OK;
	err = o->info.kind == OBJECT_VDSO ? vdso_load(&o->symtab) : load_elf_object(s, o);
	if (err) {
		log_debug("no symbols for %s: %s", o->path, strerror(-err));
		o->state = LOAD_FAILED;
		return false;
	}
	if (o->symtab.build_id[0])
		o->info.build_id = o->symtab.build_id;
	o->state = LOAD_OK;
	return true;
}

const struct object_info *symbolizer_object(struct symbolizer *s, uint32_t object)
{
	struct object *o;

	if (object >= s->objects.len)
		return NULL;
	o = s->objects.data[object];
	/* Callers want the build-id, which only the file can tell. */
	ensure_loaded(s, o);
	return &o->info;
}

static bool ensure_kallsyms(struct symbolizer *s)
{
	if (!s->ksyms_state) {
		int err = kallsyms_load(&s->ksyms, s->kallsyms_path);

		s->ksyms_state = err ? err : 1;
		if (err == -EPERM)
			log_warn("%s shows only zero addresses, so kernel frames stay unnamed; "
				 "run as root with kernel.kptr_restrict=0 or 1",
				 s->kallsyms_path);
		else if (err)
			log_warn("cannot read kernel symbols from %s: %s; kernel frames stay "
				 "unnamed",
				 s->kallsyms_path, strerror(-err));
	}
	return s->ksyms_state == 1;
}

/* ---- Resolution ---------------------------------------------------------- */

static const char *intern_or_fallback(struct symbolizer *s, const char *str)
{
	int64_t idx = strtab_intern(&s->strs, str);

	return idx < 0 ? out_of_memory_name : strtab_get(&s->strs, (uint32_t)idx);
}

static const char *hex_name(struct symbolizer *s, const char *prefix, uint64_t value)
{
	char buf[PATH_MAX + 32];

	snprintf(buf, sizeof(buf), "%s0x%" PRIx64, prefix, value);
	return intern_or_fallback(s, buf);
}

/*
 * The name to show for a symbol, demangled once: `cache` is the symbol's
 * slot in a per-table array (NULL if that array could not be allocated).
 */
static const char *display_name(struct symbolizer *s, uint32_t *cache, const char *raw)
{
	char *pretty;
	int64_t idx;

	if (cache && *cache == DISPLAY_RAW)
		return raw;
	if (cache && *cache)
		return strtab_get(&s->strs, *cache - 1);
	pretty = demangle(raw);
	if (!pretty) {
		if (cache)
			*cache = DISPLAY_RAW;
		return raw;
	}
	idx = strtab_intern(&s->strs, pretty);
	free(pretty);
	if (idx < 0)
		return raw;
	if (cache)
		*cache = (uint32_t)idx + 1;
	return strtab_get(&s->strs, (uint32_t)idx);
}

/* The cache slot of symbol `i` of a table of `n`, allocating the array on first use. */
static uint32_t *display_slot(uint32_t **array, size_t n, size_t i)
{
	if (!*array && n)
		*array = calloc(n, sizeof(**array));
	return *array ? &(*array)[i] : NULL;
}

static void resolve_kernel(struct symbolizer *s, uint64_t addr, bool is_return,
			   struct resolved_frame *out)
{
	uint64_t lookup = addr - (is_return && addr ? 1 : 0);
	const struct ksym *sym = NULL;
	const char *module;
	char buf[128];

	out->kernel = true;
	out->resource = s->objects.data[OBJ_KERNEL]->info.name;
	if (ensure_kallsyms(s))
		sym = kallsyms_lookup(&s->ksyms, lookup);
	if (!sym) {
		out->items[0].func = hex_name(s, "", addr);
		return;
	}
	out->items[0].func = display_name(
		s, display_slot(&s->ksym_display, s->ksyms.syms.len, sym - s->ksyms.syms.data),
		kallsyms_name(&s->ksyms, sym));
	module = kallsyms_module(&s->ksyms, sym);
	if (module) {
		snprintf(buf, sizeof(buf), "[%s]", module);
		out->resource = intern_or_fallback(s, buf);
	}
}

static void resolve_file(struct symbolizer *s, struct object *o, uint64_t offset, bool is_return,
			 struct resolved_frame *out)
{
	/* A return address points after the call; the call itself is one byte earlier. */
	uint64_t lookup = offset - (is_return && offset ? 1 : 0);
	const struct elf_sym *sym = NULL;
	uint64_t vaddr;
	char prefix[PATH_MAX];

	out->resource = o->info.name;
	out->lib = &o->info;
	if (ensure_loaded(s, o) && !elf_symtab_offset_to_vaddr(&o->symtab, lookup, &vaddr)) {
		out->address = (int64_t)(vaddr - o->symtab.base);
		sym = elf_symtab_lookup(&o->symtab, vaddr);
	}
	if (sym) {
		size_t i = (size_t)(sym - o->symtab.syms.data);

		out->items[0].func =
			display_name(s, display_slot(&o->display, o->symtab.syms.len, i),
				     elf_symtab_name(&o->symtab, sym));
		return;
	}
	snprintf(prefix, sizeof(prefix), "%s+", o->info.name);
	out->items[0].func = hex_name(s, prefix, lookup);
}

/*
 * The leaf of an off-CPU sample: "off-CPU: sleeping", ... A reason the
 * model does not know (a newer kernel's state) is shown as "other" rather
 * than dropped, so the time still adds up.
 */
static void resolve_offcpu(struct symbolizer *s, uint64_t reason, struct resolved_frame *out)
{
	char buf[64];

	if (reason >= OFFCPU_REASON_MAX)
		reason = OFFCPU_OTHER;
	snprintf(buf, sizeof(buf), "off-CPU: %s", offcpu_reason_name((enum offcpu_reason)reason));
	out->items[0].func = intern_or_fallback(s, buf);
	out->offcpu = true;
}

void symbolizer_resolve(struct symbolizer *s, uint32_t object, uint64_t offset, bool is_return,
			struct resolved_frame *out)
{
	memset(out, 0, sizeof(*out));
	out->count = 1;
	out->address = -1;
	s->lookups++;

	if (object == OBJ_KERNEL) {
		resolve_kernel(s, offset, is_return, out);
	} else if (object == OBJ_TRUNCATED) {
		out->items[0].func = "[stack truncated]";
	} else if (object == OBJ_OFFCPU) {
		resolve_offcpu(s, offset, out);
	} else if (object == OBJ_UNKNOWN || object >= s->objects.len) {
		out->items[0].func = hex_name(s, "", offset);
	} else {
		resolve_file(s, s->objects.data[object], offset, is_return, out);
	}
}

void symbolizer_get_stats(const struct symbolizer *s, struct symbolizer_stats *out)
{
	memset(out, 0, sizeof(*out));
	out->lookups = s->lookups;
	out->bytes = sizeof(*s) + s->objects.cap * sizeof(*s->objects.data) +
		     (s->by_inode.cap + s->by_path.cap) * sizeof(struct hmap_slot);
	for (size_t i = OBJ_FIRST_FILE; i < s->objects.len; i++) {
		const struct object *o = s->objects.data[i];

		out->objects++;
		if (o->state == LOAD_FAILED)
			out->objects_failed++;
		out->symbols_loaded += o->symtab.syms.len;
		out->bytes += sizeof(*o) + strlen(o->path) + 1 + elf_symtab_bytes(&o->symtab);
		if (o->display)
			out->bytes += o->symtab.syms.len * sizeof(*o->display);
	}
	if (s->ksyms_state == 1) {
		out->symbols_loaded += s->ksyms.syms.len;
		out->bytes += kallsyms_bytes(&s->ksyms);
		if (s->ksym_display)
			out->bytes += s->ksyms.syms.len * sizeof(*s->ksym_display);
	}
	for (size_t i = 0; i < strtab_len(&s->strs); i++)
		out->bytes += strlen(strtab_get(&s->strs, (uint32_t)i)) + 1 + sizeof(char *);
}
