// SPDX-License-Identifier: BSD-2-Clause
/*
 * What the unwind table cache saves (issue 38): for each file given, the
 * CPU time of building its table (unwind_file_build, as the table worker
 * does) and of reading it back from the cache (table_cache_load: read,
 * checked in full, unpacked), each the best of 5, per MiB of .eh_frame.
 * Uses a cache of its own under a fresh directory; needs no root.
 *
 * Usage: bpfprof-table-cache FILE...
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unwind/table_cache.h"
#include "util/elf_open.h"
#include "util/elf_section.h"

#define RUNS 5

static double eh_frame_mib(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *elf = fd >= 0 ? elf_open_fd(fd) : NULL;
	GElf_Shdr sh = { 0 };
	double mib = 0;

	if (elf && elf_section_by_name(elf, ".eh_frame", &sh))
		mib = (double)sh.sh_size / (1024.0 * 1024.0);
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	return mib;
}

static int one(struct table_cache *c, const char *path)
{
	uint64_t build = UINT64_MAX, load = UINT64_MAX;
	struct table_cache_key k;
	struct unwind_built b;
	double mib = eh_frame_mib(path);
	size_t rows = 0;

	for (int i = 0; i < RUNS; i++) {
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		Elf *elf = fd >= 0 ? elf_open_fd(fd) : NULL;
		uint64_t t0 = cfi_thread_cpu_ns();

		if (!elf || table_cache_key_of(fd, elf, &k) ||
		    unwind_file_build(elf, &cfi_default_budget, &b)) {
			fprintf(stderr, "%s: no build-id, or no table\n", path);
			return 1;
		}
		if (cfi_thread_cpu_ns() - t0 < build)
			build = cfi_thread_cpu_ns() - t0;
		rows = b.t.len;
		if (!i && table_cache_store(c, &k, &b)) {
			fprintf(stderr, "%s: cannot keep its table\n", path);
			return 1;
		}
		unwind_built_free(&b);
		close(fd);
	}
	for (int i = 0; i < RUNS; i++) {
		if (table_cache_load(c, &k, &cfi_default_budget, &b)) {
			fprintf(stderr, "%s: its table did not come back\n", path);
			return 1;
		}
		if (b.build_ns < load)
			load = b.build_ns;
		unwind_built_free(&b);
	}
	printf("%9zu %8.2f %9.1f %8.1f %7.1f %7.1f   %s\n", rows, mib, (double)build / 1e6,
	       (double)load / 1e6, mib > 0 ? (double)build / 1e6 / mib : 0,
	       mib > 0 ? (double)load / 1e6 / mib : 0, path);
	return 0;
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/bpfprof-table-cache.XXXXXX", cmd[64];
	struct table_cache c;
	int status = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE...\n", argv[0]);
		return 2;
	}
	elf_version(EV_CURRENT);
	if (!mkdtemp(dir) || table_cache_open(&c, dir, 1ull << 30))
		return 1;
	printf("%9s %8s %9s %8s %7s %7s   %s\n", "rows", "eh MiB", "build ms", "load ms",
	       "b ms/M", "l ms/M", "file");
	for (int i = 1; i < argc; i++)
		status |= one(&c, argv[i]);
	table_cache_close(&c);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) || status;
}
