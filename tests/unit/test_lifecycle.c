// SPDX-License-Identifier: BSD-2-Clause
/*
 * Processes over time in the model: forks inherit mappings, execs start a
 * new process image of the same pid, exits end threads and processes,
 * renames follow, late samples land in the image that was running, and new
 * mappings replace what they overlap. No BPF, no root.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "symbols/proc_maps.h"
#include "test.h"

#define MS 1000000ULL
#define T0 (1000 * MS)

/* The object of a mapping is 100 + its inode, so tests can tell files apart. */
static int64_t fake_object(void *ctx, uint32_t pid, const struct map_entry *e)
{
	(void)ctx;
	(void)pid;
	return 100 + (int64_t)e->inode;
}

/* kthreadd (pid 2) is a kernel thread; every other pid /proc could read is a user process. */
static int fake_kernel_thread(void *ctx, uint32_t pid)
{
	(void)ctx;
	return pid == 2 ? 1 : pid >= 900 ? -ENOENT : 0;
}

static void init_model(struct model *m)
{
	struct proc_source src = { .object_for_mapping = fake_object,
				   .read_kernel_thread = fake_kernel_thread };

	model_init(m, &src, T0);
	m->lifecycle = true;
	m->all_processes = true;
}

static struct map_entry exe_map(uint64_t start, uint64_t end, uint64_t pgoff, uint64_t inode)
{
	return (struct map_entry){ .start = start,
				   .end = end,
				   .pgoff = pgoff,
				   .inode = inode,
				   .readable = true,
				   .executable = true,
				   .path = "/bin/x" };
}

/*
 * Feed a one-frame user sample at `ip` from a thread whose comm is `comm`;
 * returns the object its frame resolved to.
 */
static uint32_t sample_object(struct model *m, uint32_t pid, uint32_t tid, const char *comm,
			      uint64_t ts, uint64_t ip, const struct thread **t_out)
{
	struct sample_event e = { 0 };
	const struct thread *t;

	e.hdr.kind = EV_SAMPLE;
	e.hdr.ts = ts;
	e.hdr.pid = pid;
	e.hdr.tid = tid;
	e.period = 1000000;
	strncpy(e.comm, comm, sizeof(e.comm) - 1);
	e.ips[0] = ip;
	e.ustack_len = 1;
	e.hdr.size = (uint16_t)(offsetof(struct sample_event, ips) + 8);
	CHECK_EQ_INT(model_add_record(m, &e, e.hdr.size), 0);
	t = model_thread(m, pid, tid, -1, ts);
	if (t_out)
		*t_out = t;
	if (!t || !t->samples.len)
		return UINT32_MAX;
	return m->frames.data[m->stacks.data[vec_last(&t->samples).stack].frame].object;
}

static size_t images_of(const struct model *m, uint32_t pid)
{
	size_t n = 0;

	for (size_t i = 0; i < m->processes.len; i++)
		n += m->processes.data[i].pid == pid;
	return n;
}

static void fork_inherits_mappings_and_lifetimes(void)
{
	struct model m;
	const struct thread *t;
	const struct process *p;
	struct map_entry e = exe_map(0x400000, 0x500000, 0, 7);

	init_model(&m);
	/* The parent, its fork happened before the recording: mappings from the side-band. */
	CHECK_EQ_INT(model_fork(&m, 1, 1, 100, 100, T0 - MS), 0);
	CHECK_EQ_INT(model_mmap(&m, 100, T0 - MS, &e), 0);
	CHECK_EQ_INT(model_comm(&m, 100, 100, "parent", false, T0), 0);
	CHECK_EQ_INT(model_fork(&m, 100, 100, 200, 200, T0 + 10 * MS), 0);
	CHECK_EQ_INT(model_fork(&m, 200, 200, 200, 201, T0 + 11 * MS), 0);
	CHECK_EQ_INT(sample_object(&m, 200, 201, "parent", T0 + 12 * MS, 0x401000, &t), 107);
	CHECK(t && t->registered && t->register_ts == T0 + 11 * MS);
	CHECK_EQ_STR(t ? t->name : "", "parent");
	CHECK_EQ_INT(model_exit(&m, 200, 201, T0 + 14 * MS), 0);
	CHECK_EQ_INT(model_exit(&m, 200, 200, T0 + 15 * MS), 0);
	CHECK_EQ_INT(model_finish(&m), 0);
	p = model_process(&m, 200, T0 + 12 * MS);
	CHECK(p && p->started && p->start_ts == T0 + 10 * MS);
	CHECK(p && p->ended && p->end_ts == T0 + 15 * MS);
	CHECK_EQ_STR(p ? p->name : "", "parent");
	t = model_thread(&m, 200, 201, -1, T0 + 12 * MS);
	CHECK(t && t->exited && t->unregister_ts == T0 + 14 * MS);
	/* The parent lives on. */
	p = model_process(&m, 100, T0 + 12 * MS);
	CHECK(p && !p->ended);
	model_free(&m);
}

static void exec_starts_a_new_image(void)
{
	struct model m;
	struct map_entry old_exe = exe_map(0x400000, 0x500000, 0, 7);
	struct map_entry new_exe = exe_map(0x400000, 0x480000, 0, 9);
	const struct thread *t_old, *t_new;
	const struct process *p_old, *p_new;

	init_model(&m);
	CHECK_EQ_INT(model_fork(&m, 1, 1, 300, 300, T0 + 1 * MS), 0);
	CHECK_EQ_INT(model_mmap(&m, 300, T0 + 1 * MS, &old_exe), 0);
	/* The old program ran: its image stays a process of its own. */
	CHECK_EQ_INT(sample_object(&m, 300, 300, "oldprog", T0 + 2 * MS, 0x401000, NULL), 107);
	CHECK_EQ_INT(model_comm(&m, 300, 300, "newprog", true, T0 + 5 * MS), 0);
	CHECK_EQ_INT(model_mmap(&m, 300, T0 + 5 * MS + 1, &new_exe), 0);
	CHECK_EQ_INT(images_of(&m, 300), 2);
	/* After the exec: the new binary. */
	CHECK_EQ_INT(sample_object(&m, 300, 300, "newprog", T0 + 6 * MS, 0x401000, &t_new), 109);
	/* A sample from before the exec drained late: the old image and its thread. */
	CHECK_EQ_INT(sample_object(&m, 300, 300, "newprog", T0 + 4 * MS, 0x401000, &t_old), 107);
	CHECK(t_old && t_new && t_old != t_new);
	/* Outside the new, smaller text: unknown, not the old binary. */
	CHECK_EQ_INT(sample_object(&m, 300, 300, "newprog", T0 + 7 * MS, 0x490000, NULL),
		     OBJ_UNKNOWN);
	CHECK_EQ_INT(model_finish(&m), 0);
	p_old = model_process(&m, 300, T0 + 4 * MS);
	p_new = model_process(&m, 300, T0 + 6 * MS);
	CHECK(p_old && p_new && p_old != p_new);
	if (!p_old || !p_new)
		goto out;
	CHECK(p_old->ended && p_old->end_ts == T0 + 5 * MS);
	CHECK(p_new->started && p_new->start_ts == T0 + 5 * MS && !p_new->ended);
	CHECK_EQ_STR(p_new->name, "newprog");
	t_old = model_thread(&m, 300, 300, -1, T0 + 4 * MS);
	t_new = model_thread(&m, 300, 300, -1, T0 + 6 * MS);
	CHECK(t_old && t_old->exited && t_old->unregister_ts == T0 + 5 * MS);
	CHECK(t_new && t_new->registered && t_new->register_ts == T0 + 5 * MS);
	CHECK_EQ_INT(t_old ? t_old->samples.len : 0, 2);
	CHECK_EQ_INT(t_new ? t_new->samples.len : 0, 2);
out:
	model_free(&m);
}

/*
 * A thread the new program starts, whose first sample is drained before
 * the exec's side-band record: it belongs to the new image, alive, not to
 * the old one (whose other threads the exec killed), whether the old image
 * ran code of its own or not.
 */
static void early_thread_of_the_new_program(void)
{
	for (int old_ran = 0; old_ran <= 1; old_ran++) {
		struct model m;
		struct map_entry old_exe = exe_map(0x400000, 0x500000, 0, 7);
		const struct thread *early;
		const struct process *p_new;

		init_model(&m);
		CHECK_EQ_INT(model_fork(&m, 1, 1, 400, 400, T0 + 1 * MS), 0);
		CHECK_EQ_INT(model_mmap(&m, 400, T0 + 1 * MS, &old_exe), 0);
		if (old_ran)
			CHECK_EQ_INT(
				sample_object(&m, 400, 400, "old", T0 + 2 * MS, 0x401000, NULL),
				107);
		/* Thread 402 of the new program, sampled at 6 ms; the exec (5 ms) is read after. */
		sample_object(&m, 400, 402, "worker", T0 + 6 * MS, 0x401000, NULL);
		CHECK_EQ_INT(model_comm(&m, 400, 400, "new", true, T0 + 5 * MS), 0);
		CHECK_EQ_INT(model_finish(&m), 0);
		p_new = model_process(&m, 400, T0 + 6 * MS);
		early = model_find_thread(&m, 402);
		CHECK(p_new && early);
		if (!p_new || !early)
			goto next;
		CHECK_EQ_STR(p_new->name, "new");
		CHECK(&m.processes.data[early->process] == p_new);
		CHECK(!early->exited);
		CHECK_EQ_INT(early->samples.len, 1);
		CHECK_EQ_INT(images_of(&m, 400), old_ran ? 2 : 1);
	next:
		model_free(&m);
	}
}

/* fork + exec with nothing run in between: one process, the new program, from the fork. */
static void fork_then_exec_is_one_process(void)
{
	struct model m;
	struct map_entry sh = exe_map(0x400000, 0x500000, 0, 7);
	struct map_entry ls = exe_map(0x600000, 0x700000, 0, 8);
	const struct process *p;
	const struct thread *t;

	init_model(&m);
	CHECK_EQ_INT(model_fork(&m, 1, 1, 600, 600, T0 + 1 * MS), 0);
	CHECK_EQ_INT(model_mmap(&m, 600, T0 + 1 * MS, &sh), 0);
	CHECK_EQ_INT(model_comm(&m, 600, 600, "ls", true, T0 + 2 * MS), 0);
	CHECK_EQ_INT(model_mmap(&m, 600, T0 + 2 * MS + 1, &ls), 0);
	CHECK_EQ_INT(images_of(&m, 600), 1);
	/* The shell's text is gone with the exec. */
	CHECK_EQ_INT(sample_object(&m, 600, 600, "ls", T0 + 3 * MS, 0x401000, &t), OBJ_UNKNOWN);
	CHECK_EQ_INT(sample_object(&m, 600, 600, "ls", T0 + 3 * MS, 0x601000, &t), 108);
	CHECK_EQ_INT(model_exit(&m, 600, 600, T0 + 4 * MS), 0);
	CHECK_EQ_INT(model_finish(&m), 0);
	p = model_process(&m, 600, T0 + 3 * MS);
	CHECK(p->started && p->start_ts == T0 + 1 * MS && p->ended && p->end_ts == T0 + 4 * MS);
	CHECK_EQ_STR(p->name, "ls");
	model_free(&m);
}

static void rename_and_pid_reuse(void)
{
	struct model m;
	const struct thread *t;

	init_model(&m);
	CHECK_EQ_INT(model_fork(&m, 1, 1, 400, 400, T0 + 1 * MS), 0);
	CHECK_EQ_INT(model_fork(&m, 400, 400, 400, 401, T0 + 2 * MS), 0);
	CHECK_EQ_INT(model_comm(&m, 400, 401, "worker-1", false, T0 + 3 * MS), 0);
	CHECK_EQ_INT(model_exit(&m, 400, 401, T0 + 4 * MS), 0);
	CHECK_EQ_INT(model_exit(&m, 400, 400, T0 + 5 * MS), 0);
	/* The same pid again: another process. */
	CHECK_EQ_INT(model_fork(&m, 1, 1, 400, 400, T0 + 8 * MS), 0);
	CHECK_EQ_INT(model_comm(&m, 400, 400, "second", false, T0 + 9 * MS), 0);
	CHECK_EQ_INT(model_finish(&m), 0);
	CHECK_EQ_INT(images_of(&m, 400), 2);
	t = model_thread(&m, 400, 401, -1, T0 + 3 * MS);
	CHECK_EQ_STR(t ? t->name : "", "worker-1");
	CHECK(model_process(&m, 400, T0 + 2 * MS)->ended);
	CHECK(!model_process(&m, 400, T0 + 9 * MS)->ended);
	CHECK_EQ_STR(model_process(&m, 400, T0 + 9 * MS)->name, "second");
	model_free(&m);
}

/*
 * A child that renamed itself, its records arriving out of time order (each
 * CPU's ring is read in turn) and its fork record from the side-band last:
 * the name it had latest is its name, and so its process's.
 */
static void latest_name_wins_whatever_the_arrival_order(void)
{
	struct model m;
	const struct thread *t;
	const struct process *p;

	init_model(&m);
	CHECK_EQ_INT(model_fork(&m, 1, 1, 700, 700, T0), 0);
	sample_object(&m, 700, 700, "spawner", T0 + 1 * MS, 0x1000, NULL);
	sample_object(&m, 800, 800, "spawn-child", T0 + 4 * MS, 0x1000, NULL);
	sample_object(&m, 800, 800, "spawner", T0 + 2 * MS, 0x1000, NULL);
	CHECK_EQ_INT(model_fork(&m, 700, 700, 800, 800, T0 + 1500 * 1000), 0);
	CHECK_EQ_INT(model_finish(&m), 0);
	t = model_thread(&m, 800, 800, -1, T0 + 4 * MS);
	CHECK_EQ_STR(t ? t->name : "", "spawn-child");
	p = model_process(&m, 800, T0 + 4 * MS);
	CHECK_EQ_STR(p ? p->name : "", "spawn-child");
	CHECK_EQ_INT(images_of(&m, 800), 1);
	model_free(&m);
}

static void new_mapping_replaces_what_it_overlaps(void)
{
	struct model m;
	struct map_entry big = exe_map(0x1000, 0x4000, 0, 1);
	struct map_entry mid = exe_map(0x2000, 0x3000, 0x5000, 2);
	const struct process *p;

	init_model(&m);
	CHECK_EQ_INT(model_fork(&m, 1, 1, 500, 500, T0), 0);
	CHECK_EQ_INT(model_mmap(&m, 500, T0 + 1, &big), 0);
	CHECK_EQ_INT(model_mmap(&m, 500, T0 + 2, &mid), 0);
	p = model_process(&m, 500, T0 + 3);
	CHECK_EQ_INT(p->mappings.len, 3);
	if (p->mappings.len == 3) {
		CHECK(p->mappings.data[0].start == 0x1000 && p->mappings.data[0].end == 0x2000);
		CHECK(p->mappings.data[0].pgoff == 0 && p->mappings.data[0].object == 101);
		CHECK(p->mappings.data[1].start == 0x2000 && p->mappings.data[1].object == 102);
		CHECK(p->mappings.data[2].start == 0x3000 && p->mappings.data[2].end == 0x4000);
		CHECK(p->mappings.data[2].pgoff == 0x2000 && p->mappings.data[2].object == 101);
	}
	/* Covering all of them: one mapping left. */
	big.inode = 3;
	big.start = 0x800;
	big.end = 0x5000;
	CHECK_EQ_INT(model_mmap(&m, 500, T0 + 4, &big), 0);
	p = model_process(&m, 500, T0 + 5);
	CHECK_EQ_INT(p->mappings.len, 1);
	CHECK_EQ_INT(sample_object(&m, 500, 500, "p500", T0 + 6, 0x3500, NULL), 103);
	model_free(&m);
}

/*
 * A kernel thread's child is one too when /proc could not tell (gone
 * before it was read); an exec (a usermode helper's) makes a user process.
 */
static void kernel_threads_through_fork_and_exec(void)
{
	struct model m;

	init_model(&m);
	CHECK_EQ_INT(model_fork(&m, 0, 0, 2, 2, T0), 0);
	CHECK_EQ_INT(model_fork(&m, 2, 2, 901, 901, T0 + 1 * MS), 0);
	CHECK_EQ_INT(model_fork(&m, 1, 1, 902, 902, T0 + 1 * MS), 0);
	CHECK_EQ_INT(model_fork(&m, 2, 2, 903, 903, T0 + 1 * MS), 0);
	CHECK(model_process(&m, 2, T0)->kernel_thread);
	CHECK(model_process(&m, 901, T0 + 1 * MS)->kernel_thread);
	CHECK(!model_process(&m, 902, T0 + 1 * MS)->kernel_thread);
	CHECK(model_process(&m, 903, T0 + 1 * MS)->kernel_thread);
	/* fork + exec with nothing between is one process: the helper's program. */
	CHECK_EQ_INT(model_comm(&m, 903, 903, "modprobe", true, T0 + 2 * MS), 0);
	CHECK(!model_process(&m, 903, T0 + 3 * MS)->kernel_thread);
	model_free(&m);
}

/* A kernel-only record of pid/tid with `flags`: a sample, or with `sw` a switch-out. */
static void kernel_record(struct model *m, uint32_t pid, uint64_t ts, uint32_t flags, bool sw)
{
	struct switch_event s = { 0 };
	struct sample_event e = { 0 };

	if (sw) {
		s.hdr.kind = EV_SWITCH;
		s.hdr.ts = ts;
		s.hdr.pid = s.hdr.tid = pid;
		s.oncpu_since = ts - MS;
		s.prev_state = 1;
		s.flags = SWITCH_PREV_TARGET | flags;
		strcpy(s.prev_comm, "kworker/1:2");
		s.hdr.size = (uint16_t)offsetof(struct switch_event, ips);
		CHECK_EQ_INT(model_add_record(m, &s, s.hdr.size), 0);
		return;
	}
	e.hdr.kind = EV_SAMPLE;
	e.hdr.ts = ts;
	e.hdr.pid = e.hdr.tid = pid;
	e.period = 1000000;
	e.flags = flags;
	strcpy(e.comm, "kworker/1:2");
	e.ips[0] = 0xffffffff81000000ull;
	e.kstack_len = 1;
	e.hdr.size = (uint16_t)(offsetof(struct sample_event, ips) + 8);
	CHECK_EQ_INT(model_add_record(m, &e, e.hdr.size), 0);
}

/*
 * A kworker that exits before the reader reaches its records has no /proc
 * to ask (pids 900+ here): its records' EV_KTHREAD says what it was. The
 * name says nothing (anyone can call a thread "kworker/1:2").
 */
static void kernel_thread_gone_before_proc_was_read(void)
{
	struct model m;

	init_model(&m);
	m.sched_enabled = true;
	kernel_record(&m, 950, T0 + 1 * MS, EV_KTHREAD, false);
	kernel_record(&m, 951, T0 + 1 * MS, 0, false);
	kernel_record(&m, 952, T0 + 2 * MS, EV_KTHREAD, true);
	kernel_record(&m, 953, T0 + 2 * MS, 0, true);
	CHECK(model_process(&m, 950, T0 + 1 * MS)->kernel_thread);
	CHECK(!model_process(&m, 951, T0 + 1 * MS)->kernel_thread);
	CHECK(model_process(&m, 952, T0 + 2 * MS)->kernel_thread);
	CHECK(!model_process(&m, 953, T0 + 2 * MS)->kernel_thread);
	model_free(&m);
}

int main(void)
{
	RUN(kernel_threads_through_fork_and_exec);
	RUN(kernel_thread_gone_before_proc_was_read);
	RUN(fork_inherits_mappings_and_lifetimes);
	RUN(exec_starts_a_new_image);
	RUN(fork_then_exec_is_one_process);
	RUN(early_thread_of_the_new_program);
	RUN(rename_and_pid_reuse);
	RUN(latest_name_wins_whatever_the_arrival_order);
	RUN(new_mapping_replaces_what_it_overlaps);
	return test_summary();
}
