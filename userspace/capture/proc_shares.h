/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Who holds the entries of the per-process BPF maps (unwind_procs,
 * py_procs): each has a fixed number of entries, and one user's thousands
 * of processes (sleeping ones cost nothing to start) must not take them
 * all, leaving every other user's programs without CFI and Python frames.
 *
 * A user holds at most a quarter of a map (its share; root's processes
 * are the system's, exempt); a process of a user at its share is admitted
 * only once sampled, in place of that user's least recently sampled one
 * (a sleeping process gives way to a running one). The kernel side copies
 * no entry for such a user's new processes (bpf/unwind.bpf.h:
 * proc_uids_capped), and when a map is three quarters full (the kernel
 * side copied entries before the user was capped), the users past their
 * share give back their least recently sampled entries.
 *
 * Users are real uids, read from /proc/PID/status (a process that makes
 * itself undumpable still has its owner's uid there; a setuid program run
 * by a user is still that user's), folded to the user /etc/subuid gives
 * them to (util/uid_owner.h): a user's rootless containers run under
 * thousands of subordinate uids, each of which would otherwise bring a
 * share more. The kernel side caps by the process's own uid, so a capped
 * owner's subordinate uids seen here (the first PROC_SHARE_RAW_UIDS of
 * each owner, then in turn) are written to proc_uids_capped with it: its
 * containers' forks get no copy either, and a fork burst cannot fill the
 * maps before userspace sees it. A copy the kernel side made anyway (a uid
 * not written) is taken back when the fork is seen here.
 */
#ifndef BPFPROF_CAPTURE_PROC_SHARES_H
#define BPFPROF_CAPTURE_PROC_SHARES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../util/hashmap.h"
#include "../util/uid_owner.h"
#include "../util/vec.h"

enum proc_share_map {
	PROC_SHARE_UNWIND, /* unwind_procs */
	PROC_SHARE_PY,	   /* py_procs */
	PROC_SHARE_RT,	   /* rt_procs */
	PROC_SHARE_PHP,	   /* php_procs */
	PROC_SHARE_RB,	   /* rb_procs */
	PROC_SHARE_MAPS,
};

struct proc_share_entry {
	uint32_t pid, uid;
	uint8_t in;	      /* bit 1 << map: it has an entry there */
	uint8_t refused;      /* bit 1 << map: refused there, read again when sampled */
	uint64_t sampled_at;  /* the tick of its last sample; 0: never sampled */
	uint32_t sampled_sec; /* 1 + the CLOCK_MONOTONIC second of its last sample; 0: none */
};

/*
 * An owner's subordinate uids written to proc_uids_capped with it: at most
 * 4 owners hold their share of each map, so (1 + this) * 4 * PROC_SHARE_MAPS
 * fits the map (bpf/bpfprof_abi.h PROC_CAPPED_UIDS).
 */
#define PROC_SHARE_RAW_UIDS 15

struct proc_share_user {
	uint32_t uid;
	uint8_t capped; /* PROC_CAPPED_* bits as published in proc_uids_capped */
	size_t count[PROC_SHARE_MAPS];
	/* Subordinate uids its processes ran under, capped with it (the kernel caps by them). */
	uint32_t raw[PROC_SHARE_RAW_UIDS];
	uint8_t nraw, next_raw; /* raw[] held; which one a new uid replaces when full */
};

struct proc_shares {
	int fds[PROC_SHARE_MAPS]; /* -1: not in use */
	size_t capacity[PROC_SHARE_MAPS];
	size_t total[PROC_SHARE_MAPS]; /* entries held, as far as we know */
	int capped_fd;		       /* proc_uids_capped */
	VEC(struct proc_share_entry) procs;
	struct hmap pid_index; /* pid -> procs */
	VEC(struct proc_share_user) users;
	struct hmap uid_index; /* uid -> users */
	uint64_t now;	       /* ticks: one per refresh, from 1 */
	size_t refused, evicted;
	size_t taken_back; /* copies the kernel side made for a capped user's child, deleted */
	/* Whose each subordinate uid is: read once per recording (proc_shares_init). */
	struct uid_owners owners;
};

/*
 * capped_fd: the BPF map proc_uids_capped; maps are added with
 * proc_shares_use. Reads /etc/subuid (uid_owners_read).
 */
void proc_shares_init(struct proc_shares *s, int capped_fd);
void proc_shares_free(struct proc_shares *s);
/* The BPF hash map `fd` (tgid -> value) is `which`; its capacity is read from it. */
void proc_shares_use(struct proc_shares *s, enum proc_share_map which, int fd);

/*
 * Give process `pid` of user `uid` its entry `value` in map `which`, or
 * refuse it (see above). 0: published; 1: refused (its frames use frame
 * pointers, or have no Python frames, until it is admitted); -ENOMEM.
 */
int proc_shares_publish(struct proc_shares *s, enum proc_share_map which, uint32_t pid,
			uint32_t uid, const void *value);
/* Its entry in `which` goes. */
void proc_shares_withdraw(struct proc_shares *s, enum proc_share_map which, uint32_t pid);
/* `child` was forked: the kernel side copied `parent`'s entries, unless its user is capped. */
int proc_shares_forked(struct proc_shares *s, uint32_t parent, uint32_t child);
/* The process exited: its entries go, and what is known of it. */
void proc_shares_exited(struct proc_shares *s, uint32_t pid);
/* What proc_shares_sampled tells its caller. */
enum {
	/* Refused an entry since its last sample: the caller reads it again, to be admitted. */
	PROC_SAMPLED_REFUSED = 1,
	/* Its first sample in this second: what a caller does at most once a second per process. */
	PROC_SAMPLED_NEW_SECOND = 2,
	/* Known here: *uid is its user's. */
	PROC_SAMPLED_KNOWN = 4,
};
/*
 * A sample of `pid` came (any thread) at `ts_ns` (CLOCK_MONOTONIC, the
 * sample's own stamp; 0: the caller does nothing once a second with this
 * one, which leaves the second to the next). PROC_SAMPLED_* bits, *uid
 * its user (the one proc_shares_user gave); 0 for a process not known
 * here (one lookup per sample: on every sample's path).
 */
unsigned proc_shares_sampled(struct proc_shares *s, uint32_t pid, uint64_t ts_ns, uint32_t *uid);
/* Once per refresh: the clock of samples, and the users past their share give back. */
void proc_shares_tick(struct proc_shares *s);

/*
 * The user whose share process `pid` takes (and whose uid the callers pass
 * as `uid`): its real uid, folded to its owner. Accounting only: a profile
 * shows the real uid. A subordinate uid is noted as its owner's (capped
 * with it). 0, or -errno when it cannot be read.
 */
int proc_shares_user(struct proc_shares *s, uint32_t pid, uint32_t *uid);
/* The real uid of process `pid` (/proc/PID/status); -errno when it cannot be read. */
int proc_real_uid(uint32_t pid, uint32_t *uid);
/* Every key of a BPF hash map (of `key_size` bytes) into a malloc'd array; its count. */
size_t bpf_hash_keys(int fd, size_t key_size, void **out);

#endif
