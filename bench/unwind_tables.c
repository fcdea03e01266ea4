// SPDX-License-Identifier: BSD-2-Clause
/*
 * What unwind tables for everything running on this machine cost: every
 * distinct executable file mapped by any process (by device and inode), its
 * .eh_frame turned into unwind rows (unwind/cfi_table.c). Prints the number
 * of files, rows, the tables' memory and the CPU time to build them, and the
 * largest tables. A measurement, not a test. Run as root to see every process.
 *
 *   bpfprof-unwind-tables [-v]
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "unwind/cfi_table.h"

#define MAX_FILES 65536

struct file_seen {
	unsigned long dev_major, dev_minor, inode;
	size_t rows;
	char path[256];
};

static struct file_seen files[MAX_FILES];
static size_t nfiles;

static struct file_seen *seen(unsigned long maj, unsigned long min, unsigned long ino)
{
	for (size_t i = 0; i < nfiles; i++)
		if (files[i].dev_major == maj && files[i].dev_minor == min && files[i].inode == ino)
			return &files[i];
	return NULL;
}

static double cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_rows(const void *a, const void *b)
{
	const struct file_seen *x = a, *y = b;

	return x->rows < y->rows ? 1 : x->rows > y->rows ? -1 : 0;
}

/* Build the table of one mapping's file, reached through the process's map_files. */
static void build_one(int pid, const char *range, struct file_seen *f, size_t *total_rows,
		      size_t *failed)
{
	char link[128];
	struct cfi_table t;
	Elf *elf;
	int fd, err;

	snprintf(link, sizeof(link), "/proc/%d/map_files/%s", pid, range);
	fd = open(link, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		(*failed)++;
		return;
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	err = elf ? cfi_table_build(elf, &t) : -EINVAL;
	if (!err) {
		f->rows = t.len;
		*total_rows += t.len;
		cfi_table_free(&t);
	} else {
		(*failed)++;
	}
	if (elf)
		elf_end(elf);
	close(fd);
}

int main(int argc, char **argv)
{
	bool verbose = argc > 1 && !strcmp(argv[1], "-v");
	size_t total_rows = 0, failed = 0, mappings = 0;
	double t0 = cpu_seconds();
	struct dirent *de;
	DIR *proc;

	elf_version(EV_CURRENT);
	proc = opendir("/proc");
	if (!proc) {
		perror("/proc");
		return 1;
	}
	while ((de = readdir(proc))) {
		char path[64], line[1024];
		int pid = atoi(de->d_name);
		FILE *maps;

		if (pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/maps", pid);
		maps = fopen(path, "r");
		if (!maps)
			continue;
		while (fgets(line, sizeof(line), maps)) {
			char range[64], perms[8], file[256] = "";
			unsigned long maj, min, ino;
			struct file_seen *f;

			if (sscanf(line, "%63s %7s %*s %lx:%lx %lu %255s", range, perms, &maj, &min,
				   &ino, file) < 5 ||
			    perms[2] != 'x' || ino == 0)
				continue;
			mappings++;
			if (seen(maj, min, ino) || nfiles == MAX_FILES)
				continue;
			f = &files[nfiles++];
			*f = (struct file_seen){ maj, min, ino, 0, "" };
			snprintf(f->path, sizeof(f->path), "%s", file);
			build_one(pid, range, f, &total_rows, &failed);
		}
		fclose(maps);
	}
	closedir(proc);
	qsort(files, nfiles, sizeof(files[0]), cmp_rows);
	printf("unwind tables: %zu executable mappings, %zu distinct files (%zu without a table), "
	       "%zu rows, %.1f MiB at %zu bytes a row, built in %.3f s of CPU\n",
	       mappings, nfiles, failed, total_rows,
	       (double)(total_rows * sizeof(struct unwind_row)) / (1024.0 * 1024.0),
	       sizeof(struct unwind_row), cpu_seconds() - t0);
	for (size_t i = 0; i < nfiles && i < (verbose ? nfiles : 5); i++)
		printf("  %8zu rows  %s\n", files[i].rows, files[i].path);
	return 0;
}
