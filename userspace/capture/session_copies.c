// SPDX-License-Identifier: BSD-2-Clause
/*
 * The session's stack copies (bpf/stack_copy.bpf.h): the BPF maps sized
 * and the knobs set before load, and the copies finished as their files'
 * tables are published (stack_finish.h), from the unwind store.
 */
#include "session.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "../util/clock.h"
#include "bpfprof.skel.h"
#include "stack_finish.h"
#include "unwind_loader.h"

void session_copies_configure(struct session *s, uint32_t bytes)
{
	/*
	 * A CPU's copies share its ring with its samples and switches: one
	 * copy takes at most an eighth of it, and the budget saves up at most
	 * half of it, so that a burst of copies cannot push out the records
	 * around them (--ring-size 256K: 32K copies, a 128K burst).
	 */
	uint64_t one = s->ring_bytes / 8, burst = s->ring_bytes / 2;

	if (bytes > STACK_COPY_TOTAL_MAX)
		bytes = STACK_COPY_TOTAL_MAX;
	if (one && bytes > one)
		bytes = (uint32_t)one;
	s->skel->rodata->stack_copy_bytes = bytes;
	if (burst && burst < s->skel->rodata->stack_copy_burst)
		s->skel->rodata->stack_copy_burst = burst;
	/* Bench: every sample's stack copied, no budget (what one copy costs). */
	if (bytes && getenv("BPFPROF_TEST_STACK_COPY_ALL")) {
		s->skel->rodata->stack_copy_all = true;
		s->skel->rodata->stack_copy_rate = s->skel->rodata->stack_copy_burst = 1ull << 40;
	}
	/* One scratch a CPU; none allocated past the first without copies. */
	bpf_map__set_max_entries(s->skel->maps.stack_copies, bytes ? (uint32_t)s->nr_possible : 1);
}

static enum stack_file_state file_state(void *ctx, const struct unwind_file_key *key,
					struct compact_view *view, int64_t *bias)
{
	struct session *s = ctx;
	const struct unwind_store_file *f =
		unwind_store_find(&s->unwind->store, key->dev, key->ino);

	/* Not known yet: its process's mappings are still to be read. */
	if (!f || f->status == UNWIND_FILE_PENDING ||
	    (f->status == UNWIND_FILE_LOADED && !f->published_at))
		return STACK_FILE_PENDING;
	if (f->status != UNWIND_FILE_LOADED)
		return STACK_FILE_NONE;
	*view = unwind_store_view(&s->unwind->store, f);
	*bias = f->info.bias;
	return STACK_FILE_READY;
}

static int proc_mappings(void *ctx, uint32_t pid, uint64_t ts, struct unwind_mapping *out,
			 uint32_t max)
{
	struct session *s = ctx;
	const struct unwind_proc *p;
	uint32_t n;

	(void)ts;
	/*
	 * The map's entry now (or at its exit), not a copy read for an
	 * earlier sample: that may be of the image before an exec.
	 */
	p = s->copy_proc ? unwind_loader_proc_now(s->unwind, pid, s->copy_proc) : NULL;
	if (!p)
		return -ENOENT;
	n = p->n < max ? p->n : max;
	memcpy(out, p->m, n * sizeof(*out));
	return (int)n;
}

/*
 * The user a parked copy is charged to: the process's real uid, folded to
 * its owner as the other shares are (proc_shares_user), not the owner of
 * /proc/PID, which is root for a process that is not dumpable (root's
 * copies are not capped) and each subordinate uid's own (S2/S5 review,
 * finding 9). A process already gone: -1, one share for all of them.
 */
static uint32_t proc_uid(void *ctx, uint32_t pid)
{
	struct session *s = ctx;
	uint32_t uid;

	if (!s->unwind || proc_shares_user(&s->unwind->shares, pid, &uid))
		return (uint32_t)-1;
	return uid;
}

/* A finished stack into the model; one still cut names the file it met without rows. */
static void copy_done(void *ctx, const struct sample_event *e, size_t size, bool partial)
{
	struct session *s = ctx;

	if (!partial)
		session_dispatch(s, (void *)e, size);
	unwind_loader_note_miss(s->unwind, e->hdr.pid, e->hdr.ts, SAMPLE_USTACK_END(e->flags),
				(const uint64_t *)e->ips + e->kstack_len, e->ustack_len);
}

int session_copies_open(struct session *s)
{
	struct stack_finish_ops ops = { file_state, proc_mappings, proc_uid, copy_done, s };

	if (!s->skel->rodata->stack_copy_bytes || !s->unwind)
		return 0;
	s->finish = malloc(sizeof(*s->finish));
	s->copy_proc = malloc(sizeof(*s->copy_proc));
	if (!s->finish || !s->copy_proc) {
		free(s->finish);
		free(s->copy_proc);
		s->finish = NULL;
		s->copy_proc = NULL;
		return -ENOMEM;
	}
	stack_finish_init(s->finish, &ops);
	s->unwind->no_table_fd = bpf_map__fd(s->skel->maps.unwind_no_table);
	/* Key 0: files the walk found itself, in a process not published (bpf/unwind.bpf.h). */
	(void)bpf_map_update_elem(s->unwind->no_table_fd, &(struct unwind_file_key){ 0, 0 },
				  &(uint8_t){ 1 }, BPF_ANY);
	/* Now that something finishes them: copies on (bpf/stack_copy.bpf.h). */
	__atomic_store_n(&s->skel->bss->stack_copy_on, 1, __ATOMIC_RELEASE);
	return 0;
}

void session_copies_poll(struct session *s, bool last)
{
	if (!s->finish || !s->finish->parked.len)
		return;
	/* The end: the tables still building get their bounded while (unwind_loader_settle). */
	if (last && s->unwind)
		(void)unwind_loader_settle(s->unwind, (int)(STACK_FINISH_WAIT_NS / 1000000));
	stack_finish_poll(s->finish, clock_ns(CLOCK_MONOTONIC), last);
}

void session_copies_close(struct session *s)
{
	if (!s->finish)
		return;
	stack_finish_free(s->finish);
	free(s->finish);
	free(s->copy_proc);
	s->finish = NULL;
	s->copy_proc = NULL;
}
