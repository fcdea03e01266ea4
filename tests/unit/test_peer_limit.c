// SPDX-License-Identifier: BSD-2-Clause
/*
 * http/peer_limit.c on real loopback connections: the viewer's are not
 * limited, another user's are, to PEER_MAX_CONNECTIONS, and a closed one
 * frees its place; the uids /etc/subuid gives a user count as that user's.
 * A socket's owner is the fsuid that made it, so as root each case makes
 * its client sockets as the uid it needs (setfsuid); as anyone else only
 * the cases with our own uid run. A client that closed before accept()
 * (the kernel then says uid 0) is no one's, not root's (issue 37).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/fsuid.h>
#include <sys/socket.h>
#include <unistd.h>

#include "http/peer_limit.h"
#include "test.h"

#define N (PEER_MAX_CONNECTIONS + 4)

static int listener;
static struct sockaddr_in addr = { .sin_family = AF_INET };

static void listen_on_loopback(void)
{
	socklen_t len = sizeof(addr);

	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(listener >= 0);
	CHECK_EQ_INT(bind(listener, (struct sockaddr *)&addr, sizeof(addr)), 0);
	CHECK_EQ_INT(listen(listener, 2 * N), 0);
	CHECK_EQ_INT(getsockname(listener, (struct sockaddr *)&addr, &len), 0);
}

/* A connection whose client socket `uid` owns: the server's end, the client's in *client. */
static int connect_as(uid_t uid, int *client)
{
	int fd;

	setfsuid(uid);
	*client = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	setfsuid(geteuid());
	CHECK(*client >= 0);
	CHECK_EQ_INT(connect(*client, (struct sockaddr *)&addr, sizeof(addr)), 0);
	fd = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
	CHECK(fd >= 0);
	return fd;
}

/*
 * N connections from uids first, first + step, ...: how many are counted;
 * then one is closed and another counted in its place.
 */
static unsigned count_from(struct peer_limit *pl, uid_t first, uid_t step)
{
	int server[N], client[N];
	unsigned slot[N], counted = 0;

	for (int i = 0; i < N; i++) {
		server[i] = connect_as(first + (uid_t)i * step, &client[i]);
		slot[i] = peer_limit_add(pl, server[i], NULL);
		counted += slot[i] != 0;
	}
	peer_limit_remove(pl, slot[0]);
	slot[0] = 0;
	if (counted < N) {
		int s, c;

		s = connect_as(first, &c);
		slot[0] = peer_limit_add(pl, s, NULL);
		CHECK(slot[0] != 0);
		close(s);
		close(c);
	}
	for (int i = 0; i < N; i++) {
		peer_limit_remove(pl, slot[i]);
		close(server[i]);
		close(client[i]);
	}
	return counted;
}

static void the_viewer_is_not_limited(void)
{
	struct peer_limit pl;

	peer_limit_init(&pl, geteuid(), "/nonexistent");
	CHECK_EQ_INT(count_from(&pl, geteuid(), 0), N);
	peer_limit_free(&pl);
}

static void another_user_is_limited(void)
{
	struct peer_limit pl;
	uid_t other = geteuid() ? geteuid() : 4242;

	/* Not root, our own sockets are another user's to a view of another viewer. */
	peer_limit_init(&pl, other + 1, "/nonexistent");
	CHECK_EQ_INT(count_from(&pl, other, 0), PEER_MAX_CONNECTIONS);
	peer_limit_free(&pl);
}

static void subordinate_uids_are_their_owners(void)
{
	char file[] = "/tmp/bpfprof-subuid-XXXXXX";
	struct peer_limit pl;
	int fd = mkstemp(file);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;

	CHECK(f != NULL);
	if (!f)
		return;
	fprintf(f, "4242:100000:65536\nnobody-such-user-here:300000:65536\nbroken\n");
	fclose(f);
	peer_limit_init(&pl, 1, file);
	unlink(file);
	CHECK_EQ_INT(pl.owners.n, 1);
	/* 100000, 100001, ...: each a uid of its own, all of them 4242's. */
	CHECK_EQ_INT(count_from(&pl, 100000, 1), PEER_MAX_CONNECTIONS);
	/* Outside any range: each uid is its own user. */
	CHECK_EQ_INT(count_from(&pl, 200000, 1), N);
	peer_limit_free(&pl);
}

/*
 * Whether the socket on local port `port` has come to FIN_WAIT2 (05 in
 * /proc/net/tcp): once its FIN is acknowledged (the server's ACK may be
 * delayed) a closed socket is swapped for a timewait one, which sock_diag
 * reports as FIN_WAIT2 with uid 0.
 */
static bool in_fin_wait2(uint16_t port)
{
	FILE *f = fopen("/proc/net/tcp", "re");
	char line[256];
	unsigned lport, state;
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, " %*u: %*x:%x %*x:%*x %x", &lport, &state) == 2 &&
			lport == port && state == 5;
	fclose(f);
	return found;
}

/*
 * The client sends and closes before the server accepts: its socket,
 * FIN_WAIT2 and no process's, is reported with uid 0. Not root's: it is
 * limited, and not the owner.
 */
static void a_client_gone_before_accept_is_no_one(void)
{
	uid_t other = geteuid() ? geteuid() : 4242;
	unsigned slot[N], counted = 0;
	struct peer_limit pl;
	int server[N];

	peer_limit_init(&pl, other + 1, "/nonexistent");
	for (int i = 0; i < N; i++) {
		struct sockaddr_in local;
		socklen_t len = sizeof(local);
		bool owner = true;
		int client;

		setfsuid(other);
		client = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		setfsuid(geteuid());
		CHECK(client >= 0);
		CHECK_EQ_INT(connect(client, (struct sockaddr *)&addr, sizeof(addr)), 0);
		CHECK_EQ_INT(write(client, "GET / HTTP/1.1\r\n\r\n", 18), 18);
		CHECK_EQ_INT(getsockname(client, (struct sockaddr *)&local, &len), 0);
		close(client);
		/* A delayed ACK is 200 ms at most: 5 s is a kernel that never does it. */
		for (int t = 0; t < 500 && !in_fin_wait2(ntohs(local.sin_port)); t++)
			usleep(10000);
		CHECK(in_fin_wait2(ntohs(local.sin_port)));
		server[i] = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
		CHECK(server[i] >= 0);
		slot[i] = peer_limit_add(&pl, server[i], &owner);
		CHECK(!owner);
		counted += slot[i] != 0;
	}
	/* All from 127.0.0.1, one address: PEER_MAX_CONNECTIONS of them. */
	CHECK_EQ_INT(counted, PEER_MAX_CONNECTIONS);
	for (int i = 0; i < N; i++) {
		peer_limit_remove(&pl, slot[i]);
		close(server[i]);
	}
	peer_limit_free(&pl);
}

int main(void)
{
	listen_on_loopback();
	RUN(the_viewer_is_not_limited);
	RUN(another_user_is_limited);
	RUN(a_client_gone_before_accept_is_no_one);
	if (geteuid() == 0)
		RUN(subordinate_uids_are_their_owners);
	close(listener);
	return test_summary();
}
