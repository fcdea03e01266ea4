// SPDX-License-Identifier: BSD-2-Clause
/* See proc_shares.h. */
#include "proc_shares.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../bpf/bpfprof_abi.h"
#include "../util/log.h"
#include "../util/uid_owner.h"

static const uint8_t capped_bit[PROC_SHARE_MAPS] = { PROC_CAPPED_UNWIND, PROC_CAPPED_PY,
						     PROC_CAPPED_RT, PROC_CAPPED_PHP, PROC_CAPPED_RB };
/* The maps whose entries the kernel side copies to a forked child (bpfprof.bpf.c, track_fork). */
static const bool copied_at_fork[PROC_SHARE_MAPS] = { true, true, false, false, false };

void proc_shares_init(struct proc_shares *s, int capped_fd)
{
	memset(s, 0, sizeof(*s));
	for (int m = 0; m < PROC_SHARE_MAPS; m++)
		s->fds[m] = -1;
	s->capped_fd = capped_fd;
	s->now = 1;
	uid_owners_read(&s->owners, NULL);
}

void proc_shares_free(struct proc_shares *s)
{
	vec_free(&s->procs);
	vec_free(&s->users);
	hmap_free(&s->pid_index);
	hmap_free(&s->uid_index);
	memset(s, 0, sizeof(*s));
}

void proc_shares_use(struct proc_shares *s, enum proc_share_map which, int fd)
{
	struct bpf_map_info info = { 0 };
	__u32 len = sizeof(info);

	s->fds[which] = fd;
	s->capacity[which] = bpf_obj_get_info_by_fd(fd, &info, &len) ? 16384 : info.max_entries;
}

static size_t share_of(const struct proc_shares *s, int m)
{
	return s->capacity[m] / 4 ? s->capacity[m] / 4 : 1;
}

/* Whether the user holds its share of map m (root's processes are the system's: exempt). */
static bool at_share(const struct proc_shares *s, const struct proc_share_user *u, int m)
{
	return u->uid && u->count[m] >= share_of(s, m);
}

static struct proc_share_entry *entry_of(struct proc_shares *s, uint32_t pid)
{
	uint32_t idx;

	return hmap_get(&s->pid_index, (struct hmap_key){ pid, 0 }, &idx) ? &s->procs.data[idx]
									  : NULL;
}

static struct proc_share_user *user_of(struct proc_shares *s, uint32_t uid)
{
	struct proc_share_user u = { .uid = uid };
	uint32_t idx;

	if (hmap_get(&s->uid_index, (struct hmap_key){ uid, 0 }, &idx))
		return &s->users.data[idx];
	if (vec_push(&s->users, u) ||
	    hmap_put(&s->uid_index, (struct hmap_key){ uid, 0 }, (uint32_t)(s->users.len - 1)))
		return NULL;
	return &vec_last(&s->users);
}

_Static_assert((1 + PROC_SHARE_RAW_UIDS) * 4 * PROC_SHARE_MAPS <= PROC_CAPPED_UIDS,
	       "proc_uids_capped holds every capped owner and its subordinate uids");

/* proc_uids_capped says `bits` of `uid` (0: nothing). 0 or -errno. */
static int write_capped(const struct proc_shares *s, uint32_t uid, uint8_t bits)
{
	return bits ? bpf_map_update_elem(s->capped_fd, &uid, &bits, BPF_ANY)
		    : bpf_map_delete_elem(s->capped_fd, &uid);
}

/* The user is capped in a map when it holds its share. */
static void update_cap(struct proc_shares *s, struct proc_share_user *u)
{
	uint8_t want = 0;

	for (int m = 0; m < PROC_SHARE_MAPS; m++)
		if (s->fds[m] >= 0 && at_share(s, u, m))
			want |= capped_bit[m];
	if (want == u->capped || s->capped_fd < 0)
		return;
	/* At most 4 users hold a quarter of a map each: the capped map has room for them. */
	if (write_capped(s, u->uid, want))
		return;
	/* Its subordinate uids too; one not written has its copies taken back when seen. */
	for (unsigned i = 0; i < u->nraw; i++)
		(void)write_capped(s, u->raw[i], want);
	if (want & ~u->capped)
		log_debug("uid %u holds its share of the per-process maps; its new processes are "
			  "admitted when sampled",
			  u->uid);
	u->capped = want;
}

/*
 * Process uid `raw` takes owner's share: a subordinate uid is remembered
 * with its owner, and capped now if the owner is. Bounded per owner: past
 * PROC_SHARE_RAW_UIDS, a new uid takes the place of the one noted longest
 * ago (a container that cycles through its uids keeps its live ones capped).
 */
static void note_raw_uid(struct proc_shares *s, uint32_t owner, uint32_t raw)
{
	struct proc_share_user *u;
	unsigned slot;

	if (raw == owner || !(u = user_of(s, owner)))
		return;
	for (unsigned i = 0; i < u->nraw; i++)
		if (u->raw[i] == raw)
			return;
	if (u->nraw < PROC_SHARE_RAW_UIDS) {
		slot = u->nraw++;
	} else {
		slot = u->next_raw;
		u->next_raw = (uint8_t)((u->next_raw + 1) % PROC_SHARE_RAW_UIDS);
		if (u->capped && s->capped_fd >= 0)
			(void)write_capped(s, u->raw[slot], 0);
	}
	u->raw[slot] = raw;
	if (u->capped && s->capped_fd >= 0)
		(void)write_capped(s, raw, u->capped);
}

static void update_caps(struct proc_shares *s)
{
	for (size_t i = 0; i < s->users.len; i++)
		update_cap(s, &s->users.data[i]);
}

static void count(struct proc_shares *s, struct proc_share_entry *e, int m, bool in)
{
	struct proc_share_user *u = user_of(s, e->uid);
	uint8_t bit = (uint8_t)(1u << m);

	if (!!(e->in & bit) == in)
		return;
	e->in ^= bit;
	if (in) {
		s->total[m]++;
		if (u)
			u->count[m]++;
	} else {
		if (s->total[m])
			s->total[m]--;
		if (u && u->count[m])
			u->count[m]--;
	}
}

/* What is known of `pid`, made with user `uid` when new; NULL: ENOMEM. */
static struct proc_share_entry *entry_make(struct proc_shares *s, uint32_t pid, uint32_t uid)
{
	struct proc_share_entry e = { .pid = pid, .uid = uid }, *old = entry_of(s, pid);

	if (old) {
		if (old->uid != uid) {
			/* Another user now (setuid, or another process under the pid): recounted.
			 */
			uint8_t in = old->in;

			for (int m = 0; m < PROC_SHARE_MAPS; m++)
				count(s, old, m, false);
			old->uid = uid;
			for (int m = 0; m < PROC_SHARE_MAPS; m++)
				if (in & (1u << m))
					count(s, old, m, true);
		}
		return old;
	}
	if (vec_push(&s->procs, e) ||
	    hmap_put(&s->pid_index, (struct hmap_key){ pid, 0 }, (uint32_t)(s->procs.len - 1)))
		return NULL;
	return &vec_last(&s->procs);
}

static void entry_drop(struct proc_shares *s, struct proc_share_entry *e)
{
	size_t idx = (size_t)(e - s->procs.data);
	uint32_t pid = e->pid;

	for (int m = 0; m < PROC_SHARE_MAPS; m++)
		count(s, e, m, false);
	if (idx != s->procs.len - 1) {
		*e = vec_last(&s->procs);
		(void)hmap_put(&s->pid_index, (struct hmap_key){ e->pid, 0 }, (uint32_t)idx);
	}
	s->procs.len--;
	hmap_del(&s->pid_index, (struct hmap_key){ pid, 0 });
}

static void evict(struct proc_shares *s, struct proc_share_entry *e, int m)
{
	bpf_map_delete_elem(s->fds[m], &e->pid);
	count(s, e, m, false);
	e->refused |= (uint8_t)(1u << m);
	s->evicted++;
}

/* The user's entry in map m sampled least recently, and before `before`; NULL: none. */
static struct proc_share_entry *least_sampled(struct proc_shares *s, uint32_t uid, int m,
					      uint64_t before)
{
	struct proc_share_entry *best = NULL;

	for (size_t i = 0; i < s->procs.len; i++) {
		struct proc_share_entry *e = &s->procs.data[i];

		if (e->uid == uid && (e->in & (1u << m)) && e->sampled_at < before &&
		    (!best || e->sampled_at < best->sampled_at))
			best = e;
	}
	return best;
}

static int by_sampled_at(const void *a, const void *b)
{
	uint64_t x = (*(struct proc_share_entry *const *)a)->sampled_at;
	uint64_t y = (*(struct proc_share_entry *const *)b)->sampled_at;

	return x < y ? -1 : x > y;
}

/* Users past their share of map m give back their least recently sampled entries. */
static void rebalance(struct proc_shares *s, int m)
{
	size_t share = share_of(s, m);

	for (size_t i = 0; i < s->users.len; i++) {
		struct proc_share_user *u = &s->users.data[i];
		struct proc_share_entry **held;
		size_t n = 0, over;

		if (!u->uid || u->count[m] <= share)
			continue;
		held = malloc(u->count[m] * sizeof(*held));
		if (!held)
			return;
		for (size_t j = 0; j < s->procs.len && n < u->count[m]; j++)
			if (s->procs.data[j].uid == u->uid && (s->procs.data[j].in & (1u << m)))
				held[n++] = &s->procs.data[j];
		qsort(held, n, sizeof(*held), by_sampled_at);
		over = n > share ? n - share : 0;
		/* Said once per rebalance: how many a user gave back. */
		log_debug("uid %u held %zu of %zu entries of a per-process map; %zu given back",
			  u->uid, n, s->capacity[m], over);
		for (size_t j = 0; j < over; j++)
			evict(s, held[j], m);
		free(held);
	}
}

/*
 * The map is full, past what we counted (the kernel side copied entries on
 * forks we did not see as such): count again from its keys.
 */
static void recount(struct proc_shares *s, int m)
{
	uint32_t *pids = NULL;
	size_t n = bpf_hash_keys(s->fds[m], sizeof(*pids), (void **)&pids);

	for (size_t i = 0; i < s->procs.len; i++)
		count(s, &s->procs.data[i], m, false);
	for (size_t i = 0; i < n; i++) {
		struct proc_share_entry *e = entry_of(s, pids[i]);
		uint32_t uid;

		if (!e) {
			if (proc_shares_user(s, pids[i], &uid)) {
				bpf_map_delete_elem(s->fds[m], &pids[i]); /* gone */
				continue;
			}
			e = entry_make(s, pids[i], uid);
		}
		if (e)
			count(s, e, m, true);
	}
	free(pids);
}

int proc_shares_publish(struct proc_shares *s, enum proc_share_map which, uint32_t pid,
			uint32_t uid, const void *value)
{
	uint8_t bit = (uint8_t)(1u << which);
	struct proc_share_entry *e = entry_make(s, pid, uid);
	struct proc_share_user *u = user_of(s, uid);

	if (!e || !u)
		return -ENOMEM;
	if (!(e->in & bit) && at_share(s, u, which)) {
		/* At its share: a sampled process takes the place of one sampled less recently. */
		struct proc_share_entry *give =
			e->sampled_at ? least_sampled(s, uid, which, e->sampled_at) : NULL;

		if (!give) {
			/*
			 * Nor a copy the kernel side made on a fork: it looks a
			 * subordinate uid up, not its capped owner.
			 */
			bpf_map_delete_elem(s->fds[which], &pid);
			e->refused |= bit;
			s->refused++;
			update_cap(s, u);
			return 1;
		}
		evict(s, give, which);
		e = entry_of(s, pid); /* evict moves no entry, but be plain about it */
	}
	if (bpf_map_update_elem(s->fds[which], &pid, value, BPF_ANY)) {
		if (errno != E2BIG)
			return 1;
		/* Full: count what is there, take back what is past the shares, once more. */
		recount(s, which);
		rebalance(s, which);
		e = entry_of(s, pid);
		u = user_of(s, uid);
		if (!e || !u)
			return -ENOMEM;
		if (at_share(s, u, which) ||
		    bpf_map_update_elem(s->fds[which], &pid, value, BPF_ANY)) {
			e->refused |= bit;
			s->refused++;
			update_caps(s);
			return 1;
		}
	}
	count(s, e, which, true);
	e->refused &= (uint8_t)~bit;
	update_cap(s, u);
	return 0;
}

void proc_shares_withdraw(struct proc_shares *s, enum proc_share_map which, uint32_t pid)
{
	struct proc_share_entry *e = entry_of(s, pid);

	bpf_map_delete_elem(s->fds[which], &pid);
	if (e) {
		count(s, e, which, false);
		e->refused &= (uint8_t) ~(1u << which);
	}
}

int proc_shares_forked(struct proc_shares *s, uint32_t parent, uint32_t child)
{
	struct proc_share_entry *p = entry_of(s, parent), *c;
	struct proc_share_user *u;
	uint32_t uid;
	uint8_t in;

	if (!p)
		return 0;
	uid = p->uid;
	in = p->in;
	u = user_of(s, uid);
	c = entry_make(s, child, uid);
	if (!c || !u)
		return -ENOMEM;
	for (int m = 0; m < PROC_SHARE_MAPS; m++) {
		if (!(in & (1u << m)) || (c->in & (1u << m)) || !copied_at_fork[m])
			continue;
		if (u->capped & capped_bit[m]) {
			/*
			 * The kernel side looks the child's own uid up: a subordinate
			 * uid of the owner's not written with it (note_raw_uid) got
			 * a copy anyway, which goes, or no share would count it.
			 */
			if (!bpf_map_delete_elem(s->fds[m], &child))
				s->taken_back++;
			c->refused |= (uint8_t)(1u << m);
		} else {
			count(s, c, m, true);
		}
	}
	return 0;
}

void proc_shares_exited(struct proc_shares *s, uint32_t pid)
{
	struct proc_share_entry *e = entry_of(s, pid);

	for (int m = 0; m < PROC_SHARE_MAPS; m++)
		if (s->fds[m] >= 0)
			bpf_map_delete_elem(s->fds[m], &pid);
	if (e)
		entry_drop(s, e);
}

unsigned proc_shares_sampled(struct proc_shares *s, uint32_t pid, uint64_t ts_ns, uint32_t *uid)
{
	struct proc_share_entry *e = entry_of(s, pid);
	uint32_t sec = (uint32_t)(ts_ns / 1000000000ull) + 1;
	unsigned out = PROC_SAMPLED_KNOWN;

	if (!e)
		return 0;
	*uid = e->uid;
	e->sampled_at = s->now;
	if (e->refused)
		out |= PROC_SAMPLED_REFUSED;
	e->refused = 0;
	if (ts_ns && e->sampled_sec != sec) {
		out |= PROC_SAMPLED_NEW_SECOND;
		e->sampled_sec = sec;
	}
	return out;
}

void proc_shares_tick(struct proc_shares *s)
{
	s->now++;
	for (int m = 0; m < PROC_SHARE_MAPS; m++)
		if (s->fds[m] >= 0 && s->total[m] >= s->capacity[m] / 4 * 3)
			rebalance(s, m);
	update_caps(s);
}

int proc_shares_user(struct proc_shares *s, uint32_t pid, uint32_t *uid)
{
	uint32_t raw;
	int err = proc_real_uid(pid, &raw);

	if (err)
		return err;
	*uid = uid_owner_of(&s->owners, raw);
	note_raw_uid(s, *uid, raw);
	return 0;
}

int proc_real_uid(uint32_t pid, uint32_t *uid)
{
	char path[32], buf[2048];
	const char *line;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/status", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	/* "Uid:\treal\teffective\tsaved\tfs": the kernel writes it within the first lines. */
	line = strstr(buf, "\nUid:");
	if (!line || sscanf(line + 5, "%u", uid) != 1)
		return -EIO;
	return 0;
}

size_t bpf_hash_keys(int fd, size_t key_size, void **out)
{
	size_t n = 0, cap = 0;
	unsigned char *keys = NULL, *prev = NULL;

	for (;;) {
		if (n == cap) {
			unsigned char *k = realloc(keys, (cap = cap ? 2 * cap : 256) * key_size);

			if (!k)
				break;
			keys = k;
			prev = n ? keys + (n - 1) * key_size : NULL;
		}
		if (bpf_map_get_next_key(fd, prev, keys + n * key_size))
			break;
		prev = keys + n * key_size;
		n++;
	}
	*out = keys;
	return n;
}
