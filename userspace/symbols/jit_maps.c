// SPDX-License-Identifier: BSD-2-Clause
/*
 * JIT code by process, named from its perf map and jitdump file, for as
 * long as its object is in use.
 *
 * A continuous profile sees thousands of processes come and go, so maps are
 * not kept forever: the caller marks the objects still in use and sweeps
 * the rest (jit_maps_sweep), which frees their maps and makes their slots
 * (and so their object ids) reusable. A process not known to run JIT code
 * holds no object id anyone could mark: a sweep forgets it, and the next
 * lookup simply looks for its map again.
 */
#include "jit_maps.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/clock.h"
#include "../util/hashmap.h"
#include "../util/log.h"
#include "../util/safe_open.h"
#include "../util/strtab.h"
#include "../util/uid_owner.h"
#include "../util/vec.h"
#include "../lang/jit_names.h"
#include "jit_open.h"
#include "perf_map.h"

/* How long to wait before looking again for a map a process has not written yet. */
#define JIT_RETRY_NS	     (100ULL * 1000 * 1000)
/*
 * Process roots held open, so that a map written at exit can be opened in
 * the process's own /tmp once PROC/PID is gone: one fd each, for JIT
 * processes only; past this, such a map is found only in our own /tmp.
 */
#define JIT_MAX_HELD_ROOTS   512
/*
 * How long the caller (the ring's reader, or the symbolizer under the lock
 * the reader needs) waits for a perf map or jitdump to be opened: an open
 * on a local file system takes microseconds, one on a FUSE server that
 * holds it never ends (jit_open.h).
 */
#define JIT_OPEN_DEADLINE_MS 200

struct jit_entry {
	uint32_t pid;
	struct perf_map *map;  /* perf-PID.map; NULL: not found (yet) */
	struct perf_map *dump; /* jit-PID.dump, opened as the process maps it; NULL: none */
	struct perf_map_site site;
	bool has_site; /* site read while the process lived */
	enum jit_runtime runtime;
	bool jit; /* known to run JIT code: it has an object id */
	uint64_t tried_ns;
	bool used;    /* false: a free slot, listed in free_slots */
	bool marked;  /* kept by the next sweep */
	bool capped;  /* its map reached a limit, and we said so */
	bool refused; /* its map was not the process's, and we said so */
	/*
	 * Opening its map, or its jitdump, passed the deadline or met FUSE:
	 * not tried again, as a server that answers once and then holds
	 * would cost a deadline per try.
	 */
	bool map_gave_up, dump_gave_up;
	/* Names taken apart (func, file), valid while the entry is. */
	struct strtab names;
	size_t name_bytes;
};

struct jit_maps {
	char *proc_root;
	VEC(struct jit_entry) entries; /* slot i is object OBJ_FIRST_JIT + i */
	VEC(uint32_t) free_slots;      /* unused entries, reused first */
	struct hmap by_pid;	       /* pid -> entries index */
	size_t held_roots;	       /* entries whose site holds a root fd */
	struct jit_opener *opener;     /* opens their files without waiting on them */
	struct uid_owners *owners;     /* /etc/subuid, read at the first owner asked for */
};

struct jit_maps *jit_maps_new(const char *proc_root)
{
	struct jit_maps *j = calloc(1, sizeof(*j));

	if (!j)
		return NULL;
	j->proc_root = strdup(proc_root ? proc_root : "/proc");
	j->opener = jit_opener_new(JIT_OPEN_DEADLINE_MS);
	if (!j->proc_root || !j->opener) {
		jit_opener_free(j->opener);
		free(j->proc_root);
		free(j);
		return NULL;
	}
	return j;
}

static void entry_release(struct jit_maps *j, struct jit_entry *e)
{
	perf_map_free(e->map);
	perf_map_free(e->dump);
	if (e->has_site && e->site.root >= 0)
		j->held_roots--;
	if (e->has_site)
		perf_map_site_close(&e->site);
	strtab_free(&e->names);
	*e = (struct jit_entry){ 0 };
}

void jit_maps_free(struct jit_maps *j)
{
	if (!j)
		return;
	for (size_t i = 0; i < j->entries.len; i++)
		if (j->entries.data[i].used)
			entry_release(j, &j->entries.data[i]);
	vec_free(&j->entries);
	vec_free(&j->free_slots);
	hmap_free(&j->by_pid);
	jit_opener_free(j->opener);
	free(j->owners);
	free(j->proc_root);
	free(j);
}

/* A slot for a new entry of `pid`, indexed; its index or -ENOMEM. */
static int64_t add_entry(struct jit_maps *j, uint32_t pid)
{
	struct jit_entry ne = { .pid = pid, .used = true, .marked = true };
	struct hmap_key key = { pid, 0 };
	bool reused = j->free_slots.len > 0;
	uint32_t idx;

	if (reused) {
		idx = j->free_slots.data[--j->free_slots.len];
	} else {
		if (j->entries.len >= UINT32_MAX - OBJ_FIRST_JIT)
			return -ENOMEM;
		idx = (uint32_t)j->entries.len;
		if (vec_push(&j->entries, ne))
			return -ENOMEM;
	}
	if (hmap_put(&j->by_pid, key, idx)) {
		if (reused)
			j->free_slots.len++; /* give the slot back */
		else
			j->entries.len--;
		return -ENOMEM;
	}
	/* Born marked: a sweep frees only what a retain_begin unmarked. */
	j->entries.data[idx] = ne;
	/*
	 * What opening its map will check (its uids, its mount namespace),
	 * read now, while the process is surely alive: a JVM writes its map
	 * as it exits. Its root is held only once it is known to run JIT code
	 * (mark_jit).
	 */
	if (!perf_map_site_read(j->proc_root, (pid_t)pid, false, &j->entries.data[idx].site))
		j->entries.data[idx].has_site = true;
	return idx;
}

/* e runs JIT code: it gets an object id, and its root is held while the budget allows. */
static void mark_jit(struct jit_maps *j, struct jit_entry *e)
{
	int root;

	if (e->jit)
		return;
	e->jit = true;
	if (!e->has_site || e->map || e->site.root >= 0 || j->held_roots >= JIT_MAX_HELD_ROOTS)
		return;
	root = open_proc_root(j->proc_root, (pid_t)e->pid);
	if (root >= 0) {
		e->site.root = root;
		j->held_roots++;
	}
}

/* pid's entry, made when it has none; NULL when out of memory. */
static struct jit_entry *entry_of(struct jit_maps *j, uint32_t pid, uint32_t *idx_out)
{
	struct hmap_key key = { pid, 0 };
	uint32_t idx;

	if (!hmap_get(&j->by_pid, key, &idx)) {
		int64_t r = add_entry(j, pid);

		if (r < 0)
			return NULL;
		idx = (uint32_t)r;
	}
	*idx_out = idx;
	return &j->entries.data[idx];
}

/*
 * Whose files a process's are: its real uid, folded to the owner of its
 * subordinate range (a rootless container's user runs under thousands of
 * uids, which must not bring as many stuck opens and map shares).
 */
static uint32_t owner_of(struct jit_maps *j, const struct jit_entry *e)
{
	if (!e->site.nuids)
		return PERF_MAP_NO_OWNER;
	if (!j->owners && (j->owners = calloc(1, sizeof(*j->owners))))
		uid_owners_read(j->owners, NULL);
	return j->owners ? uid_owner_of(j->owners, (uint32_t)e->site.uids[0])
			 : (uint32_t)e->site.uids[0];
}

/* An open that passed its deadline or met FUSE: said once, and never tried again. */
static void give_up(struct jit_entry *e, bool *gave_up, const char *what, int err)
{
	if (*gave_up)
		return;
	*gave_up = true;
	log_warn("the %s of process %u is not read: %s; its JIT code stays unnamed", what, e->pid,
		 err == -EMEDIUMTYPE ? "it is on a FUSE file system, whose server may never answer"
				     : "opening it did not end in time");
}

static int open_site_fd(void *arg)
{
	return perf_map_site_open_fd(arg, "/tmp");
}

static void close_site(void *arg)
{
	perf_map_site_close(arg);
}

/* The perf map of e, found on a worker; NULL with errno set. */
static struct perf_map *open_map(struct jit_maps *j, struct jit_entry *e)
{
	struct perf_map_site site = e->site;
	int fd;

	/* The worker's own root: it may still use it after we have left. */
	site.root = e->site.root >= 0 ? fcntl(e->site.root, F_DUPFD_CLOEXEC, 0) : -1;
	if (e->site.root >= 0 && site.root < 0)
		return NULL;
	fd = jit_opener_run(j->opener, owner_of(j, e), open_site_fd, &site, sizeof(site),
			    close_site);
	/*
	 * Refused at once (-EBUSY: its user has an open stuck, or every
	 * worker is) costs nothing: looked for again later, as a map not
	 * written yet.
	 */
	if (fd == -ETIMEDOUT || fd == -EMEDIUMTYPE) {
		give_up(e, &e->map_gave_up, "perf map", fd);
		errno = -fd;
		return NULL;
	}
	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	return perf_map_open_fd_of(fd, owner_of(j, e));
}

/* Look for the perf map again, at most every JIT_RETRY_NS. */
static void try_open_map(struct jit_maps *j, struct jit_entry *e, uint64_t now_ns)
{
	if (e->map || !e->has_site || e->map_gave_up ||
	    (e->tried_ns && now_ns - e->tried_ns < JIT_RETRY_NS))
		return;
	e->tried_ns = now_ns ? now_ns : 1;
	if (e->site.root >= 0) {
		e->map = open_map(j, e);
	} else {
		/* Not held (no JIT seen yet, or past the budget): the root as it is now. */
		e->site.root = open_proc_root(j->proc_root, (pid_t)e->pid);
		e->map = open_map(j, e);
		perf_map_site_close(&e->site);
	}
	if (!e->map && (errno == EPERM || errno == EXDEV) && !e->refused) {
		e->refused = true;
		log_warn("the perf map of process %u is not read: %s; its JIT code stays "
			 "unnamed",
			 e->pid,
			 errno == EPERM ? "neither its user nor root owns it (any user may "
					  "write /tmp)"
					: "another file is mounted over it");
	}
	if (!e->map)
		return;
	mark_jit(j, e);
	/* The map is open and stays so: the root is not needed any more. */
	if (e->site.root >= 0 && e->has_site) {
		perf_map_site_close(&e->site);
		j->held_roots--;
	}
}

/* "/jit-NNN.dump": the file a jitdump writer maps to mark its process (perf's convention). */
static bool is_jitdump_path(const char *path)
{
	const char *b = strrchr(path, '/'), *d;

	b = b ? b + 1 : path;
	if (strncmp(b, "jit-", 4))
		return false;
	for (d = b + 4; *d >= '0' && *d <= '9'; d++)
		;
	return d > b + 4 && !strcmp(d, ".dump");
}

/* What opening a jitdump on a worker needs. */
struct jitdump_at {
	char path[PATH_MAX];
	uid_t uids[4];
	int nuids;
};

/*
 * On a worker: the file at a map_files path, if it is not on FUSE (looked
 * at through O_PATH, before the open a FUSE server would be asked for) and
 * is a regular file owned by the process's user or root, as a map.
 */
static int open_jitdump_fd(void *arg)
{
	const struct jitdump_at *at = arg;
	struct stat st;
	bool owner;
	int fd = open(at->path, O_PATH | O_CLOEXEC), err;

	if (fd < 0)
		return -errno;
	err = perf_map_refuse_fuse(fd);
	close(fd);
	if (err)
		return err;
	fd = open_regular(at->path, 0);
	if (fd < 0)
		return fd;
	err = fstat(fd, &st) ? -errno : perf_map_refuse_fuse(fd);
	owner = !err && st.st_uid == 0;
	for (int i = 0; !err && i < at->nuids; i++)
		owner |= st.st_uid == at->uids[i];
	if (err || !owner) {
		close(fd);
		return err ? err : -EPERM;
	}
	return fd;
}

/*
 * The jitdump file mapped at [start, end), opened as the very file the
 * process maps (PROC/PID/map_files), not by a path another user could
 * swap; on a worker, as its owner may serve it from FUSE.
 */
static struct perf_map *open_jitdump(struct jit_maps *j, struct jit_entry *e, uint64_t start,
				     uint64_t end)
{
	struct jitdump_at at = { .nuids = e->site.nuids };
	int fd;

	if (snprintf(at.path, sizeof(at.path), "%s/%u/map_files/%" PRIx64 "-%" PRIx64, j->proc_root,
		     e->pid, start, end) >= (int)sizeof(at.path))
		return NULL;
	memcpy(at.uids, e->site.uids, sizeof(at.uids));
	fd = jit_opener_run(j->opener, owner_of(j, e), open_jitdump_fd, &at, sizeof(at), NULL);
	if (fd == -ETIMEDOUT || fd == -EMEDIUMTYPE)
		give_up(e, &e->dump_gave_up, "jitdump", fd);
	return fd < 0 ? NULL : perf_map_open_jitdump_fd_of(fd, owner_of(j, e));
}

int jit_maps_note_mapping(struct jit_maps *j, uint32_t pid, const struct map_entry *m)
{
	enum jit_runtime rt = JIT_RUNTIME_UNKNOWN;
	bool dump = false;
	struct jit_entry *e;
	uint32_t idx;

	if (!m->executable)
		return 0;
	if (m->path[0]) {
		dump = is_jitdump_path(m->path);
		rt = dump ? JIT_RUNTIME_UNKNOWN : jit_runtime_of_path(m->path);
		if (!dump && rt == JIT_RUNTIME_UNKNOWN)
			return 0;
	}
	e = entry_of(j, pid, &idx);
	if (!e)
		return -ENOMEM;
	if (rt != JIT_RUNTIME_UNKNOWN)
		e->runtime = rt;
	/*
	 * Anonymous code, a jitdump, a JVM or node: JIT code runs or will.
	 * An interpreter that jits only when asked (python -X perf) shows
	 * anonymous code when it does.
	 */
	if (!m->path[0] || dump || rt == JIT_RUNTIME_JAVA || rt == JIT_RUNTIME_NODE)
		mark_jit(j, e);
	if (dump && !e->dump && e->has_site && !e->dump_gave_up)
		e->dump = open_jitdump(j, e, m->start, m->end);
	return 0;
}

int64_t jit_maps_object(struct jit_maps *j, uint32_t pid, bool anon_exec, uint64_t now_ns)
{
	struct jit_entry *e;
	uint32_t idx;

	e = entry_of(j, pid, &idx);
	if (!e)
		return -ENOMEM;
	if (anon_exec)
		mark_jit(j, e);
	try_open_map(j, e, now_ns);
	/*
	 * An address in no mapping at all is JIT code only where a map or a
	 * jitdump may name it: else it is most likely one the unwinder made
	 * up, and stays the raw address it is (OBJ_UNKNOWN), not "[anon exec]".
	 */
	if (anon_exec ? e->jit : e->map || e->dump)
		return (int64_t)OBJ_FIRST_JIT + idx;
	return -ENOENT;
}

/* A name of `len` bytes kept while e is; NULL when out of memory. */
static const char *keep_name(struct jit_entry *e, const char *s, size_t len)
{
	size_t before = strtab_len(&e->names);
	int64_t idx = strtab_intern_len(&e->names, s, len);

	if (idx < 0)
		return NULL;
	if (strtab_len(&e->names) != before)
		e->name_bytes += len + 1;
	return strtab_get(&e->names, (uint32_t)idx);
}

static void warn_capped(struct jit_entry *e, const struct perf_map *pm, const char *what)
{
	const char *limit = perf_map_capped(pm);

	if (e->capped || !limit)
		return;
	e->capped = true;
	if (!strcmp(limit, "format"))
		log_warn("the %s of process %u is read only up to a record that is not valid; "
			 "its later JIT code stays unnamed",
			 what, e->pid);
	else
		log_warn("the %s of process %u is too large to read whole (limit on its %s "
			 "reached); its later JIT code stays unnamed",
			 what, e->pid, limit);
}

/* The name at `addr`: the jitdump's (it has moves), else the perf map's; NULL when neither has one.
 */
static const char *lookup(struct jit_entry *e, uint64_t addr)
{
	const char *name = NULL;

	if (e->dump) {
		name = perf_map_lookup(e->dump, addr, NULL);
		warn_capped(e, e->dump, "jitdump");
	}
	if (!name && e->map) {
		name = perf_map_lookup(e->map, addr, NULL);
		warn_capped(e, e->map, "perf map");
	}
	return name;
}

bool jit_maps_resolve(struct jit_maps *j, uint32_t object, uint64_t addr,
		      struct resolved_frame *out)
{
	enum jit_runtime rt = JIT_RUNTIME_UNKNOWN;
	struct jit_entry *e;
	const char *name = NULL, *func, *file = NULL;
	struct jit_name jn;

	if (!j || object < OBJ_FIRST_JIT || object - OBJ_FIRST_JIT >= j->entries.len)
		return false;
	e = &j->entries.data[object - OBJ_FIRST_JIT];
	/* A swept object's slot may be free or another process's: nothing names it. */
	if (e->used) {
		rt = e->runtime;
		name = lookup(e, addr);
		/* A map written since (a JVM's at its exit): one more look, now. */
		if (!name && !e->map) {
			try_open_map(j, e, clock_ns(CLOCK_MONOTONIC));
			name = lookup(e, addr);
		}
	}
	memset(out, 0, sizeof(*out));
	out->count = 1;
	out->resource = NULL;
	out->address = -1;
	if (!name) {
		/* One frame per runtime for the code no source names, not one per address. */
		out->items[0].func = jit_runtime_unnamed(rt);
		out->java = rt == JIT_RUNTIME_JAVA;
		out->javascript = rt == JIT_RUNTIME_NODE;
		return true;
	}
	jit_name_parse(rt, name, &jn);
	func = keep_name(e, jn.func, jn.func_len);
	if (jn.file)
		file = keep_name(e, jn.file, jn.file_len);
	out->items[0].func = func ? func : name;
	out->items[0].file = file;
	out->items[0].start_line = jn.line;
	out->java = jn.lang == JIT_LANG_JAVA;
	out->javascript = jn.lang == JIT_LANG_JS;
	out->python = jn.lang == JIT_LANG_PYTHON;
	out->is_js = jn.is_js;
	return true;
}

void jit_maps_retain_begin(struct jit_maps *j)
{
	for (size_t i = 0; i < j->entries.len; i++)
		j->entries.data[i].marked = false;
}

void jit_maps_retain(struct jit_maps *j, uint32_t object)
{
	if (object < OBJ_FIRST_JIT || object - OBJ_FIRST_JIT >= j->entries.len)
		return;
	j->entries.data[object - OBJ_FIRST_JIT].marked = true;
}

size_t jit_maps_sweep(struct jit_maps *j)
{
	size_t swept = 0;

	for (size_t i = 0; i < j->entries.len; i++) {
		struct jit_entry *e = &j->entries.data[i];

		/* Entries of no JIT process have no id to mark: always dropped, looked up again. */
		if (!e->used || (e->marked && e->jit))
			continue;
		hmap_del(&j->by_pid, (struct hmap_key){ e->pid, 0 });
		if (e->jit)
			swept++;
		entry_release(j, e);
		/* Out of memory, the slot is lost: one entry's worth, never reused. */
		(void)vec_push(&j->free_slots, (uint32_t)i);
	}
	return swept;
}

size_t jit_maps_bytes(const struct jit_maps *j)
{
	size_t n = sizeof(*j) + j->entries.cap * sizeof(*j->entries.data) +
		   j->free_slots.cap * sizeof(*j->free_slots.data) +
		   j->by_pid.cap * sizeof(struct hmap_slot);

	for (size_t i = 0; i < j->entries.len; i++) {
		const struct jit_entry *e = &j->entries.data[i];

		n += e->name_bytes + e->names.strs.cap * sizeof(char *) +
		     e->names.next.cap * sizeof(uint32_t) +
		     e->names.index.cap * sizeof(struct hmap_slot);
		if (j->entries.data[i].map)
			n += perf_map_bytes(j->entries.data[i].map);
		if (j->entries.data[i].dump)
			n += perf_map_bytes(j->entries.data[i].dump);
	}
	return n;
}
