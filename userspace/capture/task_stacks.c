// SPDX-License-Identifier: BSD-2-Clause
#include "task_stacks.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "bpfprof.skel.h"
#include "session.h"
#include "python_loader.h"
#include "unwind_loader.h"
#include "../lang/python_procs.h"
#include "../lang/python_walk.h"
#include "../unwind/user_walk.h"

struct walk_ctx {
	struct session *s;
	uint32_t pid;	  /* whose mappings are in s->unwind->proc (when proc_loaded) */
	bool proc_loaded; /* the BPF unwinder's mappings of pid are in s->unwind->proc */
	bool proc_tried;  /* pid's mappings were looked up */
	task_stack_want_fn want;
	task_stack_fn fn;
	void *fn_ctx;
	uint64_t ips[BPFPROF_MAX_FRAMES];
	uint64_t py[2 * BPFPROF_MAX_PYFRAMES];
};

static int read_mem(void *vctx, uint64_t addr, void *buf, size_t len)
{
	struct walk_ctx *c = vctx;
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_readv((pid_t)c->pid, &local, 1, &remote, 1, 0);

	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

/*
 * The Python walk's reads: through python_procs' reader, with its deadline
 * (the pointers are the process's own: a frame on a page its owner's FUSE
 * file never serves would hold this thread, the one that drains the rings
 * in continuous mode, forever).
 */
static int read_python(void *vctx, uint64_t addr, void *buf, size_t len)
{
	struct walk_ctx *c = vctx;

	if (!c->s->py || !c->s->py->procs)
		return -ENOENT;
	return python_procs_read(c->s->py->procs, c->pid, addr, buf, len);
}

/*
 * The mapping of pc as the BPF unwinder sees it (its per-process map, which
 * userspace wrote), with its file's table from the store; frame pointers
 * only when the recording does not unwind with CFI.
 */
static int find_mapping(void *vctx, uint64_t pc, struct user_walk_mapping *out)
{
	struct walk_ctx *c = vctx;
	struct unwind_loader *l = c->s->unwind;
	const struct unwind_store_file *f;
	const struct unwind_mapping *m;

	if (!l || !c->proc_loaded)
		return -ENOENT;
	m = unwind_proc_mapping_of(l->proc, pc);
	if (!m)
		return -ENOENT;
	*out = (struct user_walk_mapping){ .start = m->start, .end = m->end };
	f = unwind_store_find(&l->store, m->file.dev, m->file.ino);
	if (f && f->status == UNWIND_FILE_LOADED) {
		out->table = unwind_store_view(&l->store, f);
		out->map_to_file = (int64_t)(m->pgoff_bytes - m->start) + f->info.bias;
	}
	return 0;
}

/* The BPF unwinder's view of process pid (none: frame pointers only), once per process. */
static void load_proc(struct walk_ctx *c, uint32_t pid)
{
	struct unwind_loader *l = c->s->unwind;

	if (c->proc_tried && c->pid == pid)
		return;
	c->pid = pid;
	c->proc_tried = true;
	c->proc_loaded = l && bpf_map_lookup_elem(l->procs_fd, &pid, l->proc) == 0;
}

/*
 * A Python thread's frames, as the BPF walk would have read them at its
 * switch-out, which came before the recording (python_walk.h): for a
 * process published to py_procs, read through the same bounded reads.
 */
static void python_frames_of(struct walk_ctx *c, const struct task_stack_event *e,
			     struct task_stack *st)
{
	struct py_proc pp;
	bool truncated;

	if (!st->ustack_len || !e->fsbase || !c->s->skel->rodata->python_frames ||
	    bpf_map__lookup_elem(c->s->skel->maps.py_procs, &e->pid, sizeof(e->pid), &pp,
				 sizeof(pp), 0))
		return;
	st->py_len = python_walk_thread(&pp, e->fsbase, read_python, c, c->ips + st->kstack_len,
					st->ustack_len, c->py, &truncated);
	st->py = st->py_len ? c->py : NULL;
	if (truncated)
		st->flags |= SAMPLE_PY_TRUNCATED;
}

static int on_task(void *vctx, const void *data, size_t size)
{
	const struct task_stack_event *e = data;
	struct walk_ctx *c = vctx;
	struct user_walk_ops ops = { read_mem, find_mapping, c };
	struct task_stack st = { .pid = e->pid,
				 .tid = e->tid,
				 .ips = c->ips,
				 .flags = e->flags,
				 .state = e->state,
				 .sys_nr = e->sys_nr };
	uint8_t end = USTACK_END_UNKNOWN;

	if (size != sizeof(*e))
		return 0;
	memcpy(st.sys_args, e->sys_args, sizeof(st.sys_args));
	if (c->want && !c->want(c->fn_ctx, e->pid, e->tid, e->state, e->ip != 0)) {
		st.flags = 0;
		return c->fn(c->fn_ctx, &st);
	}
	st.kstack_len = e->kstack_len < BPFPROF_MAX_KSTACK ? e->kstack_len : BPFPROF_MAX_KSTACK;
	for (uint32_t i = 0; i < st.kstack_len; i++)
		c->ips[i] = e->kips[i];
	if (e->ip) {
		load_proc(c, e->pid);
		st.ustack_len = user_walk(&ops, e->ip, e->sp, e->bp, e->ax, c->ips + st.kstack_len,
					  BPFPROF_MAX_USTACK, &end);
	}
	if (end == USTACK_END_LIMIT || end == USTACK_END_STUCK)
		st.flags |= SAMPLE_USTACK_TRUNCATED;
	python_frames_of(c, e, &st);
	if (!st.ustack_len || !st.kstack_len)
		st.flags &= ~SAMPLE_USER_IN_SYSCALL;
	st.flags |= (uint32_t)end << SAMPLE_USTACK_END_SHIFT;
	return c->fn(c->fn_ctx, &st);
}

int task_stacks_of(struct session *s, uint32_t pid, task_stack_want_fn want, task_stack_fn fn,
		   void *ctx)
{
	struct task_stack_event *rec;
	struct walk_ctx *c;
	int err;

	if (!s->task_stacks)
		return -EOPNOTSUPP;
	c = calloc(1, sizeof(*c));
	rec = malloc(sizeof(*rec));
	if (!c || !rec) {
		free(c);
		free(rec);
		return -ENOMEM;
	}
	*c = (struct walk_ctx){ .s = s, .want = want, .fn = fn, .fn_ctx = ctx };
	s->skel->bss->task_stack_tgid = pid;
	err = session_run_iter(s->skel->progs.dump_task_stacks, NULL, rec, sizeof(*rec), on_task,
			       c);
	free(rec);
	free(c);
	return err;
}
