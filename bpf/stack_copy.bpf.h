/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Stack copies (issue 38): a sample whose CFI walk meets a file whose table
 * is still being built (a program's first milliseconds) stops there, and
 * the stack above that frame is copied into the ring (stack_copy_event),
 * for userspace to finish the walk once the table is published
 * (userspace/capture/stack_finish.c). perf's --call-graph dwarf copies on
 * every sample; this copies only where a table is coming, and byte
 * budgets bound the cost, the CPU's and its user's, as does the ring's
 * room: without them, the walk goes on with frame pointers. on_sample
 * only: the sched_switch program contains none of it. Included by
 * bpfprof.bpf.c before unwind.bpf.h, which calls it.
 */
#ifndef BPFPROF_STACK_COPY_BPF_H
#define BPFPROF_STACK_COPY_BPF_H

/* --stack-copy: bytes copied from the frame's SP at most (0: no copies), in records of STACK_COPY_MAX. */
const volatile __u32 stack_copy_bytes = 0;
/*
 * Set by userspace once something finishes the copies (the unwind loader
 * and the finisher opened): before, or without it, a walk never stops for a
 * copy, and goes on with frame pointers (S2/S5 review, finding 7).
 */
__u32 stack_copy_on = 0;
/*
 * Tests and bench only (BPFPROF_TEST_STACK_COPY_ALL): every walk stops at
 * its first frame for a copy, tables or not, to measure what a copy costs.
 */
const volatile bool stack_copy_all = false;
/*
 * The per-CPU budget: bytes a second, and the most it saves up. A copy
 * costs ~1.7 us per 16K: 16 MiB a second is ~1.7 ms of a CPU's second,
 * spent only while a file's table is being built. At 1 MiB/s, make -j2
 * on a busy machine (tables late, many young processes) ran out: 137
 * samples not copied, clang's stacks 93.9% whole. At 4 MiB/s the burst
 * went in clang-16's first 150 ms, and every copy after it took the 4 KiB
 * the budget had saved since the last sample: 6 of 10 of them too short
 * to reach main (clang's stacks 30-60 KiB deep; libclang-cpp's table came
 * 205-400 ms after its first sample in CI).
 */
const volatile __u64 stack_copy_rate = 16u << 20;
const volatile __u64 stack_copy_burst = 16u << 20;
/* A copy needs this much budget at least; it takes what the budget holds, up to --stack-copy. */
#define STACK_COPY_MIN_TOKENS  4096u
/*
 * A user's share of its CPU's budget, rate and burst: each user (real uid
 * but root) draws from a bucket of its own as well as from the CPU's, so
 * that one user with threads in tableless files on every CPU cannot spend
 * the budget everyone else's first stacks need (S2/S5 review, finding 8).
 * Users are spread over STACK_COPY_UID_BUCKETS buckets by a hash of the
 * uid: two users in one bucket share its half.
 */
#define STACK_COPY_UID_SHARE   2u
#define STACK_COPY_UID_BUCKETS 64u

#define STACK_COPY_PAGE 4096u

/*
 * One CPU's copy, built before it goes to the ring (60 KiB: no per-CPU
 * map holds that much), and its budget. `slack`: a page read at any offset
 * the verifier allows (masked to 64 KiB) stays inside the value.
 */
struct stack_copy_bucket {
	__u64 tokens;	 /* bytes that may still be copied */
	__u64 refill_ts; /* when tokens was last refilled */
};

struct stack_copy_scratch {
	struct stack_copy_bucket cpu; /* the CPU's budget */
	__u64 refused;		      /* this sample's walk was refused a copy (counted once) */
	__u64 stopped; /* this sample's walk stopped for a copy: ev's registers are set */
	__u64 allowed; /* bytes the copy may take: the budgets' and the ring's room */
	__u64 bucket;  /* its user's bucket in uid[], plus one (0: root's copy) */
	/*
	 * The users' buckets on this CPU (STACK_COPY_UID_SHARE). A per-CPU
	 * array entry, not a hash map updated from NMI context: the program
	 * does not run nested on its CPU, so each bucket has one writer, and
	 * a lookup or update never allocates, locks or fails.
	 */
	struct stack_copy_bucket uid[STACK_COPY_UID_BUCKETS];
	struct stack_copy_event ev;
	__u8 slack[2 * STACK_COPY_PAGE];
};

/*
 * Indexed by CPU, one entry per possible CPU (resized by userspace): a
 * program does not run nested on its CPU, so each entry has one writer.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct stack_copy_scratch);
} stack_copies SEC(".maps");

static __always_inline struct stack_copy_scratch *stack_copy_scratch(void)
{
	__u32 cpu = bpf_get_smp_processor_id();

	return bpf_map_lookup_elem(&stack_copies, &cpu);
}

/* Before a sample's walk. */
static __always_inline void stack_copy_begin(void)
{
	struct stack_copy_scratch *sc = stack_copy_scratch();

	if (sc)
		sc->refused = sc->stopped = 0;
}

/* `b` refilled at `now` with `rate` bytes a second, up to `burst`. */
static __always_inline void stack_copy_refill(struct stack_copy_bucket *b, __u64 now, __u64 rate,
					      __u64 burst)
{
	__u64 dt = now - b->refill_ts;

	/* Past a full refill, no multiplication that could overflow. */
	if (!b->refill_ts || dt >= 4000000000ull)
		b->tokens = burst;
	else
		b->tokens += dt * rate / 1000000000ull;
	if (b->tokens > burst)
		b->tokens = burst;
	b->refill_ts = now;
}

/* This CPU's ring's room for a copy: what keeps half of it free of copies. */
static __always_inline __u64 stack_copy_ring_room(void)
{
	__u32 cpu = bpf_get_smp_processor_id();
	__u32 idx = nr_rings ? cpu % nr_rings : 0;
	void *ring = bpf_map_lookup_elem(&rings, &idx);
	__u64 half, used;

	if (!ring)
		return 0;
	/*
	 * Copies never fill the ring past half: the other half stays for the
	 * samples and switches of every user (finding 8). The sample that
	 * follows a copy (~2 KiB at most) is the copy's own cost.
	 */
	half = bpf_ringbuf_query(ring, BPF_RB_RING_SIZE) / 2;
	used = bpf_ringbuf_query(ring, BPF_RB_AVAIL_DATA) + sizeof(struct sample_event);
	return used < half ? half - used : 0;
}

/*
 * The CPU's copy record when a copy may be taken now (it may take
 * sc->allowed bytes): the CPU's budget, its user's (both refilled first)
 * and the ring's room each hold one. Else NULL: a walk refused is counted
 * once, and goes on with frame pointers.
 */
static __always_inline struct stack_copy_scratch *stack_copy_budget(void)
{
	struct stack_copy_scratch *sc = stack_copy_scratch();
	struct stack_copy_bucket *ub = NULL;
	struct bpfprof_stats *st;
	__u32 zero = 0, uid, idx = 0;
	__u64 now, allowed;

	if (!sc)
		return NULL;
	now = bpf_ktime_get_ns();
	stack_copy_refill(&sc->cpu, now, stack_copy_rate, stack_copy_burst);
	allowed = sc->cpu.tokens;
	uid = (__u32)bpf_get_current_uid_gid();
	/* Root's copies (the system's own) are bound by the CPU's budget only. */
	if (uid) {
		idx = (uid * 2654435761u >> 26) & (STACK_COPY_UID_BUCKETS - 1);
		ub = &sc->uid[idx];
		stack_copy_refill(ub, now, stack_copy_rate / STACK_COPY_UID_SHARE,
				  stack_copy_burst / STACK_COPY_UID_SHARE);
		if (ub->tokens < allowed)
			allowed = ub->tokens;
	}
	/* The bench copies every stack: what a full ring drops is its measure. */
	if (allowed >= STACK_COPY_MIN_TOKENS && !stack_copy_all) {
		__u64 room = stack_copy_ring_room();

		if (room < allowed)
			allowed = room;
	}
	if (allowed >= STACK_COPY_MIN_TOKENS) {
		sc->allowed = allowed;
		sc->bucket = ub ? idx + 1 : 0;
		return sc;
	}
	if (!sc->refused) {
		sc->refused = 1;
		st = bpf_map_lookup_elem(&stats, &zero);
		if (st)
			st->stack_copy_no_budget++;
	}
	return NULL;
}

struct stack_copy_read {
	struct stack_copy_scratch *sc;
	__u64 sp;
	__u32 len, want;
};

/* One page (or what is left of the copy in it): false once one cannot be read. */
static long stack_copy_page(__u32 i, struct stack_copy_read *r)
{
	__u64 addr = r->sp + r->len;
	__u32 off = r->len & 0xffff, chunk;

	if (r->len >= r->want)
		return 1;
	chunk = STACK_COPY_PAGE - (__u32)(addr & (STACK_COPY_PAGE - 1));
	if (chunk > r->want - r->len)
		chunk = r->want - r->len;
	if (chunk > STACK_COPY_PAGE || !chunk)
		return 1;
	/* An NMI cannot fault a page in: the readable prefix is the copy. */
	if (bpf_probe_read_user(&r->sc->ev.bytes[off], chunk, (void *)addr))
		return 1;
	r->len += chunk;
	return 0;
}

/* `len` copied bytes charged to the budgets that allowed them. */
static __always_inline void stack_copy_charge(struct stack_copy_scratch *sc, __u32 len)
{
	sc->cpu.tokens -= sc->cpu.tokens < len ? sc->cpu.tokens : len;
	if (sc->bucket) {
		struct stack_copy_bucket *ub =
			&sc->uid[(sc->bucket - 1) & (STACK_COPY_UID_BUCKETS - 1)];

		ub->tokens -= ub->tokens < len ? ub->tokens : len;
	}
}

/* The bytes of one record at `offset` of the copy into this CPU's record: how many. */
static __always_inline __u32 stack_copy_read_at(struct stack_copy_scratch *sc, __u32 offset,
						__u32 want)
{
	struct stack_copy_read r = { .sc = sc, .sp = sc->ev.sp + offset };

	r.want = want < STACK_COPY_MAX ? want : STACK_COPY_MAX;
	bpf_loop(STACK_COPY_MAX / STACK_COPY_PAGE + 1, stack_copy_page, &r, 0);
	return r.len;
}

/* The most a copy may take: --stack-copy and the budgets' allowance. */
static __always_inline __u32 stack_copy_total(const struct stack_copy_scratch *sc)
{
	__u64 total = stack_copy_bytes < STACK_COPY_TOTAL_MAX ? stack_copy_bytes
							      : STACK_COPY_TOTAL_MAX;

	return (__u32)(total < sc->allowed ? total : sc->allowed);
}

/*
 * When the walk stopped for a copy: the stack from the frame's SP into
 * this CPU's record (its first STACK_COPY_MAX bytes; stack_copy_submit
 * reads the rest), charged to its budget. false when it did not stop, or
 * not one byte could be read (the walk then ends there, NO_CFI).
 */
static __always_inline bool stack_copy_take(void)
{
	struct stack_copy_scratch *sc = stack_copy_scratch();
	__u32 len;

	if (!sc || !sc->stopped)
		return false;
	len = stack_copy_read_at(sc, 0, stack_copy_total(sc));
	sc->ev.len = len;
	if (!len)
		return false;
	stack_copy_charge(sc, len);
	return true;
}

/*
 * A copy not sent after all (a Python sample, on_sample_python): its bytes
 * go back to the budgets that paid for them.
 */
static __always_inline void stack_copy_refund(void)
{
	struct stack_copy_scratch *sc = stack_copy_scratch();
	struct stack_copy_bucket *ub;
	__u64 len;

	if (!sc)
		return;
	len = sc->ev.len;
	sc->cpu.tokens += len;
	if (sc->bucket) {
		ub = &sc->uid[(sc->bucket - 1) & (STACK_COPY_UID_BUCKETS - 1)];
		ub->tokens += len;
	}
}

/* This CPU's record of the copy into its ring: `len` bytes. */
static __always_inline void stack_copy_send(struct stack_copy_scratch *sc, __u32 len)
{
	if (len > STACK_COPY_MAX)
		len = STACK_COPY_MAX;
	sc->ev.hdr.size = __builtin_offsetof(struct stack_copy_event, bytes) + len;
	submit(&sc->ev, __builtin_offsetof(struct stack_copy_event, bytes) + len, EV_STACK_COPY,
	       sc->ev.hdr.cpu);
}

struct stack_copy_rest {
	struct stack_copy_scratch *sc;
	__u32 sent;  /* bytes of the copy in the ring */
	__u32 held;  /* ... in this CPU's record, after those */
	__u32 total; /* the most the copy may take */
};

/* The record's bytes to the ring as the copy's part at `sent`. */
static __always_inline void stack_copy_send_held(struct stack_copy_rest *m)
{
	struct stack_copy_scratch *sc = m->sc;

	stack_copy_charge(sc, m->held);
	sc->ev.len = m->held;
	sc->ev.offset = m->sent;
	sc->ev.flags |= STACK_COPY_MORE;
	stack_copy_send(sc, m->held);
	m->sent += m->held;
	m->held = 0;
}

/*
 * One page of the copy past its first record (or what is left of the
 * copy in it); a full record goes to the ring. One loop over pages, not a
 * loop of records each looping over its pages: the verifier explores
 * nested callbacks many times over.
 */
static long stack_copy_rest_page(__u32 i, struct stack_copy_rest *m)
{
	struct stack_copy_scratch *sc = m->sc;
	__u64 addr = sc->ev.sp + m->sent + m->held;
	__u32 off = m->held & 0xffff, left, chunk;

	if (m->sent + m->held >= m->total)
		goto last;
	left = m->total - m->sent - m->held;
	chunk = STACK_COPY_PAGE - (__u32)(addr & (STACK_COPY_PAGE - 1));
	if (chunk > left)
		chunk = left;
	if (chunk > STACK_COPY_MAX - m->held)
		chunk = STACK_COPY_MAX - m->held;
	if (chunk > STACK_COPY_PAGE || !chunk)
		goto last;
	/* An NMI cannot fault a page in: the readable prefix is the copy. */
	if (bpf_probe_read_user(&sc->ev.bytes[off], chunk, (void *)addr))
		goto last;
	m->held += chunk;
	if (m->held >= STACK_COPY_MAX)
		stack_copy_send_held(m);
	return 0;
last:
	if (m->held)
		stack_copy_send_held(m);
	return 1;
}

/*
 * The rest of this CPU's copy after its first record, when that one was
 * full, in records of their own. A global function: the verifier checks it
 * once, not in each program's every path to it.
 */
__noinline int stack_copy_send_rest(void)
{
	struct stack_copy_scratch *sc = stack_copy_scratch();
	struct stack_copy_rest m = {};

	if (!sc)
		return 0;
	m.sc = sc;
	m.sent = sc->ev.len;
	m.total = stack_copy_total(sc);
	bpf_loop((STACK_COPY_TOTAL_MAX - STACK_COPY_MAX) / STACK_COPY_PAGE + 2,
		 stack_copy_rest_page, &m, 0);
	return 0;
}

/*
 * This CPU's copy into its ring, stamped as the sample `e` (just before
 * it): the record stack_copy_take filled, then the rest of the copy.
 */
static __always_inline void stack_copy_submit(const struct sample_event *e)
{
	struct stack_copy_scratch *sc = stack_copy_scratch();

	if (!sc)
		return;
	sc->ev.hdr = e->hdr;
	sc->ev.hdr.kind = EV_STACK_COPY;
	stack_copy_send(sc, sc->ev.len);
	if (sc->ev.len >= STACK_COPY_MAX)
		stack_copy_send_rest();
}

#endif
