/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The scheduler replay, internal to the model: model.c decodes switch,
 * wakeup and sample records of target threads into struct sched_event and
 * queues them per thread; sched.c replays each thread's queue in time order
 * (model_sched_flush) into on-CPU accounting, off-CPU samples and markers.
 */
#ifndef BPFPROF_MODEL_SCHED_H
#define BPFPROF_MODEL_SCHED_H

#include <stdint.h>

#include "model.h"

enum sched_event_type {
	SCHED_EV_SAMPLE = 0,	 /* an on-CPU sample: the thread runs at ts, since `since` */
	SCHED_EV_SWITCH_OUT = 1, /* the thread left the CPU at ts; it ran since `since` */
	SCHED_EV_WAKEUP = 2,	 /* the thread was woken at ts by `other` */
	/* the thread left the targets (--cgroup); a wait it was in ended at `since` */
	SCHED_EV_LEAVE = 3,
};

/* A thread's replay state (thread.replay.state). */
enum replay_state {
	REPLAY_UNKNOWN = 0, /* nothing seen yet, or the recording was closed */
	REPLAY_ON = 1,
	REPLAY_OFF = 2,
	REPLAY_EXITED = 3, /* switched out as TASK_DEAD: it never runs again */
};

/*
 * sched_event.flags: the ABI's flags do not fit in 8 bits, and the replay
 * needs only these.
 */
#define SCHED_EVF_PREEMPT      (1u << 0) /* SWITCH_OUT: involuntary */
#define SCHED_EVF_NEW	       (1u << 1) /* WAKEUP: first wakeup of a new task */
/* SWITCH_OUT: no stack on purpose (SWITCH_STACK_REUSED): use its slot's last one. */
#define SCHED_EVF_STACK_REUSED (1u << 2)

/* Queue one event of thread `t` for the replay (stamps its arrival order); 0 or -ENOMEM. */
int sched_queue(struct thread *t, struct sched_event *ev);

/*
 * End of the recording, after model_sched_flush(m, UINT64_MAX): account a
 * thread still on-CPU up to `stop`, close an open off-CPU interval at `stop`.
 * Leaves every thread's replay idle, so a second call does nothing.
 */
int sched_close_all(struct model *m, uint64_t stop);

/* Put each thread's markers in time order (WAKEUP instants arrive from the wakees' replays). */
void sched_sort_markers(struct model *m);

#endif
