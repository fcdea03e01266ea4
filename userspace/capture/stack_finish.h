/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Stacks finished from stack copies (issue 38): a sample whose BPF walk met
 * a file whose table was still being built stops there and comes with a
 * copy of the stack above that frame (bpf/stack_copy.bpf.h). The sample
 * goes to the model at once with its partial stack (its place in time is
 * kept); its copy is parked by the file it waits for. When that file's
 * table is published, or known never to come, the walk resumes over the
 * copy (unwind/user_walk.c: the BPF rules; a read past the copy is
 * UNREADABLE) and the sample's stack is rewritten in the model
 * (EV_SAMPLE_RESTACK). Bounded: STACK_FINISH_MAX_BYTES parked in all, a
 * quarter of it per user but root, each copy STACK_FINISH_WAIT_NS at
 * most; past that the sample keeps its partial stack. Copied bytes go to
 * no output and are freed once walked.
 */
#ifndef BPFPROF_CAPTURE_STACK_FINISH_H
#define BPFPROF_CAPTURE_STACK_FINISH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../bpf/bpfprof_abi.h"
#include "../unwind/compact_table.h"
#include "../util/vec.h"

#define STACK_FINISH_MAX_BYTES (32u << 20)
#define STACK_FINISH_WAIT_NS   (2000000000ull)
/* A walk that meets another file still pending waits for it too, this many times in all. */
#define STACK_FINISH_MAX_PARKS 3

enum stack_file_state {
	STACK_FILE_PENDING = 0, /* its table may still come */
	STACK_FILE_READY,	/* published: *view and *bias are set */
	STACK_FILE_NONE,	/* none will come (no CFI, refused): frame pointers */
};

struct stack_finish_ops {
	/* Where `key`'s table stands now. */
	enum stack_file_state (*file)(void *ctx, const struct unwind_file_key *key,
				      struct compact_view *view, int64_t *bias);
	/*
	 * Process pid's executable mappings now (its sample was at ts),
	 * sorted by start, into out[0..max): how many, or -errno.
	 */
	int (*mappings)(void *ctx, uint32_t pid, uint64_t ts, struct unwind_mapping *out,
			uint32_t max);
	/* The real uid of process pid (the copy's charge); (uint32_t)-1 when unknown. */
	uint32_t (*uid)(void *ctx, uint32_t pid);
	/*
	 * The sample `e` (its header's kind EV_SAMPLE_RESTACK) with its user
	 * stack finished; `partial`: none could be, `e` is the sample as it came.
	 */
	void (*done)(void *ctx, const struct sample_event *e, size_t size, bool partial);
	void *ctx;
};

struct stack_finish_stats {
	uint64_t copies;     /* copies joined with their sample */
	uint64_t copy_bytes; /* ... their bytes */
	uint64_t finished;   /* stacks rewritten from a copy */
	uint64_t rooted;     /* ... that reach a thread root */
	uint64_t lost;	     /* copied samples whose copy never came (the ring was full) */
	uint64_t orphans;    /* copies whose sample never came */
	uint64_t refused;    /* copies over the bytes parked or their user's quarter */
	uint64_t skipped; /* copies not walked: a Python sample, no mappings, its process exec'd */
	uint64_t expired; /* copies whose file had no table in time */
	uint64_t peak_bytes; /* the most bytes parked at once */
};

struct stack_parked;

/* A user's bytes parked. */
struct stack_finish_uid {
	uint32_t uid;
	size_t bytes;
};

struct stack_finish {
	struct stack_finish_ops ops;
	size_t max_bytes; /* parked at most; a user but root a quarter of it */
	uint64_t wait_ns;
	size_t parked_bytes;
	/* The copy each CPU sent last, waiting for its sample (the next record of that CPU). */
	VEC(struct stack_copy_event *) waiting;
	VEC(struct stack_parked *) parked; /* in the order they came */
	VEC(struct stack_finish_uid) uids;
	/* A process's mappings, read for one copy at a time (park, walk). */
	struct unwind_mapping *maps;
	uint32_t nmaps;
	struct stack_finish_stats stats;
};

void stack_finish_init(struct stack_finish *f, const struct stack_finish_ops *ops);
/*
 * A record, in its ring's order, at `now` (CLOCK_MONOTONIC): a copy is
 * kept for its sample (true: the caller hands it nowhere else); a sample
 * with SAMPLE_USTACK_COPIED is joined with it and its copy parked (false:
 * the caller hands the sample on, partial, as any other). A copied sample
 * without its copy is done() partial.
 */
bool stack_finish_record(struct stack_finish *f, const void *data, size_t size, uint64_t now);
/*
 * Finish the parked copies whose file's table is there (or will never
 * be); those that waited past wait_ns, or all that are left when `last`
 * (the recording's end), keep their partial stacks. Returns how many are
 * still parked.
 */
size_t stack_finish_poll(struct stack_finish *f, uint64_t now, bool last);
void stack_finish_free(struct stack_finish *f);
/*
 * Reads of a copied stack: `len` bytes at `addr` from the copy `c`, 0; or
 * -EFAULT for any byte outside it (the stack there was not copied).
 */
int stack_copy_read(const struct stack_copy_event *c, uint64_t addr, void *buf, size_t len);

#endif
