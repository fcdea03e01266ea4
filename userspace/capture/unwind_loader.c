// SPDX-License-Identifier: BSD-2-Clause
/* See unwind_loader.h. */
#include "unwind_loader.h"

#include <bpf/bpf.h>
#include <dirent.h>
#include <errno.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "../symbols/proc_maps.h"

int unwind_loader_open(struct unwind_loader *l, int rows_fd, int files_fd, int procs_fd,
		       size_t capacity)
{
	long page = sysconf(_SC_PAGESIZE);
	void *p;

	memset(l, 0, sizeof(*l));
	l->proc = calloc(1, sizeof(*l->proc));
	if (!l->proc)
		return -ENOMEM;
	l->rows_bytes =
		(capacity * sizeof(struct unwind_row) + (size_t)page - 1) & ~((size_t)page - 1);
	p = mmap(NULL, l->rows_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, rows_fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	l->rows = p;
	l->files_fd = files_fd;
	l->procs_fd = procs_fd;
	unwind_store_init(&l->store, p, capacity);
	elf_version(EV_CURRENT);
	return 0;
}

void unwind_loader_close(struct unwind_loader *l)
{
	if (l->rows)
		munmap(l->rows, l->rows_bytes);
	unwind_store_free(&l->store);
	vec_free(&l->dirty);
	free(l->proc);
	memset(l, 0, sizeof(*l));
}

/*
 * Tell the BPF side about the files added since the last call (the store
 * wrote their rows into the mapped array already). A file the map has no
 * room for is counted, never fatal: its frames are unwound with frame
 * pointers.
 */
static void publish(struct unwind_loader *l)
{
	for (; l->published_files < l->store.files.len; l->published_files++) {
		const struct unwind_store_file *f = &l->store.files.data[l->published_files];

		if (f->status != UNWIND_FILE_LOADED)
			continue;
		if (bpf_map_update_elem(l->files_fd, &f->key, &f->info, BPF_ANY))
			l->unpublished++;
	}
}

/*
 * The process's [vdso], when it is the image we map ourselves (same size:
 * a 32-bit process maps another): its frames (clock_gettime & co., signal
 * returns on some architectures) are unwound with the vDSO's own CFI.
 */
static void add_vdso(struct unwind_loader *l, struct unwind_proc *proc, const struct map_entry *e)
{
	const struct unwind_store_file *f;
	size_t size;

	f = unwind_store_add_vdso(&l->store, &size);
	if (!f || f->status != UNWIND_FILE_LOADED || e->end - e->start != size ||
	    proc->n >= UNWIND_MAX_MAPPINGS)
		return;
	proc->m[proc->n++] = (struct unwind_mapping){
		.start = e->start,
		.end = e->end,
		.pgoff_bytes = 0,
		.file = f->key,
	};
}

int unwind_loader_add_process(struct unwind_loader *l, uint32_t pid)
{
	map_entries_t maps = { 0 };
	int err = proc_maps_read("/proc", (pid_t)pid, &maps);
	struct unwind_proc *proc = l->proc;

	if (err)
		return err == -ENOMEM ? err : 0; /* gone, or not ours to read: its frames use FP */
	proc->n = 0;
	for (size_t i = 0; i < maps.len && !err; i++) {
		const struct map_entry *e = &maps.data[i];

		if (e->executable && !e->inode && !strcmp(e->path, "[vdso]")) {
			add_vdso(l, proc, e);
			continue;
		}
		if (!e->executable || !e->inode)
			continue;
		/* Sorted by start, as /proc writes them; past the limit, frames use FP. */
		if (proc->n < UNWIND_MAX_MAPPINGS)
			proc->m[proc->n++] = (struct unwind_mapping){
				.start = e->start,
				.end = e->end,
				.pgoff_bytes = e->pgoff,
				.file = { unwind_kernel_dev(major(e->dev), minor(e->dev)),
					  e->inode },
			};
		if (!unwind_store_add_mapping(&l->store, pid, e) && errno == ENOMEM)
			err = -ENOMEM;
	}
	map_entries_free(&maps);
	if (err)
		return err;
	publish(l);
	/* Rows and files first: the unwinder never finds a mapping whose file it cannot read. */
	if (bpf_map_update_elem(l->procs_fd, &pid, proc, BPF_ANY))
		l->unpublished++; /* more processes than the map holds: this one uses FP */
	return 0;
}

int unwind_loader_mark(struct unwind_loader *l, uint32_t pid)
{
	for (size_t i = 0; i < l->dirty.len; i++)
		if (l->dirty.data[i] == pid)
			return 0;
	return vec_push(&l->dirty, pid) ? -ENOMEM : 0;
}

int unwind_loader_refresh(struct unwind_loader *l)
{
	int err = 0;

	for (size_t i = 0; i < l->dirty.len && !err; i++)
		err = unwind_loader_add_process(l, l->dirty.data[i]);
	l->dirty.len = 0;
	return err;
}

void unwind_loader_forget(struct unwind_loader *l, uint32_t pid)
{
	bpf_map_delete_elem(l->procs_fd, &pid);
}

int unwind_loader_add_all(struct unwind_loader *l)
{
	struct dirent *de;
	DIR *d = opendir("/proc");
	int err = 0;

	if (!d)
		return -errno;
	while (!err && (de = readdir(d))) {
		char *end;
		unsigned long pid = strtoul(de->d_name, &end, 10);

		if (*end || !pid)
			continue;
		err = unwind_loader_add_process(l, (uint32_t)pid);
	}
	closedir(d);
	return err;
}
