/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The aggregator: it consumes decoded events (from BPF, or from a synthetic
 * source in tests) and keeps what becomes the profile:
 *
 *  - processes and threads (names, command lines, lifetimes),
 *  - raw frames, interned as (object, offset): the binary an address falls in
 *    and the file offset inside it, so that two processes running the same
 *    binary share frames and symbolization runs once per unique address,
 *  - raw stacks, hash-consed as (prefix, frame) in topological order,
 *  - per-thread samples.
 *
 * Symbolization happens after recording (profile_tables.c): each raw frame
 * becomes one or more profile frames, and each raw stack a profile stack.
 */
#ifndef BPFPROF_MODEL_H
#define BPFPROF_MODEL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../../bpf/bpfprof_abi.h"
#include "../util/hashmap.h"
#include "../util/vec.h"

struct symbolizer;
struct model;

#define NO_INDEX UINT32_MAX

/* Reserved object ids; objects from process mappings start at OBJ_FIRST_FILE. */
enum {
	OBJ_KERNEL = 0, /* offset = kernel virtual address */
	OBJ_UNKNOWN = 1, /* offset = user virtual address outside any known mapping */
	OBJ_TRUNCATED = 2, /* marks a stack cut at BPFPROF_MAX_STACK frames */
	OBJ_FIRST_FILE = 3,
};

struct raw_frame {
	uint32_t object;
	/* Set when the address is a return address: symbolize offset - 1. */
	uint32_t is_return;
	uint64_t offset;
};

struct raw_stack {
	uint32_t prefix; /* NO_INDEX for a root */
	uint32_t frame;
};

enum sample_kind {
	SAMPLE_ON_CPU = 0,
};

struct thread_sample {
	uint64_t ts; /* CLOCK_MONOTONIC ns */
	uint64_t cpu_delta_ns;
	uint32_t stack; /* raw stack, or NO_INDEX */
	uint8_t kind;
};

/* A user mapping of a process, translated to an object of the symbolizer. */
struct proc_mapping {
	uint64_t start, end, pgoff;
	uint32_t object;
};

struct thread {
	uint32_t pid, tid;
	uint32_t process; /* index in model.processes */
	int cpu; /* for idle threads (pid 0): the CPU; else -1 */
	char name[BPFPROF_COMM_LEN];
	uint64_t first_ts, last_ts; /* first and last event seen */
	VEC(struct thread_sample) samples;
};

struct process {
	uint32_t pid;
	char name[BPFPROF_COMM_LEN]; /* main thread's comm */
	char *cmdline; /* NULL when unknown (exited before we looked) */
	bool is_idle; /* pid 0: per-CPU idle threads */
	bool maps_read; /* /proc/PID/maps was read at least once */
	bool gone; /* /proc/PID vanished: do not look again */
	uint64_t maps_read_ts; /* when, to throttle re-reads on unknown addresses */
	uint32_t main_thread; /* thread index, or NO_INDEX until finish */
	uint64_t first_ts, last_ts;
	VEC(uint32_t) threads;
	VEC(struct proc_mapping) mappings; /* sorted by start */
};

struct model_stats {
	uint64_t samples;
	uint64_t events_malformed;
	uint64_t unknown_user_addrs;
	uint64_t truncated_stacks;
};

/* Where the model learns about a process it has not seen yet. */
struct proc_source {
	/* Fill name/cmdline; return -ENOENT when the process is gone. */
	int (*read_info)(void *ctx, uint32_t pid, char name[BPFPROF_COMM_LEN], char **cmdline);
	/* Replace the mapping list; -ENOENT when gone. */
	int (*read_maps)(void *ctx, struct model *m, struct process *p);
	void *ctx;
};

struct model {
	VEC(struct process) processes;
	VEC(struct thread) threads;
	struct hmap pid_index; /* (pid) -> process */
	struct hmap tid_index; /* (tid, cpu for idle) -> thread */

	VEC(struct raw_frame) frames;
	struct hmap frame_index;
	VEC(struct raw_stack) stacks;
	struct hmap stack_index;

	struct proc_source source;
	/*
	 * CPU time a sample stands for: its perf period when the event counts
	 * nanoseconds (cpu-clock), else this nominal 1/frequency.
	 */
	bool period_is_ns;
	uint64_t nominal_period_ns;
	uint64_t start_ts; /* profile zero, CLOCK_MONOTONIC ns */
	uint64_t end_ts;
	struct model_stats stats;
};

void model_init(struct model *m, const struct proc_source *source, uint64_t start_ts);
void model_free(struct model *m);

/* Feed one ring buffer record; returns 0, or -ENOMEM (anything else is counted and skipped). */
int model_add_record(struct model *m, const void *data, size_t size);
int model_add_sample(struct model *m, const struct sample_event *e, size_t size);

/* Interning; each returns the index or -ENOMEM. */
int64_t model_intern_frame(struct model *m, uint32_t object, uint64_t offset, bool is_return);
int64_t model_intern_stack(struct model *m, uint32_t prefix, uint32_t frame);

struct process *model_process(struct model *m, uint32_t pid, uint64_t ts);
struct thread *model_thread(struct model *m, uint32_t pid, uint32_t tid, int cpu, uint64_t ts);

/*
 * After the last event: give every process exactly one main thread, sort
 * each thread's samples by time, and name processes. Idempotent.
 */
int model_finish(struct model *m);

#endif
