// SPDX-License-Identifier: BSD-2-Clause
/* See interp_files.h. */
#include "interp_files.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "../util/elf_open.h"

struct hmap_key interp_file_key(const struct map_entry *e)
{
	return (struct hmap_key){ ((uint64_t)major(e->dev) << 32) | minor(e->dev), e->inode };
}

int interp_file_examine(uint32_t pid, const struct map_entry *e, int (*examine)(Elf *, void *),
			void *ctx)
{
	char link[96];
	struct stat st;
	int fd, status = 0;

	snprintf(link, sizeof(link), "/proc/%u/map_files/%" PRIx64 "-%" PRIx64, pid, e->start,
		 e->end);
	fd = open(link, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -ENOENT;
	if (!fstat(fd, &st) && S_ISREG(st.st_mode)) {
		Elf *elf = elf_open_fd(fd);

		if (elf) {
			status = examine(elf, ctx);
			elf_end(elf);
		}
	}
	close(fd);
	return status;
}

int interp_gone_add(struct interp_gone *g, uint32_t pid)
{
	struct interp_gone_entry e = { pid, g->flushes };

	return vec_push(&g->list, e) ? -ENOMEM : 0;
}

void interp_gone_flush(struct interp_gone *g, void (*forget)(void *ctx, uint32_t pid), void *ctx)
{
	size_t kept = 0;

	g->flushes++;
	for (size_t i = 0; i < g->list.len; i++) {
		struct interp_gone_entry e = g->list.data[i];

		/*
		 * Its exit was applied in the drain of flush e.flush; samples held
		 * back then are decoded after the next drain, whose flush is
		 * e.flush + 2: forget it only after that.
		 */
		if (g->flushes - e.flush >= 3)
			forget(ctx, e.pid);
		else
			g->list.data[kept++] = e;
	}
	g->list.len = kept;
}

void interp_gone_free(struct interp_gone *g)
{
	vec_free(&g->list);
}
