/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The live proc_source: process names, command lines, cgroups and
 * executable mappings read from /proc while the process is alive, with mappings
 * translated to symbolizer objects at once (so the binary is identified by
 * device+inode even if the process exits before symbolization).
 */
#ifndef BPFPROF_PROC_SOURCE_H
#define BPFPROF_PROC_SOURCE_H

#include "model.h"

struct fair_lock;
struct symbolizer;
struct ruby_procs;

struct jit_maps;

struct proc_source_ctx {
	const char *proc_root; /* "/proc" */
	struct symbolizer *sym;
	struct jit_maps *jit; /* perf maps of JIT runtimes; NULL for none */
	/* Python processes (read by the capture) and the Python frames met; NULL for none. */
	struct python_procs *py_procs;
	struct python_frames *py_frames;
	/* Ruby processes (read by the capture) and the Ruby frames met; NULL for none. */
	struct ruby_procs *rb_procs;
	struct python_frames *rb_frames;
	/* JVMs (read by the model as it meets their code) and the Java frames met; NULL for none.
	 */
	struct hotspot_procs *jvms;
	struct java_frames *java_frames;
	/* node processes (noted by the capture's runtime module), their JS frames in java_frames.
	 */
	struct v8_procs *v8;
	/* PHP processes (read by the capture), their functions in java_frames; NULL for none. */
	struct php_procs *php_procs;
	/*
	 * Taken before any use of sym, jit and py_frames, which a thread that
	 * symbolizes a continuous snapshot reads meanwhile, and held until
	 * proc_source_release_symbols (symbols_held); NULL: none.
	 */
	struct fair_lock *symbols_lock;
	bool symbols_held;
	/* The longest wait for symbols_lock since the caller last reset it (-v). */
	uint64_t longest_symbols_wait_ns;
	/* The cgroup v2 mount, to see who owns a process's cgroup; "" when none. */
	char cgroup_mount[256];
	bool cgroup_mount_looked;
};

void proc_source_init(struct proc_source *src, struct proc_source_ctx *ctx);

/*
 * On the thread that feeds the model: take symbols_lock, unless held
 * already (the model's reads of /proc take it as they need it), and let
 * it go. Release after each drain of the rings, and before anything that
 * takes the lock itself.
 */
void proc_source_hold_symbols(struct proc_source_ctx *ctx);
void proc_source_release_symbols(struct proc_source_ctx *ctx);

/*
 * Put a live process and its current threads into the model before any
 * sample arrives, so a target that stays idle still shows up. 0 or -errno.
 */
int proc_seed_process(struct model *m, const char *proc_root, uint32_t pid, uint64_t ts);

/* Re-read the comm of every live thread in the model (at the end of a recording). */
void proc_refresh_thread_names(struct model *m, const char *proc_root);

/* Helpers shared with other /proc readers; 0 or -errno. */
int proc_read_comm(const char *proc_root, uint32_t pid, char name[BPFPROF_COMM_LEN]);

/*
 * The state letter of thread `tid` of `pid` (the third field of
 * PROC/PID/task/TID/stat: R, S, D, ...), or 0 when it cannot be read.
 */
char proc_thread_state(const char *proc_root, uint32_t pid, uint32_t tid);
/* 1 when PROC/PID is a kernel thread (PF_KTHREAD), 0 when not, -ENOENT when unreadable. */
int proc_is_kernel_thread(const char *proc_root, uint32_t pid);
int proc_read_cmdline(const char *proc_root, uint32_t pid, char **out);

#endif
