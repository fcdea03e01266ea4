// SPDX-License-Identifier: BSD-2-Clause
#include "vdso.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "proc_maps.h"

/* The auxiliary vector gives the start; only /proc/self/maps gives the size. */
static int vdso_size(uint64_t start, size_t *size)
{
	map_entries_t maps = { 0 };
	int err = proc_maps_read("/proc", getpid(), &maps);

	if (err)
		return err;
	err = -ENOENT;
	for (size_t i = 0; i < maps.len; i++) {
		const struct map_entry *m = &maps.data[i];

		if (m->start == start && !strcmp(m->path, "[vdso]")) {
			*size = m->end - m->start;
			err = 0;
			break;
		}
	}
	map_entries_free(&maps);
	return err;
}

int vdso_copy(void **image, size_t *size)
{
	uint64_t start = getauxval(AT_SYSINFO_EHDR);
	int err;

	*image = NULL;
	if (!start)
		return -ENOENT;
	err = vdso_size(start, size);
	if (err)
		return err;
	*image = malloc(*size);
	if (!*image)
		return -ENOMEM;
	memcpy(*image, (const void *)(uintptr_t)start, *size);
	return 0;
}

int vdso_load(struct elf_symtab *t)
{
	size_t size;
	void *copy;
	int err;

	/* libelf may write to the image it parses; the vDSO is read-only, so hand it a copy. */
	err = vdso_copy(&copy, &size);
	if (err)
		return err;
	err = elf_symtab_load_mem(t, copy, size);
	free(copy);
	return err;
}
