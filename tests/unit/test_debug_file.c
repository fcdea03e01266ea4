// SPDX-License-Identifier: BSD-2-Clause
/*
 * symbols/debug_file.c against what the owner of a binary can put where its
 * debug file is looked for (issue 27): a terabyte of holes behind a debug
 * link, a device, a file of another owner, a CRC that would take too long.
 * Each is refused at once; a real debug file is still found, its CRC
 * computed once, and inside the process's root when it has one.
 */
#include "symbols/debug_file.h"
#include "test.h"

#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char dir[] = "/var/tmp/test_debug_file.XXXXXX";
static char app[PATH_MAX], debug[PATH_MAX + 16], none[PATH_MAX + 16];

static void sh(const char *fmt, const char *a, const char *b)
{
	char cmd[3 * PATH_MAX];

	snprintf(cmd, sizeof(cmd), fmt, a, b);
	CHECK_EQ_INT(system(cmd), 0);
}

/* debug_file_find for the app at `path` (as its process sees it) under `r`. */
static int find(const char *path, const struct debug_file_rules *r, char *found)
{
	int fd = open(app, O_RDONLY | O_CLOEXEC), dfd;
	Elf *elf;

	CHECK(fd >= 0);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	CHECK(elf != NULL);
	dfd = debug_file_find(elf, path, none, r, found, PATH_MAX);
	elf_end(elf);
	close(fd);
	return dfd;
}

/* DIR/app.debug: the real debug file, or a link to `target`. */
static void put_debug(const char *target)
{
	unlink(debug);
	if (target)
		CHECK_EQ_INT(symlink(target, debug), 0);
	else
		sh("cp '%s' '%s'", SYMFIX_EXE_DEBUG, debug);
}

static void test_caps(void)
{
	CHECK(debug_file_max_bytes(0) == DEBUG_FILE_MIN_CAP);
	CHECK(debug_file_max_bytes(1 << 20) == DEBUG_FILE_MIN_CAP);
	CHECK(debug_file_max_bytes(100ull << 20) == 3200ull << 20);
	CHECK(debug_file_max_bytes(1ull << 30) == DEBUG_FILE_MAX_BYTES);
	CHECK(debug_file_max_bytes(UINT64_MAX) == DEBUG_FILE_MAX_BYTES);
}

static void test_found_once(void)
{
	struct debug_crc_cache cache;
	struct debug_file_rules r = { .root = -1 };
	char found[PATH_MAX];
	struct stat st;
	int fd;

	debug_crc_cache_init(&cache);
	CHECK_EQ_INT(stat(app, &st), 0);
	r.binary_bytes = (uint64_t)st.st_size;
	r.crcs = &cache;
	put_debug(NULL);
	fd = find(app, &r, found);
	CHECK(fd >= 0);
	CHECK_EQ_STR(found, debug);
	if (fd >= 0)
		close(fd);
	fd = find(app, &r, found);
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
	CHECK(cache.computed == 1); /* the second time from the cache */
	/* Another owner than root, us and the binary's: refused. */
	CHECK_EQ_INT(chown(debug, 4242, 4242), 0);
	CHECK(find(app, &r, found) < 0);
	r.binary_uid = 4242;
	fd = find(app, &r, found);
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
	debug_crc_cache_free(&cache);
}

static void test_hostile(void)
{
	struct debug_crc_cache cache;
	struct debug_file_rules r = { .root = -1 };
	char found[PATH_MAX], huge[PATH_MAX + 16];
	int fd;

	debug_crc_cache_init(&cache);
	r.binary_bytes = 20000;
	r.crcs = &cache;
	/* A terabyte of holes behind a link: refused by its size, nothing read. */
	snprintf(huge, sizeof(huge), "%s/huge", dir);
	fd = open(huge, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0 && !ftruncate(fd, 1ll << 40));
	close(fd);
	put_debug(huge);
	CHECK(find(app, &r, found) < 0);
	CHECK(cache.computed == 0); /* no CRC was computed: not a byte of it was read */
	/* A device. */
	put_debug("/dev/zero");
	CHECK(find(app, &r, found) < 0);
	/* Within the cap, but a CRC that runs out of time: refused, and not read again. */
	CHECK_EQ_INT(truncate(huge, 64ll << 20), 0);
	put_debug(huge);
	cache.file_ns = 1;
	CHECK(find(app, &r, found) < 0);
	CHECK(cache.computed == 1);
	CHECK(find(app, &r, found) < 0);
	CHECK(cache.computed == 1);
	/* The same file changed is another file: read again (and out of time again). */
	CHECK_EQ_INT(truncate(huge, 32ll << 20), 0);
	CHECK(find(app, &r, found) < 0);
	CHECK(cache.computed == 2);
	/* Without a budget left at all: nothing is read. */
	cache.left_ns = 0;
	CHECK_EQ_INT(truncate(huge, 16ll << 20), 0);
	CHECK(find(app, &r, found) < 0);
	CHECK(cache.computed == 2);
	/* The next profile (a continuous snapshot) has its budget again: read. */
	debug_crc_cache_new_profile(&cache);
	CHECK(find(app, &r, found) < 0);
	CHECK(cache.computed == 3);
	unlink(huge);
	debug_crc_cache_free(&cache);
}

/* The process's root: "/bin/app" there has its debug file beside it, which our "/bin" has not. */
static void test_in_root(void)
{
	struct debug_file_rules r = { .binary_bytes = 20000 };
	char root[PATH_MAX + 16], found[PATH_MAX];
	int fd;

	snprintf(root, sizeof(root), "%s/root", dir);
	sh("mkdir -p '%s/bin' && cp '" SYMFIX_EXE_DEBUG "' '%s/bin/app.debug'", root, root);
	/* Absolute links lead to the root's own directories. */
	sh("ln -s /bin/app.debug '%s/bin/link.debug'%s", root, "");
	r.root = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	CHECK(r.root >= 0);
	fd = find("/bin/app", &r, found);
	CHECK(fd >= 0);
	CHECK_EQ_STR(found, "/bin/app.debug");
	if (fd >= 0)
		close(fd);
	/* Our own root has no /bin/app.debug. */
	close(r.root);
	r.root = -1;
	CHECK(find("/bin/app", &r, found) < 0);
}

static void test_build_id(void)
{
	int fd = open(SYMFIX_EXE_DEBUG, O_RDONLY | O_CLOEXEC);
	const unsigned char *id = NULL;
	char hex[129];
	ssize_t n;
	Elf *elf;

	CHECK(fd >= 0);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	n = dwelf_elf_gnu_build_id(elf, (const void **)&id);
	CHECK(n > 0 && n <= 64);
	for (ssize_t i = 0; i < n; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	CHECK(debug_file_has_build_id(fd, hex));
	hex[0] = hex[0] == '0' ? '1' : '0';
	CHECK(!debug_file_has_build_id(fd, hex));
	CHECK(!debug_file_has_build_id(fd, "zz"));
	elf_end(elf);
	close(fd);
}

int main(void)
{
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	elf_version(EV_CURRENT);
	snprintf(app, sizeof(app), "%s/app", dir);
	snprintf(debug, sizeof(debug), "%s/app.debug", dir);
	snprintf(none, sizeof(none), "%s/no-debug-root", dir);
	/* The stripped app with a debug link to its real debug file (its CRC). */
	sh("cp '%s' '%s'", SYMFIX_EXE_STRIPPED, app);
	sh("cd '%s' && cp '" SYMFIX_EXE_DEBUG "' app.debug && " OBJCOPY_PATH
	   " --add-gnu-debuglink=app.debug app && rm app.debug%s",
	   dir, "");
	RUN(test_caps);
	RUN(test_found_once);
	RUN(test_hostile);
	RUN(test_in_root);
	RUN(test_build_id);
	sh("rm -rf '%s'%s", dir, "");
	return test_summary();
}
