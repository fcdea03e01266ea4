/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Helpers shared by the model's own files; not an API. From the bottom up:
 * interning.c (frames, stacks), registry.c (processes, threads), the
 * handlers (sched.c, syscalls.c, lifecycle.c, cut.c), ingest.c (records in,
 * model_finish) on top.
 */
#ifndef BPFPROF_MODEL_INTERNAL_H
#define BPFPROF_MODEL_INTERNAL_H

#include "model.h"

/* A new image of `pid` starting at ts, chained before the pid's older ones; NULL on -ENOMEM. */
struct process *model_new_image(struct model *m, uint32_t pid, uint64_t ts);
/* A new thread `tid` in the image of `pid` at ts, chained before older threads with that tid. */
struct thread *model_new_thread(struct model *m, uint32_t pid, uint32_t tid, int cpu, uint64_t ts);
/* Whether `p` is the newest image of its pid (the one /proc describes). */
bool model_is_latest_image(const struct model *m, const struct process *p);
/* Replace p's mappings with /proc's view, for the newest image of a live process. */
void model_read_maps(struct model *m, struct process *p, uint64_t ts);
/* Set p's cgroup from /proc's view when it can be read; else leave it as it was. */
void model_read_cgroup(struct model *m, struct process *p);
/* Set p's uid from /proc's view when it can be read; else leave it as it was. */
void model_read_uid(struct model *m, struct process *p);

/*
 * The thread was called `comm` at ts. The latest name wins by time, not by
 * arrival: each CPU's ring is read in turn, so a record from before a
 * prctl(PR_SET_NAME) can arrive after one from after it.
 */
void model_name_thread(struct thread *t, const char *comm, uint64_t ts);

/*
 * Make process (thread) `idx` the one its pid (tid) finds, as the newest;
 * cut.c rebuilds a model's indexes with these. 0 or -ENOMEM.
 */
int model_index_process(struct model *m, uint32_t idx);
int model_index_thread(struct model *m, uint32_t idx);

/*
 * Stack `stack` of `src` as a stack of `dst`: its frames interned again
 * there. `map` (src stack -> dst stack) carries what was translated
 * already. The dst index (NO_INDEX for NO_INDEX), or -ENOMEM.
 */
int64_t model_copy_stack(struct model *dst, const struct model *src, struct hmap *map,
			 uint32_t stack);

/* The recording's settings (rates, what is captured) of `src`, given to `dst`. */
void model_copy_settings(struct model *dst, const struct model *src);

/* Give process `pidx` exactly one main thread (model_finish); 0 or -ENOMEM. */
int model_ensure_main_thread(struct model *m, uint32_t pidx);

/* A record of thread `t` was seen at ts: lifetimes of the thread, its process and the profile. */
void note_event_ts(struct model *m, struct thread *t, uint64_t ts);

/* model/syscalls.c: decode EV_SYSCALL / EV_SYSCALL_TOTALS; 0 or -ENOMEM. */
int model_add_syscall(struct model *m, const struct syscall_event *e, size_t size);
int model_add_syscall_totals(struct model *m, const struct syscall_totals_event *e, size_t size);
/* At finish: markers in time order, counts by syscall number, markers counted per syscall. */
void syscalls_finish(struct thread *t);

#endif
