// SPDX-License-Identifier: BSD-2-Clause
#include "peer_limit.h"

#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

/* Not a uid: the key of a connection the kernel cannot name an owner for. */
#define ADDRESS_KEY (1ULL << 32)

void peer_limit_init(struct peer_limit *pl, uid_t viewer, const char *subuid)
{
	memset(pl, 0, sizeof(*pl));
	pl->diag = -1;
	pl->viewer = viewer;
	uid_owners_read(&pl->owners, subuid);
}

void peer_limit_free(struct peer_limit *pl)
{
	if (pl->diag >= 0)
		close(pl->diag);
	pl->diag = -1;
}

static int diag_socket(struct peer_limit *pl)
{
	/* Answers come at once or never: do not let a lookup hold the server's thread. */
	struct timeval tv = { .tv_sec = 0, .tv_usec = 200000 };

	if (pl->diag < 0) {
		pl->diag = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
		if (pl->diag >= 0)
			setsockopt(pl->diag, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	}
	return pl->diag;
}

/* The address bytes and port of an AF_INET or AF_INET6 address. */
static size_t addr_bytes(const struct sockaddr_storage *a, const void **bytes, uint16_t *port)
{
	if (a->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)a;

		*bytes = &in->sin_addr;
		*port = in->sin_port;
		return 4;
	}
	if (a->ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const void *)a;

		*bytes = &in6->sin6_addr;
		*port = in6->sin6_port;
		return 16;
	}
	return 0;
}

/*
 * The owner of the socket at the other end of the connection from `peer`
 * to `local`, when it is a socket of this machine. One exact lookup, not a
 * dump of every socket.
 */
static bool peer_uid(struct peer_limit *pl, const struct sockaddr_storage *local,
		     const struct sockaddr_storage *peer, uid_t *uid)
{
	struct {
		struct nlmsghdr nh;
		struct inet_diag_req_v2 r;
	} req = { 0 };
	union {
		struct nlmsghdr nh;
		char buf[1024];
	} ans;
	const struct inet_diag_msg *m;
	const void *src, *dst;
	uint16_t sport, dport;
	size_t len = addr_bytes(peer, &src, &sport);
	ssize_t n;

	if (!len || peer->ss_family != local->ss_family || !addr_bytes(local, &dst, &dport) ||
	    diag_socket(pl) < 0)
		return false;
	req.nh.nlmsg_len = sizeof(req);
	req.nh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	req.nh.nlmsg_flags = NLM_F_REQUEST;
	req.nh.nlmsg_seq = 1;
	req.r.sdiag_family = (uint8_t)peer->ss_family;
	req.r.sdiag_protocol = IPPROTO_TCP;
	req.r.idiag_states = ~0u;
	/* The client's socket: its own end is the peer's address. */
	req.r.id.idiag_sport = sport;
	req.r.id.idiag_dport = dport;
	memcpy(req.r.id.idiag_src, src, len);
	memcpy(req.r.id.idiag_dst, dst, len);
	req.r.id.idiag_cookie[0] = req.r.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
	/* A reply that came after its lookup gave up would be taken for this one's. */
	while (recv(pl->diag, &ans, sizeof(ans), MSG_DONTWAIT) >= 0)
		;
	if (send(pl->diag, &req, sizeof(req), 0) != (ssize_t)sizeof(req))
		return false;
	n = recv(pl->diag, &ans, sizeof(ans), 0);
	if (n < (ssize_t)(sizeof(ans.nh) + sizeof(*m)) || ans.nh.nlmsg_type != SOCK_DIAG_BY_FAMILY)
		return false;
	m = NLMSG_DATA(&ans.nh);
	/*
	 * The very socket asked for, alive and still held by a process: only
	 * then is its uid its owner's. A socket its process has closed (one
	 * that hung up before accept() is FIN_WAIT2 by then), one in
	 * TIME_WAIT or a half-open request has no file: the kernel says uid
	 * 0, which would be taken for root (issue 37), so inode 0 is no one.
	 */
	if (m->id.idiag_sport != sport || m->id.idiag_dport != dport ||
	    memcmp(m->id.idiag_src, src, len) || !m->idiag_inode ||
	    (m->idiag_state != TCP_ESTABLISHED && m->idiag_state != TCP_CLOSE_WAIT))
		return false;
	*uid = m->idiag_uid;
	return true;
}

/* FNV-1a of the address, for clients on other machines. */
static uint64_t address_key(const struct sockaddr_storage *peer)
{
	const unsigned char *b;
	const void *bytes;
	uint16_t port;
	size_t len = addr_bytes(peer, &bytes, &port);
	uint32_t h = 2166136261u;

	b = bytes;
	for (size_t i = 0; i < len; i++)
		h = (h ^ b[i]) * 16777619u;
	return ADDRESS_KEY | h;
}

unsigned peer_limit_add(struct peer_limit *pl, int fd, bool *owner)
{
	struct sockaddr_storage local, peer;
	socklen_t llen = sizeof(local), plen = sizeof(peer);
	struct peer_slot *free_slot = NULL;
	uint64_t key;
	bool limited = true;
	uid_t uid;

	if (getsockname(fd, (struct sockaddr *)&local, &llen) ||
	    getpeername(fd, (struct sockaddr *)&peer, &plen))
		return 0;
	if (owner)
		*owner = false;
	if (peer_uid(pl, &local, &peer, &uid)) {
		uid = uid_owner_of(&pl->owners, uid);
		key = uid;
		limited = uid != 0 && uid != pl->viewer;
		if (owner)
			*owner = !limited;
	} else {
		key = address_key(&peer);
	}
	for (unsigned i = 0; i < pl->nr_slots; i++) {
		struct peer_slot *s = &pl->slots[i];

		if (s->n && s->key == key) {
			if (limited && s->n >= PEER_MAX_CONNECTIONS)
				return 0;
			s->n++;
			return i + 1;
		}
		if (!s->n && !free_slot)
			free_slot = s;
	}
	if (!free_slot) {
		if (pl->nr_slots == PEER_SLOTS)
			return 0;
		free_slot = &pl->slots[pl->nr_slots++];
	}
	free_slot->key = key;
	free_slot->n = 1;
	return (unsigned)(free_slot - pl->slots) + 1;
}

void peer_limit_remove(struct peer_limit *pl, unsigned slot)
{
	if (slot && slot <= pl->nr_slots && pl->slots[slot - 1].n)
		pl->slots[slot - 1].n--;
}
