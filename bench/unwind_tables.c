// SPDX-License-Identifier: BSD-2-Clause
/*
 * What unwind tables for everything running on this machine cost: every
 * distinct executable file mapped by any process, keyed as the BPF unwinder
 * keys it (device and inode from /proc/PID/maps), its .eh_frame built into
 * the rows the unwinder reads (unwind/table_store.c, compact_table.c).
 * Prints the files by outcome, the rows, their memory (compact, and at the
 * 16 bytes a row of before issue 38) and the CPU time to build them, and
 * the largest tables: rows, 64 KiB pages, the distinct rules their rows
 * use. A measurement, not a test. Run as root to see every process; or
 * name the files to measure (their tables alone, whoever maps them).
 *
 *   bpfprof-unwind-tables [-v] [FILE...]
 */
#include <dirent.h>
#include <fcntl.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "symbols/proc_maps.h"
#include "unwind/table_store.h"

struct named {
	const struct unwind_store_file *file;
	char path[256];
};

static int cmp_rows(const void *a, const void *b)
{
	const struct named *x = a, *y = b;
	uint32_t rx = x->file->status == UNWIND_FILE_LOADED ? x->file->nrows : 0;
	uint32_t ry = y->file->status == UNWIND_FILE_LOADED ? y->file->nrows : 0;

	return rx < ry ? 1 : rx > ry ? -1 : 0;
}

/* The distinct rules a loaded file's rows and pages use. */
static size_t rules_used(const struct unwind_store *s, const struct unwind_store_file *f)
{
	static uint8_t seen[UNWIND_MAX_RULES / 8];
	struct compact_view v = unwind_store_view(s, f);
	size_t n = 0;

	memset(seen, 0, sizeof(seen));
	for (uint32_t i = 0; i < f->nrows + v.npages; i++) {
		uint16_t r = i < f->nrows ? v.rows[i].rule : v.pages[i - f->nrows].entry_rule;

		n += !(seen[r / 8] & (1u << (r % 8)));
		seen[r / 8] |= (uint8_t)(1u << (r % 8));
	}
	return n;
}

/* Before issue 38 a row was 16 bytes: {u64 pc; s32 cfa; s16 fp; u16 rules}. */
#define ROW_BYTES_BEFORE 16

/* CPU time of the process, ns. */
static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * The files named on the command line, each added as the store adds a
 * mapped file; *add_ns: the CPU time that took, reading and packing included.
 */
static int add_files(struct unwind_store *s, char **paths, int n, struct named **names,
		     size_t *nnames, uint64_t *add_ns)
{
	uint64_t start = cpu_ns();

	*names = calloc((size_t)n, sizeof(**names));
	if (!*names)
		return 1;
	for (int i = 0; i < n; i++) {
		struct stat st;
		int fd = open(paths[i], O_RDONLY | O_CLOEXEC);

		if (fd < 0 || fstat(fd, &st)) {
			perror(paths[i]);
			return 1;
		}
		if (!unwind_store_add(s, unwind_kernel_dev(major(st.st_dev), minor(st.st_dev)),
				      st.st_ino, fd)) {
			fprintf(stderr, "%s: out of memory\n", paths[i]);
			return 1;
		}
		close(fd);
		snprintf((*names)[(*nnames)++].path, sizeof((*names)[0].path), "%s", paths[i]);
	}
	*add_ns = cpu_ns() - start;
	return 0;
}

int main(int argc, char **argv)
{
	static const char *const status_names[] = { "loaded", "without CFI", "too big", "unusable",
						    "over budget" };
	bool verbose = argc > 1 && !strcmp(argv[1], "-v");
	int first_file = verbose ? 2 : 1;
	struct named *names = NULL;
	size_t nnames = 0, cap = 0, rows = 0;
	uint64_t add_ns = 0;
	struct unwind_store s;
	struct dirent *de;
	DIR *proc = NULL;

	elf_version(EV_CURRENT);
	unwind_store_init(&s, NULL, (size_t)1 << 26);
	if (argc > first_file) {
		if (add_files(&s, argv + first_file, argc - first_file, &names, &nnames, &add_ns))
			return 1;
		verbose = true;
	} else if (!(proc = opendir("/proc"))) {
		perror("/proc");
		return 1;
	}
	while (proc && (de = readdir(proc))) {
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
	if (proc)
		closedir(proc);
	/* Entries can move while the store grows: look each up again. */
	for (size_t i = 0; i < nnames; i++)
		names[i].file = &s.files.data[i];
	qsort(names, nnames, sizeof(*names), cmp_rows);
	printf("unwind tables: %zu distinct executable files:", s.files.len);
	for (int k = 0; k < 4; k++)
		printf(" %zu %s%s", s.stats.files[k], status_names[k], k < 3 ? "," : ";");
	for (size_t i = 0; i < s.files.len; i++)
		if (s.files.data[i].status == UNWIND_FILE_LOADED)
			rows += s.files.data[i].nrows;
	printf(" %zu rows, %.2f MiB compact (%zu slots of %zu bytes, %.2f bytes a row; %zu rules, "
	       "%zu KiB) against %.2f MiB at %d bytes a row, built in %.3f s of CPU\n",
	       rows, (double)(s.slots.len * sizeof(union unwind_slot)) / (1024.0 * 1024.0),
	       s.slots.len, sizeof(union unwind_slot),
	       rows ? (double)(s.slots.len * sizeof(union unwind_slot)) / (double)rows : 0.0,
	       s.rules.len, s.rules.len * sizeof(struct unwind_rule) / 1024,
	       (double)(rows * ROW_BYTES_BEFORE) / (1024.0 * 1024.0), ROW_BYTES_BEFORE,
	       (double)s.stats.build_ns / 1e9);
	if (add_ns)
		printf("  added in %.3f s of CPU: the tables' builds, and reading and packing "
		       "them\n",
		       (double)add_ns / 1e9);
	printf("  %8s %6s %6s %10s %10s  file\n", "rows", "pages", "rules", "before", "compact");
	for (size_t i = 0; i < nnames && i < (verbose ? nnames : 5); i++) {
		const struct unwind_store_file *f = names[i].file;
		bool loaded = f->status == UNWIND_FILE_LOADED;

		printf("  %8u %6u %6zu %9.2fM %9.2fM  %s (%s)\n", loaded ? f->nrows : 0,
		       loaded ? f->info.npages : 0, loaded ? rules_used(&s, f) : 0,
		       loaded ? (double)f->nrows * ROW_BYTES_BEFORE / (1024.0 * 1024.0) : 0.0,
		       loaded ? (double)f->nslots * sizeof(union unwind_slot) / (1024.0 * 1024.0)
			      : 0.0,
		       names[i].path, status_names[f->status]);
	}
	free(names);
	unwind_store_free(&s);
	return 0;
}
