/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The user a uid belongs to. /etc/subuid gives a user ranges of
 * subordinate uids (65,536 each, for the user namespaces of rootless
 * containers: podman, newuidmap), and the user's processes may run under
 * any of them. Whatever is shared out per user (connections to a view,
 * the per-process BPF maps, the unwind rows, the Python code-object
 * cache) counts those uids as their owner's: else each would bring a
 * share more. Only accounting folds: the uid a profile shows is the
 * process's own.
 *
 * The file is root's word only when root's (or ours, for tests and an
 * unprivileged `view`) and writable by no one else; what is read of it is
 * bounded (lines, their length, the ranges kept).
 */
#ifndef BPFPROF_UTIL_UID_OWNER_H
#define BPFPROF_UTIL_UID_OWNER_H

#include <stdint.h>

/* Ranges kept, at most; lines read, at most (a longer one is skipped, and counts per piece). */
#define UID_OWNER_RANGES    256
#define UID_OWNER_LINES	    4096
#define UID_OWNER_LINE_SIZE 512

struct uid_owners {
	unsigned n;
	struct uid_range {
		uint32_t owner, first, count; /* [first, first + count) are owner's */
	} ranges[UID_OWNER_RANGES];
};

/*
 * Read the ranges of `path`; NULL: $BPFPROF_TEST_SUBUID (tests: a file in
 * place of the machine's), else /etc/subuid. "NAME_OR_UID:FIRST:COUNT"
 * lines; malformed ones, names that are no user, and root's ranges (its
 * system containers' uids stay users of their own: folded into root, whom
 * no share limits, they would escape theirs) are skipped. A file
 * missing, unreadable or not to be trusted gives no ranges (every uid is
 * its own user). The number of ranges kept.
 */
unsigned uid_owners_read(struct uid_owners *o, const char *path);

/* The user `uid` belongs to: its own, or the owner of the range it is in. */
uint32_t uid_owner_of(const struct uid_owners *o, uint32_t uid);

#endif
