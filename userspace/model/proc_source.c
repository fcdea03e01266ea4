// SPDX-License-Identifier: BSD-2-Clause
#include "proc_source.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../cgroup/cgroup_fs.h"
#include "../lang/php_procs.h"
#include "../lang/python_procs.h"
#include "../lang/ruby_procs.h"
#include "../symbols/proc_maps.h"
#include "../symbols/jit_maps.h"
#include "../lang/hotspot_procs.h"
#include "../lang/v8_procs.h"
#include "../symbols/java_frames.h"
#include "../symbols/python_frames.h"
#include "../symbols/symbolizer.h"
#include "../util/clock.h"
#include "../util/fair_lock.h"
#include "model_internal.h"

/*
 * Take the frame sources, and keep them until proc_source_release_symbols:
 * a drain of the rings may meet hundreds of new mappings or JIT addresses,
 * and waiting for a symbolizing thread's frame at each would add up.
 */
static void lock_symbols(struct proc_source_ctx *ctx)
{
	uint64_t t0, waited;

	if (ctx->symbols_lock && !ctx->symbols_held) {
		t0 = clock_ns(CLOCK_MONOTONIC);
		fair_lock(ctx->symbols_lock);
		ctx->symbols_held = true;
		waited = clock_ns(CLOCK_MONOTONIC) - t0;
		if (waited > ctx->longest_symbols_wait_ns)
			ctx->longest_symbols_wait_ns = waited;
	}
}

void proc_source_hold_symbols(struct proc_source_ctx *ctx)
{
	lock_symbols(ctx);
}

void proc_source_release_symbols(struct proc_source_ctx *ctx)
{
	if (ctx->symbols_held) {
		ctx->symbols_held = false;
		fair_unlock(ctx->symbols_lock);
	}
}

/* Command lines longer than this are cut: they only label a process. */
#define CMDLINE_MAX 4096

static int read_small_file(const char *path, char *buf, size_t cap, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;
	size_t off = 0;

	if (fd < 0)
		return errno == ESRCH ? -ENOENT : -errno;
	while (off < cap && (n = read(fd, buf + off, cap - off)) > 0)
		off += (size_t)n;
	close(fd);
	*len = off;
	return 0;
}

/*
 * The fields of a stat file after "PID (comm) ", from the state on, into
 * buf; NULL when it cannot be read. The comm may hold spaces and
 * parentheses: the last ')' ends it.
 */
static const char *stat_fields(const char *path, char *buf, size_t cap)
{
	const char *close_paren;
	size_t len;

	if (read_small_file(path, buf, cap - 1, &len))
		return NULL;
	buf[len] = '\0';
	close_paren = strrchr(buf, ')');
	return close_paren && close_paren[1] == ' ' ? close_paren + 2 : NULL;
}

char proc_thread_state(const char *proc_root, uint32_t pid, uint32_t tid)
{
	char path[PATH_MAX], buf[512];
	const char *fields;

	snprintf(path, sizeof(path), "%s/%u/task/%u/stat", proc_root, pid, tid);
	fields = stat_fields(path, buf, sizeof(buf));
	return fields ? fields[0] : 0;
}

/* PF_KTHREAD in include/linux/sched.h: an ABI since /proc/PID/stat shows the flags. */
#define PROC_PF_KTHREAD 0x00200000u

int proc_is_kernel_thread(const char *proc_root, uint32_t pid)
{
	char path[PATH_MAX], buf[1024];
	const char *fields;
	unsigned long flags;

	snprintf(path, sizeof(path), "%s/%u/stat", proc_root, pid);
	fields = stat_fields(path, buf, sizeof(buf));
	/* state ppid pgrp session tty_nr tpgid flags: the seventh field from the state. */
	if (!fields || sscanf(fields, "%*c %*d %*d %*d %*d %*d %lu", &flags) != 1)
		return -ENOENT;
	return (flags & PROC_PF_KTHREAD) != 0;
}

int proc_read_comm(const char *proc_root, uint32_t pid, char name[BPFPROF_COMM_LEN])
{
	char path[PATH_MAX], buf[BPFPROF_COMM_LEN + 1];
	size_t len;
	int err;

	snprintf(path, sizeof(path), "%s/%u/comm", proc_root, pid);
	err = read_small_file(path, buf, sizeof(buf) - 1, &len);
	if (err)
		return err;
	while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\0'))
		len--;
	if (len >= BPFPROF_COMM_LEN)
		len = BPFPROF_COMM_LEN - 1;
	memcpy(name, buf, len);
	name[len] = '\0';
	return 0;
}

int proc_read_cmdline(const char *proc_root, uint32_t pid, char **out)
{
	char path[PATH_MAX];
	char *buf = malloc(CMDLINE_MAX + 1);
	size_t len;
	int err;

	if (!buf)
		return -ENOMEM;
	snprintf(path, sizeof(path), "%s/%u/cmdline", proc_root, pid);
	err = read_small_file(path, buf, CMDLINE_MAX, &len);
	if (err) {
		free(buf);
		return err;
	}
	/* Arguments are NUL-separated; kernel threads have none. */
	while (len && buf[len - 1] == '\0')
		len--;
	for (size_t i = 0; i < len; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	buf[len] = '\0';
	if (!len) {
		free(buf);
		buf = NULL;
	}
	*out = buf;
	return 0;
}

static int read_info(void *vctx, uint32_t pid, char name[BPFPROF_COMM_LEN], char **cmdline)
{
	struct proc_source_ctx *ctx = vctx;
	int err = proc_read_comm(ctx->proc_root, pid, name);

	if (err)
		return err;
	err = proc_read_cmdline(ctx->proc_root, pid, cmdline);
	return err == -ENOENT ? err : 0;
}

static int read_kernel_thread(void *vctx, uint32_t pid)
{
	struct proc_source_ctx *ctx = vctx;

	return proc_is_kernel_thread(ctx->proc_root, pid);
}

/* Whether /proc lists any executable mapping: none at all means the process is exiting. */
static bool has_executable(const map_entries_t *entries)
{
	for (size_t i = 0; i < entries->len; i++)
		if (entries->data[i].executable)
			return true;
	return false;
}

static int read_maps(void *vctx, struct model *m, struct process *p)
{
	struct proc_source_ctx *ctx = vctx;
	map_entries_t entries = { 0 };
	int err = proc_maps_read(ctx->proc_root, (pid_t)p->pid, &entries);

	if (err)
		goto out;
	/*
	 * A zombie (or a process past exit_mmap) has an empty maps file while
	 * its last records are still being read: what we knew stays, and the
	 * process counts as gone so that nobody asks again.
	 */
	if (!has_executable(&entries) && p->mappings.len) {
		err = -ENOENT;
		goto out;
	}
	p->mappings.len = 0;
	for (size_t i = 0; i < entries.len; i++) {
		const struct map_entry *e = &entries.data[i];
		struct proc_mapping pm = { e->start, e->end, e->pgoff, NO_INDEX };
		int64_t obj;

		if (!e->executable)
			continue;
		lock_symbols(ctx);
		/* Out of memory, its JIT code is named later or not at all: the mapping still
		 * counts. */
		if (ctx->jit)
			(void)jit_maps_note_mapping(ctx->jit, p->pid, e);
		if (ctx->jvms)
			(void)hotspot_procs_note_mapping(ctx->jvms, p->pid, e);
		obj = symbolizer_object_for_mapping(ctx->sym, (pid_t)p->pid, e);
		if (obj >= 0)
			pm.object = (uint32_t)obj;
		/* /proc lists mappings sorted by address, which find_mapping relies on. */
		if ((err = vec_push(&p->mappings, pm)))
			goto out;
	}
out:
	map_entries_free(&entries);
	return err;
}

static void read_task_comm(const char *proc_root, uint32_t pid, uint32_t tid,
			   char name[BPFPROF_COMM_LEN])
{
	char root[PATH_MAX];

	/* <root>/<pid>/task/<tid>/comm is read as "<root>/<pid>/task" + "/<tid>/comm". */
	snprintf(root, sizeof(root), "%s/%u/task", proc_root, pid);
	proc_read_comm(root, tid, name);
}

int proc_seed_process(struct model *m, const char *proc_root, uint32_t pid, uint64_t ts)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *dir;

	if (!model_process(m, pid, ts))
		return -ENOMEM;
	snprintf(path, sizeof(path), "%s/%u/task", proc_root, pid);
	dir = opendir(path);
	if (!dir)
		return errno == ENOENT ? -ENOENT : -errno;
	while ((de = readdir(dir))) {
		char *end;
		unsigned long tid = strtoul(de->d_name, &end, 10);
		struct thread *t;

		if (*end || !tid)
			continue;
		t = model_thread(m, pid, (uint32_t)tid, -1, ts);
		if (!t) {
			closedir(dir);
			return -ENOMEM;
		}
		if (!t->name[0])
			read_task_comm(proc_root, pid, (uint32_t)tid, t->name);
	}
	closedir(dir);
	return 0;
}

void proc_refresh_thread_names(struct model *m, const char *proc_root)
{
	for (size_t i = 0; i < m->threads.len; i++) {
		struct thread *t = &m->threads.data[i];

		/* /proc describes only live threads of the newest image of a pid. */
		if (t->tid != 0 && !t->exited &&
		    model_is_latest_image(m, &m->processes.data[t->process]))
			read_task_comm(proc_root, t->pid, t->tid, t->name);
	}
}

static int64_t object_for_mapping(void *vctx, uint32_t pid, const struct map_entry *e)
{
	struct proc_source_ctx *ctx = vctx;

	lock_symbols(ctx);
	/* A mapping that says the process runs JIT code (anonymous code, a jitdump, a JVM). */
	if (ctx->jit)
		(void)jit_maps_note_mapping(ctx->jit, pid, e);
	if (ctx->jvms)
		(void)hotspot_procs_note_mapping(ctx->jvms, pid, e);
	return symbolizer_object_for_mapping(ctx->sym, (pid_t)pid, e);
}

static int64_t jit_object(void *vctx, uint32_t pid, bool anon_exec, uint64_t ts)
{
	struct proc_source_ctx *ctx = vctx;

	if (!ctx->jit)
		return -ENOENT;
	lock_symbols(ctx);
	return jit_maps_object(ctx->jit, pid, anon_exec, ts);
}

/* Java frames of a JVM's code, read from the JVM while it runs (lang/hotspot_procs.h). */
static int64_t java_frame(void *vctx, uint32_t pid, uint32_t uid, uint64_t addr, bool is_return)
{
	struct proc_source_ctx *ctx = vctx;
	struct hotspot_frame frames[HOTSPOT_MAX_FRAMES];
	uint64_t key;
	uint32_t cached;
	int64_t idx;
	int n;

	if (!ctx->jvms || !hotspot_procs_is_jvm(ctx->jvms, pid))
		return -ENOENT;
	/* User addresses are below 2^63: the top bit keeps a leaf's answer apart from a caller's.
	 */
	key = addr | (is_return ? 0 : 1ull << 63);
	if (hotspot_procs_cached(ctx->jvms, pid, key, &cached))
		return cached;
	/* The JVM is read first: only the interning needs the lock (unless held already). */
	n = hotspot_procs_frames(ctx->jvms, pid, uid, addr, is_return, frames, HOTSPOT_MAX_FRAMES);
	if (n <= 0)
		return n ? n : -ENOENT;
	lock_symbols(ctx);
	idx = java_frames_intern_user(ctx->java_frames, uid, frames, n);
	if (idx >= 0)
		hotspot_procs_cache(ctx->jvms, pid, key, (uint32_t)idx);
	return idx;
}

/*
 * A node frame whose words BPF read (lang/v8_procs.h): its JS functions
 * (optimized code one per function inlined there, innermost first) or
 * V8's typed frame. v8_procs reads the process through its deadline
 * reader, within its budgets, and keeps what it named; -ENOENT (a builtin
 * in node's blob, a process past its cap) leaves the frame to node's
 * symbols and "[JIT] node".
 */
static int64_t v8_frame(struct proc_source_ctx *ctx, uint32_t pid, uint32_t uid, uint64_t pc,
			bool is_return, const uint64_t words[RT_WORDS])
{
	struct hotspot_frame frames[V8_MAX_FRAMES];
	int n;

	/* The process is read first: only the interning needs the lock (unless held already). */
	n = v8_procs_frames(ctx->v8, pid, uid, pc, is_return, words, frames, V8_MAX_FRAMES);
	if (n <= 0)
		return n ? n : -ENOENT;
	lock_symbols(ctx);
	/*
	 * A typed frame is one "V8::<Type>": V8's, not a function of the
	 * script (a JS method given that computed name is taken for one: its
	 * isJS is lost, never its name).
	 */
	return java_frames_intern_lang(ctx->java_frames, uid, frames, n,
				       n == 1 && !strncmp(frames[0].name, "V8::", 4)
					       ? JAVA_FRAMES_V8_OTHER
					       : JAVA_FRAMES_JS);
}

/*
 * A frame whose words BPF read (bpf/runtime.bpf.h), named by its runtime:
 * HotSpot's interpreted frames (lang/hotspot_procs.h) and node's frames
 * (v8_frame); frames their words do not name go on to java_frame and
 * jit_object.
 */
static int64_t runtime_frame(void *vctx, uint32_t pid, uint32_t uid, uint32_t kind, uint64_t pc,
			     bool is_return, const uint64_t words[RT_WORDS])
{
	struct proc_source_ctx *ctx = vctx;
	struct hotspot_frame frame;
	uint32_t cached;
	int64_t idx;
	int n;

	if (kind == RT_KIND_V8)
		return ctx->v8 && ctx->java_frames ? v8_frame(ctx, pid, uid, pc, is_return, words)
						   : -ENOENT;
	(void)is_return;
	if (kind != RT_KIND_HOTSPOT || !ctx->jvms || !ctx->java_frames ||
	    !hotspot_procs_in_interpreter(ctx->jvms, pid, uid, pc))
		return -ENOENT;
	if (hotspot_procs_interp_cached(ctx->jvms, pid, words, &cached))
		return cached;
	/* The JVM is read first: only the interning needs the lock (unless held already). */
	n = hotspot_procs_interp_frame(ctx->jvms, pid, uid, words, &frame);
	if (n <= 0)
		return n ? n : -ENOENT;
	lock_symbols(ctx);
	idx = java_frames_intern_user(ctx->java_frames, uid, &frame, 1);
	if (idx >= 0 && n == 1)
		hotspot_procs_interp_cache(ctx->jvms, pid, words, (uint32_t)idx);
	return idx;
}

static void process_exit(void *vctx, uint32_t pid)
{
	struct proc_source_ctx *ctx = vctx;

	if (ctx->jvms)
		hotspot_procs_exited(ctx->jvms, pid);
	if (ctx->v8)
		v8_procs_exited(ctx->v8, pid);
}

/* A Python frame's location, read from the process while it lives (lang/python_procs.h). */
static int64_t python_frame(void *vctx, uint32_t pid, uint64_t code, uint64_t instr)
{
	struct proc_source_ctx *ctx = vctx;
	struct python_location loc;

	if (!ctx->py_frames)
		return -ENOENT;
	/* The process is read first: only the interning needs the lock (unless held already). */
	if (!ctx->py_procs || python_procs_resolve(ctx->py_procs, pid, code, instr, &loc))
		loc = (struct python_location){ .qualname = "[unknown Python function]",
						.filename = "<unknown>" };
	lock_symbols(ctx);
	return python_frames_intern(ctx->py_frames, loc.qualname, loc.filename, loc.first_line,
				    loc.line);
}

static uint32_t python_version(void *vctx, uint32_t pid)
{
	struct proc_source_ctx *ctx = vctx;

	return ctx->py_procs ? python_procs_version(ctx->py_procs, pid) : 0;
}

/* A PHP frame's function, read from the process while it lives (lang/php_procs.h). */
static int64_t php_frame(void *vctx, uint32_t pid, uint64_t func, uint64_t instr)
{
	struct proc_source_ctx *ctx = vctx;
	struct php_location loc = { "[unknown PHP function]", "", 0, false };
	struct hotspot_frame frame;
	uint32_t uid = JAVA_FRAMES_NO_USER;
	int err;

	/* The process is read first: only the interning needs the lock (unless held already). */
	err = php_procs_resolve(ctx->php_procs, pid, func, instr, &loc);
	if (err == -ENOMEM)
		return err;
	if (err)
		loc = (struct php_location){ "[unknown PHP function]", "", 0, false };
	php_procs_uid(ctx->php_procs, pid, &uid);
	snprintf(frame.name, sizeof(frame.name), "%s", loc.name);
	snprintf(frame.file, sizeof(frame.file), "%s", loc.file);
	frame.line = loc.line;
	lock_symbols(ctx);
	return java_frames_intern_lang(ctx->java_frames, uid, &frame, 1, JAVA_FRAMES_PHP);
}

/* A Ruby frame's location, read from the process while it lives (lang/ruby_procs.h). */
static int64_t ruby_frame(void *vctx, uint32_t pid, uint64_t iseq, uint64_t pc)
{
	struct proc_source_ctx *ctx = vctx;
	struct ruby_location loc;

	if (!ctx->rb_frames)
		return -ENOENT;
	if (!ctx->rb_procs || ruby_procs_resolve(ctx->rb_procs, pid, iseq, pc, &loc))
		loc = (struct ruby_location){ .label = "[unknown Ruby method]", .path = "<unknown>" };
	lock_symbols(ctx);
	return python_frames_intern(ctx->rb_frames, loc.label, loc.path, loc.first_line, loc.line);
}

static int read_cgroup(void *vctx, uint32_t pid, char **path, uint32_t *owner)
{
	struct proc_source_ctx *ctx = vctx;
	int err = cgroup_read_proc_path(ctx->proc_root, pid, path);

	*owner = CGROUP_OWNER_UNKNOWN;
	if (err)
		return err;
	/* Where the v2 hierarchy is mounted, found once (tests without one leave it unknown). */
	if (!ctx->cgroup_mount_looked) {
		ctx->cgroup_mount_looked = true;
		if (cgroup2_mount_from_mountinfo("/proc/self/mountinfo", ctx->cgroup_mount,
						 sizeof(ctx->cgroup_mount)))
			ctx->cgroup_mount[0] = '\0';
	}
	if (ctx->cgroup_mount[0])
		*owner = cgroup_path_owner(ctx->cgroup_mount, *path);
	return 0;
}

/*
 * The real uid (status's "Uid:" line, its first field), not the owner of
 * /proc/PID: that is root for a process that is not dumpable, which any
 * user can make theirs, and root's view would then take its frames for
 * root's own (issue 37). The kernel escapes the name line, so "\nUid:"
 * cannot be forged by it.
 */
static int read_uid(void *vctx, uint32_t pid, uint32_t *uid)
{
	struct proc_source_ctx *ctx = vctx;
	char path[PATH_MAX], buf[4096];
	const char *line;
	unsigned long v;
	size_t len;
	char *end;
	int err;

	snprintf(path, sizeof(path), "%s/%u/status", ctx->proc_root, pid);
	if ((err = read_small_file(path, buf, sizeof(buf) - 1, &len)))
		return err;
	buf[len] = '\0';
	line = strstr(buf, "\nUid:");
	if (!line)
		return -EINVAL;
	errno = 0;
	v = strtoul(line + 5, &end, 10);
	if (errno || end == line + 5 || v > UINT32_MAX)
		return -EINVAL;
	*uid = (uint32_t)v;
	return 0;
}

static bool thread_alive(void *vctx, uint32_t pid, uint32_t tid)
{
	struct proc_source_ctx *ctx = vctx;
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%u/task/%u", ctx->proc_root, pid, tid);
	/* Only a definite "no such thread" counts as gone: not EACCES or EMFILE. */
	return access(path, F_OK) == 0 || errno != ENOENT;
}

void proc_source_init(struct proc_source *src, struct proc_source_ctx *ctx)
{
	src->thread_alive = thread_alive;
	src->jit_object = jit_object;
	src->java_frame = ctx->jvms && ctx->java_frames ? java_frame : NULL;
	src->runtime_frame = (ctx->jvms || ctx->v8) && ctx->java_frames ? runtime_frame : NULL;
	src->process_exit = process_exit;
	src->read_info = read_info;
	src->read_kernel_thread = read_kernel_thread;
	src->read_maps = read_maps;
	src->object_for_mapping = object_for_mapping;
	src->read_cgroup = read_cgroup;
	src->read_uid = read_uid;
	src->python_frame = ctx->py_frames ? python_frame : NULL;
	src->python_version = python_version;
	src->php_frame = ctx->php_procs && ctx->java_frames ? php_frame : NULL;
	src->ruby_frame = ctx->rb_frames ? ruby_frame : NULL;
	src->ctx = ctx;
}
