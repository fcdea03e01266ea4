// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "symbols/proc_maps.h"
#include "test.h"

static const char sample_maps[] =
	"55d0c0a00000-55d0c0a02000 r--p 00000000 fd:01 1234567            /usr/bin/my prog\n"
	"55d0c0a02000-55d0c0a05000 r-xp 00002000 fd:01 1234567            /usr/bin/my prog\n"
	"7f0000000000-7f0000001000 r-xs 00003000 08:12 42    /tmp/lib with  spaces.so (deleted)\n"
	"7f0000100000-7f0000200000 rw-p 00000000 00:00 0 \n"
	"7f0000300000-7f0000301000 r-xp 00000000 00:00 0                          [vdso]\n"
	"7ffc2b3d3000-7ffc2b3f4000 rw-p 00000000 00:00 0                          [stack]\n"
	"ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]\n"
	"7f0000400000-7f0000401000 r-xp 00000000 00:05 77          /memfd:jit (deleted)\n";

static int parse_string(const char *text, map_entries_t *out)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int err;

	if (!f)
		return -errno;
	err = proc_maps_parse(f, out);
	fclose(f);
	return err;
}

static void test_parse_fields(void)
{
	map_entries_t v = { 0 };
	struct map_entry *e;

	CHECK_EQ_INT(parse_string(sample_maps, &v), 0);
	CHECK_EQ_INT(v.len, 8);
	if (v.len != 8)
		goto out;

	e = &v.data[1];
	CHECK(e->start == 0x55d0c0a02000ULL && e->end == 0x55d0c0a05000ULL);
	CHECK(e->pgoff == 0x2000);
	CHECK_EQ_INT(major(e->dev), 0xfd);
	CHECK_EQ_INT(minor(e->dev), 1);
	CHECK_EQ_INT(e->inode, 1234567);
	CHECK(e->readable && !e->writable && e->executable && !e->shared);
	CHECK_EQ_STR(e->path, "/usr/bin/my prog");
	CHECK(!e->deleted);
	CHECK(!v.data[0].executable);

	e = &v.data[2];
	CHECK_EQ_STR(e->path, "/tmp/lib with  spaces.so");
	CHECK(e->deleted);
	CHECK(e->shared && e->executable);
	CHECK_EQ_INT(major(e->dev), 8);
	CHECK_EQ_INT(minor(e->dev), 0x12);
	CHECK(e->pgoff == 0x3000);

	e = &v.data[3];
	CHECK_EQ_STR(e->path, "");
	CHECK(e->readable && e->writable && !e->executable);
	CHECK_EQ_INT(e->inode, 0);
	CHECK_EQ_INT(e->dev, 0);

	CHECK_EQ_STR(v.data[4].path, "[vdso]");
	CHECK(v.data[4].executable);
	CHECK_EQ_STR(v.data[5].path, "[stack]");
	CHECK_EQ_STR(v.data[6].path, "[vsyscall]");
	CHECK(v.data[6].start == 0xffffffffff600000ULL);
	CHECK(!v.data[6].readable && v.data[6].executable);
	CHECK_EQ_STR(v.data[7].path, "/memfd:jit");
	CHECK(v.data[7].deleted);
out:
	map_entries_free(&v);
	CHECK(v.data == NULL && v.len == 0);
}

static void test_parse_appends(void)
{
	map_entries_t v = { 0 };

	CHECK_EQ_INT(parse_string(sample_maps, &v), 0);
	CHECK_EQ_INT(parse_string("1000-2000 r-xp 00000000 00:00 0 \n", &v), 0);
	CHECK_EQ_INT(v.len, 9);
	map_entries_free(&v);
}

static void test_parse_malformed(void)
{
	static const char *bad[] = {
		"zzzz-2000 r-xp 00000000 00:00 0\n", "1000 r-xp 00000000 00:00 0\n",
		"1000-2000 r-x 00000000 00:00 0\n",  "1000-2000 r-xp 00000000 0000 0\n",
		"2000-1000 r-xp 00000000 00:00 0\n", "1000-2000 r-xp 00000000 00:00 x /a\n",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		map_entries_t v = { 0 };

		CHECK_EQ_INT(parse_string(bad[i], &v), -EINVAL);
		map_entries_free(&v);
	}
}

static void test_read_fake_root(void)
{
	char root[] = "/tmp/bpfprof-maps-XXXXXX", dir[PATH_MAX], file[PATH_MAX + 8];
	map_entries_t v = { 0 };
	FILE *f;

	CHECK(mkdtemp(root) != NULL);
	snprintf(dir, sizeof(dir), "%s/77", root);
	snprintf(file, sizeof(file), "%s/maps", dir);
	CHECK_EQ_INT(mkdir(dir, 0700), 0);
	f = fopen(file, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	fputs(sample_maps, f);
	fclose(f);

	CHECK_EQ_INT(proc_maps_read(root, 77, &v), 0);
	CHECK_EQ_INT(v.len, 8);
	map_entries_free(&v);
	/* No such process. */
	CHECK_EQ_INT(proc_maps_read(root, 78, &v), -ENOENT);
	CHECK_EQ_INT(v.len, 0);

	unlink(file);
	rmdir(dir);
	rmdir(root);
}

static __attribute__((noinline)) int marker_function(void)
{
	return 42;
}

static void test_read_self(void)
{
	map_entries_t v = { 0 };
	uint64_t fn = (uint64_t)(uintptr_t)marker_function;
	int stack_var = 0;
	uint64_t sp = (uint64_t)(uintptr_t)&stack_var;
	bool found_fn = false, found_stack = false;

	CHECK_EQ_INT(proc_maps_read("/proc", getpid(), &v), 0);
	for (size_t i = 0; i < v.len; i++) {
		const struct map_entry *e = &v.data[i];

		if (fn >= e->start && fn < e->end) {
			found_fn = e->executable && e->path[0] == '/' && e->inode != 0;
		}
		if (sp >= e->start && sp < e->end)
			found_stack = !strcmp(e->path, "[stack]") && e->writable;
	}
	CHECK(found_fn);
	CHECK(found_stack);
	CHECK_EQ_INT(marker_function(), 42);
	map_entries_free(&v);
}

int main(void)
{
	RUN(test_parse_fields);
	RUN(test_parse_appends);
	RUN(test_parse_malformed);
	RUN(test_read_fake_root);
	RUN(test_read_self);
	return test_summary();
}
