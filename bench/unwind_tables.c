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
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/proc_maps.h"
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
	unwind_store_init(&s, NULL, (size_t)1 << 26);
	proc = opendir("/proc");
	if (!proc) {
		perror("/proc");
		return 1;
	}
	while ((de = readdir(proc))) {
		map_entries_t maps = { 0 };
		int pid = atoi(de->d_name);

		if (pid <= 0 || proc_maps_read("/proc", pid, &maps))
			continue;
		for (size_t i = 0; i < maps.len; i++) {
			size_t before = s.files.len;

			/* Only a file met for the first time gets a name: entries and names stay in
			 * step. */
			if (!unwind_store_add_mapping(&s, (uint32_t)pid, 0, &maps.data[i]) ||
			    s.files.len == before)
				continue;
			if (nnames == cap) {
				cap = cap ? 2 * cap : 256;
				names = realloc(names, cap * sizeof(*names));
				if (!names)
					return 1;
			}
			snprintf(names[nnames++].path, sizeof(names[0].path), "%s",
				 maps.data[i].path);
		}
		map_entries_free(&maps);
	}
	closedir(proc);
	/* Entries can move while the store grows: look each up again. */
	for (size_t i = 0; i < nnames; i++)
		names[i].file = &s.files.data[i];
	qsort(names, nnames, sizeof(*names), cmp_rows);
	printf("unwind tables: %zu distinct executable files:", s.files.len);
	for (int k = 0; k < 4; k++)
		printf(" %zu %s%s", s.stats.files[k], status_names[k], k < 3 ? "," : ";");
	printf(" %zu rows, %.1f MiB at %zu bytes a row, built in %.3f s of CPU\n", s.rows.len,
	       (double)(s.rows.len * sizeof(struct unwind_row)) / (1024.0 * 1024.0),
	       sizeof(struct unwind_row), (double)s.stats.build_ns / 1e9);
	for (size_t i = 0; i < nnames && i < (verbose ? nnames : 5); i++)
		printf("  %8u rows  %s (%s)\n",
		       names[i].file->status == UNWIND_FILE_LOADED ? names[i].file->info.nrows : 0,
		       names[i].path, status_names[names[i].file->status]);
	free(names);
	unwind_store_free(&s);
	return 0;
}
