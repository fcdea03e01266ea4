// SPDX-License-Identifier: BSD-2-Clause
/*
 * The aggregator fed with synthetic sample records: threads and processes,
 * stack interning and order, address translation through mappings, main
 * threads, sorting. No BPF, no root.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "test.h"

/* A fake /proc: pid 100 "app" maps one object at [0x400000, 0x500000) with pgoff 0x1000. */
static int fake_reads_info, fake_reads_maps;

static int fake_info(void *ctx, uint32_t pid, char name[BPFPROF_COMM_LEN], char **cmdline)
{
	fake_reads_info++;
	if (pid != 100)
		return -ENOENT;
	strcpy(name, "app");
	*cmdline = strdup("app --flag");
	return 0;
}

static int fake_maps(void *ctx, struct model *m, struct process *p)
{
	struct proc_mapping pm = { 0x400000, 0x500000, 0x1000, OBJ_FIRST_FILE };

	fake_reads_maps++;
	if (p->pid != 100)
		return -ENOENT;
	p->mappings.len = 0;
	return vec_push(&p->mappings, pm);
}

static struct sample_event make_sample(uint32_t pid, uint32_t tid, uint64_t ts, const char *comm,
				       const uint64_t *k, int nk, const uint64_t *u, int nu)
{
	struct sample_event e = { 0 };

	e.hdr.kind = EV_SAMPLE;
	e.hdr.ts = ts;
	e.hdr.pid = pid;
	e.hdr.tid = tid;
	e.period = 1001001;
	strncpy(e.comm, comm, sizeof(e.comm) - 1);
	for (int i = 0; i < nk; i++)
		e.ips[i] = k[i];
	for (int i = 0; i < nu; i++)
		e.ips[nk + i] = u[i];
	e.kstack_len = (uint16_t)nk;
	e.ustack_len = (uint16_t)nu;
	e.hdr.size = (uint16_t)(offsetof(struct sample_event, ips) + 8 * (nk + nu));
	return e;
}

static void init_model(struct model *m)
{
	struct proc_source src = { fake_info, fake_maps, NULL };

	fake_reads_info = fake_reads_maps = 0;
	model_init(m, &src, 1000);
}

/* Walk a raw stack from leaf to root into frames[] (leaf first). */
static int stack_frames(const struct model *m, uint32_t stack, struct raw_frame *out, int max)
{
	int n = 0;

	while (stack != NO_INDEX && n < max) {
		out[n++] = m->frames.data[m->stacks.data[stack].frame];
		stack = m->stacks.data[stack].prefix;
	}
	return n;
}

static void sample_stack_is_user_root_then_kernel(void)
{
	struct model m;
	/* Leaf first, as bpf_get_stack gives them. */
	uint64_t k[] = { 0xffffffff81000100, 0xffffffff81000200 };
	uint64_t u[] = { 0x401234, 0x402000, 0x7fff0000 /* unmapped */ };
	struct sample_event e = make_sample(100, 101, 5000, "worker", k, 2, u, 3);
	struct raw_frame f[8];
	int n;

	init_model(&m);
	e.flags = SAMPLE_USER_IN_SYSCALL;
	CHECK_EQ_INT(model_add_record(&m, &e, e.hdr.size), 0);
	CHECK_EQ_INT(m.threads.len, 1);
	CHECK_EQ_INT(m.threads.data[0].samples.len, 1);
	n = stack_frames(&m, m.threads.data[0].samples.data[0].stack, f, 8);
	CHECK_EQ_INT(n, 5);
	/* Leaf: the kernel's interrupted IP, not a return address. */
	CHECK_EQ_INT(f[0].object, OBJ_KERNEL);
	CHECK_EQ_INT(f[0].offset, 0xffffffff81000100);
	CHECK_EQ_INT(f[0].is_return, 0);
	CHECK_EQ_INT(f[1].object, OBJ_KERNEL);
	CHECK_EQ_INT(f[1].is_return, 1);
	/* Innermost user frame: a return address since the thread was in a syscall. */
	CHECK_EQ_INT(f[2].object, OBJ_FIRST_FILE);
	CHECK_EQ_INT(f[2].offset, 0x401234 - 0x400000 + 0x1000);
	CHECK_EQ_INT(f[2].is_return, 1);
	CHECK_EQ_INT(f[3].offset, 0x402000 - 0x400000 + 0x1000);
	/* Root: the outermost caller, outside every mapping. */
	CHECK_EQ_INT(f[4].object, OBJ_UNKNOWN);
	CHECK_EQ_INT(f[4].offset, 0x7fff0000);
	CHECK_EQ_INT(m.stats.unknown_user_addrs, 1);
	CHECK_EQ_STR(m.processes.data[0].cmdline, "app --flag");
	model_free(&m);
}

/*
 * In the kernel through a page fault or an interrupt, the innermost user
 * frame is the instruction that faulted or was interrupted, often the
 * first of a function: it must be looked up as is, not as a return
 * address (one byte back would be the function before).
 */
static void user_leaf_is_exact_outside_a_syscall(void)
{
	struct model m;
	uint64_t k[] = { 0xffffffff81000100, 0xffffffff81000200 };
	uint64_t u[] = { 0x401000, 0x402000 };
	struct sample_event e = make_sample(100, 101, 5000, "worker", k, 2, u, 2);
	struct raw_frame f[8];

	init_model(&m);
	CHECK_EQ_INT(model_add_record(&m, &e, e.hdr.size), 0);
	CHECK_EQ_INT(stack_frames(&m, m.threads.data[0].samples.data[0].stack, f, 8), 4);
	CHECK_EQ_INT(f[2].offset, 0x401000 - 0x400000 + 0x1000);
	CHECK_EQ_INT(f[2].is_return, 0);
	CHECK_EQ_INT(f[3].is_return, 1);
	model_free(&m);
}

static void stacks_are_hash_consed_and_topological(void)
{
	struct model m;
	uint64_t u1[] = { 0x401000, 0x402000 }; /* leaf, root */
	uint64_t u2[] = { 0x403000, 0x402000 }; /* same root, other leaf */
	struct sample_event a = make_sample(100, 100, 10, "app", NULL, 0, u1, 2);
	struct sample_event b = make_sample(100, 100, 20, "app", NULL, 0, u2, 2);
	struct sample_event c = make_sample(100, 100, 30, "app", NULL, 0, u1, 2);
	const struct thread *t;

	init_model(&m);
	model_add_record(&m, &a, a.hdr.size);
	model_add_record(&m, &b, b.hdr.size);
	model_add_record(&m, &c, c.hdr.size);
	/* root, root->leaf1, root->leaf2 */
	CHECK_EQ_INT(m.stacks.len, 3);
	CHECK_EQ_INT(m.frames.len, 3);
	for (size_t i = 0; i < m.stacks.len; i++)
		CHECK(m.stacks.data[i].prefix == NO_INDEX || m.stacks.data[i].prefix < i);
	t = &m.threads.data[0];
	CHECK_EQ_INT(t->samples.len, 3);
	CHECK_EQ_INT(t->samples.data[0].stack, t->samples.data[2].stack);
	CHECK(t->samples.data[0].stack != t->samples.data[1].stack);
	/* The innermost user frame of a user-mode sample is exact, not a return address. */
	CHECK_EQ_INT(m.frames.data[m.stacks.data[t->samples.data[0].stack].frame].is_return, 0);
	/* Maps were read once, at first sight. */
	CHECK_EQ_INT(fake_reads_maps, 1);
	CHECK_EQ_INT(fake_reads_info, 1);
	model_free(&m);
}

static void main_threads_and_names(void)
{
	struct model m;
	uint64_t u[] = { 0x401000 };
	struct sample_event w1 = make_sample(100, 101, 30, "worker-1", NULL, 0, u, 1);
	struct sample_event w2 = make_sample(100, 102, 10, "worker-2", NULL, 0, u, 1);
	struct sample_event gone = make_sample(200, 201, 20, "shortlived", NULL, 0, u, 1);
	const struct process *p;

	init_model(&m);
	model_add_record(&m, &w1, w1.hdr.size);
	model_add_record(&m, &w2, w2.hdr.size);
	model_add_record(&m, &gone, gone.hdr.size);
	CHECK_EQ_INT(model_finish(&m), 0);
	CHECK_EQ_INT(m.processes.len, 2);

	/* pid 100: main thread 100 was never sampled; it exists, named after the process. */
	p = &m.processes.data[0];
	CHECK(p->main_thread != NO_INDEX);
	CHECK_EQ_INT(m.threads.data[p->main_thread].tid, 100);
	CHECK_EQ_STR(m.threads.data[p->main_thread].name, "app");
	CHECK_EQ_STR(p->name, "app");
	CHECK_EQ_INT(p->threads.len, 3);

	/* pid 200 exited before we looked: named from its only thread's comm. */
	p = &m.processes.data[1];
	CHECK(p->gone);
	CHECK_EQ_STR(p->name, "shortlived");
	CHECK_EQ_INT(m.threads.data[p->main_thread].tid, 200);
	CHECK(p->cmdline == NULL);
	CHECK_EQ_INT(model_finish(&m), 0); /* idempotent */
	CHECK_EQ_INT(m.processes.data[0].threads.len, 3);
	model_free(&m);
}

static void samples_sorted_per_thread(void)
{
	struct model m;
	uint64_t u[] = { 0x401000 };
	uint64_t ts[] = { 50, 10, 40, 20, 30 };
	const struct thread *t;

	init_model(&m);
	for (int i = 0; i < 5; i++) {
		struct sample_event e = make_sample(100, 100, ts[i], "app", NULL, 0, u, 1);

		model_add_record(&m, &e, e.hdr.size);
	}
	model_finish(&m);
	t = &m.threads.data[0];
	for (size_t i = 1; i < t->samples.len; i++)
		CHECK(t->samples.data[i - 1].ts <= t->samples.data[i].ts);
	CHECK_EQ_INT(t->samples.data[0].ts, 10);
	/* Without the scheduler replay, a sample stands for its period. */
	for (size_t i = 0; i < t->samples.len; i++)
		CHECK_EQ_INT(t->samples.data[i].cpu_delta_ns, 1001001);
	CHECK_EQ_INT(t->first_ts, 10);
	CHECK_EQ_INT(t->last_ts, 50);
	model_free(&m);
}

static void idle_threads_per_cpu(void)
{
	struct model m;
	uint64_t k[] = { 0xffffffff81000500 };
	struct sample_event a = make_sample(0, 0, 10, "swapper/0", k, 1, NULL, 0);
	struct sample_event b = make_sample(0, 0, 11, "swapper/1", k, 1, NULL, 0);
	const struct process *p;

	a.hdr.cpu = 0;
	b.hdr.cpu = 1;
	init_model(&m);
	model_add_record(&m, &a, a.hdr.size);
	model_add_record(&m, &b, b.hdr.size);
	model_finish(&m);
	p = &m.processes.data[0];
	CHECK(p->is_idle);
	/* Two CPUs plus the process's empty main thread. */
	CHECK_EQ_INT(p->threads.len, 3);
	CHECK_EQ_STR(m.threads.data[0].name, "swapper/0");
	CHECK_EQ_STR(m.threads.data[1].name, "swapper/1");
	CHECK_EQ_INT(m.threads.data[p->main_thread].samples.len, 0);
	model_free(&m);
}

static void malformed_records_are_counted_not_trusted(void)
{
	struct model m;
	uint64_t u[] = { 0x401000 };
	struct sample_event e = make_sample(100, 100, 10, "app", NULL, 0, u, 1);

	init_model(&m);
	e.ustack_len = 200; /* more frames than the record holds */
	CHECK_EQ_INT(model_add_record(&m, &e, e.hdr.size), 0);
	e.ustack_len = 1;
	CHECK_EQ_INT(model_add_record(&m, &e, 10), 0); /* shorter than a header */
	e.hdr.kind = 77;			       /* a kind from a newer BPF object */
	CHECK_EQ_INT(model_add_record(&m, &e, e.hdr.size), 0);
	CHECK_EQ_INT(m.stats.events_malformed, 3);
	CHECK_EQ_INT(m.stats.samples, 0);
	model_free(&m);
}

static void truncated_user_stack_gets_marker_root(void)
{
	struct model m;
	uint64_t u[] = { 0x401000, 0x402000 };
	struct sample_event e = make_sample(100, 100, 10, "app", NULL, 0, u, 2);
	struct raw_frame f[4];
	int n;

	e.flags = SAMPLE_USTACK_TRUNCATED;
	init_model(&m);
	model_add_record(&m, &e, e.hdr.size);
	n = stack_frames(&m, m.threads.data[0].samples.data[0].stack, f, 4);
	CHECK_EQ_INT(n, 3);
	CHECK_EQ_INT(f[2].object, OBJ_TRUNCATED);
	CHECK_EQ_INT(m.stats.truncated_stacks, 1);
	model_free(&m);
}

/*
 * A frame-pointer chain that did not move (issue 37): one address no code
 * is at, repeated to the depth limit, ends at its first occurrence under a
 * marker, as does a loop through a list; a recursion repeats an address in
 * code, and stays whole.
 */
static void repeated_unknown_address_is_cut(void)
{
	struct model m;
	uint64_t stuck[] = { 0x401000, 0x402000, 0x7000, 0x7000, 0x7000, 0x7000 };
	uint64_t loop[] = { 0x401000, 0x7000, 0x8000, 0x9000, 0x7000, 0x8000, 0x9000 };
	uint64_t recursion[] = { 0x401000, 0x402000, 0x402000, 0x402000, 0x403000 };
	struct sample_event e = make_sample(100, 100, 10, "app", NULL, 0, stuck, 6);
	struct raw_frame f[8];
	int n;

	init_model(&m);
	model_add_record(&m, &e, e.hdr.size);
	n = stack_frames(&m, m.threads.data[0].samples.data[0].stack, f, 8);
	CHECK_EQ_INT(n, 4);
	CHECK_EQ_INT(f[2].object, OBJ_UNKNOWN);
	CHECK_EQ_INT(f[2].offset, 0x7000);
	CHECK_EQ_INT(f[3].object, OBJ_TRUNCATED);
	CHECK_EQ_INT(m.stats.truncated_stacks, 1);
	e = make_sample(100, 100, 20, "app", NULL, 0, recursion, 5);
	model_add_record(&m, &e, e.hdr.size);
	n = stack_frames(&m, m.threads.data[0].samples.data[1].stack, f, 8);
	CHECK_EQ_INT(n, 5);
	CHECK_EQ_INT(m.stats.truncated_stacks, 1);
	e = make_sample(100, 100, 30, "app", NULL, 0, loop, 7);
	model_add_record(&m, &e, e.hdr.size);
	n = stack_frames(&m, m.threads.data[0].samples.data[2].stack, f, 8);
	CHECK_EQ_INT(n, 5);
	CHECK_EQ_INT(f[3].offset, 0x9000);
	CHECK_EQ_INT(f[4].object, OBJ_TRUNCATED);
	model_free(&m);
}

/* Python frames: the code object's address names it, whatever the instruction. */
static int64_t fake_python_frame(void *ctx, uint32_t pid, uint64_t code, uint64_t instr)
{
	return pid == 100 ? (int64_t)code : -ENOMEM;
}

/* Appends Python frames (code, instr) after the native ones. */
static void add_python(struct sample_event *e, const uint64_t *py, int n)
{
	for (int i = 0; i < 2 * n; i++)
		e->ips[e->kstack_len + e->ustack_len + i] = py[i];
	e->py_len = (uint16_t)n;
	e->hdr.size = (uint16_t)(e->hdr.size + 16 * n);
}

/*
 * Each run of the interpreter loop (a user frame tagged USTACK_PY_EVAL) is
 * replaced by its group of Python frames, innermost loop by innermost
 * group, outermost first; a loop without a group stays a C frame.
 */
static void python_frames_replace_the_interpreter_loop(void)
{
	struct model m;
	struct proc_source src = { fake_info, fake_maps, NULL };
	uint64_t u[] = { 0x401000, 0x402000 | USTACK_PY_EVAL, 0x403000, 0x404000 | USTACK_PY_EVAL,
			 0x405000 };
	/* A, B (B entered the inner loop), C, D (D entered the outer one). */
	uint64_t py[] = { 0xa0, 0x10, 0xb0, 0x20 | PY_FRAME_ENTRY,
			  0xc0, 0x30, 0xd0, 0x40 | PY_FRAME_ENTRY };
	struct sample_event e = make_sample(100, 100, 5000, "py", NULL, 0, u, 5);
	struct raw_frame f[16];
	int n;

	src.python_frame = fake_python_frame;
	model_init(&m, &src, 1000);
	add_python(&e, py, 4);
	CHECK_EQ_INT(model_add_record(&m, &e, e.hdr.size), 0);
	n = stack_frames(&m, m.threads.data[0].samples.data[0].stack, f, 16);
	CHECK_EQ_INT(n, 7);
	/* Leaf first: C leaf, A, B, C frame, C, D, main. */
	CHECK_EQ_INT(f[0].offset, 0x401000 - 0x400000 + 0x1000);
	CHECK(f[1].object == OBJ_PYTHON && f[1].offset == 0xa0);
	CHECK(f[2].object == OBJ_PYTHON && f[2].offset == 0xb0);
	CHECK_EQ_INT(f[3].offset, 0x403000 - 0x400000 + 0x1000);
	CHECK(f[4].object == OBJ_PYTHON && f[4].offset == 0xc0);
	CHECK(f[5].object == OBJ_PYTHON && f[5].offset == 0xd0);
	CHECK_EQ_INT(f[6].offset, 0x405000 - 0x400000 + 0x1000);

	/* One group for two loops: the inner loop gets it, the outer stays C (untagged). */
	e = make_sample(100, 100, 6000, "py", NULL, 0, u, 5);
	add_python(&e, py, 2);
	CHECK_EQ_INT(model_add_record(&m, &e, e.hdr.size), 0);
	n = stack_frames(&m, m.threads.data[0].samples.data[1].stack, f, 16);
	CHECK_EQ_INT(n, 6);
	CHECK(f[1].object == OBJ_PYTHON && f[1].offset == 0xa0);
	CHECK(f[2].object == OBJ_PYTHON && f[2].offset == 0xb0);
	CHECK_EQ_INT(f[4].object, OBJ_FIRST_FILE);
	CHECK_EQ_INT(f[4].offset, 0x404000 - 0x400000 + 0x1000);

	/* More Python frames than the record holds, or than any sample may have: malformed. */
	e = make_sample(100, 100, 7000, "py", NULL, 0, u, 5);
	add_python(&e, py, 4);
	CHECK_EQ_INT(model_add_record(&m, &e, e.hdr.size - 8), 0);
	e.py_len = BPFPROF_MAX_PYFRAMES + 1;
	CHECK_EQ_INT(model_add_record(&m, &e, sizeof(e)), 0);
	CHECK_EQ_INT(m.stats.events_malformed, 2);
	CHECK_EQ_INT(m.threads.data[0].samples.len, 2);
	model_free(&m);
}

/* PHP frames (issue 40): the function's address names it; its line is the word's. */
static int64_t fake_php_frame(void *ctx, uint32_t pid, uint64_t func, uint64_t instr)
{
	(void)ctx;
	return pid == 100 ? (int64_t)(func | instr << 16) : -ENOMEM;
}

/*
 * A PHP sample (interp INTERP_PHP): execute_ex's frame replaced by its PHP
 * frames, named by php_frame under OBJ_PHP, not python_frame; the VM's
 * handlers (USTACK_INTERP_VM) left out.
 */
static void php_frames_replace_the_vm(void)
{
	struct model m;
	struct proc_source src = { fake_info, fake_maps, NULL };
	/* A handler leafward of the loop, the loop, main. */
	uint64_t u[] = { 0x401000 | USTACK_INTERP_VM, 0x402000 | USTACK_PY_EVAL, 0x405000 };
	/* inner (line 3), outer (line 7, the loop's first). */
	uint64_t php[] = { 0xa0, 3 << 1, 0xb0, (7 << 1) | PY_FRAME_ENTRY };
	struct sample_event e = make_sample(100, 100, 5000, "php", NULL, 0, u, 3);
	struct raw_frame f[16];
	int n;

	src.python_frame = fake_python_frame;
	src.php_frame = fake_php_frame;
	model_init(&m, &src, 1000);
	add_python(&e, php, 2);
	e.interp = INTERP_PHP;
	CHECK_EQ_INT(model_add_record(&m, &e, e.hdr.size), 0);
	n = stack_frames(&m, m.threads.data[0].samples.data[0].stack, f, 16);
	/* Leaf first: inner, outer, main; no handler frame. */
	CHECK_EQ_INT(n, 3);
	CHECK(f[0].object == OBJ_PHP && f[0].offset == (0xa0 | 6 << 16));
	CHECK(f[1].object == OBJ_PHP && f[1].offset == (0xb0 | 14 << 16));
	CHECK_EQ_INT(f[2].offset, 0x405000 - 0x400000 + 0x1000);
	model_free(&m);
}

/*
 * The VM's own frame under a loop that keeps its C frame (more loops than
 * groups: the outer ones stay) stays too; under the loop its group took,
 * it goes (merge review, finding 3).
 */
static void vm_frame_stays_under_a_loop_left_a_c_frame(void)
{
	struct model m;
	struct proc_source src = { fake_info, fake_maps, NULL };
	/* Inner loop, a handler of the outer loop's, the outer loop, main. */
	uint64_t u[] = { 0x402000 | USTACK_PY_EVAL, 0x403000 | USTACK_INTERP_VM,
			 0x404000 | USTACK_PY_EVAL, 0x405000 };
	uint64_t php[] = { 0xa0, (3 << 1) | PY_FRAME_ENTRY };
	struct sample_event e = make_sample(100, 100, 5000, "php", NULL, 0, u, 4);
	struct raw_frame f[16];
	int n;

	src.php_frame = fake_php_frame;
	model_init(&m, &src, 1000);
	add_python(&e, php, 1);
	e.interp = INTERP_PHP;
	CHECK_EQ_INT(model_add_record(&m, &e, e.hdr.size), 0);
	n = stack_frames(&m, m.threads.data[0].samples.data[0].stack, f, 16);
	/* Leaf first: the inner loop's PHP frame, the handler, the outer loop, main. */
	CHECK_EQ_INT(n, 4);
	CHECK(f[0].object == OBJ_PHP && f[0].offset == (0xa0 | 6 << 16));
	CHECK_EQ_INT(f[1].offset, 0x403000 - 0x400000 + 0x1000);
	CHECK_EQ_INT(f[2].offset, 0x404000 - 0x400000 + 0x1000);
	CHECK_EQ_INT(f[3].offset, 0x405000 - 0x400000 + 0x1000);
	model_free(&m);
}

/*
 * Ruby frames (interp INTERP_RUBY) go in place of rb_vm_exec's frame
 * (USTACK_PY_EVAL) under OBJ_RUBY, and its core loop's frame
 * (USTACK_INTERP_VM) is left out; without a namer both stay C frames.
 */
static void ruby_frames_replace_the_vm_and_its_core_loop(void)
{
	struct model m;
	struct proc_source src = { fake_info, fake_maps, NULL };
	uint64_t u[] = { 0x401000 | USTACK_INTERP_VM, 0x402000 | USTACK_PY_EVAL, 0x405000 };
	uint64_t rb[] = { 0xa0, 0x10, 0xb0, 0x20 | PY_FRAME_ENTRY };
	struct sample_event e = make_sample(100, 100, 5000, "rb", NULL, 0, u, 3);
	struct raw_frame f[16];
	int n;

	src.ruby_frame = fake_python_frame;
	model_init(&m, &src, 1000);
	add_python(&e, rb, 2);
	e.interp = INTERP_RUBY;
	CHECK_EQ_INT(model_add_record(&m, &e, e.hdr.size), 0);
	n = stack_frames(&m, m.threads.data[0].samples.data[0].stack, f, 16);
	CHECK_EQ_INT(n, 3);
	CHECK(f[0].object == OBJ_RUBY && f[0].offset == 0xa0);
	CHECK(f[1].object == OBJ_RUBY && f[1].offset == 0xb0);
	CHECK_EQ_INT(f[2].offset, 0x405000 - 0x400000 + 0x1000);
	model_free(&m);

	/* Python's namer only: Ruby frames are not Python's, the C frames stay. */
	src.ruby_frame = NULL;
	src.python_frame = fake_python_frame;
	model_init(&m, &src, 1000);
	CHECK_EQ_INT(model_add_record(&m, &e, e.hdr.size), 0);
	n = stack_frames(&m, m.threads.data[0].samples.data[0].stack, f, 16);
	CHECK_EQ_INT(n, 3);
	CHECK_EQ_INT(f[0].offset, 0x401000 - 0x400000 + 0x1000);
	CHECK_EQ_INT(f[1].offset, 0x402000 - 0x400000 + 0x1000);
	model_free(&m);
}

/* Runtime frames: a record names its frame by its words (word 0's low bits), unless 0xbad. */
static int runtime_calls;

static int64_t fake_runtime_frame(void *ctx, uint32_t pid, uint32_t uid, uint32_t kind, uint64_t pc,
				  bool is_return, const uint64_t words[RT_WORDS])
{
	runtime_calls++;
	if (pid != 100 || kind != RT_KIND_HOTSPOT || words[0] == 0xbad || words[3] != 0x33)
		return -ENOENT;
	return (int64_t)(words[0] + (is_return ? 0 : 0x1000) + (pc & 0xf));
}

/* Appends a runtime record for user frame `frame`: words w0, 0, 0, 0x33. */
static void add_runtime(struct sample_event *e, uint32_t frame, uint64_t w0)
{
	__u64 *rec = &e->ips[e->kstack_len + e->ustack_len + RT_REC_WORDS * e->rt_len];

	rec[0] = frame | ((uint64_t)RT_KIND_HOTSPOT << 16);
	rec[1] = w0;
	rec[2] = rec[3] = 0;
	rec[4] = 0x33;
	e->rt_len++;
	e->hdr.size = (uint16_t)(e->hdr.size + 8 * RT_REC_WORDS);
}

/*
 * Runtime records (bpf/runtime.bpf.h) name the user frames they are tied
 * to, by index, before any other source; a frame whose words name nothing,
 * or that has no record, is resolved as before. Off-CPU stacks too.
 */
static void runtime_records_name_their_frames(void)
{
	struct model m;
	struct proc_source src = { fake_info, fake_maps, NULL };
	uint64_t u[] = { 0x401001, 0x402002, 0x403003, 0x404004 };
	struct sample_event e = make_sample(100, 100, 5000, "java", NULL, 0, u, 4);
	struct raw_frame f[16];
	int n;

	src.runtime_frame = fake_runtime_frame;
	model_init(&m, &src, 1000);
	add_runtime(&e, 0, 0x70);
	add_runtime(&e, 2, 0xbad);
	add_runtime(&e, 3, 0x90);
	CHECK_EQ_INT(model_add_record(&m, &e, e.hdr.size), 0);
	CHECK_EQ_INT(runtime_calls, 3);
	n = stack_frames(&m, m.threads.data[0].samples.data[0].stack, f, 16);
	CHECK_EQ_INT(n, 4);
	/* The leaf, not a return address (no syscall): its record says so. */
	CHECK(f[0].object == OBJ_JAVA && f[0].offset == 0x70 + 0x1000 + 1);
	CHECK_EQ_INT(f[1].object, OBJ_FIRST_FILE);
	CHECK_EQ_INT(f[2].object, OBJ_FIRST_FILE); /* its words named nothing */
	CHECK(f[3].object == OBJ_JAVA && f[3].offset == 0x90 + 4);

	/* More records than the record holds, than any stack may have, or beside Python frames. */
	CHECK_EQ_INT(model_add_record(&m, &e, e.hdr.size - 8), 0);
	e.rt_len = BPFPROF_MAX_RTFRAMES + 1;
	CHECK_EQ_INT(model_add_record(&m, &e, sizeof(e)), 0);
	e.rt_len = 3;
	e.py_len = 1;
	CHECK_EQ_INT(model_add_record(&m, &e, sizeof(e)), 0);
	CHECK_EQ_INT(m.stats.events_malformed, 3);
	CHECK_EQ_INT(m.threads.data[0].samples.len, 1);
	model_free(&m);
}

/*
 * A sample's user stack finished later from its stack copy
 * (capture/stack_finish.c, issue 38): the sample keeps its place and gets
 * the whole stack and its end; one no longer in the model is counted.
 */
static void restack_rewrites_a_sample_in_place(void)
{
	struct model m;
	uint64_t k[] = { 0xffffffff81000100 };
	uint64_t part[] = { 0x401000, 0x402000 };
	uint64_t whole[] = { 0x401000, 0x402000, 0x403000, 0x404000 };
	struct sample_event e = make_sample(100, 101, 5000, "worker", k, 1, part, 2);
	struct sample_event next = make_sample(100, 101, 6000, "worker", k, 1, part, 2);
	struct sample_event r = make_sample(100, 101, 5000, "worker", k, 1, whole, 4);
	struct raw_frame f[8];
	uint32_t partial_stack;

	init_model(&m);
	e.flags = SAMPLE_USTACK_COPIED | (USTACK_END_NO_CFI << SAMPLE_USTACK_END_SHIFT);
	next.flags = USTACK_END_NO_CFI << SAMPLE_USTACK_END_SHIFT;
	CHECK_EQ_INT(model_add_record(&m, &e, e.hdr.size), 0);
	CHECK_EQ_INT(model_add_record(&m, &next, next.hdr.size), 0);
	partial_stack = m.threads.data[0].samples.data[1].stack;
	r.hdr.kind = EV_SAMPLE_RESTACK;
	r.flags = USTACK_END_ROOT << SAMPLE_USTACK_END_SHIFT;
	CHECK_EQ_INT(model_add_record(&m, &r, r.hdr.size), 0);
	CHECK_EQ_INT(m.threads.data[0].samples.len, 2);
	CHECK_EQ_INT(m.stats.samples, 2);
	CHECK_EQ_INT(m.stats.restacks, 1);
	CHECK_EQ_INT(m.threads.data[0].samples.data[0].ts, 5000);
	CHECK_EQ_INT(m.threads.data[0].samples.data[0].ustack_end, USTACK_END_ROOT);
	CHECK_EQ_INT(stack_frames(&m, m.threads.data[0].samples.data[0].stack, f, 8), 5);
	CHECK_EQ_INT(f[4].offset, 0x404000 - 0x400000 + 0x1000);
	/* The next sample, of the same partial stack, is untouched. */
	CHECK_EQ_INT(m.threads.data[0].samples.data[1].stack, partial_stack);
	CHECK_EQ_INT(m.threads.data[0].samples.data[1].ustack_end, USTACK_END_NO_CFI);
	/* No sample at that time: counted, nothing added. */
	r.hdr.ts = 7000;
	CHECK_EQ_INT(model_add_record(&m, &r, r.hdr.size), 0);
	CHECK_EQ_INT(m.stats.restacks_missed, 1);
	CHECK_EQ_INT(m.threads.data[0].samples.len, 2);
	model_free(&m);
}

/*
 * A copied sample whose kernel stack was cut counts once in
 * truncated_stacks, restacked or not; one whose partial user stack was cut
 * and whose finished one reaches its root no longer counts (S2/S5 review,
 * finding 14).
 */
static void restack_counts_a_cut_stack_once(void)
{
	struct model m;
	uint64_t k[] = { 0xffffffff81000100 };
	uint64_t part[] = { 0x401000, 0x402000 };
	uint64_t whole[] = { 0x401000, 0x402000, 0x403000, 0x404000 };
	struct sample_event e = make_sample(100, 101, 5000, "worker", k, 1, part, 2);
	struct sample_event r = make_sample(100, 101, 5000, "worker", k, 1, whole, 4);

	init_model(&m);
	e.flags = SAMPLE_USTACK_COPIED | SAMPLE_KSTACK_TRUNCATED |
		  (USTACK_END_NO_CFI << SAMPLE_USTACK_END_SHIFT);
	CHECK_EQ_INT(model_add_record(&m, &e, e.hdr.size), 0);
	CHECK_EQ_INT(m.stats.truncated_stacks, 1);
	r.hdr.kind = EV_SAMPLE_RESTACK;
	r.flags = SAMPLE_KSTACK_TRUNCATED | (USTACK_END_ROOT << SAMPLE_USTACK_END_SHIFT);
	CHECK_EQ_INT(model_add_record(&m, &r, r.hdr.size), 0);
	CHECK_EQ_INT(m.stats.restacks, 1);
	CHECK_EQ_INT(m.stats.truncated_stacks, 1);

	/* Cut at the user side, then whole. */
	e.hdr.ts = r.hdr.ts = 6000;
	e.flags = SAMPLE_USTACK_COPIED | SAMPLE_USTACK_TRUNCATED |
		  (USTACK_END_LIMIT << SAMPLE_USTACK_END_SHIFT);
	CHECK_EQ_INT(model_add_record(&m, &e, e.hdr.size), 0);
	CHECK_EQ_INT(m.stats.truncated_stacks, 2);
	r.flags = USTACK_END_ROOT << SAMPLE_USTACK_END_SHIFT;
	CHECK_EQ_INT(model_add_record(&m, &r, r.hdr.size), 0);
	CHECK_EQ_INT(m.stats.restacks, 2);
	CHECK_EQ_INT(m.stats.truncated_stacks, 1);
	model_free(&m);
}

int main(void)
{
	RUN(sample_stack_is_user_root_then_kernel);
	RUN(user_leaf_is_exact_outside_a_syscall);
	RUN(stacks_are_hash_consed_and_topological);
	RUN(main_threads_and_names);
	RUN(samples_sorted_per_thread);
	RUN(idle_threads_per_cpu);
	RUN(malformed_records_are_counted_not_trusted);
	RUN(truncated_user_stack_gets_marker_root);
	RUN(repeated_unknown_address_is_cut);
	RUN(python_frames_replace_the_interpreter_loop);
	RUN(php_frames_replace_the_vm);
	RUN(vm_frame_stays_under_a_loop_left_a_c_frame);
	RUN(ruby_frames_replace_the_vm_and_its_core_loop);
	RUN(runtime_records_name_their_frames);
	RUN(restack_rewrites_a_sample_in_place);
	RUN(restack_counts_a_cut_stack_once);
	return test_summary();
}
