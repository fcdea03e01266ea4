// SPDX-License-Identifier: BSD-2-Clause
/*
 * What unwind tables for everything running on this machine cost: every
 * distinct executable file mapped by any process, keyed as the BPF unwinder
 * keys it (device and inode from /proc/PID/maps), its .eh_frame built into
 * the rows the unwinder reads (unwind/table_store.c). Prints the files by
 * outcome, the rows, their memory and the CPU time to build them, and the
 * largest tables. A measurement, not a test. Run as root to see every process.
 *
 *   bpfprof-unwind-tables [-v]
 */
#include <dirent.h>
#include <libelf.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unwind/table_store.h"

struct named {
	const struct unwind_store_file *file;
	char path[256];
};

static int cmp_rows(const void *a, const void *b)
{
	const struct named *x = a, *y = b;
	uint32_t rx = x->file->status == UNWIND_FILE_LOADED ? x->file->info.nrows : 0;
	uint32_t ry = y->file->status == UNWIND_FILE_LOADED ? y->file->info.nrows : 0;

	return rx < ry ? 1 : rx > ry ? -1 : 0;
}

/* Add the file of one mapping line of process `pid`; its entry, or NULL. */
static const struct unwind_store_file *add_mapping(struct unwind_store *s, int pid,
						   const char *line, char *path, size_t size)
{
	char range[64], perms[8], link[128];
	unsigned int maj, min;
	unsigned long ino;
	const struct unwind_store_file *f;
	int fd;

	path[0] = '\0';
	if (sscanf(line, "%63s %7s %*s %x:%x %lu %255s", range, perms, &maj, &min, &ino, path) <
		    5 ||
	    perms[2] != 'x' || ino == 0)
		return NULL;
	f = unwind_store_find(s, unwind_kernel_dev(maj, min), ino);
	if (f)
		return NULL; /* met already */
	snprintf(link, sizeof(link), "/proc/%d/map_files/%s", pid, range);
	fd = open(link, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	f = unwind_store_add(s, unwind_kernel_dev(maj, min), ino, fd);
	close(fd);
	(void)size;
	return f;
}

int main(int argc, char **argv)
{
	static const char *const status_names[] = { "loaded", "without CFI", "too big",
						    "unusable" };
	bool verbose = argc > 1 && !strcmp(argv[1], "-v");
	struct named *names = NULL;
	size_t nnames = 0, cap = 0;
	struct unwind_store s;
	struct dirent *de;
	DIR *proc;

	elf_version(EV_CURRENT);
	unwind_store_init(&s, (size_t)1 << 26);
	proc = opendir("/proc");
	if (!proc) {
		perror("/proc");
		return 1;
	}
	while ((de = readdir(proc))) {
		char maps_path[64], line[1024], path[256];
		int pid = atoi(de->d_name);
		FILE *maps;

		if (pid <= 0)
			continue;
		snprintf(maps_path, sizeof(maps_path), "/proc/%d/maps", pid);
		maps = fopen(maps_path, "r");
		if (!maps)
			continue;
		while (fgets(line, sizeof(line), maps)) {
			const struct unwind_store_file *f =
				add_mapping(&s, pid, line, path, sizeof(path));

			if (!f)
				continue;
			if (nnames == cap) {
				cap = cap ? 2 * cap : 256;
				names = realloc(names, cap * sizeof(*names));
				if (!names)
					return 1;
			}
			names[nnames].file = f;
			snprintf(names[nnames++].path, sizeof(names[0].path), "%s", path);
		}
		fclose(maps);
	}
	closedir(proc);
	/* Entries can move while the store grows: look each up again. */
	for (size_t i = 0; i < nnames; i++)
		names[i].file = &s.files.data[i];
	qsort(names, nnames, sizeof(*names), cmp_rows);
	printf("unwind tables: %zu distinct executable files:", s.files.len);
	for (int k = 0; k < 4; k++)
		printf(" %zu %s%s", s.stats.files[k], status_names[k], k < 3 ? "," : ";");
	printf(" %zu rows, %.1f MiB at %zu bytes a row, built in %.3f s of CPU\n", s.stats.rows,
	       (double)(s.stats.rows * sizeof(struct unwind_row)) / (1024.0 * 1024.0),
	       sizeof(struct unwind_row), (double)s.stats.build_ns / 1e9);
	for (size_t i = 0; i < nnames && i < (verbose ? nnames : 5); i++)
		printf("  %8u rows  %s (%s)\n",
		       names[i].file->status == UNWIND_FILE_LOADED ? names[i].file->info.nrows : 0,
		       names[i].path, status_names[names[i].file->status]);
	free(names);
	unwind_store_free(&s);
	return 0;
}
