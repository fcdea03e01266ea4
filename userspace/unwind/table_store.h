/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The unwind tables of every executable file the recording has met, laid
 * out as the BPF unwinder reads them (bpf/bpfprof_abi.h, compact_table.h):
 * one array of 8-byte slots, a run per file (its pages, then its rows two a
 * slot), the rules every file's rows point to, kept once, and an index from
 * a file (device, inode) to its run. Files are added once, whichever process
 * maps them; the array has a fixed capacity (the BPF map's), and a file that
 * does not fit is refused and counted, never half-loaded, or makes room by
 * evicting the tables sampled least recently (unwind_store_evict_for).
 * Room is counted in slots: a share, a file's cap, what compacting wins back.
 */
#ifndef BPFPROF_UNWIND_TABLE_STORE_H
#define BPFPROF_UNWIND_TABLE_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../bpf/bpfprof_abi.h"
#include "compact_table.h"
#include "file_table.h"
#include "slot_alloc.h"
#include "util/hashmap.h"
#include "util/vec.h"

/*
 * What a file was when its table was built: (dev, inode) alone can name
 * another file later (a deleted binary's inode reused, or one rewritten in
 * place), whose frames must not be walked with the old file's rows.
 */
struct unwind_file_id {
	uint64_t size;
	int64_t mtime_ns, ctime_ns;
	/*
	 * Whose share its rows take (not its identity): the user whose process
	 * mapped it first, or root for a system file larger than a share.
	 */
	uint32_t uid;
	/*
	 * The system's (cfi_file_is_system): not held to a user's file cap, and
	 * when larger than a share, not to a user's share either.
	 */
	bool system;
};

/*
 * A user whose samples fell in a file, and when last (CLOCK_MONOTONIC ns;
 * 0: a free stamp): what protects the file's table from other users'
 * evictions (unwind_store_evict_for), whoever pays for its rows.
 */
struct unwind_stamp {
	uint32_t uid;
	uint64_t at;
};

/*
 * The users a file keeps stamps of: a few (a file is run by a handful of
 * users at once); a new one takes the oldest stamp's place.
 */
#define UNWIND_STORE_STAMPS 4

struct unwind_store_file {
	struct unwind_file_key key;
	struct unwind_file_id id;
	struct unwind_file_info info; /* LOADED only */
	uint32_t nslots, nrows;	      /* LOADED only: its run's slots, its rows */
	uint8_t status;		      /* enum unwind_file_status */
	/*
	 * Identity changes of this (dev, ino) in the minute from changes_at:
	 * past UNWIND_STORE_MAX_CHANGES the file is not built again (churning,
	 * status OVER_BUDGET: frame pointers) until the minute is over.
	 */
	bool churning;
	bool retry; /* PENDING, but its build was lost: handed over again when next met */
	/*
	 * FULL: the slots its table needs (from the build refused). A process of
	 * a user with room for them that maps it takes it (see admit): a file
	 * refused for its first user's share is not kept from everyone else.
	 */
	uint32_t want_slots;
	/*
	 * FULL for its rules (want_slots set too): the rule room it needs, one
	 * more than its payer had when refused. A user with that room who maps
	 * it takes it; without, it is not built again.
	 */
	uint32_t want_rules;
	/*
	 * FULL: its table was evicted for another's (want_slots its size). The
	 * next process to map it, or a sample in it, queues it again.
	 */
	bool evicted;
	/* CLOCK_MONOTONIC ns its table was stored (LOADED): the oldest never sampled go first. */
	uint64_t loaded_at;
	/*
	 * The user whose process asked for its table (LOADED; id.uid is the
	 * payer, root for a system file larger than a share): whose tables
	 * just built are pinned, a share at most (see unwind_store_evict_for).
	 */
	uint32_t loaded_by;
	/* CLOCK_MONOTONIC ns of the last sample with a user PC in it; 0: never sampled. */
	uint64_t sampled_at;
	/* Who sampled it, and when (see unwind_stamp). */
	struct unwind_stamp stamps[UNWIND_STORE_STAMPS];
	/*
	 * FULL: CLOCK_MONOTONIC ns a sample last asked whether evicting makes
	 * it room (a search of every table: at most every UNWIND_STORE_ASK_NS).
	 */
	uint64_t asked_at;
	/*
	 * CLOCK_MONOTONIC ns its rows first went to the BPF maps (0: never):
	 * a sample before it met the file without a table (capture/unwind_misses.h).
	 */
	uint64_t published_at;
	uint32_t changes;
	uint64_t changes_at; /* CLOCK_MONOTONIC, ns */
};

#define UNWIND_STORE_MAX_CHANGES       4
#define UNWIND_STORE_CHANGES_WINDOW_NS (60ull * 1000000000ull)

struct unwind_store_stats {
	size_t files[UNWIND_FILE_STATUSES]; /* by status, when built */
	uint64_t build_ns;		    /* CPU time spent building tables */
	uint64_t longest_ns;		    /* of the file that took longest */
	size_t rules_full;		    /* FULL for want of room for their rules */
	size_t evicted; /* tables evicted for others' (unwind_store_evict_for) */
};

/*
 * The hand-over of a file to build elsewhere (capture/table_worker): `fd`
 * (the callee's to close) was opened through `link` (/proc/PID/map_files/..)
 * and is mapped as `path` (for logs); `stale` when the entry had a table of
 * another file under the same (dev, inode), whose rows must no longer be
 * used. 0, or -errno when it was not taken (the entry is queued again the
 * next time a process maps the file; frame pointers meanwhile).
 */
typedef int (*unwind_defer_fn)(void *ctx, const struct unwind_store_file *f, int fd,
			       const char *path, const char *link, bool stale);

struct unwind_store {
	/*
	 * In the caller's buffer when one was given (the BPF array, mapped),
	 * never moved: room for max_slots (cap), of which `len` are held by
	 * tables (LOADED), each in an extent of `alloc`.
	 */
	VEC(union unwind_slot) slots;
	size_t max_slots;
	struct slot_alloc alloc;
	/*
	 * Every file's rules (the BPF rules array once unwind_store_rules_in),
	 * built again when the store is compacted from the tables kept (their
	 * rows remapped): only then are rules given back, so with owner_shares the rules a
	 * user's files add are bounded like its slots: a quarter each, half for
	 * all users (root's, the system's large files, exempt), besides
	 * COMPACT_FILE_MAX_RULES a file. A user's files that want distinct
	 * rules by the thousand (crafted: real files use hundreds) cannot leave
	 * the system's without room.
	 */
	struct compact_rules rules;
	struct hmap owner_rules; /* uid -> rules its files added */
	size_t user_rules;	 /* rules added by users' files, root's aside */
	bool slots_external;
	/*
	 * Slots by the user whose process first mapped their file (uid -> slots
	 * of its tables stored), for unwind_store_share_by_owner.
	 */
	struct hmap owner_slots;
	/*
	 * The BPF file map's entries (a LOADED table holds one): at most
	 * max_files in all (0: no bound), a quarter for each user's tables (by
	 * payer, as owner_slots; root's exempt), so that one user's thousands
	 * of tiny files, each far below its share of slots, cannot take them
	 * all and leave everyone else's tables unpublished.
	 */
	size_t max_files, loaded_tables;
	struct hmap owner_files; /* uid -> its LOADED tables */
	bool owner_shares; /* the shares and a file's cap apply (unwind_store_share_by_owner) */
	VEC(struct unwind_store_file) files;
	struct hmap index; /* (dev, ino) -> index in files */
	size_t vdso_size;  /* of our [vdso] mapping, once its table was added */
	struct unwind_store_stats stats;
	/*
	 * Set: files met through unwind_store_add_mapping are PENDING and handed
	 * to `defer`, to come back through unwind_store_complete. NULL: built at once.
	 */
	unwind_defer_fn defer;
	void *defer_ctx;
};

/*
 * At most max_slots slots, written straight into `slots` (room for
 * max_slots, the caller's) or, when NULL, into memory of the store's own;
 * the rules into memory of its own (unwind_store_rules_in: the caller's).
 * Without memory for the rules, every file is FULL.
 */
void unwind_store_init(struct unwind_store *s, union unwind_slot *slots, size_t max_slots);
/*
 * From now on the rules are written into `rules` (room for max, the
 * caller's: the BPF array, mapped), starting again from NONE: those of
 * before (and the memory unwind_store_init took for them) are dropped, so
 * it is called before any file is added. 0 or -ENOMEM.
 */
int unwind_store_rules_in(struct unwind_store *s, struct unwind_rule *rules, size_t max);
/* The compact view of a LOADED file's table, where the unwinder reads it. */
struct compact_view unwind_store_view(const struct unwind_store *s,
				      const struct unwind_store_file *f);
void unwind_store_free(struct unwind_store *s);
/*
 * From now on, a file a user may change takes at most a quarter of the
 * slots (its build stops there: unwind_store_budget; past it the file is
 * OVER_BUDGET, frame pointers); a system file (cfi_file_is_system), which
 * no user makes, the whole store. The files a user's processes brought in
 * (charged to the user of the process that mapped each first; root's are
 * the system's and exempt) take at most a quarter in all: another user's
 * flood of files, its own or the system's libraries, leaves room for
 * everyone else's. A system file larger than a quarter would fit no
 * user's share: it is charged to root, held only to the
 * room left. A file refused for one user's share is taken by the next
 * process of a user with room that maps it, charged to that user. The
 * rules its files add are bounded too (unwind_store.rules).
 */
void unwind_store_share_by_owner(struct unwind_store *s);

/*
 * The BPF file map holds `n` entries: the store's LOADED tables are at
 * most that many, each user's (by payer; root's exempt) a quarter.
 */
void unwind_store_limit_files(struct unwind_store *s, size_t n);

/*
 * The slots one file a user may change may take: its build stops past
 * twice as many rows (OVER_BUDGET). A system file's cap is the store's
 * capacity.
 */
size_t unwind_store_file_cap(const struct unwind_store *s);
/*
 * Whether `f`, FULL, was refused because its user's files already take that
 * user's share (not only for lack of room in the store): right after its
 * build was packed, the reason it was refused then.
 */
bool unwind_store_over_share(const struct unwind_store *s, const struct unwind_store_file *f);
/* Why FULL file `f` was refused, in words (the stack-quality line's). */
const char *unwind_store_full_reason(const struct unwind_store *s,
				     const struct unwind_store_file *f);
/*
 * The budget to build this store's files with: cfi_default_budget within
 * the store, a user's files within the file cap (user_file_rows: cfi_budget_pick).
 */
void unwind_store_budget(const struct unwind_store *s, struct cfi_budget *b);

/*
 * A sample of user `uid` (its process's real uid, folded to its owner) had
 * a user PC in file `key` at `now` (CLOCK_MONOTONIC ns): what eviction goes
 * by (unwind_store_evict_for), the file stamped with that user. Called for
 * every sample's files; a user's stamp of a file is renewed at most every
 * UNWIND_STORE_STAMP_NS (the rest return at once). Whether the file wants
 * its table queued again (refused for room, or evicted, and evicting would
 * make it room, asked at most every UNWIND_STORE_ASK_NS a file, in that
 * user's name; or its build was lost): the caller reads the sampling
 * process's mappings again.
 */
bool unwind_store_sampled(struct unwind_store *s, const struct unwind_file_key *key, uint32_t uid,
			  uint64_t now);
#define UNWIND_STORE_STAMP_NS (250ull * 1000000ull)
#define UNWIND_STORE_ASK_NS   (1000ull * 1000000ull)
/* `f`'s rows went to the BPF maps at `now` (the first time counts; see published_at). */
void unwind_store_published(struct unwind_store *s, const struct unwind_store_file *f,
			    uint64_t now);
/*
 * A table sampled less than this before is pinned: never evicted (its
 * process runs now), whoever asks; so is one stored less than this before
 * (its process may not have run yet: built at its exec or mmap), up to a
 * share of each user's (loaded_by) most recent, so that no user keeps
 * the store by loading tables. Two seconds: a running process's files
 * are stamped every UNWIND_STORE_STAMP_NS.
 */
#define UNWIND_STORE_PIN_NS	(2000000000ull)
/* A table never sampled, loaded at least this long ago, goes before any other. */
#define UNWIND_STORE_OLD_NS	(30ull * 1000000000ull)
/*
 * A user's stamp protects a table from other users this long (within that
 * user's protected share, see unwind_store_evict_for).
 */
#define UNWIND_STORE_PROTECT_NS (60ull * 1000000000ull)

/*
 * Entry `f`, just refused for lack of room (FULL: not for its payer's
 * share, its rules or the file cap): when evicting other tables makes it
 * room (or free slots in pieces are enough), they are evicted, their
 * extents in quarantine (slot_alloc.h: free SLOT_QUARANTINE_NS later),
 * and `f` is PENDING again, to be completed again with the same build
 * once they are free (slot_alloc_next_release), or after
 * unwind_store_compact when no free extent holds it (or built when next
 * met, as a retry). Room is slots and, with max_files, an entry of the
 * BPF file map. The order tables go in: those never sampled and loaded
 * UNWIND_STORE_OLD_NS before `now`, oldest first; then the unprotected
 * ones, then those only the requester's own stamps protect, each least
 * recently used first (the later of its last sample and its load, so that
 * a table built at exec time is not older than one sampled a minute ago).
 * The requester is the user whose process asked for `f` (not its payer).
 * Each user's most recently stamped tables (UNWIND_STORE_PROTECT_NS) are
 * protected from every other user, up to a quarter of the slots (root's
 * stamps, and any user's of a table root pays for, as cc1 or libLLVM,
 * past a quarter alone: all), whoever pays for them: a system file
 * another user runs is protected from a user who never runs it, and one
 * an attacker mapped first (charged to it) from that attacker while
 * others run it. Tables sampled in the last UNWIND_STORE_PIN_NS are never
 * evicted, nor those loaded then (each user's most recent, up to a
 * quarter of the slots). An evicted table's entry stays, FULL and
 * `evicted`, its size kept: a process that maps the file again, or a
 * sample in it, queues it again (see readmit and unwind_store_sampled).
 * false: nothing evicted, `f` stays FULL.
 */
bool unwind_store_evict_for(struct unwind_store *s, const struct unwind_store_file *f,
			    uint64_t now);
/*
 * The tables moved down over the free slots, when those are in pieces (no
 * free extent holds a table though there is room), in the order of their
 * slots (each moved once, memmove), their rules built again from what
 * they use (so that the rules of tables gone return, their users' count
 * too). The slots in quarantine are free after it. The rules every row
 * points at are renumbered, those of tables that do not move too: the
 * caller unpublishes every table first, lets a grace pass in which no
 * walk can still read them (or those in quarantine), and publishes those
 * kept after. 0 or -ENOMEM (then what could not be moved is
 * evicted).
 */
int unwind_store_compact(struct unwind_store *s);

/* The kernel's dev_t of a device that /proc/PID/maps writes as "major:minor". */
uint64_t unwind_kernel_dev(unsigned int major, unsigned int minor);

/*
 * Build and add the table of the file open at `fd`, known to the kernel as
 * (dev, ino): the device and inode /proc/PID/maps writes (the superblock's
 * device, which on btrfs is not the st_dev of stat(2)). Returns the file's
 * entry (whatever its status), NULL with errno ENOMEM. A file already met
 * is not read again, unless its size or times changed (another file).
 */
const struct unwind_store_file *unwind_store_add(struct unwind_store *s, uint64_t dev, uint64_t ino,
						 int fd);

struct map_entry;

/*
 * The file that one line of /proc/PID/maps (`e`, of process `pid`) maps
 * executable, added through /proc/PID/map_files (whatever the process's
 * mount namespace; never a FIFO or a device). Its entry; NULL when the line
 * maps no executable file or the file cannot be opened (errno 0), or with
 * errno ENOMEM. `uid`: the process's user, charged with the rows of a file
 * met first here.
 */
const struct unwind_store_file *unwind_store_add_mapping(struct unwind_store *s, uint32_t pid,
							 uint32_t uid, const struct map_entry *e);

/*
 * The vDSO has no file: its key is (0, UNWIND_VDSO_INO), and its table is
 * built from our own [vdso], which every process of our architecture maps
 * (a 32-bit process maps another one, of another size: callers compare).
 */
#define UNWIND_VDSO_INO (~0ull)

/*
 * The vDSO's entry, added from our own image on the first call; *size is
 * the size of our [vdso] mapping. NULL when there is none (errno 0) or with
 * errno ENOMEM.
 */
const struct unwind_store_file *unwind_store_add_vdso(struct unwind_store *s, size_t *size);

/*
 * The table of a PENDING file, built (`b`, whose rows are taken): packed
 * after the rows stored. Its entry, final now; NULL when the entry is no
 * longer waiting for this build (the file changed
 * again: errno 0), or with errno ENOMEM.
 */
const struct unwind_store_file *unwind_store_complete(struct unwind_store *s,
						      const struct unwind_file_key *key,
						      const struct unwind_file_id *id,
						      struct unwind_built *b);

/*
 * The build of a PENDING file was lost (its file could not be opened
 * again, memory ran out): it is handed over again the next time a process
 * maps it, frame pointers until then.
 */
void unwind_store_retry(struct unwind_store *s, const struct unwind_file_key *key,
			const struct unwind_file_id *id);

/*
 * FULL entry `f`, refused for its rules, PENDING again: to be completed
 * with the same build once room was made (the store compacted).
 */
void unwind_store_retry_now(struct unwind_store *s, const struct unwind_store_file *f);

/* The entry of (dev, ino), or NULL when the file was never added. */
const struct unwind_store_file *unwind_store_find(const struct unwind_store *s, uint64_t dev,
						  uint64_t ino);

#endif
