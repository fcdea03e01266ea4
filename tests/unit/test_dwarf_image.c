// SPDX-License-Identifier: BSD-2-Clause
/*
 * The DWARF of a file another user may change, read into an image of its
 * debug sections (symbols/dwarf_image.h), must answer as the file itself
 * does. A memfd (mode 0777: anyone may write it) is never mapped, so each
 * fixture copied into one goes through the image; the same file opened by
 * its root-owned path is mapped and is the reference: every address of
 * .text must get the same names, files and lines both ways, for plain,
 * ELF-compressed (SHF_COMPRESSED) and GNU-compressed (.zdebug_*) debug
 * sections, for a 32-bit file and a big-endian one. And the image holds
 * the debug sections only (not a 16 MiB section of other data), stays
 * within its budget (compressed sections counted inflated), and refuses a
 * section header that points past the file's end.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbols/dwarf.h"
#include "symbols/dwarf_image.h"
#include "test.h"

#define NO_DEBUG_ROOT "/nonexistent-debug-root"

/* The whole of `path` in memory; NULL on failure (a failed check). */
static unsigned char *slurp(const char *path, size_t *size)
{
	struct stat st;
	unsigned char *buf = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	CHECK(fd >= 0);
	if (fd < 0)
		return NULL;
	if (!fstat(fd, &st) && (buf = malloc((size_t)st.st_size + 1)))
		if (pread(fd, buf, (size_t)st.st_size, 0) != st.st_size) {
			free(buf);
			buf = NULL;
		}
	close(fd);
	CHECK(buf != NULL);
	*size = buf ? (size_t)st.st_size : 0;
	return buf;
}

/* `size` bytes of `data` in a memfd: a file anyone may write, so never mapped. */
static int memfd_of(const void *data, size_t size)
{
	int fd = memfd_create("dwarf_image", MFD_CLOEXEC);

	CHECK(fd >= 0);
	if (fd >= 0 && write(fd, data, size) != (ssize_t)size) {
		CHECK(!"write to the memfd");
		close(fd);
		return -1;
	}
	return fd;
}

static int memfd_copy(const char *path)
{
	size_t size;
	unsigned char *buf = slurp(path, &size);
	int fd = buf ? memfd_of(buf, size) : -1;

	free(buf);
	return fd;
}

/* The section of `elf` named `name`, its header in *sh; NULL when none. */
static Elf_Scn *find_section(Elf *elf, const char *name, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (!elf || elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, sh))
			return NULL;
		n = elf_strptr(elf, shstrndx, sh->sh_name);
		if (n && !strcmp(n, name))
			return scn;
	}
	return NULL;
}

/* [lo, hi) of the .text section of `path`. */
static bool text_range(const char *path, uint64_t *lo, uint64_t *hi)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	GElf_Shdr sh;
	bool found = find_section(elf, ".text", &sh) && sh.sh_size;

	if (found) {
		*lo = sh.sh_addr;
		*hi = sh.sh_addr + sh.sh_size;
	}
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	CHECK(found);
	return found;
}

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/*
 * `image_fd` (read into an image) answers every address of .text as
 * `reference` (mapped) does, and the reference answers some of them.
 */
static void check_same_answers(const char *reference, int image_fd)
{
	struct dwarf_info *mapped = NULL, *read = NULL;
	struct dwarf_location a[16], b[16];
	uint64_t lo, hi, answered = 0, differ = 0;
	int fd = open(reference, O_RDONLY | O_CLOEXEC);

	CHECK(fd >= 0);
	if (fd < 0 || image_fd < 0 || !text_range(reference, &lo, &hi))
		goto out;
	CHECK_EQ_INT(dwarf_info_open(&mapped, fd, NO_DEBUG_ROOT), 0);
	CHECK_EQ_INT(dwarf_info_open(&read, image_fd, NO_DEBUG_ROOT), 0);
	if (!mapped || !read)
		goto out;
	for (uint64_t addr = lo; addr < hi; addr++) {
		unsigned na = dwarf_info_lookup(mapped, addr, a, 16);
		unsigned nb = dwarf_info_lookup(read, addr, b, 16);
		bool same = na == nb;

		for (unsigned k = 0; same && k < na; k++)
			same = same_str(a[k].name, b[k].name) && same_str(a[k].file, b[k].file) &&
			       a[k].line == b[k].line && same_str(a[k].decl_file, b[k].decl_file) &&
			       a[k].decl_line == b[k].decl_line;
		answered += na > 0;
		differ += !same;
	}
	CHECK(answered > 0);
	CHECK_EQ_INT(differ, 0);
out:
	dwarf_info_free(mapped);
	dwarf_info_free(read);
	if (fd >= 0)
		close(fd);
}

static void test_same_answers(void)
{
	static const char *const fixtures[] = {
		DWARF_FIX,    DWARF_FIX_DEBUG, DWARF_FIX_ZLIB, DWARF_FIX_ZLIB_GNU,
#ifdef DWARF_FIX_32
		DWARF_FIX_32, DWARF_FIX_BE,
#endif
	};

	for (size_t i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++) {
		int fd = memfd_copy(fixtures[i]);

		fprintf(stderr, "  %s\n", fixtures[i]);
		check_same_answers(fixtures[i], fd);
		if (fd >= 0)
			close(fd);
	}
}

/* The image holds the debug sections, not the 16 MiB section beside them. */
static void test_debug_sections_only(void)
{
	struct dwarf_image img;
	struct dwarf_info *d = NULL;
	int fd = memfd_copy(DWARF_FIX_BLOB);
	struct stat st;

	if (fd < 0)
		return;
	CHECK(!fstat(fd, &st) && st.st_size > 16 << 20);
	CHECK_EQ_INT(dwarf_image_open(&img, fd, DWARF_IMAGE_MAX_BYTES), 0);
	CHECK(img.buf != NULL); /* read, not mapped */
	CHECK(img.bytes > 0 && img.bytes < 1 << 20);
	dwarf_image_close(&img);
	CHECK_EQ_INT(dwarf_info_open(&d, fd, NO_DEBUG_ROOT), 0);
	CHECK(dwarf_info_bytes(d) < 2 << 20);
	dwarf_info_free(d);
	check_same_answers(DWARF_FIX, fd);
	close(fd);
}

/*
 * The budget counts what is read and what libdw inflates; past it, no DWARF
 * (-EDQUOT: a budget with more room would take it, test_own_size).
 */
static void test_budget(void)
{
	struct dwarf_image img;
	struct dwarf_info *d = NULL;
	int fd = memfd_copy(DWARF_FIX), zfd = memfd_copy(DWARF_FIX_ZLIB);
	size_t bytes, inflated;

	if (fd < 0 || zfd < 0)
		goto out;
	CHECK_EQ_INT(dwarf_image_open(&img, fd, DWARF_IMAGE_MAX_BYTES), 0);
	bytes = img.bytes;
	CHECK_EQ_INT(img.inflated, 0);
	dwarf_image_close(&img);
	CHECK_EQ_INT(dwarf_info_open_capped(&d, fd, NO_DEBUG_ROOT, bytes), 0);
	dwarf_info_free(d);
	d = NULL;
	CHECK_EQ_INT(dwarf_info_open_capped(&d, fd, NO_DEBUG_ROOT, bytes - 1), -EDQUOT);
	CHECK(d == NULL);
	CHECK_EQ_INT(dwarf_info_open_capped(&d, fd, NO_DEBUG_ROOT, 100), -EDQUOT);

	CHECK_EQ_INT(dwarf_image_open(&img, zfd, DWARF_IMAGE_MAX_BYTES), 0);
	bytes = img.bytes;
	inflated = img.inflated;
	dwarf_image_close(&img);
	CHECK(inflated > bytes / 2); /* compressed DWARF inflates */
	CHECK_EQ_INT(dwarf_image_open(&img, zfd, bytes + inflated - 1), -EDQUOT);
	CHECK(img.elf == NULL && img.buf == NULL);
	CHECK_EQ_INT(dwarf_info_open_capped(&d, zfd, NO_DEBUG_ROOT, bytes + inflated), 0);
	dwarf_info_free(d);
out:
	if (fd >= 0)
		close(fd);
	if (zfd >= 0)
		close(zfd);
}

/* Patch the size or offset of `section`'s header in `elf` (64-bit, ours) to `value`. */
static bool patch_section(unsigned char *elf, size_t size, const char *section, bool offset,
			  uint64_t value)
{
	Elf *e = elf_memory((char *)elf, size);
	Elf_Scn *scn;
	GElf_Ehdr eh;
	GElf_Shdr sh;
	size_t at;

	scn = e && gelf_getehdr(e, &eh) ? find_section(e, section, &sh) : NULL;
	if (scn) {
		at = eh.e_shoff + elf_ndxscn(scn) * eh.e_shentsize +
		     (offset ? offsetof(Elf64_Shdr, sh_offset) : offsetof(Elf64_Shdr, sh_size));
		memcpy(elf + at, &value, sizeof(value));
	}
	if (e)
		elf_end(e);
	return scn != NULL;
}

/* A section header that points past the end of the file: refused before any read, no DWARF. */
static void test_lying_headers(void)
{
	static const struct {
		bool offset;
		uint64_t value;
	} lies[] = { { false, 1ull << 40 },
		     { true, 1ull << 40 },
		     { false, UINT64_MAX },
		     { true, UINT64_MAX - 8 } };
	size_t size;
	unsigned char *orig = slurp(DWARF_FIX, &size), *copy = orig ? malloc(size) : NULL;

	if (!copy)
		goto out;
	for (size_t i = 0; i < sizeof(lies) / sizeof(lies[0]); i++) {
		struct dwarf_info *d = NULL;
		int fd;

		memcpy(copy, orig, size);
		CHECK(patch_section(copy, size, ".debug_info", lies[i].offset, lies[i].value));
		fd = memfd_of(copy, size);
		if (fd < 0)
			continue;
		CHECK(dwarf_info_open(&d, fd, NO_DEBUG_ROOT) < 0);
		CHECK(d == NULL);
		close(fd);
	}
out:
	free(orig);
	free(copy);
}

/*
 * Compressed sections whose inflated sizes (ch_size) sum past 2^64: the sum
 * saturates and the file is over any budget; wrapped, it was a few KiB and
 * libdw went on to inflate gigabytes.
 */
static void test_inflated_sizes_wrap(void)
{
	static const char *const names[] = { ".debug_info", ".debug_abbrev" };
	size_t size;
	unsigned char *elf = slurp(DWARF_FIX_ZLIB, &size);
	struct dwarf_image img;
	Elf *e = elf ? elf_memory((char *)elf, size) : NULL;
	int fd, patched = 0;

	for (size_t i = 0; e && i < sizeof(names) / sizeof(names[0]); i++) {
		GElf_Shdr sh;
		/* 2^63 each, the second 4 KiB more: 4 KiB in all when the sum wraps. */
		uint64_t ch_size = (1ull << 63) + i * 4096;

		if (find_section(e, names[i], &sh) && (sh.sh_flags & SHF_COMPRESSED) &&
		    sh.sh_offset + sizeof(Elf64_Chdr) <= size) {
			memcpy(elf + sh.sh_offset + offsetof(Elf64_Chdr, ch_size), &ch_size,
			       sizeof(ch_size));
			patched++;
		}
	}
	if (e)
		elf_end(e);
	CHECK_EQ_INT(patched, 2);
	fd = elf && patched == 2 ? memfd_of(elf, size) : -1;
	if (fd >= 0) {
		CHECK_EQ_INT(dwarf_image_open(&img, fd, DWARF_IMAGE_MAX_BYTES), -EFBIG);
		CHECK(img.elf == NULL && img.buf == NULL);
		close(fd);
	}
	free(elf);
}

/*
 * The file's size at each fstat: the test arms `flip_fd` and the first
 * fstat of it sees the file as it is (sparse, 2^63 - 1 bytes), then the
 * file is cut back to `flip_size` at once, as its owner may do with
 * ftruncate between two fstats. The symbolizer's code is linked with
 * --wrap=fstat (dwarf.cmake); libelf's own fstat is not wrapped.
 */
static int flip_fd = -1;
static off_t flip_size;

int __real_fstat(int fd, struct stat *st);
int __wrap_fstat(int fd, struct stat *st);

int __wrap_fstat(int fd, struct stat *st)
{
	int ret = __real_fstat(fd, st);

	if (fd == flip_fd) {
		flip_fd = -1;
		CHECK(ftruncate(fd, flip_size) == 0);
	}
	return ret;
}

/*
 * Debug sections that overlap at the start of a file 2^63 - 1 bytes long
 * at its first fstat, whose sizes (2^63 - 8 KiB twice, then 20 KiB) sum to
 * 2^64 + 4 KiB: each fits the file, their sum wrapped to 4 KiB, an image of
 * a few KiB was allocated and the first section was read into it (a heap
 * overflow) once the file was cut below the 1 GiB read cap. Refused.
 */
static void test_section_sizes_wrap(void)
{
	static const struct {
		const char *name;
		uint64_t size;
	} lies[] = { { ".debug_info", (1ull << 63) - 8192 },
		     { ".debug_abbrev", (1ull << 63) - 8192 },
		     { ".debug_line", 16384 + 4096 } };
	size_t size;
	unsigned char *elf = slurp(DWARF_FIX, &size);
	struct dwarf_image img;
	bool patched = elf != NULL;
	int fd;

	for (size_t i = 0; patched && i < sizeof(lies) / sizeof(lies[0]); i++)
		patched = patch_section(elf, size, lies[i].name, true, 0) &&
			  patch_section(elf, size, lies[i].name, false, lies[i].size);
	CHECK(patched);
	fd = patched ? memfd_of(elf, size) : -1;
	if (fd >= 0 && ftruncate(fd, INT64_MAX) == 0) {
		flip_size = (off_t)size;
		flip_fd = fd;
		CHECK_EQ_INT(dwarf_image_open(&img, fd, DWARF_IMAGE_MAX_BYTES), -EFBIG);
		CHECK(img.elf == NULL && img.buf == NULL);
		CHECK(flip_fd == -1); /* the flip happened */
		flip_fd = -1;
	} else {
		CHECK(!"a sparse memfd of 2^63 - 1 bytes");
	}
	if (fd >= 0)
		close(fd);
	free(elf);
}

/*
 * A file with more DWARF than any budget takes (280 MiB of .debug_info, in
 * a sparse 300 MiB file) is refused for itself (-EFBIG) under a small
 * budget as under the whole one, before a byte is read; one with 200 MiB
 * for the budget only (-EDQUOT): the symbolizer tries that one again when
 * room is freed, never the first.
 */
static void test_own_size(void)
{
	static const struct {
		uint64_t size, budget;
		int err;
	} cases[] = { { 280ull << 20, 1u << 20, -EFBIG },
		      { 280ull << 20, DWARF_IMAGE_MAX_BYTES, -EFBIG },
		      { 200ull << 20, 1u << 20, -EDQUOT } };
	size_t size;
	unsigned char *orig = slurp(DWARF_FIX, &size), *copy = orig ? malloc(size) : NULL;

	for (size_t i = 0; copy && i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct dwarf_image img;
		int fd;

		memcpy(copy, orig, size);
		CHECK(patch_section(copy, size, ".debug_info", false, cases[i].size));
		fd = memfd_of(copy, size);
		if (fd < 0)
			continue;
		CHECK(ftruncate(fd, 300 << 20) == 0);
		CHECK_EQ_INT(dwarf_image_open(&img, fd, cases[i].budget), cases[i].err);
		CHECK(img.elf == NULL && img.buf == NULL);
		close(fd);
	}
	free(orig);
	free(copy);
}

int main(void)
{
	elf_version(EV_CURRENT);
	RUN(test_same_answers);
	RUN(test_debug_sections_only);
	RUN(test_budget);
	RUN(test_lying_headers);
	RUN(test_inflated_sizes_wrap);
	RUN(test_section_sizes_wrap);
	RUN(test_own_size);
	return test_summary();
}
