/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The scheduler replay, internal to the model: model.c decodes switch,
 * wakeup and sample records of target threads into struct sched_event and
 * queues them per thread; sched.c replays each thread's queue in time order
 * (model_sched_flush) into on-CPU accounting, off-CPU samples and markers.
 */
#ifndef BPFPROF_MODEL_SCHED_H
#define BPFPROF_MODEL_SCHED_H

#include <stdbool.h>
#include <stdint.h>

#include "model.h"

enum sched_event_type {
	SCHED_EV_SAMPLE = 0,	 /* an on-CPU sample: the thread runs at ts, since `since` */
	SCHED_EV_SWITCH_OUT = 1, /* the thread left the CPU at ts; it ran since `since` */
	SCHED_EV_WAKEUP = 2,	 /* the thread was woken at ts by `other` */
	/* the thread left the targets (--cgroup); a wait it was in ended at `since` */
	SCHED_EV_LEAVE = 3,
	SCHED_EV_SWITCH_IN = 4, /* a held switch-out's wait ended: the thread got a CPU at ts */
	SCHED_EV_FOLDED = 5,	/* only `folded`: short waits the kernel counted (fold_waits) */
};

/* One buffered scheduling-relevant event of a thread, until it is in time order. */
struct sched_event {
	uint64_t ts;
	uint64_t since;	     /* SAMPLE/SWITCH_OUT: when the thread got the CPU (0: unknown) */
	uint64_t runtime_ns; /* SWITCH_OUT: the kernel's CPU time of the thread so far (0: unknown)
			      */
	uint64_t since_runtime_ns; /* SAMPLE: the kernel's CPU time of the thread at `since` */
	uint32_t stack;		   /* SAMPLE: its stack; SWITCH_OUT: switch-out stack or NO_INDEX */
	uint32_t other_pid, other_tid; /* SWITCH_OUT: next; WAKEUP: waker */
	char other_comm[BPFPROF_COMM_LEN];
	uint32_t state; /* SWITCH_OUT: prev_state */
	uint32_t seq;	/* arrival order: a stable tie-break */
	uint8_t type;	/* enum sched_event_type (below) */
	uint8_t flags;
	uint8_t stack_slot; /* SWITCH_OUT: the switch-out place its stack belongs to */
	uint8_t ustack_end; /* SAMPLE: why its user stack ends there (enum ustack_end) */
	int32_t sys_nr;	    /* SWITCH_OUT: the syscall it went to sleep in, or -1 */
	uint64_t sys_args[6];
	/* SWITCH_OUT, FOLDED: waits the kernel counted instead of sending, before ts */
	struct folded_waits folded;
};

/*
 * A thread's replay (thread.replay): its events queued until they are in
 * time order, and where its replay stands.
 */
struct sched_replay {
	VEC(struct sched_event) pending;
	uint8_t state;	  /* unknown, on-CPU, off-CPU, exited */
	uint8_t reason;	  /* while off */
	bool start_known; /* off: the switch-out was seen (else only a wakeup) */
	/* off: a wakeup came; on: one came early, racing with the coming switch-out */
	bool woken, woken_new;
	/* woken: the waker got its instant already, in an earlier snapshot (model/cut.c) */
	bool waker_told;
	uint32_t next_seq; /* arrival order of the next queued event */
	uint64_t since;	   /* on: slice start; off: switch-out (or wakeup) time */
	uint64_t cursor;   /* on: CPU time is accounted up to here */
	uint64_t wake_ts;
	uint64_t cpu_since_sample_ns; /* on-CPU time not yet given to a sample */
	/*
	 * The kernel's CPU time of the thread at its last switch-out
	 * (runtime_known), and the on-CPU time the replay accounted
	 * from the switch times since then: the next switch-out trues
	 * the two up (sched.c:true_up_runtime).
	 */
	uint64_t runtime_ns, runtime_ts, runtime_replayed_ns;
	bool runtime_known;
	/* Given to samples beyond the kernel's figure: taken from the next ones. */
	uint64_t cpu_debt_ns;
	uint64_t offcpu_carry_ns; /* off-CPU time not yet given to a sample */
	uint64_t last_ts;	  /* last event replayed */
	uint32_t stack;		  /* switch-out stack while off */
	/* The last switch-out stack taken per place, for switch-outs that reuse it. */
	uint32_t last_switch_stack[SWITCH_STACK_SLOTS];
	uint8_t have_switch_stack;     /* bit per slot */
	uint32_t other_pid, other_tid; /* waker or preemptor while off */
	char other_comm[BPFPROF_COMM_LEN];
	bool other_known;
	uint8_t other_kind; /* the waker's enum waker_kind: WAKER_THREAD but for interrupts */
	/* off: the syscall it sleeps in (--syscalls=blocking), or -1. */
	int32_t sys_nr;
	uint64_t sys_args[6];
};

/* The replay of `t`, created on first use; NULL on -ENOMEM. */
struct sched_replay *sched_replay_of(struct thread *t);
void sched_replay_free(struct sched_replay *r);

/* A thread's replay state (sched_replay.state). */
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
/* WAKEUP: what woke it when no thread did (enum waker_kind), in bits 3-4. */
#define SCHED_EVF_WAKER_SHIFT  3
#define SCHED_EVF_WAKER(flags) (((flags) >> SCHED_EVF_WAKER_SHIFT) & 3u)

/* Queue one event of thread `t` for the replay (stamps its arrival order); 0 or -ENOMEM. */
int sched_queue(struct thread *t, struct sched_event *ev);

/*
 * End of the recording, after model_sched_flush(m, UINT64_MAX): account a
 * thread still on-CPU up to `stop`, close an open off-CPU interval at `stop`.
 * Leaves every thread's replay idle, so a second call does nothing.
 */
int sched_close_all(struct model *m, uint64_t stop);

/*
 * model/offcpu_samples.c: the off-CPU samples of a wait of `t` from `out`,
 * `dur` long, with its carry (sched_replay.offcpu_carry_ns), as a few rows
 * that stand for runs of samples (thread_sample.repeats). 0 or -ENOMEM.
 */
int offcpu_samples_of_wait(struct model *m, struct thread *t, uint64_t out, uint64_t dur);

/*
 * `count` off-CPU samples of `t` at `at` and every interval after it, with
 * raw stack `stack` (its OBJ_OFFCPU leaf included), on as few rows as hold
 * them. 0 or -ENOMEM.
 */
int offcpu_push_run(struct model *m, struct thread *t, uint64_t at, uint64_t count, uint32_t stack);

/* Put each thread's markers in time order (WAKEUP instants arrive from the wakees' replays). */
void sched_sort_markers(struct model *m);

/*
 * At the end: the other thread of each scheduling marker (waker, wakee,
 * the task the CPU went to) by the name its own track shows.
 */
void sched_name_others(struct model *m);

#endif
