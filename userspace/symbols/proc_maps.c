// SPDX-License-Identifier: BSD-2-Clause
/*
 * /proc/PID/maps lines look like
 *
 *   7f40b8b1b000-7f40b8c71000 r-xp 00026000 fe:00 332835      /usr/lib/libc.so.6
 *
 * The path is everything after the inode and the padding, so it may contain
 * spaces; the kernel appends " (deleted)" when the file was unlinked.
 */
#include "proc_maps.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

static const char deleted_suffix[] = " (deleted)";

static int parse_hex(const char **p, uint64_t *out)
{
	char *end;

	errno = 0;
	*out = strtoull(*p, &end, 16);
	if (end == *p || errno)
		return -EINVAL;
	*p = end;
	return 0;
}

static int expect(const char **p, char c)
{
	if (**p != c)
		return -EINVAL;
	(*p)++;
	return 0;
}

static void skip_spaces(const char **p)
{
	while (**p == ' ' || **p == '\t')
		(*p)++;
}

/* Parse one line (without its newline) into `e`; e->path is malloc'd. */
static int parse_line(const char *line, struct map_entry *e)
{
	const char *p = line;
	uint64_t maj, min;
	size_t len;

	memset(e, 0, sizeof(*e));
	if (parse_hex(&p, &e->start) || expect(&p, '-') || parse_hex(&p, &e->end) ||
	    expect(&p, ' '))
		return -EINVAL;
	if (strlen(p) < 5 || p[4] != ' ')
		return -EINVAL;
	e->readable = p[0] == 'r';
	e->writable = p[1] == 'w';
	e->executable = p[2] == 'x';
	e->shared = p[3] == 's';
	p += 5;
	if (parse_hex(&p, &e->pgoff) || expect(&p, ' ') || parse_hex(&p, &maj) || expect(&p, ':') ||
	    parse_hex(&p, &min) || expect(&p, ' '))
		return -EINVAL;
	if (maj > UINT_MAX || min > UINT_MAX || e->end < e->start)
		return -EINVAL;
	e->dev = makedev((unsigned)maj, (unsigned)min);
	if (*p < '0' || *p > '9')
		return -EINVAL;
	e->inode = strtoull(p, (char **)&p, 10);
	if (*p && *p != ' ' && *p != '\t')
		return -EINVAL;
	skip_spaces(&p);

	len = strlen(p);
	if (len >= sizeof(deleted_suffix) - 1 &&
	    !strcmp(p + len - (sizeof(deleted_suffix) - 1), deleted_suffix)) {
		len -= sizeof(deleted_suffix) - 1;
		e->deleted = true;
	}
	e->path = strndup(p, len);
	return e->path ? 0 : -ENOMEM;
}

int proc_maps_parse(FILE *f, map_entries_t *out)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int err = 0;

	errno = 0;
	while ((n = getline(&line, &cap, f)) >= 0) {
		struct map_entry e;

		if (n > 0 && line[n - 1] == '\n')
			line[--n] = '\0';
		if (n == 0)
			continue;
		err = parse_line(line, &e);
		if (err)
			break;
		if (vec_push(out, e)) {
			free(e.path);
			err = -ENOMEM;
			break;
		}
		errno = 0;
	}
	/* getline() fails with ENOMEM or with the read error (ESRCH: the task exited). */
	if (!err && ferror(f))
		err = errno ? -errno : -EIO;
	free(line);
	return err;
}

int proc_maps_read(const char *proc_root, pid_t pid, map_entries_t *out)
{
	char path[PATH_MAX];
	FILE *f;
	int err;

	if (snprintf(path, sizeof(path), "%s/%d/maps", proc_root, (int)pid) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	f = fopen(path, "re");
	if (!f)
		return errno == ESRCH ? -ENOENT : -errno;
	err = proc_maps_parse(f, out);
	fclose(f);
	/* What a failed read parsed is no one's: callers that give up on an error leaked it. */
	if (err)
		map_entries_free(out);
	/* The process can exit between open and read. */
	return err == -ESRCH ? -ENOENT : err;
}

void map_entries_free(map_entries_t *v)
{
	for (size_t i = 0; i < v->len; i++)
		free(v->data[i].path);
	vec_free(v);
}
