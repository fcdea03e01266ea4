// SPDX-License-Identifier: BSD-2-Clause
/* See interp_file.h. */
#include "interp_file.h"

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

int interp_gone_add(struct interp_gone *g, uint32_t pid)
{
	struct interp_gone_pid p = { pid, g->flushes };

	return vec_push(&g->pids, p) ? -ENOMEM : 0;
}

void interp_gone_flush(struct interp_gone *g, void (*forget)(void *ctx, uint32_t pid), void *ctx)
{
	size_t kept = 0;

	g->flushes++;
	for (size_t i = 0; i < g->pids.len; i++) {
		struct interp_gone_pid p = g->pids.data[i];

		/*
		 * Its exit was applied in the drain of flush p.flush; samples held
		 * back then are decoded after the next drain, whose flush is
		 * p.flush + 2: forget it only after that.
		 */
		if (g->flushes - p.flush >= 3)
			forget(ctx, p.pid);
		else
			g->pids.data[kept++] = p;
	}
	g->pids.len = kept;
}

int interp_file_examine(uint32_t pid, const struct map_entry *e, int (*read)(Elf *, void *),
			void *out)
{
	char link[96];
	struct stat st;
	int fd, status = 0;

	snprintf(link, sizeof(link), "/proc/%u/map_files/%" PRIx64 "-%" PRIx64, pid, e->start,
		 e->end);
	fd = open(link, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -EBADF;
	if (!fstat(fd, &st) && S_ISREG(st.st_mode)) {
		Elf *elf = elf_open_fd(fd);

		if (elf) {
			status = read(elf, out);
			elf_end(elf);
		}
	}
	close(fd);
	return status;
}
