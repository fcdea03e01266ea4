// SPDX-License-Identifier: BSD-2-Clause
/* See uid_owner.h. */
#include "uid_owner.h"

#include <fcntl.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"

/*
 * Root's file, or ours, that no one else may write: group-writable is
 * refused whatever the group, as elf_fd_mappable refuses it (a group
 * root's files share, "root" or "wheel", may hold users; a host that
 * wants its subuid file believed keeps it 0644).
 */
static bool trusted(const struct stat *st)
{
	if (!S_ISREG(st->st_mode) || (st->st_uid != 0 && st->st_uid != geteuid()))
		return false;
	return !(st->st_mode & (S_IWGRP | S_IWOTH));
}

/* A decimal uid field, all of it: 0 or -1. */
static int parse_u32(const char *s, uint32_t *out)
{
	unsigned long v;
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	v = strtoul(s, &end, 10);
	if (*end || v > UINT32_MAX)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

/* One "NAME_OR_UID:FIRST:COUNT" line (its newline gone) into `r`: 0 or -1. */
static int parse_line(char *line, struct uid_range *r)
{
	/* strsep, not strtok: an empty field ("a:1::2") is a malformed line, not skipped. */
	char *rest = line, *name = strsep(&rest, ":");
	char *first = strsep(&rest, ":"), *count = strsep(&rest, ":");

	if (!name || !first || !count || rest || !*name)
		return -1;
	if (parse_u32(first, &r->first) || parse_u32(count, &r->count) || !r->count ||
	    r->count - 1 > UINT32_MAX - r->first)
		return -1;
	if (parse_u32(name, &r->owner)) {
		struct passwd *pw = getpwnam(name);

		if (!pw)
			return -1;
		r->owner = (uint32_t)pw->pw_uid;
	}
	/*
	 * Root's ranges are kept out: hosts give them to system containers
	 * (LXD, Incus), tenants of their own, and folding them into root,
	 * whom no share limits, would free every container from its share.
	 */
	if (r->owner == 0)
		return -1;
	return 0;
}

unsigned uid_owners_read(struct uid_owners *o, const char *path)
{
	char line[UID_OWNER_LINE_SIZE];
	unsigned pieces = 0;
	bool skipping = false;
	struct stat st;
	FILE *f;
	int fd;

	memset(o, 0, sizeof(*o));
	if (!path)
		path = getenv("BPFPROF_TEST_SUBUID");
	if (!path || !*path)
		path = "/etc/subuid";
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) || !trusted(&st)) {
		log_warn("%s is not a file of root's that only root may write: its subordinate "
			 "uids are each taken for a user of their own",
			 path);
		close(fd);
		return 0;
	}
	f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return 0;
	}
	/* Each fgets counts, a long line's pieces too: at most so many pieces are read. */
	while (o->n < UID_OWNER_RANGES && pieces++ < UID_OWNER_LINES &&
	       fgets(line, sizeof(line), f)) {
		size_t len = strlen(line);
		bool end = len && line[len - 1] == '\n';

		/* A line longer than the buffer is no line: its pieces are skipped. */
		if (skipping || (!end && !feof(f))) {
			skipping = !end;
			continue;
		}
		if (end)
			line[--len] = '\0';
		if (len && line[len - 1] == '\r')
			line[--len] = '\0'; /* a file written on Windows */
		if (line[0] != '#' && !parse_line(line, &o->ranges[o->n]))
			o->n++;
	}
	fclose(f);
	return o->n;
}

uint32_t uid_owner_of(const struct uid_owners *o, uint32_t uid)
{
	for (unsigned i = 0; o && i < o->n; i++)
		if (uid >= o->ranges[i].first && uid - o->ranges[i].first < o->ranges[i].count)
			return o->ranges[i].owner;
	return uid;
}
