// SPDX-License-Identifier: BSD-2-Clause
/*
 * The live proc_source against a fake /proc tree: a process's mappings are
 * read at first sight and re-read for an unknown address, and a re-read that
 * finds no executable mapping at all (a zombie, whose maps file is empty
 * while its last records are still being read) keeps what was known instead
 * of wiping it, so the process's last stacks are still symbolized.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "model/model.h"
#include "model/proc_source.h"
#include "symbols/symbolizer.h"
#include "sched_records.h"
#include "test.h"

#define PID 4242

static char root[PATH_MAX - 64];

static void write_file(const char *rel, const char *text)
{
	char path[PATH_MAX + 64];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	fputs(text, f);
	fclose(f);
}

/* /proc/PID/maps with /bin/true mapped executable at [0x400000, 0x500000), or nothing. */
static void write_maps(bool mapped)
{
	char text[PATH_MAX + 128] = "";
	struct stat st;

	CHECK_EQ_INT(stat("/bin/true", &st), 0);
	if (mapped)
		snprintf(text, sizeof(text), "00400000-00500000 r-xp 00001000 %02x:%02x %lu %s\n",
			 major(st.st_dev), minor(st.st_dev), (unsigned long)st.st_ino, "/bin/true");
	write_file("4242/maps", text);
}

static void make_tree(void)
{
	char path[PATH_MAX + 64];

	snprintf(root, sizeof(root), "%s/bpfprof-proc-XXXXXX", getenv("TMPDIR") ?: "/tmp");
	CHECK(mkdtemp(root) != NULL);
	snprintf(path, sizeof(path), "%s/%d", root, PID);
	CHECK_EQ_INT(mkdir(path, 0700), 0);
	write_file("4242/comm", "app\n");
	write_file("4242/cmdline", "app\0--flag\0");
}

static void remove_tree(void)
{
	const char *files[] = { "4242/maps", "4242/comm", "4242/cmdline", "4242/stat" };
	char path[PATH_MAX + 64];

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", root, files[i]);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/%d", root, PID);
	rmdir(path);
	rmdir(root);
}

/* One user frame at `addr`, in the process whose /proc the test wrote. */
static void user_sample(struct model *m, uint64_t ts, uint64_t addr)
{
	union record r = mk_sample(PID, PID, 0, ts, 0);

	r.sample.ips[0] = addr;
	feed(m, r);
}

/* The object of the only frame of the thread's sample number `i`. */
static uint32_t sample_object(const struct model *m, size_t i)
{
	const struct thread *t = &m->threads.data[0];

	return m->frames.data[m->stacks.data[t->samples.data[i].stack].frame].object;
}

static void zombie_maps_keep_the_known_mappings(void)
{
	struct symbolizer *sym;
	struct proc_source_ctx ctx;
	struct proc_source src;
	struct model m;

	make_tree();
	write_maps(true);
	sym = symbolizer_new(root, "/nonexistent/kallsyms");
	CHECK(sym != NULL);
	ctx = (struct proc_source_ctx){ .proc_root = root, .sym = sym };
	proc_source_init(&src, &ctx);
	model_init(&m, &src, 1000 * MS);

	user_sample(&m, 1001 * MS, 0x401000);
	CHECK(sample_object(&m, 0) >= OBJ_FIRST_FILE);

	/* The process exits: its maps file is empty while its last records come in. */
	write_maps(false);
	/* An address outside every mapping asks /proc again (past the re-read interval)... */
	user_sample(&m, 1100 * MS, 0x7f0000001000);
	CHECK_EQ_INT(sample_object(&m, 1), OBJ_UNKNOWN);
	/* ...which must not forget the binary: a later record in it still resolves. */
	user_sample(&m, 1101 * MS, 0x401000);
	CHECK_EQ_INT(sample_object(&m, 2), sample_object(&m, 0));
	CHECK(m.processes.data[0].gone);
	CHECK_EQ_INT(m.processes.data[0].mappings.len, 1);

	model_free(&m);
	symbolizer_free(sym);
	remove_tree();
}

/* A live process's re-read replaces the list: an unmapped library is gone from it. */
static void live_reread_replaces_the_mappings(void)
{
	struct symbolizer *sym;
	struct proc_source_ctx ctx;
	struct proc_source src;
	struct model m;
	struct stat st;
	char text[2 * PATH_MAX];

	make_tree();
	write_maps(true);
	sym = symbolizer_new(root, "/nonexistent/kallsyms");
	ctx = (struct proc_source_ctx){ .proc_root = root, .sym = sym };
	proc_source_init(&src, &ctx);
	model_init(&m, &src, 1000 * MS);
	user_sample(&m, 1001 * MS, 0x401000);

	/* The binary moved: only a new mapping elsewhere is executable now. */
	CHECK_EQ_INT(stat("/bin/true", &st), 0);
	snprintf(text, sizeof(text), "00600000-00700000 r-xp 00001000 %02x:%02x %lu %s\n",
		 major(st.st_dev), minor(st.st_dev), (unsigned long)st.st_ino, "/bin/true");
	write_file("4242/maps", text);
	user_sample(&m, 1100 * MS, 0x601000);
	CHECK_EQ_INT(sample_object(&m, 1), sample_object(&m, 0));
	CHECK(!m.processes.data[0].gone);
	CHECK_EQ_INT(m.processes.data[0].mappings.len, 1);
	CHECK_EQ_INT(m.processes.data[0].mappings.data[0].start, 0x600000);

	model_free(&m);
	symbolizer_free(sym);
	remove_tree();
}

/* The flags field of PROC/PID/stat: PF_KTHREAD makes a kernel thread, whatever its comm. */
static void kernel_threads_from_stat(void)
{
	make_tree();
	/* A comm with a space and a ')' must not shift the fields. */
	write_file("4242/stat", "4242 (kworker/0:1) x) I 2 0 0 0 -1 69238880 0 0 0 0\n");
	CHECK_EQ_INT(proc_is_kernel_thread(root, PID), 1);
	write_file("4242/stat", "4242 (app) S 1 4242 4242 0 -1 4194560 120 0 0 0\n");
	CHECK_EQ_INT(proc_is_kernel_thread(root, PID), 0);
	write_file("4242/stat", "4242 (app");
	CHECK_EQ_INT(proc_is_kernel_thread(root, PID), -ENOENT);
	CHECK_EQ_INT(proc_is_kernel_thread(root, PID + 1), -ENOENT);
	/* This machine's own: we are a user process; kthreadd (pid 2 outside containers) is not. */
	CHECK_EQ_INT(proc_is_kernel_thread("/proc", (uint32_t)getpid()), 0);
	{
		char comm[BPFPROF_COMM_LEN] = "";

		if (proc_read_comm("/proc", 2, comm) == 0 && !strcmp(comm, "kthreadd"))
			CHECK_EQ_INT(proc_is_kernel_thread("/proc", 2), 1);
	}
	remove_tree();
}

/*
 * A process's uid is its real uid from status, whoever owns PROC/PID (root
 * for a process that is not dumpable); a name cannot forge the Uid line.
 */
static void uid_is_the_real_uid(void)
{
	struct proc_source_ctx ctx = { .proc_root = root };
	struct proc_source src;
	uint32_t uid = 7;

	make_tree();
	proc_source_init(&src, &ctx);
	write_file("4242/status", "Name:\tapp\\nUid:\t0\nUmask:\t0022\nState:\tS (sleeping)\n"
				  "Uid:\t2001\t0\t0\t0\nGid:\t2001\t2001\t2001\t2001\n");
	CHECK_EQ_INT(src.read_uid(src.ctx, PID, &uid), 0);
	CHECK_EQ_INT(uid, 2001);
	write_file("4242/status", "Name:\tapp\n");
	CHECK(src.read_uid(src.ctx, PID, &uid) < 0);
	CHECK(src.read_uid(src.ctx, PID + 1, &uid) < 0);
	CHECK_EQ_INT(uid, 2001);
	remove_tree();
}

int main(void)
{
	RUN(uid_is_the_real_uid);
	RUN(kernel_threads_from_stat);
	RUN(zombie_maps_keep_the_known_mappings);
	RUN(live_reread_replaces_the_mappings);
	return test_summary();
}
