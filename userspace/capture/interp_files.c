// SPDX-License-Identifier: BSD-2-Clause
/* See interp_files.h. */
#include "interp_files.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

void interp_file_cache_init(struct interp_file_cache *c, size_t entry_size, size_t info_off,
			    size_t status_off, int (*examine)(Elf *elf, void *info))
{
	memset(c, 0, sizeof(*c));
	c->entry_size = entry_size;
	c->info_off = info_off;
	c->status_off = status_off;
	c->examine = examine;
}

void interp_file_cache_free(struct interp_file_cache *c)
{
	free(c->entries);
	hmap_free(&c->index);
	c->entries = NULL;
	c->n = c->cap = 0;
}

const void *interp_file_cache_get(struct interp_file_cache *c, uint32_t pid,
				  const struct map_entry *e)
{
	struct hmap_key key = interp_file_key(e);
	uint8_t *entry;
	uint32_t idx;
	int status;

	if (hmap_get(&c->index, key, &idx))
		return c->entries + (size_t)idx * c->entry_size;
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 8;
		uint8_t *grown = realloc(c->entries, cap * c->entry_size);

		if (!grown)
			return NULL;
		c->entries = grown;
		c->cap = cap;
	}
	entry = c->entries + c->n * c->entry_size;
	memset(entry, 0, c->entry_size);
	status = interp_file_examine(pid, e, c->examine, entry + c->info_off);
	if (status == -ENOENT || status == -ENOMEM)
		return NULL;
	memcpy(entry + c->status_off, &status, sizeof(status));
	if (hmap_put(&c->index, key, (uint32_t)c->n))
		return NULL;
	c->n++;
	return entry;
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
