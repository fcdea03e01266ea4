// SPDX-License-Identifier: BSD-2-Clause
/*
 * The object registry: objects, their files, their lazily loaded symbols
 * and DWARF, and their lifetime (resolving addresses is symbolizer_resolve.c).
 *
 * Objects are registered while processes are alive (when their mappings are
 * read), but their symbol tables and DWARF are loaded lazily, at the first
 * address resolved in them: most mapped libraries never appear in a
 * profile. By then the process may be gone, and with it the ways into its
 * mount namespace, so the file is opened at registration and the fd kept
 * (up to a bound). Past the bound, or when that open failed, each object
 * remembers several ways to reopen its file, from the most to the least
 * faithful:
 *
 *   PROC/PID/map_files/START-END  the mapped file itself, even if deleted or
 *                                 in another mount namespace (while PID lives)
 *   PROC/PID/root/PATH            the path in the process's root (ditto)
 *   PATH                          our own view of the path (may be another file)
 *
 * and checks that what it opened has the mapping's inode.
 *
 * Names, source lines and inlined calls come from DWARF when the file or
 * its separate debug file (debug_file.h) has it; the symbol table names
 * what DWARF does not cover. Loading them is symbolizer_load.c.
 *
 * A continuous profile runs for days while processes come and go, so
 * objects are not kept forever: the caller marks those still in use and
 * sweeps the rest (symbolizer_sweep). Everything an object loaded lives in
 * the object, names included, so that freeing it returns all of it; names
 * made of a bare address ("0x..", "lib+0x..") can be as many as the
 * addresses ever sampled, so they are kept only until the next sweep.
 */
#include "symbolizer.h"
#include "symbolizer_internal.h"

#include "../lang/code_runtime.h"
#include "../lang/go_lines.h"
#include "../lang/go_pclntab.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/hashmap.h"
#include "../util/log.h"
#include "../util/safe_open.h"
#include "../util/strtab.h"
#include "debug_file.h"
#include "debuginfo_server.h"
#include "demangle.h"
#include "dwarf.h"
#include "elf_symtab.h"
#include "frame_objects.h"
#include "kallsyms.h"
#include "vdso.h"

/* Intern `str` in `t`; the stable copy, or NULL when out of memory. */
const char *sym_name_intern(struct name_table *t, const char *str, uint32_t *index)
{
	size_t before = strtab_len(&t->strs);
	int64_t idx = strtab_intern(&t->strs, str);

	if (idx < 0)
		return NULL;
	if (strtab_len(&t->strs) != before)
		t->bytes += strlen(str) + 1;
	if (index)
		*index = (uint32_t)idx;
	return strtab_get(&t->strs, (uint32_t)idx);
}

static void name_table_free(struct name_table *t)
{
	strtab_free(&t->strs);
	t->bytes = 0;
}

/* Heap held by a name table: its strings, their pointers and its index. */
static uint64_t name_table_bytes(const struct name_table *t)
{
	return t->bytes + t->strs.strs.cap * sizeof(char *) + t->strs.next.cap * sizeof(uint32_t) +
	       t->strs.index.cap * sizeof(struct hmap_slot);
}

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
	o->fd = -1;
	o->debug_fd = -1;
	/* Born kept: a sweep frees only what a retain_begin unmarked and nobody marked since. */
	o->marked = true;
	/* Only files and the vDSO have symbol tables to load, and only files DWARF. */
	o->state = (kind == OBJECT_ELF || kind == OBJECT_VDSO) ? LOAD_PENDING : LOAD_OK;
	o->dwarf_state = kind == OBJECT_ELF ? LOAD_PENDING : LOAD_FAILED;
	return o;
}

static void object_free(struct object *o)
{
	if (!o)
		return;
	if (o->fd >= 0)
		close(o->fd);
	if (o->debug_fd >= 0)
		close(o->debug_fd);
	dwarf_info_free(o->dwarf);
	if (o->go) {
		go_pclntab_close(o->go);
		free(o->go);
	}
	go_lines_free(o->go_lines);
	free(o->debug_path);
	elf_symtab_free(&o->symtab);
	free(o->display);
	name_table_free(&o->names);
	hmap_free(&o->dwarf_names);
	free(o->path);
	free(o);
}

/* Close the kept files of `o`: their contents are read, or they will never be. */
void sym_release_file(struct symbolizer *s, struct object *o)
{
	if (o->debug_fd >= 0) {
		close(o->debug_fd);
		o->debug_fd = -1;
		s->kept_files--;
	}
	if (o->fd < 0)
		return;
	close(o->fd);
	o->fd = -1;
	s->kept_files--;
}

/*
 * Register `o` (taking ownership) in the slot of a swept object if there
 * is one, so the table grows only with the objects alive at once; its id,
 * or -ENOMEM (and `o` is freed).
 */
static int64_t add_object(struct symbolizer *s, struct object *o)
{
	uint32_t id;

	if (!o)
		return -ENOMEM;
	if (s->free_ids.len) {
		id = s->free_ids.data[--s->free_ids.len];
		s->objects.data[id] = o;
		return id;
	}
	if (s->objects.len >= NO_OBJECT || vec_push(&s->objects, o)) {
		object_free(o);
		return -ENOMEM;
	}
	return (int64_t)(s->objects.len - 1);
}

/* Free object `id` (its kept file included) and make its slot reusable. */
static void remove_object(struct symbolizer *s, uint32_t id)
{
	struct object *o = s->objects.data[id];

	sym_release_file(s, o);
	object_free(o);
	s->objects.data[id] = NULL;
	if (id == s->objects.len - 1)
		s->objects.len--;
	else if (vec_push(&s->free_ids, id))
		/* Out of memory: this slot is lost, which costs one pointer. */
		log_debug("object slot %u not reused: out of memory", id);
}

/* Keep fds for at most half the descriptors we may open, so capture never runs out. */
static unsigned default_max_kept_files(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur == RLIM_INFINITY ||
	    rl.rlim_cur / 2 >= MAX_KEPT_FILES)
		return MAX_KEPT_FILES;
	return (unsigned)(rl.rlim_cur / 2);
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
		{ OBJ_TRUNCATED, OBJECT_SYNTHETIC, "[truncated]" },
		{ OBJ_OFFCPU, OBJECT_SYNTHETIC, "[off-CPU]" },
	};
	struct symbolizer *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->vdso = NO_OBJECT;
	s->proc_root = strdup(proc_root ? proc_root : "/proc");
	s->kallsyms_path = strdup(kallsyms_path ? kallsyms_path : "/proc/kallsyms");
	s->debug_root = strdup(DEBUG_ROOT_DEFAULT);
	s->max_kept_files = default_max_kept_files();
	s->dwarf_budget = SYMBOLIZER_DWARF_BUDGET;
	s->dwarf_owner_budget = SYMBOLIZER_DWARF_BUDGET / 2;
	debug_crc_cache_init(&s->crcs);
	if (!s->proc_root || !s->kallsyms_path || !s->debug_root)
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
	vec_free(&s->free_ids);
	hmap_free(&s->by_inode);
	hmap_free(&s->by_path);
	kallsyms_free(&s->ksyms);
	free(s->ksym_display);
	name_table_free(&s->names);
	name_table_free(&s->addr_names);
	free(s->proc_root);
	free(s->kallsyms_path);
	free(s->debug_root);
	free(s->owners);
	debug_crc_cache_free(&s->crcs);
	free(s);
}

void symbolizer_set_debuginfod(struct symbolizer *s, struct debuginfo_server *d)
{
	s->debuginfod = d;
}

int symbolizer_set_debug_root(struct symbolizer *s, const char *path)
{
	char *copy = strdup(path ? path : DEBUG_ROOT_DEFAULT);

	if (!copy)
		return -ENOMEM;
	free(s->debug_root);
	s->debug_root = copy;
	return 0;
}

void symbolizer_set_max_open_files(struct symbolizer *s, unsigned n)
{
	s->max_kept_files = n;
}

void symbolizer_set_dwarf_budget(struct symbolizer *s, uint64_t all, uint64_t per_owner)
{
	s->dwarf_budget = all;
	s->dwarf_owner_budget = per_owner;
}

void symbolizer_build_begin(struct symbolizer *s, bool scheduled)
{
	if (s->builds_in_flight++ && !scheduled)
		return; /* the budgets are the running build's */
	debug_crc_cache_new_profile(&s->crcs);
	debuginfo_server_new_profile(s->debuginfod);
	for (size_t i = 0; i < s->objects.len; i++)
		if (s->objects.data[i])
			go_lines_new_profile(s->objects.data[i]->go_lines);
}

void symbolizer_build_end(struct symbolizer *s)
{
	if (s->builds_in_flight)
		s->builds_in_flight--;
}

/* ---- Opening files ------------------------------------------------------- */

/*
 * Keep `fd` (or pass on its error) if it is the mapped file: the same
 * inode, and the identity of the first file opened for `o` (recorded then).
 */
static int keep_if_mapped_file(struct object *o, int fd)
{
	struct file_id id;
	struct stat st;

	if (fd < 0)
		return fd;
	/*
	 * Only the inode is compared with the mapping: on btrfs the device in
	 * maps differs from st_dev. A mismatch means a reused pid or a
	 * replaced file, as does another identity than the first open's (a
	 * reused inode, or the file rewritten).
	 */
	if (fstat(fd, &st) || (o->inode && (uint64_t)st.st_ino != o->inode)) {
		close(fd);
		return -ESTALE;
	}
	id = file_id_of(&st);
	if (o->has_id && !file_id_same(&o->id, &id)) {
		close(fd);
		return -ESTALE;
	}
	o->id = id;
	o->has_id = true;
	return fd;
}

/* Open `path` if it is the mapped file: a regular file (never a FIFO) of the same inode. */
static int open_checked(struct object *o, const char *path)
{
	return keep_if_mapped_file(o, open_regular(path, 0));
}

/*
 * The file of `o` through process mapping `c`: map_files, then the path
 * inside the process's root, resolved as the process would (a symlink its
 * owner planted there must not lead root out of it).
 */
static int open_via_candidate(struct symbolizer *s, struct object *o, const struct candidate *c)
{
	char path[PATH_MAX];
	int fd = -ENOENT;

	if (snprintf(path, sizeof(path), "%s/%d/map_files/%" PRIx64 "-%" PRIx64, s->proc_root,
		     (int)c->pid, c->start, c->end) < (int)sizeof(path))
		fd = open_checked(o, path);
	if (fd < 0 && o->path[0] == '/')
		fd = keep_if_mapped_file(o, open_regular_in_root(s->proc_root, c->pid, o->path, 0));
	return fd;
}

/* The file of `o` by any way it remembers; an fd the caller closes, or a negative errno. */
int sym_open_object_file(struct symbolizer *s, struct object *o)
{
	for (unsigned i = 0; i < o->ncandidates; i++) {
		int fd = open_via_candidate(s, o, &o->candidates[i]);

		if (fd >= 0)
			return fd;
	}
	/* Our own view of the path: open_checked() rejects it if it is another file now. */
	return open_checked(o, o->path);
}

/* Open and keep the file of `o` while the process `c` names still lives. */
static void keep_file(struct symbolizer *s, struct object *o, const struct candidate *c)
{
	int fd;

	if (o->fd >= 0 || o->state != LOAD_PENDING || s->kept_files >= s->max_kept_files)
		return;
	fd = open_via_candidate(s, o, c);
	if (fd < 0)
		fd = open_checked(o, o->path);
	if (fd < 0)
		return; /* resolution tries again, by every way remembered */
	o->fd = fd;
	s->kept_files++;
}

/* ---- Registry ------------------------------------------------------------ */

/* Remember (pid, mapping) as a way to reach the file; the new candidate, or NULL. */
static const struct candidate *add_candidate(struct object *o, pid_t pid, const struct map_entry *m)
{
	if (o->state != LOAD_PENDING || o->ncandidates >= MAX_CANDIDATES)
		return NULL;
	for (unsigned i = 0; i < o->ncandidates; i++)
		if (o->candidates[i].pid == pid)
			return NULL;
	o->candidates[o->ncandidates] = (struct candidate){ pid, m->start, m->end };
	return &o->candidates[o->ncandidates++];
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
static struct hmap_key path_key(const char *path, dev_t dev, uint64_t inode)
{
	return (struct hmap_key){ hash_bytes(path, strlen(path)) ^ hash_u64(dev), inode };
}

/* Where `o` is (or would be) in the indexes. */
static struct hmap *object_index(struct symbolizer *s, const struct object *o, struct hmap_key *key)
{
	if (o->keyed_by_path) {
		*key = path_key(o->path, o->dev, o->inode);
		return &s->by_path;
	}
	*key = (struct hmap_key){ (uint64_t)o->dev, o->inode };
	return &s->by_inode;
}

static bool same_file(const struct object *o, const struct map_entry *m, bool by_path)
{
	if (o->dev != m->dev || o->inode != m->inode || o->keyed_by_path != by_path)
		return false;
	return !by_path || !strcmp(o->path, m->path);
}

/*
 * Is the file `pid` maps at `m` another than the one `o` was opened as?
 * (dev, inode) are those of a deleted file when its inode is reused, and
 * the symbols would be another binary's; the identity (file_id.h) tells.
 * False when it cannot be told (the file was never opened, or the process
 * is gone).
 */
static bool mapping_replaced(struct symbolizer *s, const struct object *o, pid_t pid,
			     const struct map_entry *m)
{
	char path[PATH_MAX];
	struct file_id id;
	struct stat st;

	if (!o->has_id ||
	    snprintf(path, sizeof(path), "%s/%d/map_files/%" PRIx64 "-%" PRIx64, s->proc_root,
		     (int)pid, m->start, m->end) >= (int)sizeof(path) ||
	    stat(path, &st))
		return false;
	id = file_id_of(&st);
	return !file_id_same(&o->id, &id);
}

int64_t symbolizer_object_for_mapping(struct symbolizer *s, pid_t pid, const struct map_entry *m)
{
	bool by_path = m->deleted || (m->dev == 0 && m->inode == 0);
	struct hmap *index = by_path ? &s->by_path : &s->by_inode;
	const struct candidate *c;
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

	key = by_path ? path_key(m->path, m->dev, m->inode)
		      : (struct hmap_key){ (uint64_t)m->dev, m->inode };
	if (hmap_get(index, key, &id) && same_file(s->objects.data[id], m, by_path)) {
		o = s->objects.data[id];
		if (!mapping_replaced(s, o, pid, m)) {
			/* A process that could not reach the file before may be able to now. */
			c = add_candidate(o, pid, m);
			if (c)
				keep_file(s, o, c);
			return id;
		}
		/* Another file now: a new object takes the index; the old one waits for a sweep. */
		hmap_del(index, key);
	}

	o = object_new(OBJECT_ELF, m->path);
	if (!o)
		return -ENOMEM;
	o->dev = m->dev;
	o->inode = m->inode;
	o->keyed_by_path = by_path;
	c = add_candidate(o, pid, m);
	nid = add_object(s, o);
	if (nid < 0)
		return nid;
	/* On a (vanishingly rare) hash collision the older object keeps the slot. */
	if (!hmap_get(index, key, NULL) && hmap_put(index, key, (uint32_t)nid)) {
		remove_object(s, (uint32_t)nid);
		return -ENOMEM;
	}
	if (c)
		keep_file(s, o, c);
	return nid;
}

/* ---- Lifetime: mark and sweep -------------------------------------------- */

/* The reserved objects and the vDSO are few and shared by everyone: never swept. */
static bool always_kept(const struct symbolizer *s, uint32_t id)
{
	return id < OBJ_FIRST_FILE || id == s->vdso;
}

void symbolizer_retain_begin(struct symbolizer *s)
{
	for (size_t i = 0; i < s->objects.len; i++)
		if (s->objects.data[i])
			s->objects.data[i]->marked = false;
}

void symbolizer_retain(struct symbolizer *s, uint32_t object)
{
	if (object < OBJ_FIRST_FILE || object >= s->objects.len || !s->objects.data[object])
		return;
	s->objects.data[object]->marked = true;
}

size_t symbolizer_sweep(struct symbolizer *s)
{
	size_t swept = 0;

	/* Room to list every freed slot, so that none is lost (remove_object copes if not). */
	(void)vec_reserve(&s->free_ids, s->objects.len - s->free_ids.len);
	/* Downwards: remove_object may shorten the table from its end. */
	for (size_t i = s->objects.len; i-- > 0;) {
		struct object *o = s->objects.data[i];
		struct hmap_key key;
		struct hmap *index;
		uint32_t id;

		if (!o || o->marked || always_kept(s, (uint32_t)i))
			continue;
		/* A colliding object never got the index slot: leave its owner's. */
		index = object_index(s, o, &key);
		if (hmap_get(index, key, &id) && id == i)
			hmap_del(index, key);
		remove_object(s, (uint32_t)i);
		swept++;
	}
	/* Names made of addresses are valid until a sweep (symbolizer.h): now they go. */
	name_table_free(&s->addr_names);
	/* Budget freed: objects refused for the lack of it read their DWARF when next resolved. */
	for (size_t i = OBJ_FIRST_FILE; swept && i < s->objects.len; i++) {
		struct object *o = s->objects.data[i];

		if (o && o->dwarf_over_budget) {
			o->dwarf_over_budget = false;
			o->dwarf_state = LOAD_PENDING;
		}
	}
	return swept;
}

const struct object_info *symbolizer_object(struct symbolizer *s, uint32_t object)
{
	struct object *o;

	if (object >= s->objects.len || !s->objects.data[object])
		return NULL;
	o = s->objects.data[object];
	/* Callers want the build-id, which only the file can tell. */
	sym_ensure_loaded(s, o);
	return &o->info;
}

bool sym_ensure_kallsyms(struct symbolizer *s)
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

/* Heap held by object `o` (DWARF apart, which the stats count on their own). */
static uint64_t object_bytes(const struct object *o)
{
	uint64_t n = sizeof(*o) + strlen(o->path) + 1 + elf_symtab_bytes(&o->symtab) +
		     name_table_bytes(&o->names) + o->dwarf_names.cap * sizeof(struct hmap_slot);

	if (o->display)
		n += o->symtab.syms.len * sizeof(*o->display);
	if (o->debug_path)
		n += strlen(o->debug_path) + 1;
	if (o->go)
		n += sizeof(*o->go) + o->go->size + go_lines_bytes(o->go_lines);
	return n;
}

void symbolizer_get_stats(const struct symbolizer *s, struct symbolizer_stats *out)
{
	memset(out, 0, sizeof(*out));
	out->lookups = s->lookups;
	out->bytes = sizeof(*s) + s->objects.cap * sizeof(*s->objects.data) +
		     s->free_ids.cap * sizeof(*s->free_ids.data) +
		     (s->by_inode.cap + s->by_path.cap) * sizeof(struct hmap_slot) +
		     name_table_bytes(&s->names) + name_table_bytes(&s->addr_names);
	out->open_files = s->kept_files;
	for (size_t i = OBJ_FIRST_FILE; i < s->objects.len; i++) {
		const struct object *o = s->objects.data[i];

		if (!o)
			continue;
		out->objects++;
		if (o->state == LOAD_FAILED)
			out->objects_failed++;
		out->symbols_loaded += o->symtab.syms.len;
		out->bytes += object_bytes(o);
		if (o->dwarf) {
			out->dwarf_objects++;
			out->dwarf_bytes += dwarf_info_bytes(o->dwarf);
			out->dwarf_read_bytes += dwarf_info_read_bytes(o->dwarf);
		}
	}
	out->bytes += out->dwarf_bytes;
	if (s->ksyms_state == 1) {
		out->symbols_loaded += s->ksyms.syms.len;
		out->bytes += kallsyms_bytes(&s->ksyms);
		if (s->ksym_display)
			out->bytes += s->ksyms.syms.len * sizeof(*s->ksym_display);
	}
}
