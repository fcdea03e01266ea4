// SPDX-License-Identifier: BSD-2-Clause
/*
 * util/elf_build_id.c on a crafted ELF (review finding 1 of the table
 * cache, issue 38): its first note section, and its PT_NOTE segment, claim
 * 256 MiB of a sparse file, and a real GNU build-id and a Go note follow in
 * small sections. The ids are still found, and reading them costs no more
 * than a few MiB of memory, mapped (a file of root's alone) or read (one
 * others may write), never the note's claimed size.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"
#include "util/elf_build_id.h"
#include "util/elf_open.h"

#define HUGE_NOTE (256ull << 20)
#define NOTES_OFF 0x1000ull
#define HUGE_OFF  0x2000ull

/* 20 bytes, as SHA-1 gives. */
static const uint8_t gnu_id[20] = "a GNU build-id here";
static const char go_id[] =
	"abcdefghijabcdefghij/klmnopqrstklmnopqrst/uvwxyzuvwxyzuvwxyz/0123456789";

/* A note: header, 4-byte name, the desc padded to 4. Its size. */
static size_t put_note(uint8_t *p, const char name[4], uint32_t type, const void *desc,
		       uint32_t len)
{
	Elf64_Nhdr nh = { .n_namesz = 4, .n_descsz = len, .n_type = type };

	memcpy(p, &nh, sizeof(nh));
	memcpy(p + sizeof(nh), name, 4);
	memcpy(p + sizeof(nh) + 4, desc, len);
	return sizeof(nh) + 4 + ((len + 3) & ~3u);
}

/* The crafted file at `path`, mode `mode`. */
static void craft(const char *path, mode_t mode)
{
	uint8_t notes[512] = { 0 };
	size_t gnu_len, go_len;
	Elf64_Ehdr eh = { 0 };
	Elf64_Phdr ph = { 0 };
	Elf64_Shdr sh[4] = { 0 };
	int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, mode);

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	gnu_len = put_note(notes, "GNU", NT_GNU_BUILD_ID, gnu_id, sizeof(gnu_id));
	go_len = put_note(notes + gnu_len, "Go\0", 4, go_id, (uint32_t)strlen(go_id));
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_DYN;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_ehsize = sizeof(eh);
	eh.e_phoff = sizeof(eh);
	eh.e_phentsize = sizeof(ph);
	eh.e_phnum = 1;
	eh.e_shoff = sizeof(eh) + sizeof(ph);
	eh.e_shentsize = sizeof(sh[0]);
	eh.e_shnum = 4;
	/* The segment, and the first note section: all of the sparse tail. */
	ph = (Elf64_Phdr){
		.p_type = PT_NOTE, .p_offset = HUGE_OFF, .p_filesz = HUGE_NOTE, .p_align = 4
	};
	sh[1] = (Elf64_Shdr){
		.sh_type = SHT_NOTE, .sh_offset = HUGE_OFF, .sh_size = HUGE_NOTE, .sh_addralign = 4
	};
	sh[2] = (Elf64_Shdr){
		.sh_type = SHT_NOTE, .sh_offset = NOTES_OFF, .sh_size = gnu_len, .sh_addralign = 4
	};
	sh[3] = (Elf64_Shdr){ .sh_type = SHT_NOTE,
			      .sh_offset = NOTES_OFF + gnu_len,
			      .sh_size = go_len,
			      .sh_addralign = 4 };
	CHECK(pwrite(fd, &eh, sizeof(eh), 0) == sizeof(eh));
	CHECK(pwrite(fd, &ph, sizeof(ph), (off_t)eh.e_phoff) == sizeof(ph));
	CHECK(pwrite(fd, sh, sizeof(sh), (off_t)eh.e_shoff) == sizeof(sh));
	CHECK(pwrite(fd, notes, sizeof(notes), NOTES_OFF) == sizeof(notes));
	CHECK(!ftruncate(fd, (off_t)(HUGE_OFF + HUGE_NOTE)));
	CHECK(!fchmod(fd, mode));
	close(fd);
}

static long max_rss_kib(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

/* Both ids of the crafted file, mapped or read; the peak RSS grows by a few MiB at most. */
static void ids_of_in_child(const char *path, bool mapped)
{
	uint8_t id[ELF_BUILD_ID_MAX];
	size_t len, want = sizeof(go_id) - 1;
	long before = max_rss_kib(), grew;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	Elf *elf;

	CHECK(fd >= 0 && !fstat(fd, &st));
	CHECK(elf_fd_mappable(fd, &st) == mapped);
	elf = elf_open_fd(fd);
	CHECK(elf != NULL);
	if (!elf) {
		close(fd);
		return;
	}
	len = elf_build_id(elf, id);
	CHECK_EQ_INT(len, sizeof(gnu_id));
	CHECK(!memcmp(id, gnu_id, sizeof(gnu_id)));
	len = elf_go_build_id(elf, id);
	if (want > ELF_BUILD_ID_MAX)
		want = ELF_BUILD_ID_MAX;
	CHECK_EQ_INT(len, want);
	CHECK(!memcmp(id, go_id + sizeof(go_id) - 1 - want, want));
	elf_end(elf);
	close(fd);
	grew = max_rss_kib() - before;
	printf("%s: peak RSS grew %ld KiB\n", mapped ? "mapped" : "read", grew);
	/* The note claims 256 MiB: reading a few KiB of notes stays far below. */
	CHECK(grew < 16 * 1024);
}

/* In a child of its own: the peak RSS (getrusage's) of one case is not another's. */
static void ids_of(const char *path, bool mapped)
{
	int status = 0;
	pid_t pid = fork();

	CHECK(pid >= 0);
	if (!pid) {
		ids_of_in_child(path, mapped);
		fflush(stdout);
		_exit(test_failed_checks ? 1 : 0);
	}
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static char path[64];

static void huge_note_mapped(void)
{
	if (geteuid()) {
		printf("SKIP: not root (a file only root can change is mapped)\n");
		return;
	}
	craft(path, 0644);
	ids_of(path, true);
}

static void huge_note_read(void)
{
	craft(path, 0664);
	ids_of(path, false);
}

int main(void)
{
	int fd;

	elf_version(EV_CURRENT);
	strcpy(path, "/tmp/test_elf_build_id.XXXXXX");
	fd = mkstemp(path);
	CHECK(fd >= 0);
	close(fd);
	RUN(huge_note_mapped);
	RUN(huge_note_read);
	unlink(path);
	return test_summary();
}
