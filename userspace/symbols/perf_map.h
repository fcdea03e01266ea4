/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * JIT symbols from perf map files, /tmp/perf-PID.map: text lines
 *
 *   START SIZE name of the symbol
 *
 * with START and SIZE in hex (0x optional), written by node
 * --perf-basic-prof, JVM agents and CPython's perf trampoline
 * (python -X perf). The runtime appends while it runs, and code can be
 * re-jitted at an address that already has an entry: the later line wins.
 */
#ifndef BPFPROF_PERF_MAP_H
#define BPFPROF_PERF_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct perf_map;

/*
 * Open the perf map of process `pid` as the process itself sees it:
 * PROC/PID/root/tmp/perf-NSPID.map, NSPID being the pid inside the
 * process's pid namespace (last field of "NSpid:" in PROC/PID/status).
 * Only when the process shares our mount namespace (PROC/PID/ns/mnt reads
 * as PROC/self/ns/mnt) is /tmp/perf-PID.map tried too, so a container's map
 * is never confused with a host file of the same name. `proc_root` is
 * normally "/proc". The file is read at once and stays open, so that it can
 * be read again after the process has exited.
 * Returns NULL with errno set: ENOENT when the process or its map does not
 * exist, EINVAL when the path is not a regular file, ENOMEM, or the error
 * from open or read.
 */
struct perf_map *perf_map_open(const char *proc_root, pid_t pid);
/* A map already open as `fd` (taken over: closed by perf_map_free, or on failure). */
struct perf_map *perf_map_open_fd(int fd);
/*
 * The same, charged to the user `owner` (its process's uid): each user has
 * a share of the limits of all maps and a budget of bytes read a second
 * (perf_map_limits). PERF_MAP_NO_OWNER: an account of its own, shared by
 * every map opened without one.
 */
#define PERF_MAP_NO_OWNER UINT32_MAX
struct perf_map *perf_map_open_fd_of(int fd, uint32_t owner);
/*
 * A jitdump file (jitdump.h) open as `fd`, taken over the same way: its
 * code loads and moves become entries as a map's lines do, newest winning,
 * and it is read further as it grows. Nothing is read before the first
 * lookup (or perf_map_refresh). A file that is no jitdump, or turns
 * corrupt, is read as far as it is whole (perf_map_capped says "format").
 */
struct perf_map *perf_map_open_jitdump_fd(int fd);
struct perf_map *perf_map_open_jitdump_fd_of(int fd, uint32_t owner);

/* The same, with the host's /tmp at `host_tmp` (tests point it at a temp dir). */
struct perf_map *perf_map_open_at(const char *proc_root, const char *host_tmp, pid_t pid);

/*
 * What opening a process's map needs to know of the process, read while it
 * lives so that a map it writes as it exits (the JVM's DumpPerfMapAtExit)
 * can still be opened, and checked, once PROC/PID is gone.
 */
struct perf_map_site {
	pid_t pid, nspid;
	uid_t uids[4]; /* real, effective, saved, filesystem: who may own its map */
	int nuids;
	int root; /* O_PATH fd of the process's root directory, or -1 */
	bool same_mnt_ns;
};

/*
 * Read the site of `pid` (its root kept open only with keep_root: callers
 * bound how many they hold). 0 or a negative errno (-ENOENT: no such
 * process); close it with perf_map_site_close.
 */
int perf_map_site_read(const char *proc_root, pid_t pid, bool keep_root, struct perf_map_site *out);
void perf_map_site_close(struct perf_map_site *s);
/*
 * perf_map_open_at for a site read before; NULL with errno set, as
 * perf_map_open, and EMEDIUMTYPE for a map on FUSE (see
 * perf_map_refuse_fuse).
 */
struct perf_map *perf_map_open_site(const struct perf_map_site *site, const char *host_tmp);
/*
 * Its first half: the map found and checked, its fd (not read yet) or a
 * negative errno. Finding it may wait on the process owner's file system:
 * jit_maps runs it on a worker with a deadline (jit_open.h).
 */
int perf_map_site_open_fd(const struct perf_map_site *site, const char *host_tmp);
/*
 * -EMEDIUMTYPE when `fd` (O_PATH will do) is on FUSE, whose server, any
 * user's, may never answer a read: a map or jitdump there would hold up
 * whoever reads it. 0, or fstatfs's error.
 */
int perf_map_refuse_fuse(int fd);

/*
 * Parse what was appended since the last read; of a jitdump, some ten
 * thousand records a call at most, so a huge one is read over several
 * refreshes. An incomplete last line is kept until a later refresh
 * completes it. 0 or a negative errno.
 */
int perf_map_refresh(struct perf_map *pm);

/*
 * The symbol containing `addr` (START <= addr < START + SIZE), the newest
 * entry winning where entries overlap; its START in *start_out (may be
 * NULL). NULL when no entry contains `addr`. An address not found makes it
 * refresh first when the file has grown since the last refresh, or that
 * one left some of it to read (one fstat), so late code is found;
 * an address that is found is answered from what was read, so call
 * perf_map_refresh to see code re-jitted over known entries.
 * The name stays valid until perf_map_free.
 */
const char *perf_map_lookup(struct perf_map *pm, uint64_t addr, uint64_t *start_out);

/* Entries read so far (every valid line, overlapped ones included). */
size_t perf_map_entries(const struct perf_map *pm);
/* Lines skipped because they were not "START SIZE name". */
size_t perf_map_bad_lines(const struct perf_map *pm);
/*
 * Bounds on what is read of maps that any user can make as large as they
 * like: per map, the file bytes read, the entries and their name storage;
 * the entries and name storage of one user's maps, and of all open maps
 * together; and the bytes read a second, of one user's maps and of all
 * (token buckets: a burst, then a rate; a map whose user's budget is
 * spent is read further by a later refresh, bad lines counting as good).
 */
struct perf_map_limits {
	uint64_t max_file_bytes;
	size_t max_entries;
	size_t max_name_bytes;
	size_t max_total_entries;
	size_t max_total_name_bytes;
	uint64_t max_jitdump_bytes; /* of a jitdump file, code included (it is skipped) */
	size_t max_user_entries;
	size_t max_user_name_bytes;
	uint64_t user_bytes_per_s, user_bytes_burst;
	uint64_t total_bytes_per_s, total_bytes_burst;
};

/*
 * Which limit stopped the reading of this map ("file bytes", "entries",
 * "name bytes", "entries of its user's maps", "name bytes of its user's
 * maps", "entries of all maps", "name bytes of all maps"), or NULL while it
 * is read whole. Once reached, the map is not read further. A reading
 * budget spent is no such limit: the map is read on later.
 */
const char *perf_map_capped(const struct perf_map *pm);

/* Set the limits (NULL: keep them), returning the old ones in *old (may be NULL); for tests. */
void perf_map_set_limits(const struct perf_map_limits *l, struct perf_map_limits *old);
/* Refill every reading budget to its burst (tests: they set no rate, so that time changes nothing).
 */
void perf_map_refill_budgets(void);

/* Bytes held, for statistics. */
size_t perf_map_bytes(const struct perf_map *pm);

void perf_map_free(struct perf_map *pm);

#endif
