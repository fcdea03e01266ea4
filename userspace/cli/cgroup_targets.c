// SPDX-License-Identifier: BSD-2-Clause
#include "cgroup_targets.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../util/log.h"

int cgroup_targets_open(struct cgroup_targets *c, const char *const *args, size_t n)
{
	char err[512];

	memset(c, 0, sizeof(*c));
	for (size_t i = 0; i < n && i < BPFPROF_MAX_CGROUPS; i++) {
		struct cgroup_target *t = &c->target[c->n];
		size_t len;

		if (cgroup_target_open(t, "/proc/self/mountinfo", args[i], err, sizeof(err))) {
			log_error("%s", err);
			cgroup_targets_close(c);
			return 1;
		}
		c->n++;
		c->session[i] = (struct session_cgroup){ t->fd, t->id, t->level };
		c->path[i] = t->path;
		len = strlen(t->path) + 32;
		c->desc[i] = malloc(len);
		if (!c->desc[i]) {
			log_error("out of memory");
			cgroup_targets_close(c);
			return 1;
		}
		snprintf(c->desc[i], len, "%s (id %llu)", t->path, (unsigned long long)t->id);
	}
	return 0;
}

void cgroup_targets_close(struct cgroup_targets *c)
{
	for (size_t i = 0; i < c->n; i++) {
		cgroup_target_close(&c->target[i]);
		free(c->desc[i]);
	}
	memset(c, 0, sizeof(*c));
}

/* Nesting deeper than this is not followed (a runaway, not a real hierarchy). */
#define MAX_CGROUP_DEPTH 32

static int for_each_in_dir(int dir_fd, int depth, int (*fn)(void *ctx, uint32_t pid), void *ctx)
{
	int procs_fd = openat(dir_fd, "cgroup.procs", O_RDONLY | O_CLOEXEC);
	struct dirent *de;
	int err = 0;
	DIR *dir;

	if (procs_fd >= 0) {
		FILE *f = fdopen(procs_fd, "re");
		unsigned long pid;

		if (!f) {
			close(procs_fd);
			return -errno;
		}
		while (!err && fscanf(f, "%lu", &pid) == 1)
			err = fn(ctx, (uint32_t)pid);
		fclose(f);
	}
	if (err || depth >= MAX_CGROUP_DEPTH)
		return err;
	dir = fdopendir(dup(dir_fd));
	if (!dir)
		return 0; /* removed meanwhile: nothing below it */
	while (!err && (de = readdir(dir))) {
		int sub;

		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		sub = openat(dirfd(dir), de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (sub < 0)
			continue;
		err = for_each_in_dir(sub, depth + 1, fn, ctx);
		close(sub);
	}
	closedir(dir);
	return err;
}

int cgroup_targets_for_each_process(const struct cgroup_targets *c,
				    int (*fn)(void *ctx, uint32_t pid), void *ctx)
{
	int err = 0;

	for (size_t i = 0; i < c->n && !err; i++)
		err = for_each_in_dir(c->target[i].fd, 0, fn, ctx);
	return err;
}
