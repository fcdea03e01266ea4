// SPDX-License-Identifier: BSD-2-Clause
/*
 * util/elf_open.c: a user's file truncated under root's reader. The race
 * (a user ftruncates a file they mapped while bpfprof reads it) is made
 * deterministic: the handle is opened, the file truncated to 0, and only
 * then are sections, the unwind table and the symbols read. Each case runs
 * in a child, so a SIGBUS (what a mapping of the file gives) is reported as
 * a failed check rather than ending the test.
 */
#include "util/elf_open.h"
#include "symbols/elf_symtab.h"
#include "unwind/cfi_table.h"
#include "unwind/file_table.h"
#include "test.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOBODY 65534

static char copy[PATH_MAX];

/* A copy of this test's own binary (symbols, .eh_frame, DWARF), with `mode` and `uid`. */
static int make_copy(mode_t mode, uid_t uid)
{
	char buf[1 << 16];
	int in = open("/proc/self/exe", O_RDONLY | O_CLOEXEC), out;
	ssize_t n;

	snprintf(copy, sizeof(copy), "/tmp/test_elf_open.%d", (int)getpid());
	unlink(copy);
	out = open(copy, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	CHECK(in >= 0 && out >= 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		CHECK(write(out, buf, (size_t)n) == n);
	close(in);
	CHECK(!fchmod(out, mode));
	if (uid && geteuid() == 0)
		CHECK(!fchown(out, uid, uid));
	return out;
}

/* Run `fn` in a child: its exit status, or 128 + the signal that ended it. */
static int in_child(int (*fn)(int fd), int fd)
{
	int status;
	pid_t pid = fork();

	if (pid == 0)
		_exit(fn(fd));
	CHECK(pid > 0);
	CHECK(waitpid(pid, &status, 0) == pid);
	if (WIFSIGNALED(status)) {
		fprintf(stderr, "child killed by signal %d (%s)\n", WTERMSIG(status),
			strsignal(WTERMSIG(status)));
		return 128 + WTERMSIG(status);
	}
	return WEXITSTATUS(status);
}

/* Every section's data, read after the file was truncated: no SIGBUS, errors. */
static int read_sections_truncated(int fd)
{
	Elf *elf = elf_open_fd(fd);
	Elf_Scn *scn = NULL;
	size_t shstrndx, read = 0;

	if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getshdrstrndx(elf, &shstrndx))
		return 2;
	/* The headers are in memory now; the data is not. */
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			return 3;
	}
	if (ftruncate(fd, 0))
		return 4;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		gelf_getshdr(scn, &sh);
		d = elf_getdata(scn, NULL);
		if (d && d->d_size && sh.sh_type != SHT_NOBITS) {
			volatile const char *p = d->d_buf;

			read += (size_t)p[d->d_size - 1] +
				1; /* touches what a mapping would hold */
		}
	}
	elf_end(elf);
	return read ? 5 : 0;
}

static int build_table_truncated(int fd)
{
	Elf *elf = elf_open_fd(fd);
	struct unwind_built b;

	if (!elf || ftruncate(fd, 0))
		return 2;
	memset(&b, 0, sizeof(b));
	/* An error, or a table of nothing: either, as long as it returns. Ends `elf`. */
	if (!unwind_file_build(elf, &cfi_default_budget, &b))
		unwind_built_free(&b);
	return 0;
}

static int load_symbols_truncated(int fd)
{
	Elf *elf = elf_open_fd(fd);
	struct elf_symtab t;

	if (!elf || ftruncate(fd, 0))
		return 2;
	memset(&t, 0, sizeof(t));
	/* An error, or no symbols: either, as long as it returns. */
	if (!elf_symtab_load_elf(&t, elf, NULL))
		elf_symtab_free(&t);
	elf_end(elf);
	return 0;
}

static void truncated(int (*fn)(int fd), mode_t mode, uid_t uid)
{
	int fd = make_copy(mode, uid);

	CHECK_EQ_INT(in_child(fn, fd), 0);
	close(fd);
	unlink(copy);
}

static void test_truncated_under_reader(void)
{
	/* A user's own file, and root's file that any user may write. */
	truncated(read_sections_truncated, 0755, NOBODY);
	truncated(read_sections_truncated, 0757, 0);
	truncated(build_table_truncated, 0755, NOBODY);
	truncated(load_symbols_truncated, 0755, NOBODY);
}

static void test_mappable(void)
{
	struct stat st;
	int fd = make_copy(0755, 0), mfd;

	CHECK(!fstat(fd, &st));
	CHECK(elf_fd_mappable(fd, &st) == (geteuid() == 0));
	CHECK(!fchmod(fd, 0775));
	CHECK(!fstat(fd, &st));
	CHECK(!elf_fd_mappable(fd, &st)); /* a group may write it */
	close(fd);
	unlink(copy);
	/* A memfd: any mapping of it may be truncated by whoever holds it. */
	mfd = memfd_create("elf", MFD_CLOEXEC);
	CHECK(mfd >= 0 && !fstat(mfd, &st));
	CHECK(!elf_fd_mappable(mfd, &st));
	close(mfd);
	/* Not a regular file at all. */
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	errno = 0;
	CHECK(elf_open_fd(fd) == NULL);
	CHECK_EQ_INT(errno, EINVAL);
	close(fd);
}

int main(void)
{
	elf_version(EV_CURRENT);
	RUN(test_truncated_under_reader);
	RUN(test_mappable);
	return test_summary();
}
