/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * How many connections each client of `bpfprof view` may hold. Every local
 * user reaches 127.0.0.1 from 127.0.0.1, so a limit per address would let
 * another user's idle connections lock the viewer out (3,000 did). A
 * loopback connection's other end is a socket of this machine, and the
 * kernel knows its owner (sock_diag, as `ss -e` shows it): the viewer and
 * root are not limited, every other user is, to PEER_MAX_CONNECTIONS. A
 * client the kernel does not know (another machine, with --address) is
 * limited by its address, and so is a client whose socket the kernel
 * names no owner for (closed by its process, as when it hung up before
 * accept(): sock_diag then says uid 0, which is not root's word): only an
 * open socket, ESTABLISHED or CLOSE_WAIT, is taken to be its uid's. The
 * uids /etc/subuid gives a user (65,536 each, for their user namespaces)
 * count as that user's: else each would bring PEER_MAX_CONNECTIONS more.
 */
#ifndef BPFPROF_HTTP_PEER_LIMIT_H
#define BPFPROF_HTTP_PEER_LIMIT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../util/uid_owner.h"

/* A browser opens 6 per host; 16 leaves room for a second tab. */
#define PEER_MAX_CONNECTIONS 16
/* Connections counted at once, at most: the server's own limit (file_server.c). */
#define PEER_SLOTS	     512

struct peer_limit {
	int diag; /* NETLINK_SOCK_DIAG socket, -1 until the first connection */
	uid_t viewer;
	struct uid_owners owners; /* /etc/subuid: whose each subordinate uid is */
	unsigned nr_slots;
	struct peer_slot {
		uint64_t key; /* owner's uid, or 1 << 32 | a hash of the address */
		unsigned n;   /* 0: a free slot */
	} slots[PEER_SLOTS];
};

/* Not limited: root and `viewer`. Reads /etc/subuid (`subuid`; NULL: uid_owners_read's). */
void peer_limit_init(struct peer_limit *pl, uid_t viewer, const char *subuid);
void peer_limit_free(struct peer_limit *pl);

/*
 * Count the accepted connection `fd`: its slot + 1 (for peer_limit_remove)
 * when its client may have it, 0 when the client holds too many already
 * or nothing could be counted (the connection is then to be closed).
 * *owner (NULL: not asked) says whether the client is a process of root or
 * of the viewer (the owner) as the kernel knows it: false for other users,
 * and for clients the kernel does not know (other machines).
 */
unsigned peer_limit_add(struct peer_limit *pl, int fd, bool *owner);
void peer_limit_remove(struct peer_limit *pl, unsigned slot);

#endif
