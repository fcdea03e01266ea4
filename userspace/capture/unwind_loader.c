// SPDX-License-Identifier: BSD-2-Clause
/* See unwind_loader.h. */
#include "unwind_loader.h"

#include <bpf/bpf.h>
#include <dirent.h>
#include <errno.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "../symbols/proc_maps.h"
#include "php_loader.h"
#include "python_loader.h"
#include "ruby_loader.h"
#include "rt_loader.h"
#include "../util/bsearch_u64.h"
#include "../util/clock.h"
#include "../util/log.h"
#include "../util/elf_open.h"

#define UNWIND_LOADER_SLOW_NS (100ull * 1000000ull)

static int defer_build(void *ctx, const struct unwind_store_file *f, int fd, const char *path,
		       const char *link, bool stale);

/* The key of file `k` in key_shares. */
static struct hmap_key file_hkey(const struct unwind_file_key *k)
{
	return (struct hmap_key){ k->dev, k->ino };
}

/*
 * `f`'s rows into the BPF file map, and when (misses before it were for
 * want of them). The store holds no more tables than the map has entries,
 * so a failure is the kernel's (no memory: the map allocates as it goes):
 * tried again at the next refresh (publish_again), never left unpublished
 * for the run while it holds its slots.
 */
static void publish_file(struct unwind_loader *l, const struct unwind_store_file *f)
{
	if (bpf_map_update_elem(l->files_fd, &f->key, &f->info, BPF_ANY)) {
		l->unpublished++;
		l->publish_again = true;
	} else {
		unwind_store_published(&l->store, f, clock_ns(CLOCK_MONOTONIC));
	}
	if (l->no_table_fd >= 0 && key_shares_give(&l->no_table, file_hkey(&f->key)))
		bpf_map_delete_elem(l->no_table_fd, &f->key);
}

/* The tables whose publishing failed, published now (see publish_file). */
static void publish_again(struct unwind_loader *l)
{
	if (!l->publish_again)
		return;
	l->publish_again = false;
	for (size_t i = 0; i < l->store.files.len; i++) {
		const struct unwind_store_file *f = &l->store.files.data[i];

		if (f->status == UNWIND_FILE_LOADED && !f->published_at)
			publish_file(l, f);
	}
}

/*
 * A file built without a table (no CFI, refused): the BPF walk then
 * follows its frame pointers instead of copying its stack (a full map
 * only costs copies, which the CPU's budget bounds). A user's files take
 * at most a quarter of the map (key_shares.h), charged to the user whose
 * process mapped the file.
 */
static void publish_no_table(struct unwind_loader *l, const struct unwind_store_file *f)
{
	if (l->no_table_fd < 0 || f->status == UNWIND_FILE_LOADED ||
	    f->status == UNWIND_FILE_PENDING)
		return;
	if (!l->no_table.capacity) {
		struct bpf_map_info info = { 0 };
		__u32 len = sizeof(info);

		key_shares_init(&l->no_table, bpf_obj_get_info_by_fd(l->no_table_fd, &info, &len)
						      ? 4096
						      : info.max_entries);
	}
	if (key_shares_take(&l->no_table, file_hkey(&f->key), f->id.uid) &&
	    bpf_map_update_elem(l->no_table_fd, &f->key, &(uint8_t){ 1 }, BPF_ANY))
		(void)key_shares_give(&l->no_table, file_hkey(&f->key));
}

/* The mmapable BPF array at fd, `bytes` long, mapped (rounded up to pages); NULL: errno. */
static void *map_array(int fd, size_t *bytes)
{
	long page = sysconf(_SC_PAGESIZE);
	void *p;

	*bytes = (*bytes + (size_t)page - 1) & ~((size_t)page - 1);
	p = mmap(NULL, *bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	return p == MAP_FAILED ? NULL : p;
}

int unwind_loader_open(struct unwind_loader *l, int slots_fd, int rules_fd, int files_fd,
		       int procs_fd, int capped_fd, size_t capacity)
{
	struct cfi_budget budget;

	memset(l, 0, sizeof(*l));
	l->cache.dir = -1;
	l->no_table_fd = -1;
	l->proc = calloc(1, sizeof(*l->proc));
	if (!l->proc)
		return -ENOMEM;
	l->slots_bytes = capacity * sizeof(union unwind_slot);
	l->slots = map_array(slots_fd, &l->slots_bytes);
	if (!l->slots)
		return -errno;
	l->rules_bytes = UNWIND_MAX_RULES * sizeof(struct unwind_rule);
	l->rules = map_array(rules_fd, &l->rules_bytes);
	if (!l->rules)
		return -errno;
	l->files_fd = files_fd;
	l->procs_fd = procs_fd;
	proc_shares_init(&l->shares, capped_fd);
	proc_shares_use(&l->shares, PROC_SHARE_UNWIND, procs_fd);
	unwind_store_init(&l->store, l->slots, capacity);
	if (unwind_store_rules_in(&l->store, l->rules, UNWIND_MAX_RULES))
		return -ENOMEM;
	/* No more tables than the BPF file map has entries, a quarter for each user's. */
	{
		struct bpf_map_info info = { 0 };
		__u32 len = sizeof(info);

		unwind_store_limit_files(&l->store, bpf_obj_get_info_by_fd(files_fd, &info, &len)
							    ? 16384
							    : info.max_entries);
	}
	/* Every user's programs keep their CFI, whatever files another user maps. */
	unwind_store_share_by_owner(&l->store);
	elf_version(EV_CURRENT);
	l->store.defer = defer_build;
	l->store.defer_ctx = l;
	/* Without a thread (none to be had), tables are built here: slower starts, same tables. */
	unwind_store_budget(&l->store, &budget);
	if (table_worker_start_within(&l->worker, &budget))
		log_warn("cannot start the unwind table thread; tables are built while draining");
	l->worker.owners = &l->shares.owners;
	return 0;
}

void unwind_loader_close(struct unwind_loader *l)
{
	/*
	 * Only once the worker is gone: a build left behind may still load,
	 * store or trim (its directory's descriptor, reused once closed, would
	 * point elsewhere), so the cache is left open, leaked, with it.
	 */
	if (table_worker_stop(&l->worker))
		table_cache_close(&l->cache);
	for (size_t i = 0; i < l->parked.len; i++) {
		unwind_built_free(&l->parked.data[i].d.b);
		free(l->parked.data[i].d.path);
	}
	vec_free(&l->parked);
	hmap_free(&l->over_budget);
	for (size_t i = 0; i < UNWIND_LOADER_PROC_COPIES; i++)
		free(l->proc_copies[i].proc);
	for (size_t i = 0; i < UNWIND_LOADER_GONE; i++)
		free(l->gone[i].proc);
	unwind_misses_free(&l->misses);
	key_shares_free(&l->no_table);
	if (l->slots)
		munmap(l->slots, l->slots_bytes);
	if (l->rules)
		munmap(l->rules, l->rules_bytes);
	unwind_store_free(&l->store);
	proc_shares_free(&l->shares);
	vec_free(&l->dirty);
	free(l->proc);
	memset(l, 0, sizeof(*l));
}

/* Over-budget files by (dev, inode) and identity: a collision only costs frame pointers. */
static struct hmap_key over_budget_key(const struct unwind_file_key *k,
				       const struct unwind_file_id *id)
{
	return (struct hmap_key){ k->dev ^ hash_u64((uint64_t)id->ctime_ns),
				  k->ino ^ hash_u64(id->size) };
}

/*
 * The store compacted (for `path`'s table): every table's entry is deleted
 * from the BPF file map first, the rows move and the rules are built again,
 * and the tables kept are published again. All of them, not only those
 * that move: compaction renumbers the rules every row points at, in the
 * mmapped rules array and in the rows of tables that stay put, so a walk
 * in any published table could pair a row with another row's rule, a
 * wrong stack with nothing to tell it (review of S2, finding 1); and a
 * table compaction evicts (no room for its rules) must not stay published
 * over slots others take (finding 2). For that moment (a few ms, rare:
 * free slots in pieces, or rules to win back) the walks follow frame
 * pointers, or copy their stacks, and say so.
 */
static void compact(struct unwind_loader *l, const char *path)
{
	size_t evicted = l->store.stats.evicted, unpublished = 0;
	uint64_t t0 = clock_ns(CLOCK_MONOTONIC);

	for (size_t i = 0; i < l->store.files.len; i++) {
		struct unwind_store_file *f = &l->store.files.data[i];

		if (f->status != UNWIND_FILE_LOADED && !f->published_at)
			continue;
		bpf_map_delete_elem(l->files_fd, &f->key);
		unpublished++;
	}
	/*
	 * A walk that found a table before it was unpublished lasts
	 * microseconds: past this grace none reads the slots or the rules.
	 */
	usleep(UNWIND_LOADER_GRACE_US);
	if (unwind_store_compact(&l->store))
		log_debug("unwind store: no memory to compact it; the tables not moved are "
			  "evicted");
	for (size_t i = 0; i < l->store.files.len; i++) {
		struct unwind_store_file *f = &l->store.files.data[i];

		if (f->status == UNWIND_FILE_LOADED)
			publish_file(l, f);
		else
			/* Evicted meanwhile: published again when built again. */
			f->published_at = 0;
	}
	l->compactions++;
	l->compacted_at = clock_ns(CLOCK_MONOTONIC);
	l->evicted_at_compaction = l->store.stats.evicted;
	log_debug("unwind store: compacted for %s in %.1f ms (%zu tables evicted so far, %zu "
		  "unpublished meanwhile), %zu of %zu slots in use",
		  path ? path : "?", (double)(clock_ns(CLOCK_MONOTONIC) - t0) / 1e6, evicted,
		  unpublished, l->store.slots.len, l->store.max_slots);
}

/* Whether the last compaction is UNWIND_LOADER_COMPACT_GAP_NS ago or more. */
static bool may_compact(const struct unwind_loader *l)
{
	return !l->compacted_at ||
	       clock_ns(CLOCK_MONOTONIC) - l->compacted_at >= UNWIND_LOADER_COMPACT_GAP_NS;
}

/*
 * The tables just evicted (`n` of them) leave the BPF file map (their
 * slots wait in quarantine).
 */
static void unpublish_evicted(struct unwind_loader *l, const char *path, size_t n)
{
	for (size_t i = 0; i < l->store.files.len; i++) {
		struct unwind_store_file *f = &l->store.files.data[i];

		if (f->status == UNWIND_FILE_FULL && f->evicted && f->published_at) {
			bpf_map_delete_elem(l->files_fd, &f->key);
			/* Published again when built again (published_at then: that time). */
			f->published_at = 0;
		}
	}
	if (n)
		log_debug("unwind store: %zu tables evicted for %s (%zu so far), %zu of %zu slots "
			  "in use",
			  n, path ? path : "?", l->store.stats.evicted, l->store.slots.len,
			  l->store.max_slots);
}

/*
 * Build `d` into the store: its entry (NULL: no longer wanted, or no
 * memory), or, with *wait set (only when `may_wait`), none yet: room was
 * made by evicting others, whose slots are free once out of quarantine
 * (the caller keeps `d` and calls again). Free slots in pieces, or no
 * more waiting (others took the slots it waited for): compacted.
 */
static const struct unwind_store_file *place(struct unwind_loader *l, struct table_done *d,
					     bool may_wait, bool *wait)
{
	size_t before = l->store.stats.evicted;
	const struct unwind_store_file *f;

	*wait = false;
	f = unwind_store_complete(&l->store, &d->key, &d->id, &d->b);
	/*
	 * No rule room, and tables were evicted since the store was last
	 * compacted: their rules return only then (unwind_store_compact).
	 */
	if (f && f->status == UNWIND_FILE_FULL && f->want_rules &&
	    l->store.stats.evicted > l->evicted_at_compaction && may_compact(l)) {
		unwind_store_retry_now(&l->store, f);
		compact(l, d->path);
		return unwind_store_complete(&l->store, &d->key, &d->id, &d->b);
	}
	/* No room: others' tables evicted to make it, least recently used first. */
	if (!f || f->status != UNWIND_FILE_FULL)
		return f;
	if (!unwind_store_evict_for(&l->store, f, clock_ns(CLOCK_MONOTONIC))) {
		/* For whoever asks why (and the tests); a share's refusal is said in finish. */
		if (!f->want_rules && !unwind_store_over_share(&l->store, f))
			log_debug("%s: no room in the unwind store for its table (%u slots), and "
				  "the tables others use stay",
				  d->path ? d->path : "?", f->want_slots);
		return f;
	}
	if (l->store.stats.evicted > before)
		unpublish_evicted(l, d->path, l->store.stats.evicted - before);
	/* One extent holds it once the quarantine is over: wait for it, not more. */
	if (may_wait &&
	    slot_alloc_fits_later(&l->store.alloc, f->want_slots ? f->want_slots : 1,
				  (uint32_t)l->store.max_slots) &&
	    slot_alloc_next_release(&l->store.alloc)) {
		*wait = true;
		return NULL;
	}
	if (!may_compact(l))
		return f;
	compact(l, d->path);
	return unwind_store_complete(&l->store, &d->key, &d->id, &d->b);
}

/*
 * The builds waiting for slots in quarantine (see place), tried again once
 * it is over: each waits at most UNWIND_LOADER_PARK_TRIES times (others may
 * take the slots first), then the store is compacted for it.
 */
static void unpark(struct unwind_loader *l)
{
	uint64_t now = clock_ns(CLOCK_MONOTONIC), at = slot_alloc_next_release(&l->store.alloc);
	size_t kept = 0;

	if (at && now < at)
		return;
	for (size_t i = 0; i < l->parked.len; i++) {
		struct unwind_parked *p = &l->parked.data[i];
		const struct unwind_store_file *f;
		bool wait;

		f = place(l, &p->d, p->tries + 1 < UNWIND_LOADER_PARK_TRIES, &wait);
		if (wait) {
			p->tries++;
			l->parked.data[kept++] = *p;
			continue;
		}
		if (f && f->status == UNWIND_FILE_LOADED)
			publish_file(l, f);
		unwind_built_free(&p->d.b);
		free(p->d.path);
	}
	l->parked.len = kept;
}

/*
 * A finished build into the store and, with rows, the BPF file map. A
 * build lost to a lack of memory, or whose file could not be opened again,
 * is retried when the file is next mapped: never fatal to the recording.
 */
static void finish(struct unwind_loader *l, struct table_done *d)
{
	const struct unwind_store_file *f = NULL;
	uint64_t before = l->store.stats.longest_ns;

	if (!d->err && d->b.status == UNWIND_FILE_OVER_BUDGET &&
	    !hmap_get(&l->over_budget, over_budget_key(&d->key, &d->id), &(uint32_t){ 0 })) {
		log_warn("%s: its unwind table would cost more than its budget (%s); its frames "
			 "are walked with frame pointers",
			 d->path ? d->path : "?", d->b.over_budget ? d->b.over_budget : "?");
		/* No memory to remember it: said again, no harm. */
		(void)hmap_put(&l->over_budget, over_budget_key(&d->key, &d->id), 0);
	}
	/* Slow builds by name, for whoever asks why a table came late (and the tests). */
	if (!d->err && d->b.build_ns >= UNWIND_LOADER_SLOW_NS)
		log_debug("%s: its unwind table took %.1f ms of CPU to build",
			  d->path ? d->path : "?", (double)d->b.build_ns / 1e6);
	if (!d->err) {
		bool wait;

		f = place(l, d, true, &wait);
		/* Its slots come free in a moment: kept (no memory: built again when next met). */
		if (wait && l->parked.len < UNWIND_LOADER_PARKED &&
		    !vec_push(&l->parked, ((struct unwind_parked){ .d = *d })))
			return;
		if (f && l->store.stats.longest_ns > before)
			snprintf(l->longest_path, sizeof(l->longest_path), "%s", d->path);
		/*
		 * One line per build refused (a file is built again only when a
		 * user with room maps it, or evicting makes it room):
		 * which user's share kept it out, for whoever asks why a
		 * program's frames lost their CFI (and the tests).
		 */
		if (f && unwind_store_over_share(&l->store, f))
			log_debug("%s (device %u:%u, inode %llu): its unwind table (%u slots) is "
				  "refused for the share of uid %u; a user with room who maps it "
				  "takes it",
				  d->path ? d->path : "?", (unsigned int)(f->key.dev >> 20),
				  (unsigned int)(f->key.dev & 0xfffff),
				  (unsigned long long)f->key.ino, f->want_slots, f->id.uid);
		if (f && f->status == UNWIND_FILE_LOADED)
			publish_file(l, f);
		else if (f)
			publish_no_table(l, f);
	}
	if (!f && (d->err || errno == ENOMEM))
		unwind_store_retry(&l->store, &d->key, &d->id);
	unwind_built_free(&d->b);
	free(d->path);
}

/*
 * The store's hand-over of a file met in a process's mappings (see
 * unwind_defer_fn): queued for the worker, or built here without one.
 */
static int defer_build(void *ctx, const struct unwind_store_file *f, int fd, const char *path,
		       const char *link, bool stale)
{
	struct unwind_loader *l = ctx;
	struct table_done d = { .key = f->key, .id = f->id };
	struct cfi_budget budget;

	/* Another file under that (dev, inode): its rows no longer describe what runs. */
	if (stale) {
		log_debug("%s: another file under the same device and inode; its table is built "
			  "again",
			  path);
		bpf_map_delete_elem(l->files_fd, &f->key);
	}
	if (f->churning) {
		/* Said once per file: it stays refused for the rest of the minute. */
		if (f->changes == UNWIND_STORE_MAX_CHANGES + 1)
			log_warn("%s: replaced more than %d times in a minute; its frames are "
				 "walked with frame pointers for now",
				 path, UNWIND_STORE_MAX_CHANGES);
		/* While it churns: frame pointers, not copies nobody finishes (finding 8). */
		if (l->no_table_fd >= 0)
			(void)bpf_map_update_elem(l->no_table_fd, &f->key, &(uint8_t){ 1 },
						  BPF_ANY);
		close(fd);
		return 0;
	}
	if (hmap_get(&l->over_budget, over_budget_key(&f->key, &f->id), &(uint32_t){ 0 })) {
		close(fd);
		d.b.status = UNWIND_FILE_OVER_BUDGET;
		finish(l, &d);
		return 0;
	}
	if (l->worker.started) {
		int err = table_worker_submit(&l->worker, f, fd, path, link);

		if (err == -EBUSY)
			log_debug("%s: the unwind table queue is full; frame pointers for now",
				  path);
		return err;
	}
	d.path = strdup(path);
	if (!d.path) {
		close(fd);
		return -ENOMEM;
	}
	unwind_store_budget(&l->store, &budget);
	budget = cfi_budget_for_file(&budget, fd);
	d.err = unwind_file_build(elf_open_fd(fd), &budget, &d.b);
	close(fd);
	finish(l, &d);
	return 0;
}

/* Publish what the worker finished. */
static int collect(struct unwind_loader *l)
{
	struct table_done *done;
	size_t n;

	unpark(l);
	publish_again(l);
	if (!l->worker.started)
		return 0;
	table_worker_take(&l->worker, &done, &n);
	for (size_t i = 0; i < n; i++)
		finish(l, &done[i]);
	free(done);
	return 0;
}

int unwind_loader_wake_fd(const struct unwind_loader *l)
{
	return l->worker.started ? l->worker.wake_fd : -1;
}

bool unwind_loader_settle(struct unwind_loader *l, int timeout_ms)
{
	bool idle = !l->worker.started || table_worker_wait_idle(&l->worker, timeout_ms);

	collect(l);
	return idle;
}

void unwind_loader_use_cache(struct unwind_loader *l, const char *state_dir, uint64_t bytes)
{
	if (!l->worker.started ||
	    table_cache_open(&l->cache, state_dir ? state_dir : TABLE_CACHE_DEFAULT_STATE, bytes))
		return;
	l->worker.cache = &l->cache;
}

/* What the cache saved, read under the worker's lock (its thread counts). */
static void log_cache_summary(const struct unwind_loader *l)
{
	struct table_worker *w = (struct table_worker *)&l->worker;
	size_t cached, built;
	uint64_t cached_ns, built_ns;

	if (!w->started)
		return;
	pthread_mutex_lock(&w->lock);
	cached = w->from_cache;
	built = w->built;
	cached_ns = w->from_cache_ns;
	built_ns = w->built_ns;
	pthread_mutex_unlock(&w->lock);
	if (l->cache.dir < 0) {
		log_debug("unwind tables: %zu built (%.1f ms of CPU); no cache", built,
			  (double)built_ns / 1e6);
		return;
	}
	log_debug("unwind tables: %zu from the cache (%.1f ms of CPU), %zu built (%.1f ms of "
		  "CPU); %zu written to the cache, %zu bad entries removed",
		  cached, (double)cached_ns / 1e6, built, (double)built_ns / 1e6,
		  __atomic_load_n(&l->cache.written, __ATOMIC_RELAXED),
		  __atomic_load_n(&l->cache.rejected, __ATOMIC_RELAXED));
}

void unwind_loader_store_line(const struct unwind_loader *l, char *buf, size_t size)
{
	const struct unwind_store *s = &l->store;
	const double mib = 1024.0 * 1024.0;
	size_t tables = 0, rows = 0;

	for (size_t i = 0; i < s->files.len; i++)
		if (s->files.data[i].status == UNWIND_FILE_LOADED) {
			tables++;
			rows += s->files.data[i].nrows;
		}
	snprintf(buf, size,
		 "%.1f of %.0f MiB (%.2fM rows in %zu tables, %zu rules); %zu evicted, %zu "
		 "refused",
		 (double)(s->slots.len * sizeof(union unwind_slot) +
			  s->rules.len * sizeof(struct unwind_rule)) /
			 mib,
		 (double)(l->slots_bytes + l->rules_bytes) / mib, (double)rows / 1e6, tables,
		 s->rules.len, s->stats.evicted, s->stats.files[UNWIND_FILE_FULL]);
}

void unwind_loader_log_summary(const struct unwind_loader *l)
{
	const struct unwind_store_stats *st = &l->store.stats;

	log_debug("unwind tables: %zu files (%zu with rows, %zu without CFI, %zu past the "
		  "capacity, %zu of them for their rules, %zu over budget), %zu slots of 8 bytes "
		  "(%.1f MiB), %zu rules, built in %.0f ms of CPU, the longest %.1f ms (%s)",
		  l->store.files.len, st->files[UNWIND_FILE_LOADED], st->files[UNWIND_FILE_NO_CFI],
		  st->files[UNWIND_FILE_FULL], st->rules_full, st->files[UNWIND_FILE_OVER_BUDGET],
		  l->store.slots.len,
		  (double)(l->store.slots.len * sizeof(union unwind_slot)) / (1024.0 * 1024.0),
		  l->store.rules.len, (double)st->build_ns / 1e6, (double)st->longest_ns / 1e6,
		  l->longest_path[0] ? l->longest_path : "-");
	log_cache_summary(l);
	log_debug("per-process maps: %zu processes refused an entry, %zu entries given back, "
		  "%zu copies the kernel made for a capped user's child taken back",
		  l->shares.refused, l->shares.evicted, l->shares.taken_back);
}

/*
 * The process's [vdso], when it is the image we map ourselves (same size:
 * a 32-bit process maps another): its frames (clock_gettime & co., signal
 * returns on some architectures) are unwound with the vDSO's own CFI.
 */
static void add_vdso(struct unwind_loader *l, struct unwind_proc *proc, const struct map_entry *e)
{
	const struct unwind_store_file *f;
	size_t size;

	f = unwind_store_add_vdso(&l->store, &size);
	if (!f || f->status != UNWIND_FILE_LOADED || e->end - e->start != size ||
	    proc->n >= UNWIND_MAX_MAPPINGS)
		return;
	if (!l->vdso_published) {
		publish_file(l, f);
		l->vdso_published = true;
	}
	proc->m[proc->n++] = (struct unwind_mapping){
		.start = e->start,
		.end = e->end,
		.pgoff_bytes = 0,
		.file = f->key,
	};
}

/* Entries left for anonymous executable mappings once every file mapping has one. */
static size_t anon_exec_room(const map_entries_t *maps)
{
	size_t files = 0;

	for (size_t i = 0; i < maps->len; i++)
		files += maps->data[i].executable &&
			 (maps->data[i].inode || !strcmp(maps->data[i].path, "[vdso]"));
	return files < UNWIND_MAX_MAPPINGS ? UNWIND_MAX_MAPPINGS - files : 0;
}

int unwind_loader_add_process(struct unwind_loader *l, uint32_t pid)
{
	map_entries_t maps = { 0 };
	int err = proc_maps_read("/proc", (pid_t)pid, &maps);
	struct unwind_proc *proc = l->proc;
	size_t anon_room;
	uint32_t uid;

	if (err)
		return err == -ENOMEM ? err : 0; /* gone, or not ours to read: its frames use FP */
	/*
	 * The user the process's share of every per-user budget is taken from
	 * (its rows, its map entries, its code objects): a subordinate uid
	 * counts as its owner's. The one place it is computed.
	 */
	if (proc_shares_user(&l->shares, pid, &uid)) {
		map_entries_free(&maps);
		return 0; /* gone */
	}
	proc->n = 0;
	anon_room = anon_exec_room(&maps);
	for (size_t i = 0; i < maps.len && !err; i++) {
		const struct map_entry *e = &maps.data[i];

		if (e->executable && !e->inode && !strcmp(e->path, "[vdso]")) {
			add_vdso(l, proc, e);
			continue;
		}
		/*
		 * Anonymous executable memory (a JVM's code cache, V8's code
		 * space): no file, no table, frame pointers. Entered with the
		 * file key 0 (in unwind_no_table: never a stack copy) so that
		 * the walk knows it at once; unknown, every sample in JIT code
		 * asked bpf_find_vma (some 6 us a sample: a JVM's or node's
		 * sample cost 4-5 times a native one, bench/runtimes.sh). Only
		 * in the room the files leave.
		 */
		if (e->executable && !e->inode && anon_room && proc->n < UNWIND_MAX_MAPPINGS) {
			anon_room--;
			proc->m[proc->n++] =
				(struct unwind_mapping){ .start = e->start, .end = e->end };
			continue;
		}
		if (!e->executable || !e->inode)
			continue;
		/* Sorted by start, as /proc writes them; past the limit, frames use FP. */
		if (proc->n < UNWIND_MAX_MAPPINGS)
			proc->m[proc->n++] = (struct unwind_mapping){
				.start = e->start,
				.end = e->end,
				.pgoff_bytes = e->pgoff,
				.file = { unwind_kernel_dev(major(e->dev), minor(e->dev)),
					  e->inode },
			};
		if (!unwind_store_add_mapping(&l->store, pid, uid, e) && errno == ENOMEM)
			err = -ENOMEM;
	}
	if (!err && l->py)
		err = python_loader_process(l->py, pid, uid, &maps);
	if (!err && l->php)
		err = php_loader_process(l->php, pid, uid, &maps);
	if (!err && l->rb)
		err = ruby_loader_process(l->rb, pid, uid, &maps);
	if (!err && l->rt)
		err = rt_loader_process(l->rt, pid, uid, &maps);
	map_entries_free(&maps);
	if (err)
		return err;
	/*
	 * Rows and files first: the unwinder never finds a mapping whose file it
	 * cannot read. Refused (its user holds its share): FP until sampled.
	 */
	err = proc_shares_publish(&l->shares, PROC_SHARE_UNWIND, pid, uid, proc);
	if (err > 0)
		l->unpublished++;
	return err < 0 ? err : 0;
}

const struct unwind_mapping *unwind_proc_mapping_of(const struct unwind_proc *p, uint64_t pc)
{
	/* The BPF map's copy is read whole: a count past the array is not trusted. */
	size_t lo = COUNT_LE_BY(p->m, p->n < UNWIND_MAX_MAPPINGS ? p->n : UNWIND_MAX_MAPPINGS,
				start, pc);

	return lo && pc < p->m[lo - 1].end ? &p->m[lo - 1] : NULL;
}

int unwind_loader_mark(struct unwind_loader *l, uint32_t pid)
{
	for (size_t i = 0; i < l->dirty.len; i++)
		if (l->dirty.data[i] == pid)
			return 0;
	return vec_push(&l->dirty, pid) ? -ENOMEM : 0;
}

int unwind_loader_refresh(struct unwind_loader *l)
{
	int err = collect(l);

	proc_shares_tick(&l->shares);
	for (size_t i = 0; i < l->dirty.len && !err; i++)
		err = unwind_loader_add_process(l, l->dirty.data[i]);
	l->dirty.len = 0;
	if (l->py)
		python_loader_flush(l->py);
	if (l->php)
		php_loader_flush(l->php);
	if (l->rb)
		ruby_loader_flush(l->rb);
	if (!err && l->rt)
		err = rt_loader_refresh(l->rt);
	return err;
}

int unwind_loader_forked(struct unwind_loader *l, uint32_t parent, uint32_t child)
{
	/*
	 * A parent not read yet (it exec'd and forked within one drain) gave
	 * its child nothing in the kernel either: read the child too.
	 */
	for (size_t i = 0; i < l->dirty.len; i++)
		if (l->dirty.data[i] == parent)
			return unwind_loader_mark(l, child);
	if (proc_shares_forked(&l->shares, parent, child))
		return -ENOMEM;
	if (l->php && php_loader_forked(l->php, parent, child))
		return -ENOMEM;
	if (l->rb) {
		uint32_t uid;

		if (!proc_shares_user(&l->shares, child, &uid) &&
		    ruby_loader_forked(l->rb, parent, uid, child))
			return -ENOMEM;
	}
	return l->py ? python_loader_forked(l->py, parent, child) : 0;
}

/*
 * With stack copies, an exited process's mappings are kept a while: its
 * last samples' copies are joined at the next drain, after its exit.
 */
static void keep_gone(struct unwind_loader *l, uint32_t pid)
{
	struct unwind_proc_copy *c = &l->gone[l->gone_next++ % UNWIND_LOADER_GONE];

	if (l->no_table_fd < 0 || (!c->proc && !(c->proc = malloc(sizeof(*c->proc)))))
		return;
	c->pid = pid;
	c->has = !bpf_map_lookup_elem(l->procs_fd, &pid, c->proc);
}

const struct unwind_proc *unwind_loader_proc_now(struct unwind_loader *l, uint32_t pid,
						 struct unwind_proc *scratch)
{
	if (!bpf_map_lookup_elem(l->procs_fd, &pid, scratch))
		return scratch;
	for (size_t i = 0; i < UNWIND_LOADER_GONE; i++)
		if (l->gone[i].proc && l->gone[i].has && l->gone[i].pid == pid)
			return l->gone[i].proc;
	return NULL;
}

void unwind_loader_forget(struct unwind_loader *l, uint32_t pid)
{
	keep_gone(l, pid);
	proc_shares_exited(&l->shares, pid);
	if (l->py)
		python_loader_exited(l->py, pid);
	if (l->php)
		php_loader_exited(l->php, pid);
	if (l->rb)
		ruby_loader_exited(l->rb, pid);
	if (l->rt)
		rt_loader_exited(l->rt, pid);
}

int unwind_loader_add_all(struct unwind_loader *l)
{
	struct dirent *de;
	DIR *d = opendir("/proc");
	int err = 0;

	if (!d)
		return -errno;
	while (!err && (de = readdir(d))) {
		char *end;
		unsigned long pid = strtoul(de->d_name, &end, 10);

		if (*end || !pid)
			continue;
		err = unwind_loader_add_process(l, (uint32_t)pid);
	}
	closedir(d);
	return err;
}
