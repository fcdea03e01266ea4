// SPDX-License-Identifier: BSD-2-Clause
/*
 * Processes know their cgroup: read with the rest of a new image's /proc
 * information, re-read after an exec, inherited from the parent by a child
 * that was gone before anyone looked (and by an exec'd image from the one
 * before), and read from the real /proc by the live proc_source.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/model.h"
#include "model/proc_source.h"
#include "test.h"

#define MS 1000000ULL
#define T0 (1000 * MS)

/* The fake /proc: pid -> cgroup, NULL when the process is gone. */
struct fake_proc {
	uint32_t pid;
	const char *cgroup;
};

static struct fake_proc procs[8];
static unsigned cgroup_reads;

static const struct fake_proc *find_proc(uint32_t pid)
{
	for (size_t i = 0; i < sizeof(procs) / sizeof(procs[0]); i++)
		if (procs[i].pid == pid)
			return &procs[i];
	return NULL;
}

static void set_proc(size_t slot, uint32_t pid, const char *cgroup)
{
	procs[slot].pid = pid;
	procs[slot].cgroup = cgroup;
}

static int fake_info(void *ctx, uint32_t pid, char name[BPFPROF_COMM_LEN], char **cmdline)
{
	const struct fake_proc *p = find_proc(pid);

	(void)ctx;
	if (!p || !p->cgroup)
		return -ENOENT;
	snprintf(name, BPFPROF_COMM_LEN, "p%u", pid);
	*cmdline = NULL;
	return 0;
}

static int fake_cgroup(void *ctx, uint32_t pid, char **path, uint32_t *owner)
{
	const struct fake_proc *p = find_proc(pid);

	(void)ctx;
	cgroup_reads++;
	if (!p || !p->cgroup)
		return -ENOENT;
	*owner = 0;
	*path = strdup(p->cgroup);
	return *path ? 0 : -ENOMEM;
}

static void init_model(struct model *m)
{
	struct proc_source src = { .read_info = fake_info, .read_cgroup = fake_cgroup };

	memset(procs, 0, sizeof(procs));
	cgroup_reads = 0;
	model_init(m, &src, T0);
	m->lifecycle = true;
	m->all_processes = true;
}

static const struct process *newest(struct model *m, uint32_t pid)
{
	return model_process(m, pid, UINT64_MAX);
}

static void test_new_image_reads_cgroup(void)
{
	struct model m;

	init_model(&m);
	set_proc(0, 10, "/system.slice/a.service");
	set_proc(1, 11, NULL); /* gone */
	CHECK_EQ_STR(newest(&m, 10)->cgroup, "/system.slice/a.service");
	CHECK(newest(&m, 11)->cgroup == NULL);
	CHECK(newest(&m, 11)->gone);
	/* The idle process has none and is not looked up. */
	cgroup_reads = 0;
	CHECK(model_process(&m, 0, T0)->cgroup == NULL);
	CHECK_EQ_INT(cgroup_reads, 0);
	model_free(&m);
}

static void test_no_reader(void)
{
	struct proc_source src = { .read_info = fake_info };
	struct model m;

	memset(procs, 0, sizeof(procs));
	set_proc(0, 10, "/x");
	model_init(&m, &src, T0);
	CHECK(model_process(&m, 10, T0)->cgroup == NULL);
	model_free(&m);
}

static void test_fork_inherits_when_gone(void)
{
	struct model m;
	const struct process *parent, *gone_child, *live_child;

	init_model(&m);
	set_proc(0, 10, "/test/parent");
	set_proc(1, 21, "/test/moved");
	parent = newest(&m, 10);
	CHECK_EQ_STR(parent->cgroup, "/test/parent");
	/* 20 exited before its fork record was read: it started where its parent was. */
	CHECK_EQ_INT(model_fork(&m, 10, 10, 20, 20, T0 + 1 * MS), 0);
	/* 21 is alive and /proc says where it is now: that wins. */
	CHECK_EQ_INT(model_fork(&m, 10, 10, 21, 21, T0 + 2 * MS), 0);
	parent = newest(&m, 10);
	gone_child = newest(&m, 20);
	live_child = newest(&m, 21);
	CHECK_EQ_STR(gone_child->cgroup, "/test/parent");
	CHECK(gone_child->cgroup != parent->cgroup); /* a copy, freed on its own */
	CHECK_EQ_STR(live_child->cgroup, "/test/moved");
	/* A thread clone changes nothing. */
	CHECK_EQ_INT(model_fork(&m, 10, 10, 10, 12, T0 + 3 * MS), 0);
	CHECK_EQ_STR(newest(&m, 10)->cgroup, "/test/parent");
	model_free(&m);
}

static void test_fork_of_unknown_parent(void)
{
	struct model m;

	init_model(&m);
	m.all_processes = false;
	/* Parent 50 is not in the model and not -a: nothing to inherit. */
	CHECK_EQ_INT(model_fork(&m, 50, 50, 51, 51, T0 + MS), 0);
	CHECK(newest(&m, 51)->cgroup == NULL);
	model_free(&m);
}

static void add_sample(struct model *m, uint32_t pid, uint64_t ts)
{
	struct thread *t = model_thread(m, pid, pid, -1, ts);
	struct thread_sample s = { ts, 0, NO_INDEX, SAMPLE_ON_CPU };

	CHECK(t != NULL);
	if (t)
		CHECK_EQ_INT(vec_push(&t->samples, s), 0);
}

static void test_exec_keeps_cgroup(void)
{
	struct model m;
	const struct process *p;

	init_model(&m);
	/* An image that ran code: the exec makes a new one, which /proc cannot describe. */
	set_proc(0, 30, "/c");
	CHECK_EQ_STR(newest(&m, 30)->cgroup, "/c");
	add_sample(&m, 30, T0 + MS);
	set_proc(0, 30, NULL);
	CHECK_EQ_INT(model_comm(&m, 30, 30, "newprog", true, T0 + 2 * MS), 0);
	p = newest(&m, 30);
	CHECK(p->prev != NO_INDEX);
	CHECK_EQ_STR(p->cgroup, "/c");

	/* An image that ran nothing becomes the new program: re-read, ... */
	set_proc(1, 31, "/d");
	CHECK_EQ_STR(newest(&m, 31)->cgroup, "/d");
	set_proc(1, 31, "/e");
	CHECK_EQ_INT(model_comm(&m, 31, 31, "exec1", true, T0 + 3 * MS), 0);
	CHECK_EQ_STR(newest(&m, 31)->cgroup, "/e");
	/* ... and kept when the process is gone by then. */
	set_proc(1, 31, NULL);
	CHECK_EQ_INT(model_comm(&m, 31, 31, "exec2", true, T0 + 4 * MS), 0);
	CHECK_EQ_STR(newest(&m, 31)->cgroup, "/e");
	model_free(&m);
}

/* The live proc_source reads <proc_root>/<pid>/cgroup. */
static void test_proc_source_reads_cgroup(void)
{
	char dir[] = "/tmp/bpfprof-cgmodel-XXXXXX", path[PATH_MAX], want[PATH_MAX] = "";
	struct proc_source_ctx ctx = { 0 };
	struct proc_source src = { 0 };
	char *cg = NULL, line[PATH_MAX];
	struct model m;
	FILE *f;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/77", dir);
	CHECK(mkdir(path, 0755) == 0);
	snprintf(path, sizeof(path), "%s/77/cgroup", dir);
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		fputs("1:cpu:/\n0::/kubepods/pod1/abc\n", f);
		fclose(f);
	}
	ctx.proc_root = dir;
	proc_source_init(&src, &ctx);
	CHECK(src.read_cgroup != NULL);
	if (src.read_cgroup) {
		uint32_t owner = 0;

		CHECK_EQ_INT(src.read_cgroup(src.ctx, 77, &cg, &owner), 0);
		CHECK_EQ_STR(cg, "/kubepods/pod1/abc");
		/* No such cgroup on this machine's mount: who owns it cannot be told. */
		CHECK_EQ_INT(owner, CGROUP_OWNER_UNKNOWN);
		free(cg);
		CHECK_EQ_INT(src.read_cgroup(src.ctx, 78, &cg, &owner), -ENOENT);
	}
	unlink(path);
	snprintf(path, sizeof(path), "%s/77", dir);
	rmdir(path);
	rmdir(dir);

	/* The real /proc, through the model: this process's own "0::" line. */
	f = fopen("/proc/self/cgroup", "r");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "0::", 3)) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(want, sizeof(want), "%s", line + 3);
		}
	if (f)
		fclose(f);
	if (!want[0]) {
		fprintf(stderr, "  skipped: no cgroup v2 line in /proc/self/cgroup\n");
		return;
	}
	ctx.proc_root = "/proc";
	model_init(&m, &src, T0);
	CHECK_EQ_STR(model_process(&m, (uint32_t)getpid(), T0)->cgroup, want);
	model_free(&m);
}

int main(void)
{
	RUN(test_new_image_reads_cgroup);
	RUN(test_no_reader);
	RUN(test_fork_inherits_when_gone);
	RUN(test_fork_of_unknown_parent);
	RUN(test_exec_keeps_cgroup);
	RUN(test_proc_source_reads_cgroup);
	return test_summary();
}
